"""Phỏm (Tá lả), 2–4 players, Net Việt rules: eat, draw, lay, send, Ù, báo, the gà pot, chốt."""

from chieu.table.rules.phom.game import GAME

__all__ = ["GAME"]
