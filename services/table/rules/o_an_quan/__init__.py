"""Ô ăn quan (mandarin square capturing), two players."""

from chieu.table.rules.o_an_quan.game import GAME

__all__ = ["GAME"]
