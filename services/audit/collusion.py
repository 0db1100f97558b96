"""Chip dumping (送分, 输金币): 金币 moved on purpose from accounts to one account through coin
hands, found in the table logs and reported with its evidence for an operator's review.

Each coin hand of the logs is read once: its table, players, how many moves were played in it
(records caused by a player's command), whether someone quit or dropped out (强退, 断线), why it
ended (the game's reason: ``resignation`` …), and who paid whom how many 金币 (the settlement's
transfers between seats × the stake; a table's gà pot is a pass-through: what a player pays into
it is its share, and what the pot pays out is counted as paid by its feeders in proportion).
Four patterns are flagged:

- ``dump_target`` — coins flowing from **new accounts** to one account: at least
  ``new_payers`` distinct accounts, each younger than ``new_account_h`` hours at the hand, each
  losing at least ``min_coins`` net to the same receiver, and that receiver taking at least
  ``one_way`` of all the account paid anyone (the farming script: fresh guests lose their welcome
  coins to the main account and to nobody else; a newcomer who loses to several players, as
  newcomers do, is not counted).
- ``short_hand_wins`` — coin hands **resigned or abandoned after few moves**: at least
  ``short_hands`` hands won by one account that ended after at most ``max_moves`` moves (the
  resigning command included; a resignation, a quit, a disconnection: the evidence says which),
  together worth at least ``min_coins`` and at least ``short_share`` of the coin hands it won (a
  strong player whose opponents sometimes give up early is not flagged).
- ``pair_meetings`` — **the same pair meeting again and again**: two accounts in at least
  ``pair_hands`` coin hands together, the coins between them flowing one way (at least
  ``one_way`` of what moved between them, and at least ``min_coins`` net). Friends who play
  often and win in turn are not flagged: only the one-way flow is.

- ``net_dump_target`` — the ledger's screen, derived again from the logs (issue 32): a receiver
  into which at least ``new_payers`` accounts emptied themselves, **whatever their age**, each
  pair's flows netted over the period (wash trades between the farm's own accounts cancel out):
  each payer lost it at least ``min_coins`` net, at least ``one_way`` of its net losses (to
  everyone, netted), and, when the ledger is read, at least half of the 金币 it was ever given.
  The ledger holds such winnings for review as it posts them (docs/ledger.md); the audit names
  the account too.

An account's age is from the ledger when it is read (the opening of its 金币 account, e.g. the
welcome coins), else from its first appearance in the logs. A flag is a suspicion, not a
discrepancy of the books: it does not fail the audit; it lists the receiver, what it received
and from whom, and the tables and hands to look at. The operator decides (``HoldCoins``,
``Adjust``, ``ReleaseCoins``: docs/operating.md).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from chieu.audit.report import Report
from chieu.kit.shares import split

if TYPE_CHECKING:  # the command line reads the thresholds without loading the rules
    from chieu.audit.logs import Logs
    from chieu.table.v1 import log_pb2

COINS = 2
"""``chieu.table.v1.Currency.CURRENCY_COINS``."""

AREA = "collusion"
EVIDENCE = 10
"""Hands listed per flag at most (the count says how many there were)."""


@dataclass(frozen=True, slots=True)
class Thresholds:
    """What is flagged (``chieu audit --collusion-*``)."""

    new_account_h: float = 72.0
    new_payers: int = 3
    min_coins: int = 100
    max_moves: int = 4
    short_hands: int = 3
    short_share: float = 0.5
    pair_hands: int = 10
    one_way: float = 0.9


@dataclass
class Hand:
    """One coin hand as the logs tell it."""

    table_id: str
    hand_no: int
    at_ms: int
    players: tuple[str, ...]
    stake: int = 0
    moves: int = 0
    quits: set[str] = field(default_factory=set)
    reason: str = ""
    flows: dict[tuple[str, str], int] = field(default_factory=dict)
    """(payer, receiver) → 金币."""

    @property
    def ref(self) -> str:
        return f"{self.table_id}/{self.hand_no}"

    def won(self) -> dict[str, int]:
        """Net 金币 per player over the hand."""
        net: dict[str, int] = defaultdict(int)
        for (payer, receiver), coins in self.flows.items():
            net[payer] -= coins
            net[receiver] += coins
        return net


def coin_hands(logs: Logs) -> list[Hand]:
    """Every hand of the logs that moved 金币 between players, in stream order of its start."""
    out: list[tuple[int, Hand]] = []
    for table_id, records in logs.tables.items():
        open_hands: dict[int, Hand] = {}
        pot: dict[str, int] = {}  # the table's gà pot: feeder → its share
        current: Hand | None = None
        for seq, rec in records:
            if rec.WhichOneof("cause") in ("game_command", "sealed_command") and current is not None:
                current.moves += 1
            for e in rec.events:
                kind = e.WhichOneof("kind")
                if kind == "hand_started":
                    h = e.hand_started
                    current = Hand(table_id, int(h.hand_no), int(rec.server_time_ms), tuple(h.players))
                    open_hands[current.hand_no] = current
                    out.append((seq, current))
                elif kind in ("forced_quit", "disconnected"):
                    ev = getattr(e, kind)
                    if (hand := open_hands.get(int(ev.hand_no))) is not None:
                        hand.quits.add(ev.player_id)
                elif kind == "settlement":
                    _settle(open_hands, e.settlement, pot)
                elif kind == "hand_ended":
                    if (hand := open_hands.get(int(e.hand_ended.hand_no))) is not None:
                        hand.reason = e.hand_ended.outcome.reason
                    if current is not None and current.hand_no == int(e.hand_ended.hand_no):
                        current = None
    return [h for _, h in sorted(out, key=lambda x: x[0]) if h.flows]


def _settle(open_hands: Mapping[int, Hand], s: log_pb2.Settlement, pot: dict[str, int]) -> None:
    hand = open_hands.get(int(s.hand_no))
    if hand is None or s.currency != COINS:
        return
    hand.stake = int(s.stake)
    payouts: list[tuple[str, int]] = []
    for t in s.transfers:
        ends = []
        for has, seat in ((t.HasField("from_seat"), t.from_seat), (t.HasField("to_seat"), t.to_seat)):
            if has and not 0 <= seat < len(s.players):
                break
            ends.append(s.players[seat] if has else None)
        else:
            payer, receiver = ends
            coins = int(t.amount) * int(s.stake)
            if payer is not None and receiver is not None:
                if payer != receiver:
                    hand.flows[(payer, receiver)] = hand.flows.get((payer, receiver), 0) + coins
            elif payer is not None:  # into the gà pot: the payer's share of it
                pot[payer] = pot.get(payer, 0) + coins
            elif receiver is not None:
                payouts.append((receiver, coins))
    for receiver, coins in payouts:  # fed first: a hand may feed the pot it wins
        for feeder, part in split(coins, pot).items():
            pot[feeder] -= part
            if feeder != receiver:
                hand.flows[(feeder, receiver)] = hand.flows.get((feeder, receiver), 0) + part


def first_seen(hands: list[Hand], logs: Logs) -> dict[str, int]:
    """Each player's first appearance in the logs (ms): their age when the ledger is not read."""
    seen: dict[str, int] = {}
    for _, rec in logs.in_order():
        for e in rec.events:
            kind = e.WhichOneof("kind")
            if kind == "player_seated":
                seen.setdefault(e.player_seated.player_id, int(rec.server_time_ms))
            elif kind == "hand_started":
                for p in e.hand_started.players:
                    seen.setdefault(p, int(rec.server_time_ms))
    return seen


async def given(conn: Any) -> dict[str, int]:
    """The 金币 each player was ever given (credits from system accounts but the clearing:
    welcome, rewards, conversions, adjustments), from the ledger (asyncpg)."""
    rows = await conn.fetch("SELECT substr(credit, 14) AS owner, sum(amount)::bigint AS coins FROM ledger_transfers"
                            " WHERE credit LIKE 'player/coins/%' AND debit LIKE 'system/coins/%'"
                            " AND debit <> 'system/coins/clearing' GROUP BY credit")
    return {r["owner"]: int(r["coins"]) for r in rows}


async def opened(conn: Any) -> dict[str, int]:
    """When each player's 金币 account was opened (ms), from the ledger (asyncpg)."""
    rows = await conn.fetch("SELECT owner, (extract(epoch from opened_at) * 1000)::bigint AS ms FROM ledger_accounts"
                            " WHERE kind = 'player' AND currency = 'coins'")
    return {r["owner"]: int(r["ms"]) for r in rows}


def check(logs: Logs, report: Report, t: Thresholds | None = None, born: Mapping[str, int] | None = None,
          funds: Mapping[str, int] | None = None) -> None:
    """Flag the chip-dumping patterns of ``logs`` into ``report`` (``born``: account openings, ms;
    ``funds``: the 金币 each player was ever given, from the ledger)."""
    t = t or Thresholds()
    hands = coin_hands(logs)
    report.count("coin_hands_screened", len(hands))
    birth = dict(first_seen(hands, logs))
    birth.update(born or {})
    _dump_targets(hands, birth, report, t)
    _short_wins(hands, report, t)
    _pairs(hands, report, t)
    _net_targets(hands, report, t, funds)


DRAIN = 0.5
"""The least part of what a payer was ever given that it lost to the receiver (as the ledger's
``CHIEU_SCREEN_DRAIN``), when the ledger is read."""


def _net_targets(hands: list[Hand], report: Report, t: Thresholds, funds: Mapping[str, int] | None) -> None:
    flow: dict[tuple[str, str], int] = defaultdict(int)  # (payer, receiver) → 金币 over the period
    refs: dict[tuple[str, str], list[str]] = defaultdict(list)
    for h in hands:
        for key, coins in h.flows.items():
            flow[key] += coins
            refs[key].append(h.ref)
    net: dict[tuple[str, str], int] = {}
    for (a, c), coins in flow.items():
        n = coins - flow.get((c, a), 0)
        if n > 0:
            net[(a, c)] = n
    lost: dict[str, int] = defaultdict(int)
    for (payer, _), n in net.items():
        lost[payer] += n
    into: dict[str, dict[str, int]] = defaultdict(dict)
    for (payer, receiver), n in net.items():
        if n < t.min_coins or n < t.one_way * lost[payer]:
            continue
        if funds is not None and n < DRAIN * funds.get(payer, 0):
            continue
        into[receiver][payer] = n
    for receiver, payers in sorted(into.items()):
        if len(payers) < t.new_payers:
            continue
        evidence = [f"{p} lost {n} 金币 net ({n * 100 // max(lost[p], 1)}% of its net losses):"
                    f" {', '.join(refs[(p, receiver)][:3])}{' …' if len(refs[(p, receiver)]) > 3 else ''}"
                    for p, n in sorted(payers.items(), key=lambda x: (-x[1], x[0]))][:EVIDENCE]
        report.flag(AREA, "net_dump_target", receiver,
                    f"{sum(payers.values())} 金币 net from {len(payers)} accounts that lost it at least "
                    f"{t.one_way:.0%} of their net losses, whatever their age", evidence)


def _dump_targets(hands: list[Hand], birth: Mapping[str, int], report: Report, t: Thresholds) -> None:
    young_ms = t.new_account_h * 3_600_000
    paid: dict[tuple[str, str], int] = defaultdict(int)  # (payer, receiver) → 金币 over every hand
    young: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))  # receiver → new payer → hands
    first: dict[str, int] = {}
    for h in hands:
        for p in h.players:
            first.setdefault(p, h.at_ms)
        for (payer, receiver), coins in h.flows.items():
            paid[(payer, receiver)] += coins
            if h.at_ms - birth.get(payer, h.at_ms) <= young_ms:
                young[receiver][payer].append(h.ref)
    lost: dict[str, int] = defaultdict(int)  # what each account paid anyone, over every hand
    for (payer, _), coins in paid.items():
        lost[payer] += coins
    for receiver, payers in sorted(young.items()):
        net = {p: paid[(p, receiver)] - paid.get((receiver, p), 0) for p in payers}
        net = {p: c for p, c in net.items() if c >= t.min_coins and c >= t.one_way * lost[p]}
        if len(net) < t.new_payers:
            continue
        evidence = [f"{p} ({_age(first[p] - birth.get(p, first[p]))} old at its first coin hand) lost {c} 金币 net:"
                    f" {', '.join(payers[p][:3])}{' …' if len(payers[p]) > 3 else ''}"
                    for p, c in sorted(net.items(), key=lambda x: -x[1])][:EVIDENCE]
        report.flag(AREA, "dump_target", receiver,
                    f"{sum(net.values())} 金币 net from {len(net)} accounts younger than {t.new_account_h:g} h",
                    evidence)


def _age(ms: int) -> str:
    minutes = max(0, ms) // 60_000
    return f"{minutes} min" if minutes < 120 else f"{minutes // 60} h"


def _short_wins(hands: list[Hand], report: Report, t: Thresholds) -> None:
    wins: dict[str, list[tuple[Hand, int]]] = defaultdict(list)
    won_any: dict[str, int] = defaultdict(int)
    for h in hands:
        short = h.moves <= t.max_moves
        for player, net in h.won().items():
            if net > 0:
                won_any[player] += 1
                if short:
                    wins[player].append((h, net))
    for player, won in sorted(wins.items()):
        total = sum(n for _, n in won)
        if len(won) < t.short_hands or total < t.min_coins or len(won) < t.short_share * won_any[player]:
            continue
        losers = sorted({p for h, _ in won for p in h.players if p != player})
        evidence = [f"{h.ref}: +{n} 金币 after {h.moves} moves ({h.reason or 'no reason'}"
                    f"{', quit: ' + ', '.join(sorted(h.quits)) if h.quits else ''})" for h, n in won[:EVIDENCE]]
        report.flag(AREA, "short_hand_wins", player,
                    f"{len(won)} coin hands won after at most {t.max_moves} moves or abandoned, {total} 金币, from "
                    f"{len(losers)} accounts ({len(won)} of its {won_any[player]} coin-hand wins)", evidence)


def _pairs(hands: list[Hand], report: Report, t: Thresholds) -> None:
    met: dict[tuple[str, str], list[Hand]] = defaultdict(list)
    flow: dict[tuple[str, str], int] = defaultdict(int)  # (a, b) sorted: + when a pays b
    gross: dict[tuple[str, str], int] = defaultdict(int)
    for h in hands:
        players = sorted(set(h.players))
        for i, a in enumerate(players):
            for b in players[i + 1:]:
                met[(a, b)].append(h)
        for (payer, receiver), coins in h.flows.items():
            pair = (payer, receiver) if payer < receiver else (receiver, payer)
            flow[pair] += coins if payer == pair[0] else -coins
            gross[pair] += coins
    for (a, b), together in sorted(met.items()):
        if len(together) < t.pair_hands or not gross[(a, b)]:
            continue
        net = flow[(a, b)]
        if abs(net) < t.min_coins or abs(net) < t.one_way * gross[(a, b)]:
            continue
        payer, receiver = (a, b) if net > 0 else (b, a)
        evidence = [f"{len(together)} coin hands together, {gross[(a, b)]} 金币 moved between them, {abs(net)} net "
                    f"from {payer} to {receiver}", *(h.ref for h in together[:EVIDENCE])]
        report.flag(AREA, "pair_meetings", receiver,
                    f"met {payer} in {len(together)} coin hands and took {abs(net)} 金币 net "
                    f"({abs(net) * 100 // gross[(a, b)]}% of what moved between them)", evidence)
