"""Ô ăn quan (吃官棋) as the rest of the system sees it: see :mod:`chieu.games.descriptor`."""

from chieu.games.descriptor import Descriptor, Exercise, Titles
from chieu.games.fairness import Fairness, Label
from chieu.games.o_an_quan.drawing import draw
from chieu.games.o_an_quan.options import MAX_MOVE_UNITS
from chieu.games.o_an_quan.vectors import VECTORS

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
    rules_file="o_an_quan.md",
    fairness=Fairness(
        labels=(
            Label("first_player", "who sows first"),
        ),
        vectors=VECTORS,
    ),
)
