"""Every game's bound on one seat's loss in a hand (``Descriptor.max_loss``, issue 32): what a coin
table reserves of each seat before the hand starts. Every game has one, positive at every table
size, and no worked scenario of the rules files (tests/scenarios, their expected ``net``) loses a
seat more than it. (A loss beyond the bound is not lost money: the table caps the hand's
settlements within the reservations, tests/table/test_capped.py; the bound makes that rare.)"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from chieu.games import registry
from chieu.scenario_files import expand, load

FOLDER = Path(__file__).resolve().parents[1] / "scenarios"


@pytest.mark.parametrize("key", registry.KEYS)
def test_every_game_bounds_a_seats_loss_at_every_table_size(key: str) -> None:
    bound = registry.descriptor(key).max_loss
    assert bound is not None, f"{key} has no max_loss: it could not be played for 金币"
    game = registry.get(key)
    options = game.parse_options({})
    assert all(bound(options, n) >= 1 for n in range(game.min_players, game.max_players + 1))


def nets(spec: Any) -> Iterator[list[int]]:
    """Every expected ``net`` of an outcome anywhere in a scenario."""
    if isinstance(spec, Mapping):
        if isinstance(spec.get("outcome"), Mapping) and "net" in spec["outcome"]:
            yield list(spec["outcome"]["net"])
        for v in spec.values():
            yield from nets(v)
    elif isinstance(spec, list):
        for v in spec:
            yield from nets(v)


def test_no_worked_scenario_loses_a_seat_more_than_its_bound() -> None:
    checked = 0
    for key in registry.KEYS:
        game, bound = registry.get(key), registry.descriptor(key).max_loss
        assert bound is not None
        for path in expand([str(FOLDER / key)]):
            for spec in load(path):
                players = int(spec.get("players", game.min_players))
                most = bound(game.parse_options(spec.get("options") or {}), players)
                for net in nets(spec):
                    checked += 1
                    assert -min(net) <= most, f"{key} {spec.get('id')}: a seat loses {-min(net)}, bound {most}"
    assert checked >= 30
