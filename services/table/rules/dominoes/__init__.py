"""Đô Mi Nô (Vinagames dominoes) with triệt / triệt buộc / gài triệt, 2–4 players."""

from chieu.table.rules.dominoes.game import GAME

__all__ = ["GAME"]
