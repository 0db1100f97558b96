"""Every game's scenario files (tests/scenarios/<game>/) pass through the scenario runner, and
every worked scenario of each rules file (shared/rules/<game>.md) has one."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from chieu.games import registry
from chieu.table.scenario import expand, load, run_scenario

FOLDER = Path(__file__).resolve().parents[1] / "scenarios"

RULES_FILE_IDS: dict[str, tuple[str, ...]] = {
    "o_an_quan": ("OQ-01", "OQ-02", "OQ-03", "OQ-04", "OQ-05", "OQ-06a", "OQ-06b", "OQ-09", "OQ-10", "OQ-12",
                  "OQ-13"),
    "phom": ("PH-01", "PH-02", "PH-03", "PH-04", "PH-06", "PH-07", "PH-08", "PH-09", "PH-10", "PH-11", "PH-12",
             "PH-13", "PH-14", "PH-15", "PH-16", "PH-18", "PH-19", "PH-21", "PH-24", "PH-25", "PH-28", "PH-29",
             "PH-30"),
    "dominoes": ("DM-01", "DM-02", "DM-03", "DM-04", "DM-06", "DM-08", "DM-10", "DM-12"),
    "mahjong": tuple(f"MJ-{n}" for n in (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 13, 14, 15, 17, 18, 21, 22, 23, 25,
                                         29, 30, 31)),
    "gouji": tuple(f"GJ-{n}" for n in (1, 2, 3, 5, 6, 9, 10, 11, 13, 15, 17)),
    "xiangqi": ("XQ-1", "XQ-2", "XQ-3", "XQ-4", "XQ-6", "XQ-7", "XQ-11", "XQ-12", "XQ-13"),
    "lianliankan": ("LK-1", "LK-2", "LK-3", "LK-4", "LK-6", "LK-7", "LK-8", "LK-10"),
}
"""The worked scenarios of each rules file that have a scenario (the rules files' own ids)."""


def _cases() -> list[tuple[str, Path, Mapping[str, Any]]]:
    return [(key, path, spec) for key in registry.KEYS for path in expand([str(FOLDER / key)])
            for spec in load(path)]


CASES = _cases()


def test_every_game_has_its_rules_files_scenarios() -> None:
    assert set(RULES_FILE_IDS) == set(registry.KEYS)
    for key, wanted in RULES_FILE_IDS.items():
        ids = {str(spec.get("id")) for k, _, spec in CASES if k == key}
        assert set(wanted) <= ids, f"{key}: no scenario for {sorted(set(wanted) - ids)}"


@pytest.mark.parametrize(("key", "path", "spec"), CASES,
                         ids=[f"{key}:{spec.get('id')}" for key, _, spec in CASES])
def test_scenario(key: str, path: Path, spec: Mapping[str, Any]) -> None:
    assert spec.get("game") == key, f"{path} is in {key}'s folder but plays {spec.get('game')}"
    assert spec.get("steps") or spec.get("queries") or spec.get("expect"), f"{spec.get('id')} checks nothing"
    result = run_scenario(spec, str(path))
    assert result.passed, "\n".join(result.failures)
