"""Ô ăn quan (吃官棋) as the rest of the system sees it: see :mod:`chieu.games.descriptor`."""

from chieu.games.descriptor import Descriptor, Exercise, Titles
from chieu.games.fairness import Fairness, Label
from chieu.games.o_an_quan.drawing import draw
from chieu.games.o_an_quan.options import MAX_MOVE_UNITS, Options
from chieu.games.o_an_quan.vectors import VECTORS


def max_loss(options: Options, seats: int) -> int:
    """1 cược (``payout=fixed``), or the score difference (``perPoint``): at most every piece on
    the board, 50 dân and the two quan."""
    return 1 if options.payout == "fixed" else 50 + 2 * options.quan_value


DESCRIPTOR = Descriptor(
    key="o_an_quan",
    titles=Titles(vi="Ô ăn quan", zh="越南播棋", en="Mandarin Square Capturing"),
    min_seats=2,
    max_seats=2,
    sort=0,
    team_results=False,
    max_move_units=MAX_MOVE_UNITS,
    short_clock={"turnSeconds": 3},
    exercise=Exercise(players=2, full_players=2, short_room="points", full_rooms=("points", "coins", "ladder")),
    draw=draw,
    max_loss=max_loss,
    rules_file="o_an_quan.md",
    fairness=Fairness(
        labels=(
            Label("first_player", "who sows first"),
        ),
        vectors=VECTORS,
    ),
)
