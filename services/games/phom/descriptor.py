"""Phỏm (Tá lả) as the rest of the system sees it: see :mod:`chieu.games.descriptor`."""

from chieu.games.descriptor import Descriptor, Exercise, Titles
from chieu.games.fairness import Fairness, Label
from chieu.games.phom.options import MAX_MOVE_UNITS
from chieu.games.phom.vectors import VECTORS

DESCRIPTOR = Descriptor(
    key="phom",
    titles=Titles(vi="Phỏm", zh="越南纸牌 Phỏm", en="Phom (Ta La)"),
    min_seats=2,
    max_seats=4,
    sort=3,
    team_results=False,
    max_move_units=MAX_MOVE_UNITS,
    short_clock={"turnSeconds": 3, "uWindowSeconds": 1},
    exercise=Exercise(players=3, full_players=4, short_room="coins", full_rooms=("points", "coins", "ladder")),
    rules_file="phom.md",
    fairness=Fairness(
        labels=(
            Label("deal", "the deck"),
            Label("timeout:<k>", "an auto-played discard"),
        ),
        vectors=VECTORS,
    ),
)
