"""Table snapshots are protobuf: every folded table reads back equal, from bytes alone; what is
not a snapshot of this shape is refused (the log is replayed), and nothing is ever unpickled."""

from __future__ import annotations

import pickle
import random
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chieu.games import plain, registry
from chieu.kit.eventstore import EventStore, Snapshot
from chieu.kit.names import TABLES
from chieu.kit.settings import Settings
from chieu.table import decide, snapshot
from chieu.table.tables import Tables
from chieu.table.v1 import log_pb2, snapshot_pb2
from chieu.tablelog import sealing
from chieu.tablelog.fold import Table
from chieu.tablelog.sealing import SealKeys


def _fold(t: Table, events: list[log_pb2.TableEvent], actor: str, cid: str) -> None:
    record = log_pb2.Record(table_id=t.table_id, version=t.version + 1, command_id=cid, actor=actor,
                            game=t.game_key, events=events)
    t.apply(record, t.last_seq + 3)


def _played(key: str, seed: int, moves: int) -> list[Table]:
    """A table of ``key`` through a hand of random legal moves (and timeouts): a copy after each record."""
    game = registry.get(key)
    rng = random.Random(seed)
    t = Table(f"snap-{key}")
    players = [f"p{i}" for i in range(game.min_players)]
    _fold(t, decide.create(t, key, {}, players[0], client_seed=b"c0"), players[0], "c")
    for p in players[1:]:
        _fold(t, decide.take_seat(t, p, None, p.encode()), p, f"s-{p}")
    seen: list[Table] = [replace(t)]
    for hand in range(2):
        _fold(t, decide.start_hand(t, players[0], 1_000 + hand, rng.randbytes(32)), players[0], f"h{hand}")
        for step in range(moves):
            seen.append(replace(t, commands=t.commands.copy()))
            if not t.playing:
                break
            options = [(s, m) for s in range(len(t.hand_players)) for m in registry.get(key).legal(t.game_state, s)]
            if options and rng.random() > 0.1:
                seat, move = rng.choice(options)
                player = t.hand_players[seat]
                _fold(t, decide.act(t, player, move, 2_000 + step), player, f"m{hand}-{step}")
            else:
                deadlines = game.deadlines(t.game_state)
                if not deadlines:
                    break
                _fold(t, decide.time_out(t, deadlines[0].seat, deadlines[0].at_ms), "system", f"t{hand}-{step}")
        if t.playing:
            _fold(t, decide.abort_hand(t, "test"), "operator", f"a{hand}")
    seen.append(t)
    return seen


@pytest.mark.parametrize("key", registry.KEYS)
@settings(max_examples=3, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_every_table_state_reads_back_equal(key: str, seed: int) -> None:
    for table in _played(key, seed, 40):
        data = snapshot.encode(table)
        assert snapshot.decode(data) == table
        assert snapshot.encode(snapshot.decode(data)) == data


def test_a_snapshot_names_every_field_of_the_table() -> None:
    """A field added to ``Table`` without its place in the snapshot fails here."""
    fields = set(Table.__dataclass_fields__)
    proto = set(snapshot_pb2.TableSnapshot.DESCRIPTOR.fields_by_name)
    derived = {"options", "option_values", "options_msg", "options_refused"}  # all from the logged options
    renamed = {"game_key": "game", "auto": "auto_played"}
    assert {renamed.get(f, f) for f in fields - derived} | {"options", "format"} == proto


def test_what_is_not_a_snapshot_of_this_shape_is_refused() -> None:
    table = _played("o_an_quan", 1, 10)[-2]
    good = snapshot_pb2.TableSnapshot.FromString(snapshot.encode(table))
    other_format = snapshot_pb2.TableSnapshot()
    other_format.CopyFrom(good)
    other_format.format = snapshot.FORMAT + 1
    other_shape = snapshot_pb2.TableSnapshot()
    other_shape.CopyFrom(good)
    other_shape.game_state.shape = "0" * 16
    wrong_json = snapshot_pb2.TableSnapshot()
    wrong_json.CopyFrom(good)
    wrong_json.game_state.json = b'{"type": "State", "nope": 1}'
    for bad in (b"\xff\x00garbage", other_format.SerializeToString(), other_shape.SerializeToString(),
                wrong_json.SerializeToString()):
        with pytest.raises(snapshot.Unusable):
            snapshot.decode(bad)


@dataclass
class _Planted:
    path: str

    def __reduce__(self) -> tuple[Any, ...]:
        return (Path(self.path).touch, ())


def test_a_pickle_in_the_bucket_runs_nothing(tmp_path: Path) -> None:
    planted = tmp_path / "pwned"
    with pytest.raises(snapshot.Unusable):
        snapshot.decode(pickle.dumps(_Planted(str(planted))))
    assert not planted.exists()


def test_the_state_shape_follows_the_types() -> None:
    @dataclass(frozen=True)
    class A:
        x: int

    @dataclass(frozen=True)
    class B:
        x: str

    assert plain.shape(A) != plain.shape(B)
    assert plain.shape(A) == plain.shape(A)


@pytest.mark.integration
async def test_a_table_loads_from_its_snapshot_and_from_the_log_alone(settings: Settings) -> None:
    store = await EventStore.connect(settings.nats_url, stream=TABLES, creds=settings.nats_creds)
    try:
        keys = SealKeys.load(settings.seal_keys)
        writer = Tables(store, replace(settings, snapshot_every=5), keys)
        tid = f"snapload-{random.getrandbits(40):x}"
        await writer.execute(tid, "s1", "c0", lambda t, now: decide.create(t, "o_an_quan", {}, "s1",
                                                                         next_seed=keys.new_seed(tid, 1)), create=True)
        await writer.execute(tid, "s2", "c1", lambda t, now: decide.take_seat(t, "s2", None))
        table = await writer.execute(tid, "s1", "c2",
                                     lambda t, now: decide.start_hand(t, "s1", now, *writer.seeds_to_deal(t)))
        for i in range(13):  # 16 records: the last snapshot is of version 15
            seat = table.game_state.to_move
            move = registry.get("o_an_quan").legal(table.game_state, seat)[0]
            player = table.hand_players[seat]
            table = await writer.execute(tid, player, f"m{i}",
                                         lambda t, now, p=player, m=move: decide.act(t, p, m, now))
        await writer.close()
        saved = await store.load_snapshot(tid)
        assert saved is not None and 0 < saved.seq <= table.last_seq
        assert saved.tag == sealing.SNAPSHOT_TAG + snapshot.TAG
        assert table.server_seed and table.server_seed not in saved.data  # sealed: the hand's seed is not readable
        with pytest.raises(snapshot.Unusable):
            snapshot.decode(saved.data)
        opened = snapshot.decode(keys.open_snapshot(tid, saved.data))
        assert opened.version < table.version  # the snapshot is behind: a tail is folded
        assert opened.server_seed == table.server_seed and opened.next_seed == table.next_seed
        reader = Tables(store, settings, keys)
        assert (await reader.get(tid)).table == table
        await reader.close()
        await store.save_snapshot(tid, Snapshot(saved.seq, snapshot.TAG, b"\x0a\xffnot a snapshot"))
        replayed = Tables(store, settings, keys)
        assert (await replayed.get(tid)).table == table
        await replayed.close()
        await store.save_snapshot(tid, saved)  # a snapshot sealed under a key the process does not hold
        stranger = Tables(store, settings, SealKeys.generate())
        with pytest.raises(sealing.SealError):  # nor can it open the hand in play: no seed, no cards
            await stranger.get(tid)
        await stranger.close()
    finally:
        await store.close()
