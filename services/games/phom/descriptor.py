"""Phỏm (Tá lả) as the rest of the system sees it: see :mod:`chieu.games.descriptor`."""

from chieu.games.descriptor import Descriptor, Exercise, Titles
from chieu.games.fairness import Fairness, Label
from chieu.games.phom.options import MAX_MOVE_UNITS, Options
from chieu.games.phom.vectors import VECTORS

EATEN_AT_MOST = 4
"""How many of one seat's discards can be eaten (each pays a chốt or an eat)."""
ACCUSED_AT_MOST = 2
"""Wrong bắt báo one seat is reserved for (more are capped within the reservation)."""


def max_loss(options: Options, seats: int) -> int:
    """The gà deal, the eats, wrong accusations, then the worst end of §A4 (one per hand): an ù
    đền, a báo caught, an ù láo, or a móm / last rank."""
    a, others = options.amounts, seats - 1
    end = max(others * max(a.u_thuong, a.u_tron, a.u_khan), others * a.bao, others * a.u_lao,
              a.mom, max(a.rank, default=seats - 1))
    eats = EATEN_AT_MOST * max(a.chot, a.eat1, a.eat2)
    return (1 if options.ga else 0) + eats + ACCUSED_AT_MOST * a.wrong_accusation + end


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
    max_loss=max_loss,
    rules_file="phom.md",
    fairness=Fairness(
        labels=(
            Label("deal", "the deck"),
            Label("timeout:<k>", "an auto-played discard"),
        ),
        vectors=VECTORS,
    ),
)
