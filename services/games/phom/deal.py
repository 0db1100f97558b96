"""The Phỏm deal: who deals (người cầm cái, PH-R5), the deal itself (PH-R6…R8) and its event."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from chieu.games import clock, fair
from chieu.games.common import TurnPassed
from chieu.games.core import Transfer
from chieu.games.phom import cards as C
from chieu.games.phom.model import Dealt, Hand
from chieu.games.phom.options import Options


def next_dealer(previous_winner: int | None, owner: int, players: int, left: Sequence[int] = ()) -> int:
    """PH-R5: the previous winner deals, unless there was none or he left; then the owner."""
    if previous_winner is None or previous_winner < 0 or previous_winner >= players:
        return owner
    if previous_winner in left:
        return owner
    return previous_winner


def deal(seed: bytes, players: int, owner: int, dealer: int) -> tuple[list[list[int]], list[int], list[int]]:
    """PH-R6…R8: the deck order from the seed material, nine cards each one at a time from the
    owner (chủ bàn), a tenth to the dealer; then the usable stock (nọc, 4n−1 cards, top first)
    and the unused rest. Returns ``(hands, stock, unused)``."""
    deck = fair.shuffled(seed, C.DECK, "deal")
    hands: list[list[int]] = [[] for _ in range(players)]
    pos = 0
    for _ in range(9):
        for i in range(players):
            hands[(owner + i) % players].append(deck[pos])
            pos += 1
    hands[dealer].append(deck[pos])
    pos += 1
    usable = 4 * players - 1
    return hands, list(deck[pos : pos + usable]), list(deck[pos + usable :])


def deal_events(
    o: Options, n: int, dealer: int, owner: int, hands: Sequence[Sequence[int]],
    stock: Sequence[int], unused: Sequence[int], pot: int, now_ms: int, seed: bytes,
    window: bool,
) -> list[Any]:
    """The ``Dealt`` event (with the gà deal's payments), and the dealer's first turn when there
    is no Ù window (``window`` false, or ``uWindowSeconds`` 0)."""
    transfers = tuple(Transfer(s, None, 1, "ga_deal") for s in range(n)) if o.ga else ()
    window_ms = clock.due_if(now_ms, o.u_window_seconds) if window else 0
    events: list[Any] = [
        Dealt(
            dealer, owner, tuple(Hand(s, C.names(h)) for s, h in enumerate(hands)),
            C.names(stock), C.names(unused), pot, transfers, window_ms, seed.hex(),
        )
    ]
    if not window_ms:
        events.append(TurnPassed(dealer, clock.due(now_ms, o.turn_seconds)))
    return events
