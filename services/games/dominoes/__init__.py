"""Đô Mi Nô (Vinagames dominoes) for 2–4 players: a double-six set, bốc (draw) from the
boneyard, and the triệt (blocked game) rules — triệt buộc, người triệt, gài triệt; rules
``shared/rules/dominoes.md`` part B (DM-R1…R12, §B4–B5)."""

from chieu.games.dominoes.descriptor import DESCRIPTOR
from chieu.games.dominoes.game import GAME

__all__ = ["DESCRIPTOR", "GAME"]
