"""洪洞王牌麻将 (Hongdong Mahjong with wild tiles), 2–4 players."""

from chieu.table.rules.mahjong.game import GAME

__all__ = ["GAME"]
