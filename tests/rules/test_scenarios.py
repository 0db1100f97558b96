"""Every game's scenario files (tests/scenarios/<game>/) pass through the scenario runner, and
every worked scenario of each rules file (shared/rules/<game>.md) has one."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from chieu.games import registry
from chieu.games.scenarios import run_scenario
from chieu.scenario_files import expand, load

FOLDER = Path(__file__).resolve().parents[1] / "scenarios"

IDS_FILE = "rules-ids.txt"
"""In each game's folder of scenarios: the ids of its rules file's worked scenarios that have a
scenario there, one a line (``#`` starts a comment): the game's own list, beside its scenarios."""


def rules_file_ids(key: str) -> tuple[str, ...]:
    """The worked scenarios of ``key``'s rules file that must have a scenario."""
    path = FOLDER / key / IDS_FILE
    assert path.is_file(), f"{key}: list its rules file's worked scenarios in tests/scenarios/{key}/{IDS_FILE}"
    lines = (line.split("#", 1)[0].strip() for line in path.read_text(encoding="utf-8").splitlines())
    return tuple(line for line in lines if line)


def _cases() -> list[tuple[str, Path, Mapping[str, Any]]]:
    return [(key, path, spec) for key in registry.KEYS for path in expand([str(FOLDER / key)])
            for spec in load(path)]


CASES = _cases()


def test_every_game_has_its_rules_files_scenarios() -> None:
    assert {p.name for p in FOLDER.iterdir() if p.is_dir()} == set(registry.KEYS)
    for key in registry.KEYS:
        wanted = rules_file_ids(key)
        ids = {str(spec.get("id")) for k, _, spec in CASES if k == key}
        assert set(wanted) <= ids, f"{key}: no scenario for {sorted(set(wanted) - ids)}"


@pytest.mark.parametrize(("key", "path", "spec"), CASES,
                         ids=[f"{key}:{spec.get('id')}" for key, _, spec in CASES])
def test_scenario(key: str, path: Path, spec: Mapping[str, Any]) -> None:
    assert spec.get("game") == key, f"{path} is in {key}'s folder but plays {spec.get('game')}"
    assert spec.get("steps") or spec.get("queries") or spec.get("expect"), f"{spec.get('id')} checks nothing"
    result = run_scenario(spec, str(path))
    assert result.passed, "\n".join(result.failures)
