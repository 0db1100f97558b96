"""Cờ tướng (中国象棋) as the rest of the system sees it: see :mod:`chieu.games.descriptor`."""

from chieu.games.descriptor import Descriptor, Exercise, Titles, Tool
from chieu.games.xiangqi import perft
from chieu.games.xiangqi.drawing import draw
from chieu.games.xiangqi.game import WIN_POINTS


def max_loss(options: object, seats: int) -> int:
    """The loser pays the winner 2 cược (coins.md §6.5: Xiangqi ±2); nothing else moves."""
    return WIN_POINTS


DESCRIPTOR = Descriptor(
    key="xiangqi",
    titles=Titles(vi="Cờ tướng", zh="中国象棋", en="Chinese Chess"),
    min_seats=2,
    max_seats=2,
    sort=2,
    team_results=False,
    max_move_units=2,  # the loser pays the winner WIN_POINTS (chieu.games.xiangqi.game)
    short_clock={"timeControl": "1min/20+1min/10", "moveLimit": "120-plies"},
    exercise=Exercise(players=2, full_players=2, short_room="ladder", full_rooms=("points", "coins", "ladder")),
    draw=draw,
    max_loss=max_loss,
    rules_file="xiangqi.md",
    tools=(Tool("perft", perft.HELP, perft.arguments, perft.run),),
)
