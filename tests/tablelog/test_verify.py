"""The auditor's deal verification on logs built by the table's deciders (no server needed)."""

from __future__ import annotations

import secrets

import pytest

from chieu.games.o_an_quan import GAME
from chieu.games.o_an_quan.model import Started
from chieu.table import decide
from chieu.table.v1 import log_pb2
from chieu.tablelog import codec, sealing
from chieu.tablelog.fold import Table
from chieu.tablelog.sealing import SealKeys
from chieu.tablelog.verify import verify

KEYS = SealKeys.generate()


def build_log(hands: int, *, sealed: bool = False, commit: bool = True) -> list[tuple[int, log_pb2.Record]]:
    """A log of ``hands`` finished Ô ăn quan hands between a and b, as the deciders give it; each
    hand's seed committed ahead (``commit``), and sealed as the table processes log it (``sealed``)."""
    table = Table("t-audit")
    records: list[tuple[int, log_pb2.Record]] = []

    def run(actor: str, events: list[log_pb2.TableEvent], now: int = 1000, command: object = None,
            timeout_seat: int | None = None) -> None:
        rec = log_pb2.Record(table_id="t-audit", version=table.version + 1, actor=actor, server_time_ms=now,
                             events=events)
        if command is not None:
            rec.game_command.CopyFrom(codec.pack(command, "o_an_quan"))
        if timeout_seat is not None:
            rec.timeout_seat = timeout_seat
        logged = sealing.seal_record(rec, table) if sealed else rec
        table.apply(rec, len(records) + 1)
        records.append((len(records) + 1, logged))

    def seed_of(hand_no: int) -> log_pb2.NextSeed | None:
        return KEYS.new_seed("t-audit", hand_no) if commit else None

    run("a", decide.create(table, "o_an_quan", {}, "a", next_seed=seed_of(1)))
    run("b", decide.take_seat(table, "b", None, b"bob's seed"))
    for h in range(hands):
        committed = table.next_seed
        seed = KEYS.open_seed("t-audit", committed) if committed is not None else secrets.token_bytes(32)
        run("a", decide.start_hand(table, "a", 5000 + h, seed, seed_of(h + 2)), now=5000 + h)
        while table.playing:
            seat = table.game_state.to_move
            move = GAME.legal(table.game_state, seat)[0]
            if len(records) % 7 == 0:  # now and then the clock plays instead of the player
                run("system", decide.time_out(table, seat, 40_000), now=40_000, timeout_seat=seat)
            else:
                player = table.hand_players[seat]
                run(player, decide.act(table, player, move, 6000), now=6000, command=move)
    return records


@pytest.mark.parametrize("sealed", [False, True], ids=["as-folded", "as-logged"])
def test_every_finished_hand_verifies_move_by_move(sealed: bool) -> None:
    verdicts = verify("t-audit", build_log(3, sealed=sealed))
    assert [(v.hand_no, v.ok) for v in verdicts] == [(1, True), (2, True), (3, True)]
    assert all(v.moves_checked > 10 for v in verdicts)


def test_a_move_whose_logged_events_differ_from_the_rules_is_caught() -> None:
    records = build_log(1)
    for _, rec in records:
        if rec.WhichOneof("cause") == "game_command":
            sow = codec.unpack(rec.game_command, "o_an_quan")
            other = type(sow)(sow.square, type(sow.direction)("CW" if sow.direction.value == "CCW" else "CCW"))
            rec.game_command.CopyFrom(codec.pack(other, "o_an_quan"))  # the logged events no longer follow
            break
    (verdict,) = verify("t-audit", records)
    assert verdict.deal_ok and verdict.commitment_ok and not verdict.moves_ok and not verdict.ok
    assert "version" in verdict.detail


def test_a_tampered_deal_is_caught() -> None:
    records = build_log(2)
    for _, rec in records:
        for ev in rec.events:
            if ev.WhichOneof("kind") == "game_event" and ev.game_event.TypeName().endswith(".Started"):
                started = codec.unpack(ev.game_event, "o_an_quan")
                assert isinstance(started, Started)
                forged = Started(1 - started.first, *[getattr(started, f) for f in
                                                      ("board", "quan", "stores", "quans_captured", "borrowed",
                                                       "moves", "deadline_ms")])
                ev.game_event.CopyFrom(codec.pack(forged, "o_an_quan"))
                break
        else:
            continue
        break
    verdicts = verify("t-audit", records)
    assert [v.deal_ok for v in verdicts] == [False, True]


def test_a_swapped_seed_fails_the_commitment() -> None:
    records = build_log(1)
    for _, rec in records:
        for ev in rec.events:
            if ev.WhichOneof("kind") == "hand_ended":
                ev.hand_ended.server_seed = b"\x00" * 32
    (verdict,) = verify("t-audit", records)
    assert not verdict.commitment_ok and not verdict.ok


def test_a_hand_in_play_stays_sealed_and_is_reported_in_play() -> None:
    records = build_log(2, sealed=True)
    last_end = max(i for i, (_, r) in enumerate(records) if any(e.WhichOneof("kind") == "hand_ended" for e in r.events))
    live = records[:last_end]  # hand 2 not over: its seed is not revealed
    assert all(e.WhichOneof("kind") != "game_event" for _, r in live[3:] for e in r.events if _in_hand(r, 2))
    verdicts = verify("t-audit", live)
    assert [(v.hand_no, v.ok, v.revealed) for v in verdicts] == [(1, True, True), (2, False, False)]
    started = [e.hand_started for _, r in live for e in r.events if e.WhichOneof("kind") == "hand_started"]
    assert started[1].server_seed == b""  # nothing but the commitment while it is played


def _in_hand(record: log_pb2.Record, hand_no: int) -> bool:
    return any(e.WhichOneof("kind") == "sealed" and e.sealed.hand_no == hand_no for e in record.events)


def test_a_changed_sealed_part_is_caught() -> None:
    records = build_log(1, sealed=True)
    for _, rec in records:
        sealed = [e for e in rec.events if e.WhichOneof("kind") == "sealed"]
        if sealed and rec.WhichOneof("cause") == "sealed_command":
            data = bytearray(sealed[0].sealed.data)
            data[-1] ^= 1
            sealed[0].sealed.data = bytes(data)
            break
    (verdict,) = verify("t-audit", records)
    assert not verdict.ok and "does not open" in verdict.detail


def test_a_commitment_published_with_the_deal_is_not_first() -> None:
    """A hand whose seed was not committed before the players' client seeds (as before issue 26:
    the commitment first appeared in HandStarted) fails: the server could have chosen its seed."""
    (verdict,) = verify("t-audit", build_log(1, commit=False))
    assert verdict.commitment_ok and verdict.deal_ok and verdict.moves_ok
    assert not verdict.committed_first and not verdict.ok
    assert "not published before" in verdict.detail


def test_a_commitment_other_than_the_one_published_is_not_first() -> None:
    records = build_log(1)
    for _, rec in records:
        for ev in rec.events:
            if ev.WhichOneof("kind") == "table_created":
                ev.table_created.next_seed.commitment = "0" * 64
    (verdict,) = verify("t-audit", records)
    assert not verdict.committed_first and not verdict.ok


def test_every_commitment_precedes_the_client_seeds_it_meets() -> None:
    records = build_log(3)
    published: dict[int, int] = {}
    for _, rec in records:
        for ev in rec.events:
            kind = ev.WhichOneof("kind")
            if kind in ("table_created", "hand_started") and getattr(ev, kind).HasField("next_seed"):
                published[getattr(ev, kind).next_seed.hand_no] = rec.version
            if kind == "hand_started":
                assert published[ev.hand_started.hand_no] < rec.version
