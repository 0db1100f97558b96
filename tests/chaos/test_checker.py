"""The chaos checker finds what it must: each test builds a real log (a Đô Mi Nô hand: hidden tiles,
a server seed) and the clients' records of it, breaks one promise, and expects its violation;
the honest records give none."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from chieu.audit.logs import Logs
from chieu.games import registry
from chieu.lobby.v1 import lobby_service_pb2 as lobby_pb
from chieu.table import decide, views
from chieu.table.v1 import log_pb2
from chieu.table.v1 import table_service_pb2 as pb
from chieu.tablelog.fold import Table
from chieu_tools.chaos.checker import _Checker, coin_hands
from chieu_tools.chaos.client import ACKED, REFUSED, UNKNOWN
from chieu_tools.chaos.records import AppliedFault, Command, Journal, read_commands, read_views

T0 = 1_800_000_000_000
PLAYERS = ["ann", "bao"]


def _log() -> tuple[list[tuple[int, log_pb2.Record]], list[Table]]:
    """A Đô Mi Nô table's records (one command id each) and the table after each record."""
    t, out, states = Table("chaos-t1"), [], []
    game = registry.get("dominoes")

    def fold(events: list[log_pb2.TableEvent], actor: str, cid: str) -> None:
        rec = log_pb2.Record(table_id=t.table_id, version=t.version + 1, command_id=cid, actor=actor,
                             server_time_ms=T0 + 1000 * (t.version + 1), game="dominoes", events=events)
        t.apply(rec, t.version + 1)
        out.append((t.version, rec))
        snapshot = Table(t.table_id)
        for seq, r in out:
            snapshot.apply(r, seq)
        states.append(snapshot)

    fold(decide.create(t, "dominoes", {}, "ann"), "ann", "c1")
    fold(decide.take_seat(t, "bao", None), "bao", "c2")
    fold(decide.start_hand(t, "ann", T0, bytes(range(32))), "ann", "c3")
    rng = random.Random(3)
    for i in range(6):
        moves = [(s, m) for s in range(2) for m in game.legal(t.game_state, s)]
        seat, move = rng.choice(moves)
        fold(decide.act(t, t.hand_players[seat], move, T0 + 10_000 + i), t.hand_players[seat], f"m{i}")
    return out, states


@pytest.fixture
def world(tmp_path: Path) -> tuple[_Checker, list[Table], Path]:
    records, states = _log()
    logs = Logs(tables={"chaos-t1": records})
    faults = [AppliedFault("kill_service", "table-1", "", 60.0, T0 + 4000, T0 + 5000)]
    return _Checker(logs, faults, T0), states, tmp_path


def _command(key: str, outcome: str, version: int = 0, method: str = "Act") -> Command:
    player, cid = key.split("/")
    return Command("chaos-t1", player, cid, method, outcome, "OK" if outcome == ACKED else "FAILED_PRECONDITION",
                   "" if outcome == ACKED else "not_your_turn", T0 + 5000, T0 + 5100, 1, version)


def _checks(c: _Checker) -> list[str]:
    return [v.check for v in c.result.violations]


def test_honest_commands_pass(world: tuple[_Checker, list[Table], Path]) -> None:
    c, _, _ = world
    c.commands([_command("ann/c1", ACKED, 1, "CreateTable"), _command("ann/m0", ACKED, 4),
                _command("bao/never", REFUSED), _command("bao/lost", UNKNOWN)])
    assert _checks(c) == []
    assert c.result.counts["unknown_not_applied"] == 1


def test_an_acknowledged_command_missing_from_the_log_is_found(world: tuple[_Checker, list[Table], Path]) -> None:
    c, _, _ = world
    c.commands([_command("ann/gone", ACKED, 5)])
    assert _checks(c) == ["acked_not_once"]
    assert "kill_service table-1" in c.result.violations[0].fault  # the nearest fault is named


def test_a_refused_command_in_the_log_is_found(world: tuple[_Checker, list[Table], Path]) -> None:
    c, _, _ = world
    c.commands([_command("bao/c2", REFUSED)])
    assert _checks(c) == ["refused_but_applied"]


def test_a_forked_or_doubled_log_is_found(world: tuple[_Checker, list[Table], Path]) -> None:
    c, _, _ = world
    records = c.logs.tables["chaos-t1"]
    twin = log_pb2.Record()
    twin.CopyFrom(records[3][1])
    records.insert(4, (99, twin))  # version 4 twice, the same command twice
    c.commands([])
    assert set(_checks(c)) == {"log_forked", "applied_twice"}


def test_views_as_the_rules_give_them_pass_and_others_are_found(world: tuple[_Checker, list[Table], Path]) -> None:
    c, states, folder = world
    journal = Journal(folder)
    at = states[5]  # the hand in play, version 6
    for who in (*PLAYERS, "watcher"):
        journal.view(who, "chaos-t1", "watch", 1 if who == "ann" else 2, T0, _wire(views.view(at, who)))
    journal.view("ann", "chaos-t1", "watch", 1, T0 + 1, _wire(views.view(states[6], "ann")))
    journal.flush()
    c.views(_received(folder))
    assert _checks(c) == []

    journal.view("bao", "chaos-t1", "act", 0, T0 + 2, _wire(views.view(at, "ann")))  # ann's cards to bao
    journal.view("ann", "chaos-t1", "watch", 1, T0 + 3, _wire(views.view(states[3], "ann")))  # back in time
    leaked = views.view(at, None)
    leaked.last_server_seed = bytes(range(32))  # the seed of the hand in play
    journal.view("watcher", "chaos-t1", "get", 0, T0 + 4, _wire(leaked))
    journal.flush()
    c.views(_received(folder))
    assert sorted(set(_checks(c))) == ["seed_leaked", "view_mismatch", "watch_went_back"]
    assert any("bao's act view differs" in v.detail and "game_view" in v.detail for v in c.result.violations)


def test_the_lobby_list_is_compared_with_the_logs(world: tuple[_Checker, list[Table], Path]) -> None:
    c, states, _ = world
    final = states[-1]
    good = lobby_pb.TableSummary(table_id="chaos-t1", seats=[p or "" for p in final.seats], host=final.host,
                                 status=pb.TABLE_STATUS_PLAYING, hand_no=final.hand_no, stake=final.stake)
    c.lobby({"chaos-t1": good})
    assert _checks(c) == []
    stale = lobby_pb.TableSummary()
    stale.CopyFrom(good)
    stale.status = pb.TABLE_STATUS_WAITING
    c.lobby({"chaos-t1": stale, "ghost": good})
    assert sorted(_checks(c)) == ["lobby_differs", "lobby_lists_unknown_table"]
    c.result.violations.clear()
    c.lobby({})
    assert _checks(c) == ["lobby_missing_table"]


def test_records_round_trip(tmp_path: Path) -> None:
    journal = Journal(tmp_path)
    journal.command(_command("ann/x", ACKED, 3))
    journal.view("ann", "t", "watch", 7, T0, b"\x0a\x00")
    journal.close()
    assert read_commands(tmp_path) == [_command("ann/x", ACKED, 3)]
    (v,) = read_views(tmp_path)
    assert (v.player, v.table_id, v.source, v.stream, v.data) == ("ann", "t", "watch", 7, b"\x0a\x00")


def _wire(view: pb.TableView) -> bytes:
    return pb.WatchResponse(table=view).SerializeToString()


def _received(folder: Path) -> dict[str, list]:  # type: ignore[type-arg]
    out: dict[str, list] = {}  # type: ignore[type-arg]
    for v in read_views(folder):
        out.setdefault(v.table_id, []).append(v)
    return out


def _hand(table: str, hand_no: int, players: list[str], start_ms: int, end_ms: int, coins: bool = True,
          reserved: bool = True) -> list[tuple[int, log_pb2.Record]]:
    currency = log_pb2.CURRENCY_COINS if coins else log_pb2.CURRENCY_POINTS
    started = log_pb2.HandStarted(hand_no=hand_no, players=players, currency=currency, stake=2,
                                  reserved=[76] * len(players) if coins and reserved else [])
    ended = log_pb2.HandEnded(hand_no=hand_no, players=players)
    return [(1, log_pb2.Record(table_id=table, version=1, server_time_ms=start_ms,
                               events=[log_pb2.TableEvent(hand_started=started)])),
            (2, log_pb2.Record(table_id=table, version=2, server_time_ms=end_ms,
                               events=[log_pb2.TableEvent(hand_ended=ended)]))]


def test_coin_hands_in_play_at_once_for_one_player_are_counted() -> None:
    logs = Logs(tables={
        "a": _hand("a", 1, ["ann", "bao"], T0, T0 + 10_000),
        "b": _hand("b", 1, ["ann", "cao"], T0 + 5_000, T0 + 20_000),  # ann at a and b at once
        "c": _hand("c", 1, ["bao", "cao"], T0 + 30_000, T0 + 40_000, reserved=False),  # after both
        "d": _hand("d", 1, ["ann", "bao"], T0 + 1_000, T0 + 9_000, coins=False),  # points: not counted
        "e": _hand("e", 1, ["dan", "eve"], T0 + 50_000, T0 + 60_000)
        + _hand("e", 2, ["dan", "eve"], T0 + 60_000, T0 + 70_000),  # one table's hands follow on
    })
    assert coin_hands(logs) == {"coin_hands": 5, "coin_hands_reserved": 4, "coin_hands_concurrent": 2,
                                "coin_players_concurrent": 1, "coin_hands_at_once": 2}
    assert coin_hands(Logs())["coin_hands_at_once"] == 0
