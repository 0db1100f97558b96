"""The chip-dumping screen of ``chieu audit`` (issue 27): a planted dump — fresh guests each
creating a coin table, the main account sitting, the guest resigning at once — is flagged with its
evidence (the receiver, the payers and their age, the tables and hands), and a realistic period of
mixed play (newcomers losing to several players, friends meeting often and winning in turn, an
occasional early resignation, a strong player beating many) is not flagged."""

from __future__ import annotations

import random
import uuid
from collections.abc import Sequence

from google.protobuf import any_pb2

from chieu.audit import collusion
from chieu.audit.collusion import Thresholds
from chieu.audit.logs import Logs
from chieu.audit.report import Report
from chieu.table.v1 import log_pb2

HOUR = 3_600_000
T0 = 1_760_000_000_000


class Period:
    """Table logs built hand by hand, as the table service writes them."""

    def __init__(self) -> None:
        self.logs = Logs(complete=True)
        self.seq = 0

    def _record(self, table_id: str, at_ms: int, actor: str = "system", command: bool = False) -> log_pb2.Record:
        recs = self.logs.tables.setdefault(table_id, [])
        rec = log_pb2.Record(table_id=table_id, version=len(recs) + 1, command_id=uuid.uuid4().hex, actor=actor,
                             game="xiangqi", server_time_ms=at_ms)
        if command:
            rec.game_command.CopyFrom(any_pb2.Any(type_url="type.googleapis.com/chieu.games.xiangqi.v1.Command"))
        self.seq += 1
        recs.append((self.seq, rec))
        return rec

    def table(self, host: str, at_ms: int, stake: int) -> str:
        table_id = f"t-{uuid.uuid4().hex[:8]}"
        created = self._record(table_id, at_ms, host).events.add().table_created
        created.table_id, created.game, created.host, created.seats, created.stake = table_id, "xiangqi", host, 2, stake
        created.currency = log_pb2.CURRENCY_COINS
        return table_id

    def hand(self, table_id: str, hand_no: int, players: Sequence[str], at_ms: int, *, stake: int, moves: int,
             losses: Sequence[tuple[int, int, int]], reason: str = "checkmate", quit_seat: int | None = None) -> None:
        """A coin hand: started, ``moves`` player commands, then ended and settled (``losses``: seat pays
        seat so many units)."""
        for i, p in enumerate(players):
            if hand_no == 1:
                seated = self._record(table_id, at_ms, p).events.add().player_seated
                seated.player_id, seated.seat = p, i
        started = self._record(table_id, at_ms, players[0]).events.add().hand_started
        started.hand_no, started.game, started.stake = hand_no, "xiangqi", stake
        started.currency = log_pb2.CURRENCY_COINS
        started.players.extend(players)
        for m in range(moves):
            self._record(table_id, at_ms + 1000 * (m + 1), players[m % len(players)], command=True)
        end = self._record(table_id, at_ms + 1000 * (moves + 1), players[0], command=quit_seat is None)
        if quit_seat is not None:
            q = end.events.add().forced_quit
            q.player_id, q.hand_no, q.seat = players[quit_seat], hand_no, quit_seat
        ended = end.events.add().hand_ended
        ended.hand_no, ended.outcome.reason = hand_no, reason
        ended.players.extend(players)
        s = end.events.add().settlement
        s.hand_no, s.stake, s.game, s.currency = hand_no, stake, "xiangqi", log_pb2.CURRENCY_COINS
        s.players.extend(players)
        for payer, receiver, units in losses:
            s.transfers.add(from_seat=payer, to_seat=receiver, amount=units, reason="cuoc")


def screened(period: Period, born: dict[str, int] | None = None, t: Thresholds | None = None) -> Report:
    report = Report()
    collusion.check(period.logs, report, t, born)
    return report


def planted_dump(period: Period, main: str, guests: int, at_ms: int, stake: int = 100) -> list[str]:
    """The issue's script: each fresh guest creates a coin table, the main account sits, the guest
    starts and resigns; the guest's coins go to the main account."""
    made = []
    for i in range(guests):
        guest = f"guest-{uuid.uuid4().hex[:6]}"
        when = at_ms + i * 2000
        table = period.table(guest, when, stake)
        period.hand(table, 1, [guest, main], when + 500, stake=stake, moves=0, losses=[(0, 1, 2)],
                    reason="resignation")
        made.append(guest)
    return made


def ordinary(period: Period, rng: random.Random, start_ms: int) -> dict[str, int]:
    """A realistic period of mixed play: 40 players joining over four days, three in five hands
    among random opponents, friends who meet every evening and win in turn, a strong player, now
    and then an early resignation or a quit; returns when each account was opened."""
    players = [f"p{i:02d}" for i in range(40)]
    born = {p: start_ms + rng.randrange(0, 96) * HOUR for p in players}
    strong = players[0]
    friends = [(players[1], players[2]), (players[3], players[4])]
    at = start_ms + 97 * HOUR
    for h in range(600):
        at += rng.randrange(20_000, 240_000)
        if h % 12 == 0:  # the friends' evening game
            a, b = friends[(h // 12) % 2]
            pair = [a, b] if rng.random() < 0.5 else [b, a]
        else:
            pair = rng.sample(players, 2)
            if rng.random() < 0.15:
                pair = [strong, rng.choice(players[1:])]
        winner = 1 if pair[0] != strong and ((pair[1] == strong and rng.random() < 0.8) or rng.random() < 0.5) else 0
        stake = rng.choice((1, 10, 100))
        early = rng.random() < 0.03
        table = period.table(pair[0], at, stake)
        moves = rng.randrange(1, 4) if early else rng.randrange(18, 90)
        reason = "resignation" if early else rng.choice(("checkmate", "resignation", "timeout", "stalemate"))
        period.hand(table, 1, pair, at + 1000, stake=stake, moves=moves,
                    losses=[(1 - winner, winner, rng.randrange(1, 4))], reason=reason,
                    quit_seat=(1 - winner) if not early and rng.random() < 0.02 else None)
    return born


def test_a_planted_dump_is_flagged_with_its_evidence() -> None:
    period = Period()
    born = ordinary(period, random.Random(7), T0)
    main = "main-account"
    at = T0 + 200 * HOUR
    guests = planted_dump(period, main, 5, at)
    for g in guests:
        born[g] = at - 60_000  # signed in a minute before (their welcome coins' account)
    born[main] = T0
    report = screened(period, born)
    flagged = {(f.code, f.account) for f in report.flags}
    assert ("dump_target", main) in flagged and ("short_hand_wins", main) in flagged, report.flags
    assert {a for _, a in flagged} == {main}  # and nobody of the ordinary play
    dump = next(f for f in report.flags if f.code == "dump_target")
    assert dump.detail == "1000 金币 net from 5 accounts younger than 72 h"
    assert all(any(g in e for e in dump.evidence) for g in guests)
    assert "min old" in dump.evidence[0]
    tables = [t for t, recs in period.logs.tables.items() if recs[0][1].events[0].table_created.host in guests]
    short = next(f for f in report.flags if f.code == "short_hand_wins")
    assert all(any(e.startswith(f"{t}/1: +200 金币 after 1 moves (resignation") for e in short.evidence)
               for t in tables)
    assert report.counts["coin_hands_screened"] == 605
    assert report.ok  # a flag is not a discrepancy of the books
    json = report.to_json()
    assert [f["code"] for f in json["flags"]] == [f.code for f in report.flags] and json["flags"][0]["meaning"]


def test_ordinary_mixed_play_is_not_flagged() -> None:
    for seed in range(5):
        period = Period()
        born = ordinary(period, random.Random(seed), T0)
        report = screened(period, born)
        assert report.flags == [], (seed, report.flags)
        assert screened(period).flags == [], seed  # ages from the logs alone


def test_a_pair_passing_coins_one_way_is_flagged_and_friends_winning_in_turn_are_not() -> None:
    period = Period()
    rng = random.Random(3)
    at = T0
    for h in range(12):
        at += 600_000
        table = period.table("a", at, 10)
        period.hand(table, 1, ["a", "b"], at + 1000, stake=10, moves=rng.randrange(20, 60),
                    losses=[(0, 1, 2)] if h != 5 else [(1, 0, 1)])
        friends = period.table("c", at, 10)
        period.hand(friends, 1, ["c", "d"], at + 1000, stake=10, moves=rng.randrange(20, 60),
                    losses=[(h % 2, 1 - h % 2, 2)])
    report = screened(period, {p: T0 - 1000 * HOUR for p in "abcd"})
    assert [(f.code, f.account) for f in report.flags] == [("pair_meetings", "b")]
    assert report.flags[0].detail == "met a in 12 coin hands and took 210 金币 net (91% of what moved between them)"
    assert screened(period, {p: T0 - 1000 * HOUR for p in "abcd"}, Thresholds(pair_hands=13)).flags == []


def test_hands_abandoned_after_few_moves_are_flagged_and_the_thresholds_are_the_operators() -> None:
    period = Period()
    at = T0
    for _ in range(3):
        at += 60_000
        table = period.table("loser", at, 100)
        period.hand(table, 1, ["loser", "taker"], at + 1000, stake=100, moves=2, losses=[(0, 1, 1)],
                    reason="forfeit", quit_seat=0)
    old = {"loser": T0 - 1000 * HOUR, "taker": T0 - 1000 * HOUR}
    assert [(f.code, f.account) for f in screened(period, old).flags] == [("short_hand_wins", "taker")]
    assert screened(period, old, Thresholds(short_hands=4)).flags == []
    assert screened(period, old, Thresholds(min_coins=301)).flags == []


def wash_then_lose(period: Period, main: str, guests: Sequence[str], at_ms: int) -> None:
    """Issue 32's farm: pairs of guests wash-trade two hands each way at stake 10, then each loses
    its 200 金币 to the main account after 6 plies (past ``max_moves``)."""
    for i in range(0, len(guests), 2):
        a, c = guests[i], guests[i + 1]
        for h in range(4):
            winner = h % 2
            table = period.table(a, at_ms, 10)
            period.hand(table, 1, [a, c], at_ms + 500, stake=10, moves=8, losses=[(1 - winner, winner, 3)])
            at_ms += 3000
    for g in guests:
        table = period.table(g, at_ms, 10)
        period.hand(table, 1, [g, main], at_ms + 500, stake=10, moves=6, losses=[(0, 1, 20)], reason="resignation")
        at_ms += 3000


def test_the_wash_trade_then_lose_farm_of_aged_accounts_is_named() -> None:
    """Issue 32: 12 guests moved 2,400 金币 and the screen named the account 0 times. The wash
    trades diluted the one-way share and the 6 plies passed the short-hand bound; aged past 72 h,
    the guests were not new either. Netted per pair, whatever the age, the account is named."""
    period = Period()
    born = ordinary(period, random.Random(5), T0)
    main, guests = "main-account", [f"guest-{i:02d}" for i in range(12)]
    at = T0 + 200 * HOUR
    wash_then_lose(period, main, guests, at)
    for g in guests:
        born[g] = at - 100 * HOUR  # aged past 72 h
    born[main] = T0
    funds = {p: 200 for p in [*guests, main]}
    old = screened(period, born)
    assert [f for f in old.flags if f.code != "net_dump_target"] == []  # what the screen saw before
    flags = [(f.code, f.account) for f in old.flags]
    assert flags == [("net_dump_target", main)], flags
    report = Report()
    collusion.check(period.logs, report, None, born, funds)
    (flag,) = report.flags
    assert flag.detail == ("2400 金币 net from 12 accounts that lost it at least 90% of their net losses, "
                           "whatever their age")
    assert all(any(e.startswith(f"{g} lost 200 金币 net (100% of its net losses)") for e in flag.evidence[:10])
               for g in sorted(guests)[:10])


def test_a_route_through_the_ga_pot_is_named() -> None:
    """Guests lose into a table's gà pot (no seat receives it) and the main account wins the pot."""
    period = Period()
    main, guests = "main", ["g1", "g2", "g3"]
    table = period.table(main, T0, 10)
    for n, g in enumerate(guests, start=1):
        period.hand(table, n, [g, main], T0 + n * 60_000, stake=10, moves=30, losses=[])
        s = period.logs.tables[table][-1][1].events[-1].settlement
        s.transfers.add(from_seat=0, amount=15, reason="ga")
    period.hand(table, 4, [guests[0], main], T0 + 300_000, stake=10, moves=30, losses=[])
    period.logs.tables[table][-1][1].events[-1].settlement.transfers.add(to_seat=1, amount=45, reason="an_ga")
    report = screened(period, {p: T0 - 1000 * HOUR for p in [main, *guests]})
    assert [(f.code, f.account) for f in report.flags] == [("net_dump_target", main)]
    assert report.flags[0].detail.startswith("450 金币 net from 3 accounts")


def test_ordinary_play_is_not_named_with_the_ledgers_funds() -> None:
    for seed in range(5):
        period = Period()
        born = ordinary(period, random.Random(seed), T0)
        report = Report()
        collusion.check(period.logs, report, None, born, {p: 200 for p in born})
        assert report.flags == [], (seed, report.flags)
