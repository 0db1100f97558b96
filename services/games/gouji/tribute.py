"""Between the deal and the first lead of 够级: the 革命 window, 进贡 and 还贡 (§2.7 of
shared/rules/gouji.md).

落贡 from game 2 on: 大落 gives his two best cards to 头科, 二落 his best card to 二科; then,
as regional options, 烧贡 and 闷贡 (one best card each to the payer's 对门), whose payers come
from the previous game through ``Outcome.carry``. Each receiver returns as many cards of his
choice (还贡). With 革命 on, a window for the seats without 2s and jokers comes first.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from chieu.games import clock
from chieu.games.common import put
from chieu.games.gouji import cards as C
from chieu.games.gouji.cards import Counts
from chieu.games.gouji.model import SEATS, Due, RevolutionOpened, TributePaid, TurnStarted, opposite
from chieu.games.gouji.options import Options

CARRY_VERSION = 1
"""First element of ``Outcome.carry``: ``(1, n, *烧贡 payers, m, *闷贡 payers)``."""


def encode_carry(shao: Sequence[int], men: Sequence[int]) -> tuple[int, ...]:
    """``Outcome.carry`` for the next game: the 烧贡 and 闷贡 payers."""
    return (CARRY_VERSION, len(shao), *shao, len(men), *men)


def decode_carry(carry: Sequence[int]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The (烧贡, 闷贡) payers from ``Outcome.carry``; ``((), ())`` when absent or unreadable
    (the table sends ``()`` when the players or seats changed)."""
    try:
        if not carry or carry[0] != CARRY_VERSION:
            return (), ()
        n = carry[1]
        shao = tuple(carry[2:2 + n])
        m = carry[2 + n]
        men = tuple(carry[3 + n:3 + n + m])
    except (IndexError, TypeError):
        return (), ()
    if len(shao) != n or len(men) != m or len(carry) != 3 + n + m:
        return (), ()
    if not all(isinstance(p, int) and 0 <= p < SEATS for p in (*shao, *men)):
        return (), ()
    return shao, men


def dues(o: Options, ranking: Sequence[int], carry: Sequence[int]) -> list[Due]:
    """This game's tribute from the previous game's ``ranking`` (seats, 头科 first) and
    ``carry``: 落贡 (大落 two best to 头科, 二落 one to 二科), then 烧贡 and 闷贡 (one best card
    each to the payer's 对门). No complete ranking: no tribute."""
    if len(ranking) != SEATS:
        return []
    r = ranking
    out: list[Due] = []
    if o.tribute == "luogong":
        out += [Due(r[5], r[0], 2, "luogong"), Due(r[4], r[1], 1, "luogong")]
    shao, men = decode_carry(carry)
    if o.shao_gong:
        out += [Due(p, opposite(p), 1, "shaogong") for p in shao]
    if o.men_gong:
        out += [Due(p, opposite(p), 1, "mengong") for p in men]
    return out


def after_deal(o: Options, hands: Sequence[Counts], first: int, due: Sequence[Due],
               now_ms: int) -> list[Any]:
    """The 革命 window when a seat may declare, else the tribute (or the first lead)."""
    if o.ge_ming:
        eligible = tuple(p for p in range(SEATS) if C.revolution_ok(hands[p]))
        if eligible:
            return [RevolutionOpened(eligible, clock.due(now_ms, o.turn_timeout_s), tuple(due))]
    return pay(o, hands, first, due, -1, now_ms)


def pay(o: Options, hands: Sequence[Counts], first: int, due: Sequence[Due], sitting: int,
        now_ms: int) -> list[Any]:
    """进贡 in order (落贡, 烧贡, 闷贡): each payer gives his best cards, which join the
    receiver's hand; dues touching a seat that sits out are dropped. No dues: first lead."""
    owed = [d for d in due if sitting not in (d.from_seat, d.to_seat)]
    if not owed:
        leader = first if first != sitting else (first + 1) % SEATS
        return [TurnStarted(leader, True, False, clock.due(now_ms, o.turn_timeout_s))]
    at = clock.due(now_ms, o.return_timeout_s)
    held = list(hands)
    events: list[Any] = []
    for d in owed:
        best = C.to_counts(C.from_counts(held[d.from_seat])[: d.count])
        held[d.from_seat] = C.sub(held[d.from_seat], best)
        held[d.to_seat] = C.add(held[d.to_seat], best)
        events.append(TributePaid(d.from_seat, d.to_seat, C.names(C.from_counts(best)), at,
                                  d.kind))
    return events


def return_choices(hand: Counts, n: int, start: int = 0) -> list[Counts]:
    """Every distinct multiset of ``n`` cards from the hand (the 还贡 a receiver may make)."""
    if n == 0:
        return [(0,) * C.NRANKS]
    out: list[Counts] = []
    for r in range(start, C.NRANKS):
        if hand[r]:
            one = put(hand, r, hand[r] - 1)
            for rest in return_choices(one, n - 1, r):
                out.append(put(rest, r, rest[r] + 1))
    return out
