"""The registry of games by their stable keys (``o_an_quan``, ``phom``, ...).

A game module exports ``GAME``; adding one here is all the table service needs.
"""

from __future__ import annotations

import importlib
from functools import cache
from typing import Any

from chieu.table.rules.core import Game

GAME_MODULES: dict[str, str] = {
    "o_an_quan": "chieu.table.rules.o_an_quan",
    "mahjong": "chieu.table.rules.mahjong",
    "xiangqi": "chieu.table.rules.xiangqi",
    "phom": "chieu.table.rules.phom",
    "gouji": "chieu.table.rules.gouji",
    "dominoes": "chieu.table.rules.dominoes",
    "lianliankan": "chieu.table.rules.lianliankan",
}


class UnknownGame(KeyError):
    """No game is registered under that key."""


@cache
def get(key: str) -> Game[Any, Any]:
    """The game registered under ``key``."""
    module = GAME_MODULES.get(key)
    if module is None:
        raise UnknownGame(key)
    game: Game[Any, Any] = importlib.import_module(module).GAME
    return game


def keys() -> tuple[str, ...]:
    """Every registered game key."""
    return tuple(GAME_MODULES)
