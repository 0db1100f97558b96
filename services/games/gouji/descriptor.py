"""Gouji (够级) as the rest of the system sees it: see :mod:`chieu.games.descriptor`."""

from chieu.games.descriptor import Descriptor, Exercise, Titles

DESCRIPTOR = Descriptor(
    key="gouji",
    titles=Titles(vi="Gouji (够级)", zh="够级", en="Gouji"),
    min_seats=6,
    max_seats=6,
    sort=4,
    team_results=True,
    short_clock={"turnSeconds": 3, "tributeReturnSeconds": 3},
    exercise=Exercise(players=6, full_players=6, short_room="points", full_rooms=("points",)),
    rules_file="gouji.md",
)
