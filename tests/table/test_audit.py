"""The auditor's deal verification on logs built by the table's deciders (no server needed)."""

from __future__ import annotations

import secrets

from chieu.games.o_an_quan import GAME
from chieu.games.o_an_quan.model import Started
from chieu.table import audit, codec, decide
from chieu.table.state import Table
from chieu.table.v1 import log_pb2


def build_log(hands: int) -> list[tuple[int, log_pb2.Record]]:
    table = Table("t-audit")
    records: list[tuple[int, log_pb2.Record]] = []

    def run(actor: str, events: list[log_pb2.TableEvent], now: int = 1000, command: object = None) -> None:
        rec = log_pb2.Record(table_id="t-audit", version=table.version + 1, actor=actor, server_time_ms=now,
                             events=events)
        if command is not None:
            rec.game_command.CopyFrom(codec.pack(command, "o_an_quan"))
        table.apply(rec, len(records) + 1)
        records.append((len(records) + 1, rec))

    run("a", decide.create(table, "o_an_quan", {}, "a"))
    run("b", decide.take_seat(table, "b", None, b"bob's seed"))
    for h in range(hands):
        run("a", decide.start_hand(table, "a", 5000 + h, secrets.token_bytes(32)), now=5000 + h)
        while table.playing:
            seat = table.game_state.to_move
            move = GAME.legal(table.game_state, seat)[0]
            if len(records) % 7 == 0:  # now and then the clock plays instead of the player
                rec_events = decide.time_out(table, seat, 40_000)
                records_before = len(records)
                run("system", rec_events, now=40_000)
                records[records_before][1].timeout_seat = seat
            else:
                player = table.hand_players[seat]
                run(player, decide.act(table, player, move, 6000), now=6000, command=move)
    return records


def test_every_finished_hand_verifies_move_by_move() -> None:
    verdicts = audit.verify("t-audit", build_log(3))
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
    (verdict,) = audit.verify("t-audit", records)
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
    verdicts = audit.verify("t-audit", records)
    assert [v.deal_ok for v in verdicts] == [False, True]


def test_a_swapped_seed_fails_the_commitment() -> None:
    records = build_log(1)
    for _, rec in records:
        for ev in rec.events:
            if ev.WhichOneof("kind") == "hand_ended":
                ev.hand_ended.server_seed = b"\x00" * 32
    (verdict,) = audit.verify("t-audit", records)
    assert not verdict.commitment_ok and not verdict.ok
