"""The registry of games: every subpackage of :mod:`chieu.games` that exports a ``GAME`` and a
``DESCRIPTOR`` is a game, found by looking, never listed by hand.

The game with key ``k`` is the package ``chieu.games.<k>``: its rules (``GAME``), its descriptor
(``DESCRIPTOR``), its generated contract (``chieu.games.<k>.v1``) and its scenario hooks
(``HOOKS`` in ``chieu.games.<k>.scenario``, imported only when asked for: the rules never import
them). A new package is all the
table service, the lobby, the ladder, the scenario runner, the auditor and the tools need.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache
from typing import Any

import chieu.games as _games
from chieu.games.core import Game, ScenarioHooks
from chieu.games.descriptor import Descriptor

NOT_GAMES = frozenset({"v1"})
"""Subpackages of ``chieu.games`` that are not games: the shared contract (``chieu.games.v1``)."""


class UnknownGame(KeyError):
    """No game is registered under that key."""


def _discover() -> tuple[tuple[str, ...], dict[str, Descriptor], dict[str, Game[Any, Any, Any, Any]]]:
    found: dict[str, tuple[Descriptor, Game[Any, Any, Any, Any]]] = {}
    for info in pkgutil.iter_modules(_games.__path__):
        if not info.ispkg or info.name in NOT_GAMES or info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{_games.__name__}.{info.name}")
        descriptor = getattr(module, "DESCRIPTOR", None)
        game = getattr(module, "GAME", None)
        if descriptor is None or game is None:
            raise ImportError(f"chieu.games.{info.name} is a game package without GAME and DESCRIPTOR")
        if descriptor.key != info.name or game.key != info.name:
            raise ImportError(f"chieu.games.{info.name} names itself {descriptor.key!r} / {game.key!r}")
        if (game.min_players, game.max_players) != (descriptor.min_seats, descriptor.max_seats):
            raise ImportError(f"chieu.games.{info.name}: the descriptor's seats differ from the rules'")
        found[info.name] = (descriptor, game)
    keys = tuple(sorted(found, key=lambda k: (found[k][0].sort, k)))
    return keys, {k: found[k][0] for k in keys}, {k: found[k][1] for k in keys}


KEYS, _DESCRIPTORS, _GAMES = _discover()
"""Every game key, in the order the games are listed (their descriptors' ``sort``)."""


def get(key: str) -> Game[Any, Any, Any, Any]:
    """The rules of the game registered under ``key``."""
    try:
        return _GAMES[key]
    except KeyError:
        raise UnknownGame(key) from None


def descriptor(key: str) -> Descriptor:
    """The descriptor of the game registered under ``key``."""
    try:
        return _DESCRIPTORS[key]
    except KeyError:
        raise UnknownGame(key) from None


def keys() -> tuple[str, ...]:
    """Every registered game key."""
    return KEYS


@cache
def descriptors() -> tuple[Descriptor, ...]:
    """Every game's descriptor, in the order the games are listed."""
    return tuple(_DESCRIPTORS.values())


def team_games() -> frozenset[str]:
    """The games whose results are a team's."""
    return frozenset(d.key for d in descriptors() if d.team_results)


@cache
def scenario(key: str) -> ScenarioHooks:
    """The scenario hooks of the game registered under ``key`` (``HOOKS`` of its ``scenario`` module)."""
    if key not in _GAMES:
        raise UnknownGame(key)
    hooks = getattr(importlib.import_module(f"{_games.__name__}.{key}.scenario"), "HOOKS", None)
    if not isinstance(hooks, ScenarioHooks):
        raise ImportError(f"chieu.games.{key}.scenario has no HOOKS = ScenarioHooks(...)")
    return hooks
