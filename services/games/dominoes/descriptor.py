"""Đô Mi Nô (多米诺骨牌) as the rest of the system sees it: see :mod:`chieu.games.descriptor`."""

from chieu.games.descriptor import Descriptor, Exercise, Titles
from chieu.games.dominoes.options import MAX_MOVE_UNITS, Options
from chieu.games.dominoes.vectors import VECTORS
from chieu.games.fairness import Fairness, Label

SET_PIPS = 168
"""Every pip of a double-six set."""


def max_loss(options: Options, seats: int) -> int:
    """The largest payment of §B4: a gài triệt pays twice the others' pips (at most the set's)."""
    return 2 * SET_PIPS * options.pip_stake


DESCRIPTOR = Descriptor(
    key="dominoes",
    titles=Titles(vi="Đô Mi Nô", zh="多米诺骨牌", en="Dominoes"),
    min_seats=2,
    max_seats=4,
    sort=5,
    team_results=False,
    max_move_units=MAX_MOVE_UNITS,
    short_clock={"turnSeconds": 3},
    exercise=Exercise(players=3, full_players=3, short_room="points", full_rooms=("points", "coins", "ladder")),
    max_loss=max_loss,
    rules_file="dominoes.md",
    fairness=Fairness(
        labels=(
            Label("deal", "the tiles"),
            Label("leader", "a random leader"),
        ),
        vectors=VECTORS,
    ),
)
