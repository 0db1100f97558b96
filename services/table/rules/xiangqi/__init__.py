"""中国象棋 (Xiangqi, Chinese chess), two players: Red (seat 0) and Black (seat 1)."""

from chieu.table.rules.xiangqi.game import GAME

__all__ = ["GAME"]
