"""Ô ăn quan's vector of docs/fairness.md: who sows first on the first hand (label
``first_player``), from the code on the page's fixed seeds."""

from __future__ import annotations

from typing import Any

from chieu.games.fairness import Vector, setup
from chieu.games.o_an_quan.game import GAME
from chieu.games.o_an_quan.model import Started


def first() -> dict[str, Any]:
    """The first hand's first player."""
    started = GAME.start(setup(GAME, 2))[0]
    assert isinstance(started, Started)
    return {"players": 2, "first": started.first}


VECTORS: dict[str, Vector] = {"2": first}
