"""洪洞王牌麻将's vectors of docs/fairness.md: the dealer, the wall and each 赖子 mode's wild
tiles (labels ``dealer``, ``deal``, ``xiaoshouwang:<seat>``, ``djw:<seat>:<d>``), from the
code on the page's fixed seeds."""

from __future__ import annotations

from typing import Any

from chieu.games.fairness import Vector, setup
from chieu.games.mahjong.game import GAME
from chieu.games.mahjong.model import Dealt


def hand(mode: str, full: bool) -> Vector:
    """A hand of four in 赖子 mode ``mode``; ``full``: with the hands and the wall (a mode that
    sets tiles aside shows them always)."""

    def vector() -> dict[str, Any]:
        options = {"laiziMode": mode}
        d = GAME.start(setup(GAME, 4, options))[0]
        assert isinstance(d, Dealt)
        out: dict[str, Any] = {"players": 4, "options": options, "dealer": d.dealer}
        if full or d.set_aside:
            out |= {"set_aside": list(d.set_aside), "hands": [list(h.tiles) for h in d.hands], "wall": list(d.wall)}
        return out | {"indicator": d.indicator, "laizi": list(d.laizi)}

    return vector


VECTORS: dict[str, Vector] = {
    "putong": hand("普通", True),
    "yizhiwang": hand("一支王", True),
    "xiaoshouwang": hand("小手王", False),
    "dajiangwang": hand("大将王黑风报", False),
}
