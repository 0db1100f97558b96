"""One convention for table options (issue 24): every game's options are named in camelCase, a
duration in seconds ends in Seconds, and the rules files' other names (TURN_TIMEOUT_S,
TURN_SECONDS, LAIZI_MODE, TIME_LIMIT, ...) stay accepted as aliases."""

from __future__ import annotations

import re
from typing import Any

import pytest

from chieu.games import registry
from chieu.games.aliases import Aliases
from chieu.games.core import BadOptions

CAMEL = re.compile(r"^[a-z][a-zA-Z0-9]*$")


@pytest.mark.parametrize("key", registry.KEYS)
def test_every_option_is_named_in_camel_case_and_its_clock_in_seconds(key: str) -> None:
    """Today's main named them three ways: turnSeconds, TURN_SECONDS, TURN_TIMEOUT_S."""
    game = registry.get(key)
    names = list(game.option_values(game.parse_options({})))
    assert names and all(CAMEL.match(n) for n in names), names
    clocks = [n for n in names if re.search(r"(?i)(second|timeout|time_?limit|_s$)", n)]
    assert all(n.endswith("Seconds") for n in clocks), clocks


@pytest.mark.parametrize(("key", "old", "new", "value"), [
    ("gouji", "TURN_TIMEOUT_S", "turnSeconds", 7),
    ("gouji", "TRIBUTE_RETURN_TIMEOUT_S", "tributeReturnSeconds", 9),
    ("gouji", "SHAO_GONG", "shaoGong", "on"),
    ("mahjong", "TURN_SECONDS", "turnSeconds", 7),
    ("mahjong", "LAIZI_MODE", "laiziMode", "色牌"),
    ("xiangqi", "TIME_CONTROL", "timeControl", "15min/20+5min/5"),
    ("lianliankan", "TIME_LIMIT", "timeLimitSeconds", 90),
    ("lianliankan", "BOARD", "board", "14x6"),
])
def test_the_old_names_stay_accepted_as_aliases(key: str, old: str, new: str, value: Any) -> None:
    game = registry.get(key)
    by_old, by_new = game.parse_options({old: value}), game.parse_options({new: value})
    assert by_old == by_new != game.parse_options({})
    assert game.option_values(by_old)[new] == value and old not in game.option_values(by_old)


def test_a_later_name_wins_over_its_alias_as_a_settings_patch_does() -> None:
    """ChangeSettings merges its patch after the current options: the patch wins under either name."""
    game = registry.get("gouji")
    current = dict(game.option_values(game.parse_options({})))
    assert game.parse_options({**current, "TURN_TIMEOUT_S": 30}).turn_timeout_s == 30
    assert game.parse_options({"TURN_TIMEOUT_S": 30, "turnSeconds": 12}).turn_timeout_s == 12


def test_an_alias_is_refused_like_its_name() -> None:
    game = registry.get("mahjong")
    for raw in ({"TURN_SECONDS": 0}, {"turnSeconds": 0}, {"turn_seconds": 5}):
        with pytest.raises(BadOptions):
            game.parse_options(raw)


def test_two_names_for_one_option_are_refused_when_declared() -> None:
    with pytest.raises(ValueError):
        Aliases({"a": "X", "b": "X"})
