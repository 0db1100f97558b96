"""Mạt chược Hồng Động (洪洞王牌麻将) as the rest of the system sees it: see :mod:`chieu.games.descriptor`."""

from chieu.games.descriptor import Descriptor, Exercise, Titles
from chieu.games.fairness import Fairness, Label
from chieu.games.mahjong.options import Options
from chieu.games.mahjong.vectors import VECTORS

HAND_CAP = 100
"""Above every hand value H of §1.7 (every pattern stacked with every run is 94)."""
GANG_CAP = 24
"""Every other seat's gangs at 2 each (4 sets each, 3 other seats)."""


def max_loss(options: Options, seats: int) -> int:
    """The winner's H from each other seat (+ DEALER_BONUS), and the gang points (§1.7)."""
    return HAND_CAP + options.dealer_bonus + GANG_CAP


DESCRIPTOR = Descriptor(
    key="mahjong",
    titles=Titles(vi="Mạt chược Hồng Động", zh="洪洞王牌麻将", en="Hongtong Mahjong"),
    min_seats=2,
    max_seats=4,
    sort=1,
    team_results=False,
    max_move_units=400,  # the win: 3 payers × (H ≤ 94 + dealer bonus 1), plus at most 16 gangs × 2 × 3
    short_clock={"turnSeconds": 3, "claimSeconds": 2, "pairSeconds": 3},
    exercise=Exercise(players=3, full_players=4, short_room="points", full_rooms=("points", "coins")),
    max_loss=max_loss,
    rules_file="mahjong.md",
    fairness=Fairness(
        labels=(
            Label("deal", "the wall"),
            Label("dealer", "a random dealer (庄)"),
            Label("xiaoshouwang:<seat>", "小手王's exposed tile"),
            Label("djw:<seat>:<d>", "大将王黑风报's dragon on a tie"),
        ),
        vectors=VECTORS,
    ),
)
