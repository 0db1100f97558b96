"""Each game declares the union of its commands and of its events (``GameCommand``, ``GameEvent`` in its
``model``) and is checked by mypy --strict as the contract over them (``CONTRACT`` in its ``game``): the
unions are exactly the types the registry decodes (``GAME.commands``, ``GAME.events``)."""

from __future__ import annotations

import importlib
import types
from typing import Union, get_args, get_origin

from chieu.games import registry


def _members(alias: object) -> set[type]:
    if get_origin(alias) in (Union, types.UnionType):
        return set(get_args(alias))
    assert isinstance(alias, type)
    return {alias}


def test_every_game_declares_its_unions() -> None:
    for key in registry.KEYS:
        model = importlib.import_module(f"chieu.games.{key}.model")
        game = importlib.import_module(f"chieu.games.{key}.game")
        assert _members(model.GameCommand) == set(registry.get(key).commands), key
        assert _members(model.GameEvent) == set(registry.get(key).events), key
        assert game.CONTRACT is game.GAME is registry.get(key), key
