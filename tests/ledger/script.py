"""Order-dependent table scripts and the books one consumer reading them in order would keep.

A script is one table's settlements, generated hand by hand while an in-memory model of the books
applies them in stream order: at a coin table the players hold few 金币, so losers are capped
(coins.md §6.5) and what a capped loser pays depends on every earlier hand; the gà pot is fed
(``ga_deal``) and then pays what it holds (``ga_win``), so paying before feeding is ``pot_short``.
The model is the expected result: the real consumers must reach exactly its balances and
transfers, however many of them there are.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass, field

from chieu.games.core import Transfer
from chieu.kit.errors import ServiceError, precondition
from chieu.ledger import books as b
from chieu.ledger.books import Leg, Posting
from chieu.ledger.consumer import settlement_posting
from chieu.table.v1 import log_pb2

from .conftest import settlement, uid


@dataclass
class Model:
    """The books of a single consumer reading the stream in order, in memory."""

    balances: dict[str, int] = field(default_factory=dict)
    transfers: dict[str, tuple[str, str, int, int]] = field(default_factory=dict)
    """transfer id → (debit, credit, amount, owed)"""
    postings: list[str] = field(default_factory=list)
    refused: list[tuple[str, str]] = field(default_factory=list)

    def fund(self, account: str, amount: int) -> None:
        self.balances[account] = self.balances.get(account, 0) + amount

    def apply(self, p: Posting) -> None:
        """``Books._post`` on a dict: capped at coin tables, refused if a wallet would go below 0."""
        try:
            legs = b.cap(p.legs, self.balances, p.seats) if p.cap else list(p.legs)
            delta = b.legs_total(legs)
            for a, d in delta.items():
                if self.balances.get(a, 0) + d < 0 and b.guarded(a):
                    raise precondition(f"insufficient_{b.parse_account(a)[1]}", a)
        except ServiceError as e:
            self.refused.append((p.id, e.reason))
            return
        for a, d in delta.items():
            self.balances[a] = self.balances.get(a, 0) + d
        for leg in legs:
            self.transfers[leg.id] = (leg.debit, leg.credit, leg.amount, leg.amount if leg.owed is None else leg.owed)
        self.postings.append(p.id)


@dataclass
class Script:
    """One table's settlements in stream order, its players' starting 金币, and the model after it."""

    table_id: str
    coins: bool
    players: list[str]
    funds: dict[str, int]
    settlements: list[log_pb2.Settlement]
    model: Model

    def accounts(self) -> list[str]:
        currency = b.COINS if self.coins else b.points("phom")
        return [b.player(currency, p) for p in self.players] + [b.pot(currency, self.table_id)]


def table_script(rng: random.Random, *, coins: bool, hands: int, prefix: str = "t") -> Script:
    """A table of three players; every hand: the gà fed, an eat, the end (ranks, sometimes the pot won)."""
    table_id = uid(prefix)
    players = [uid(f"{table_id}-p{i}-") for i in range(3)]
    stake = 10 if coins else 2
    funds = {p: rng.randrange(15, 60) for p in players} if coins else {}
    model = Model()
    for p, n in funds.items():
        model.fund(b.player(b.COINS, p), n)
    out: list[log_pb2.Settlement] = []
    pot_account = b.pot(b.COINS if coins else b.points("phom"), table_id)

    def add(hand: int, first: int, legs: list[Transfer]) -> int:
        s = settlement("phom", players, legs, stake=stake, coins=coins, hand_no=hand, first_leg=first)
        posting = settlement_posting(table_id, s)
        assert posting is not None
        model.apply(posting)
        out.append(s)
        return first + len(legs)

    for hand in range(1, hands + 1):
        nxt = add(hand, 0, [Transfer(i, None, 1, "ga_deal") for i in range(3)])
        a, c = rng.sample(range(3), 2)
        nxt = add(hand, nxt, [Transfer(a, c, rng.randrange(1, 4), "eat_1")])
        order = rng.sample(range(3), 3)
        legs = [Transfer(order[1], order[0], rng.randrange(1, 4), "rank"),
                Transfer(order[2], order[0], rng.randrange(2, 6), "rank")]
        held = model.balances.get(pot_account, 0) // stake
        if hand % 2 == 0 and held > 0:
            legs.append(Transfer(None, order[0], held, "ga_win"))
        add(hand, nxt, legs)
    assert not model.refused, model.refused  # in stream order nothing is refused
    return Script(table_id, coins, players, funds, out, model)


def fund_postings(scripts: Iterable[Script]) -> list[Posting]:
    """The starting 金币 of every coin table's players."""
    return [Posting(f"fund/{p}", "test", (Leg(f"fund/{p}", b.system(b.COINS, "test"), b.player(b.COINS, p), n,
                                              "fund"),))
            for s in scripts for p, n in s.funds.items()]

