"""连连看 ranking and settlement (§4.3): the score table by rank and the payments to the winner."""

from __future__ import annotations

from chieu.games.core import Transfer
from chieu.games.lianliankan.model import Finished, State

SCORE_TABLE: dict[int, tuple[int, ...]] = {
    2: (5, -5),
    3: (8, -3, -5),
    4: (10, -2, -3, -5),
    5: (10, -1, -2, -3, -4),
    6: (10, -1, -1, -2, -2, -4),
}
"""§4.3: the score by rank, winner first (the seed's second "五人" row is the six-player one)."""


def rank(state: State, winner: int | None) -> tuple[int, ...]:
    """§4.3: the winner, then by remaining tiles (ties: reached earlier, then seat); leavers
    last, the earliest leaver at the bottom."""
    stay = [i for i in range(state.players) if i not in state.left]
    stay.sort(key=lambda i: (state.boards[i].remaining, state.reached[i], i))
    if winner is not None:
        stay = [winner] + [i for i in stay if i != winner]
    return (*stay, *reversed(state.left))


def settle(state: State, reason: str, winner: int | None = None) -> Finished:
    """The ranking, the score table of §4.3 and the payments (each loser pays the winner)."""
    order = rank(state, winner)
    table = SCORE_TABLE[state.players]
    scores = [0] * state.players
    for place, seat in enumerate(order):
        scores[seat] = table[place]
    win = order[0]
    # "race_place", not Phỏm's "rank" (nhất, nhì, ba, bét): the page words a payment by its reason
    transfers = tuple(Transfer(s, win, -scores[s], "race_place") for s in order[1:] if scores[s] < 0)
    return Finished(
        reason, win, order, tuple(scores), tuple(b.remaining for b in state.boards), transfers
    )
