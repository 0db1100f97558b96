"""Sealed secrets (issue 26): docs/fairness.md's sealing vectors, and what sealing must always do.

- the page's ``seal-vector`` blocks are what the code derives, and what an implementation written
  from the page alone (HKDF and AES-GCM of ``cryptography``, no chieu code) opens;
- a record sealed by the table process opens, for the table process and, once the hand's seed is
  revealed, for anybody, to exactly the record it was (Hypothesis, over random hands);
- a sealed part changed, or moved to another record, table or hand, does not open.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from hypothesis import given, settings
from hypothesis import strategies as st

from chieu.games import fair, registry
from chieu.table import decide
from chieu.table.v1 import log_pb2
from chieu.tablelog import codec, sealing
from chieu.tablelog.fold import Table
from chieu.tablelog.sealing import SealError, SealKeys

DOC = Path(__file__).resolve().parents[2] / "docs" / "fairness.md"
BLOCK = re.compile(r"^```seal-vector name=(\S+)\n(.*?)^```$", re.M | re.S)


def vectors() -> dict[str, dict[str, Any]]:
    return {m.group(1): json.loads(m.group(2)) for m in BLOCK.finditer(DOC.read_text(encoding="utf-8"))}


def _hkdf(key: bytes, info: str) -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=info.encode()).derive(key)


def test_the_page_has_both_vectors() -> None:
    assert set(vectors()) == {"hand", "seed"}


def test_the_hand_vector_from_the_page_and_from_the_code() -> None:
    v = vectors()["hand"]
    seed, nonce, aad = bytes.fromhex(v["server_seed"]), bytes.fromhex(v["nonce"]), v["aad"].encode()
    key = _hkdf(seed, f"chieu-seal-v1 hand {v['table_id']} {v['hand_no']}")  # the page alone
    assert key.hex() == v["hand_key"] and aad == f"{v['table_id']}/{v['hand_no']}/{v['version']}".encode()
    sealed = bytes.fromhex(v["sealed"])
    assert nonce + AESGCM(key).encrypt(nonce, bytes.fromhex(v["plaintext"]), aad) == sealed
    box = sealing.hand_box(seed, v["table_id"], v["hand_no"])  # the code
    assert box.decrypt(sealed[:12], sealed[12:], aad).hex() == v["plaintext"]


def test_the_seed_vector_from_the_page_and_from_the_code() -> None:
    v = vectors()["seed"]
    key, nonce, seed = bytes.fromhex(v["seal_key"]), bytes.fromhex(v["nonce"]), bytes.fromhex(v["seed"])
    seed_key = _hkdf(key, f"chieu-seal-v1 seed {v['table_id']} {v['hand_no']}")
    assert seed_key.hex() == v["seed_key"] and fair.commitment(seed) == v["commitment"]
    assert nonce + AESGCM(seed_key).encrypt(nonce, seed, v["aad"].encode()) == bytes.fromhex(v["sealed"])
    keys = SealKeys({v["key_id"]: key}, v["key_id"])
    committed = log_pb2.NextSeed(hand_no=v["hand_no"], commitment=v["commitment"], key_id=v["key_id"],
                                 sealed=bytes.fromhex(v["sealed"]))
    assert keys.open_seed(v["table_id"], committed) == seed
    mine = keys.seal_seed(v["table_id"], v["hand_no"], seed)  # a fresh nonce: another box, the same seed
    assert mine.sealed != committed.sealed and keys.open_seed(v["table_id"], mine) == seed


def _hand(game: str, players: int, moves: int, pick: Callable[[list[Any]], Any],
          client_seed: Callable[[], bytes], server_seed: bytes = bytes(32),
          ) -> tuple[SealKeys, list[tuple[log_pb2.Record, Table]]]:
    """A table of ``game`` and its records as decided (clear), each with the state before it;
    ``pick`` chooses a seat's move, ``client_seed`` gives each player's seed."""
    keys = SealKeys.generate()
    table = Table("t-seal")
    out: list[tuple[log_pb2.Record, Table]] = []

    def run(actor: str, events: Any, command: Any = None) -> None:
        assert isinstance(events, list)
        rec = log_pb2.Record(table_id="t-seal", version=table.version + 1, actor=actor, events=events)
        if command is not None:
            rec.game_command.CopyFrom(codec.pack(command, game))
        out.append((rec, copy.deepcopy(table)))
        table.apply(rec, table.version + 1)

    names = [f"p{i}" for i in range(players)]
    run(names[0], decide.create(table, game, {}, names[0], next_seed=keys.seal_seed("t-seal", 1, server_seed)))
    for p in names[1:]:
        run(p, decide.take_seat(table, p, None, client_seed()))
    assert table.next_seed is not None
    run(names[0], decide.start_hand(table, names[0], 0, keys.open_seed("t-seal", table.next_seed),
                                    keys.new_seed("t-seal", 2)))
    rules = registry.get(game)
    for _ in range(moves):
        if not table.playing:
            break
        movers = [(s, m) for s in range(players) if (m := rules.legal(table.game_state, s))]
        if not movers:
            break
        seat, legal = pick(movers)
        move = pick(sorted(legal, key=repr))
        player = table.hand_players[seat]
        run(player, decide.act(table, player, move, 1), command=move)
    return keys, out


@settings(max_examples=25, deadline=None)
@given(game=st.sampled_from(["phom", "dominoes", "mahjong", "gouji", "lianliankan"]), data=st.data())
def test_what_is_sealed_opens_to_what_it_was(game: str, data: st.DataObject) -> None:
    players = registry.descriptor(game).min_seats
    keys, records = _hand(game, players, 12, lambda xs: data.draw(st.sampled_from(xs)),
                          lambda: data.draw(st.binary(max_size=8)), data.draw(st.binary(min_size=32, max_size=32)))
    opener, folded = sealing.Opener(keys), Table("t-seal")
    logged = []
    for rec, before in records:
        sealed = sealing.seal_record(rec, before)
        in_hand = before.playing or any(e.WhichOneof("kind") == "hand_started" for e in rec.events)
        kinds = {e.WhichOneof("kind") for e in sealed.events}
        if in_hand:  # nothing of the hand in clear: no seed, no game event, no command
            assert "game_event" not in kinds and sealed.WhichOneof("cause") != "game_command"
            assert all(not e.hand_started.server_seed for e in sealed.events if e.WhichOneof("kind") == "hand_started")
        else:
            assert sealed == rec
        raw = sealed.SerializeToString()
        logged.append(raw)
        opened = opener.open(log_pb2.Record.FromString(raw), folded)
        assert opened == rec  # the table process folds exactly what was decided
        folded.apply(opened, rec.version)
    # nobody else opens the hand in play; once its seed is out (HandEnded), anybody does
    public = sealing.reveal((i, log_pb2.Record.FromString(raw)) for i, raw in enumerate(logged, 1))
    if not folded.playing:  # the hand ended among the moves: its own HandEnded revealed it
        assert [r for _, r in public] == [rec for rec, _ in records]
        return
    assert sealing.is_sealed(public[players][1])  # the deal's record, after the create and the seats
    ended = log_pb2.Record(table_id="t-seal", version=len(records) + 1, events=[
        log_pb2.TableEvent(hand_ended=log_pb2.HandEnded(hand_no=1, server_seed=folded.server_seed))])
    revealed = sealing.reveal([*((i, log_pb2.Record.FromString(raw)) for i, raw in enumerate(logged, 1)),
                               (len(records) + 1, ended)])
    assert [r for _, r in revealed[:-1]] == [rec for rec, _ in records]


def test_a_changed_or_moved_sealed_part_does_not_open() -> None:
    keys, records = _hand("phom", 2, 1, lambda xs: xs[0], lambda: b"")
    rec, before = records[-1]
    raw = sealing.seal_record(rec, before).SerializeToString()
    opener = sealing.Opener(keys)
    changed = log_pb2.Record.FromString(raw)
    for ev in changed.events:
        if ev.WhichOneof("kind") == "sealed":
            data = bytearray(ev.sealed.data)
            data[20] ^= 0x01
            ev.sealed.data = bytes(data)
            break
    else:
        pytest.fail("no sealed event")
    with pytest.raises(SealError):
        opener.open(changed, before)
    moved = log_pb2.Record.FromString(raw)
    moved.version += 1  # the same box in another record: its associated data differs
    with pytest.raises(SealError):
        opener.open(moved, before)
    elsewhere = log_pb2.Record.FromString(raw)
    elsewhere.table_id = "t-other"
    with pytest.raises(SealError):
        opener.open(elsewhere, before)
    start, before_start = next((r, b) for r, b in records if any(e.WhichOneof("kind") == "hand_started"
                                                                  for e in r.events))
    logged_start = sealing.seal_record(start, before_start)
    assert sealing.is_sealed(logged_start)
    with pytest.raises(SealError):  # another keyset cannot open the committed seed, so nor the deal
        sealing.Opener(SealKeys.generate()).open(logged_start, before_start)
    assert opener.open(logged_start, before_start) == start


def test_the_keyset_file_round_trips_and_refuses_bad_keys(tmp_path: Path) -> None:
    first, second = SealKeys.new_key(), SealKeys.new_key()
    path = tmp_path / "seal.jwks.json"
    path.write_text(SealKeys.document([first, second]))
    keys = SealKeys.load(path)
    assert keys.current == first[0] and keys.keys == dict([first, second])
    for bad in ('{"keys": []}', "not json", '{"keys": [{"kty": "oct", "kid": "k", "k": "c2hvcnQ"}]}'):
        path.write_text(bad)
        with pytest.raises(ValueError):
            SealKeys.load(path)


def test_a_table_keeps_the_key_of_its_hand_in_play_only() -> None:
    """``kept_box``: the hand's key derived once and kept while the hand is in play, the same key
    as the process's cache gives, and replaced (not added to) when the next hand starts."""
    kept: dict[tuple[bytes, int], Any] = {}
    one, two = bytes(range(32)), bytes(range(1, 33))
    box = sealing.kept_box(kept, one, "kept-1", 1)
    assert sealing.kept_box(kept, one, "kept-1", 1) is box and len(kept) == 1
    nonce = bytes(12)
    assert sealing.hand_box(one, "kept-1", 1).decrypt(nonce, box.encrypt(nonce, b"x", b"a"), b"a") == b"x"
    assert sealing.kept_box(kept, two, "kept-1", 2) is not box and list(kept) == [(two, 2)]
