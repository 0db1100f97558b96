"""The registry of games by their stable keys (``o_an_quan``, ``phom``, ...).

The game with key ``k`` is the package ``chieu.table.rules.<k>``, which exports ``GAME``; its
contract is the proto package ``chieu.games.<k>.v1``. Adding the key to :data:`KEYS` is all the
table service, the scenario runner and the auditor need.
"""

from __future__ import annotations

import importlib
from functools import cache
from typing import Any

from chieu.table.rules.core import Game

KEYS: tuple[str, ...] = ("o_an_quan", "mahjong", "xiangqi", "phom", "gouji", "dominoes", "lianliankan")
"""Every registered game key, in the order they were added."""


class UnknownGame(KeyError):
    """No game is registered under that key."""


@cache
def get(key: str) -> Game[Any, Any]:
    """The game registered under ``key``."""
    if key not in KEYS:
        raise UnknownGame(key)
    game: Game[Any, Any] = importlib.import_module(f"chieu.table.rules.{key}").GAME
    return game


def keys() -> tuple[str, ...]:
    """Every registered game key."""
    return KEYS
