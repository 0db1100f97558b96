"""The end of a 够级 game and its scores: §2.6 of shared/rules/gouji.md.

Places 头科 (1st), 二科, 三科, 四科, 二落, 大落 (6th) score 4, 2, 0, 0, −2, −4; each seat's score
is its team's total, doubled for 串三户 (one team takes 1st, 2nd and 3rd).
"""

from __future__ import annotations

from collections.abc import Sequence

from chieu.games.gouji.model import SEATS, GameEnded, State, team
from chieu.games.gouji.turns import active, free_places

PLACE_POINTS = (4, 2, 0, 0, -2, -4)
"""Place points of 头科, 二科, 三科, 四科, 二落, 大落 (§2.6.2)."""
PLACE_NAMES = ("", "头科", "二科", "三科", "四科", "二落", "大落")
SIT_OUT_PLACE = 4
"""革命: the seat that sits out is ranked 四科 (0 place points) and shares its team's total."""


def settle(places: Sequence[int]) -> tuple[tuple[int, int], bool]:
    """Team totals (A, B) for places per seat (§2.6), and whether 串三户 doubled them."""
    totals = [0, 0]
    for seat, place in enumerate(places):
        totals[team(seat)] += PLACE_POINTS[place - 1]
    top3 = {team(seat) for seat, place in enumerate(places) if place <= 3}
    doubled = len(top3) == 1
    if doubled:
        totals = [2 * t for t in totals]
    return (totals[0], totals[1]), doubled


def game_end(s: State) -> GameEnded | None:
    """The end of the game if it is over (at most one seat holds cards, or only teammates
    under ``END_EARLY_WHEN_ONE_TEAM_LEFT``): those left take the free places by fewest cards,
    then seat; 闷 are the seats left holding only 3s."""
    left = [p for p in range(SEATS) if active(s, p)]
    reason = "finished"
    if len(left) > 1:
        if not (s.options.end_early and len({team(p) for p in left}) == 1):
            return None
        reason = "one_team_left"
    places = list(s.places)
    left.sort(key=lambda p: (sum(s.hands[p]), p))
    for p, place in zip(left, free_places(s), strict=False):
        places[p] = place
    (a, b), doubled = settle(places)
    men = tuple(sorted(p for p in left if s.hands[p][0] == sum(s.hands[p])))
    return GameEnded(tuple(places), (a, b), tuple(a if team(i) == 0 else b for i in range(SEATS)),
                     doubled, reason, s.shao, men)
