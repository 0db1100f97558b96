"""连连看's vectors of docs/fairness.md: the layout of each board and a dead board's reshuffle
(labels ``layout`` and ``reshuffle:<seat>:<k>``), from the code on the page's fixed seeds."""

from __future__ import annotations

from typing import Any

from chieu.games import fair
from chieu.games.fairness import Vector, material, setup
from chieu.games.lianliankan import board as llk
from chieu.games.lianliankan.game import GAME
from chieu.games.lianliankan.model import Started


def layout(board: str) -> Vector:
    """A hand of two on ``board``: the first shuffle, the repair rounds it took, the layout."""

    def vector() -> dict[str, Any]:
        options = {"board": board}
        started = GAME.start(setup(GAME, 2, options))[0]
        assert isinstance(started, Started)
        cells = started.layouts[0].cells
        assert all(lay.cells == cells for lay in started.layouts)
        # how generate() came to it: the first shuffle, and the repair rounds it took (from the code)
        s = fair.Stream(material(2), "layout")
        first = s.shuffle(llk.tile_set(started.rows, started.cols))
        repairs, work = 0, list(first)
        while stuck := llk.greedy_remaining(started.rows, started.cols, work):
            repairs += 1
            for i, p in zip(stuck, s.shuffle([work[i] for i in stuck]), strict=True):
                work[i] = p
        assert tuple(work) == cells and repairs < llk.GENERATION_ATTEMPTS
        c = started.cols
        return {"players": 2, "options": options, "rows": started.rows, "cols": c,
                "first_shuffle": [first[r * c:(r + 1) * c] for r in range(started.rows)], "repairs": repairs,
                "layout": [list(cells[r * c:(r + 1) * c]) for r in range(started.rows)]}

    return vector


def reshuffle() -> dict[str, Any]:
    """A dead 2×2 board reshuffled (seat 0's first reshuffle)."""
    before = [1, 2, 2, 1]
    after = llk.reshuffle(llk.Board.of(2, 2, before), fair.Stream(material(2), "reshuffle:0:0"))
    return {"players": 2, "label": "reshuffle:0:0", "rows": 2, "cols": 2, "cells": before, "result": list(after.cells)}


VECTORS: dict[str, Vector] = {"18x8": layout("18x8"), "14x6": layout("14x6"), "reshuffle": reshuffle}
