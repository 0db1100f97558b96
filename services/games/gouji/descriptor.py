"""Gouji (够级) as the rest of the system sees it: see :mod:`chieu.games.descriptor`."""

from chieu.games.descriptor import Descriptor, Exercise, Titles
from chieu.games.fairness import Fairness, Label
from chieu.games.gouji.scoring import PLACE_POINTS
from chieu.games.gouji.vectors import VECTORS


def max_loss(options: object, seats: int) -> int:
    """A seat pays its opposite its team's total (§2.6): at most 4 + 2 + 0, doubled (串三户)."""
    return 2 * sum(p for p in PLACE_POINTS if p > 0)


DESCRIPTOR = Descriptor(
    key="gouji",
    titles=Titles(vi="Gouji (够级)", zh="够级", en="Gouji"),
    min_seats=6,
    max_seats=6,
    sort=4,
    team_results=True,
    max_move_units=36,  # three seats of the losing team pay at most 12 each (6 doubled, §2.6)
    short_clock={"turnSeconds": 3, "tributeReturnSeconds": 3},
    exercise=Exercise(players=6, full_players=6, short_room="points", full_rooms=("points",)),
    max_loss=max_loss,
    rules_file="gouji.md",
    fairness=Fairness(
        labels=(
            Label("deal", "the four decks"),
            Label("redeal:<n>", "a 革命 redeal"),
        ),
        vectors=VECTORS,
    ),
)
