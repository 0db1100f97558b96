"""中国象棋 (Xiangqi, Chinese chess) for two players, Red (红, seat 0, moves first) and Black (黑,
seat 1), with the 将帅对面 rule, 困毙 (stalemate) as a loss, 长将 / optional AXF 长捉, the move
limit and the period clock; rules ``shared/rules/xiangqi.md`` §3."""

from chieu.games.xiangqi.descriptor import DESCRIPTOR
from chieu.games.xiangqi.game import GAME

__all__ = ["DESCRIPTOR", "GAME"]
