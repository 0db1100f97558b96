"""Đô Mi Nô's vectors of docs/fairness.md: the deal and the leader (labels ``deal`` and
``leader``), from the code on the page's fixed seeds."""

from __future__ import annotations

from typing import Any

from chieu.games.dominoes.game import GAME
from chieu.games.dominoes.model import Dealt
from chieu.games.fairness import Vector, setup


def hand(players: int) -> Vector:
    """A hand of ``players``: the tiles dealt, the leader, the boneyard."""

    def vector() -> dict[str, Any]:
        dealt = GAME.start(setup(GAME, players))[0]
        assert isinstance(dealt, Dealt)
        return {"players": players, "leader": dealt.leader, "hands": [[str(t) for t in h.tiles] for h in dealt.hands],
                "boneyard": [str(t) for t in dealt.boneyard]}

    return vector


VECTORS: dict[str, Vector] = {"4": hand(4), "2": hand(2)}
