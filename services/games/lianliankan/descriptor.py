"""Nối thú (连连看) as the rest of the system sees it: see :mod:`chieu.games.descriptor`."""

from chieu.games.descriptor import Descriptor, Exercise, Titles
from chieu.games.fairness import Fairness, Label
from chieu.games.lianliankan.scoring import SCORE_TABLE
from chieu.games.lianliankan.vectors import VECTORS


def max_loss(options: object, seats: int) -> int:
    """The last place's score of §4.3 (5 at every table size), paid to the winner."""
    return max(-min(row) for row in SCORE_TABLE.values())


DESCRIPTOR = Descriptor(
    key="lianliankan",
    titles=Titles(vi="Nối thú (连连看)", zh="连连看", en="Lianliankan (Tile Link)"),
    min_seats=2,
    max_seats=6,
    sort=6,
    team_results=False,
    max_move_units=10,  # the score table of §4.3: the losers pay the winner at most 10 in all
    short_clock={"board": "14x6", "timeLimitSeconds": 90},
    exercise=Exercise(players=2, full_players=3, short_room="points", full_rooms=("points", "ladder")),
    max_loss=max_loss,
    rules_file="lianliankan.md",
    fairness=Fairness(
        labels=(
            Label("layout", "the layout"),
            Label("reshuffle:<seat>:<k>", "a dead board's reshuffle"),
        ),
        vectors=VECTORS,
    ),
)
