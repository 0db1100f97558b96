"""Ô ăn quan (mandarin square capturing) for two players, A (South) and B (North): sow dân round
a ring of ten dân squares and two quan (mandarin) squares, capture what lies beyond an empty
square; rules ``shared/rules/o_an_quan.md`` (OQ-R1…R14)."""

from chieu.games.o_an_quan.descriptor import DESCRIPTOR
from chieu.games.o_an_quan.game import GAME

__all__ = ["DESCRIPTOR", "GAME"]
