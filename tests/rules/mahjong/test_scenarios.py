"""Every worked scenario of shared/rules/mahjong.md §1.10, run through the scenario runner."""

from __future__ import annotations

from pathlib import Path

import pytest

from chieu.table.scenario import expand, load, run_scenario

FOLDER = Path(__file__).resolve().parents[2] / "scenarios" / "mahjong"
CASES = [(str(path), spec) for path in expand([str(FOLDER)]) for spec in load(path)]


def test_every_rules_file_scenario_has_a_file() -> None:
    ids = {str(spec["id"]) for _, spec in CASES}
    wanted = {f"MJ-{n}" for n in (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 13, 14, 15, 17, 18, 21, 22, 23, 25,
                                  29, 30, 31)}
    assert wanted <= ids


@pytest.mark.parametrize(("path", "spec"), CASES, ids=[str(s["id"]) for _, s in CASES])
def test_scenario(path: str, spec: dict[str, object]) -> None:
    result = run_scenario(spec, path)
    assert result.passed, "\n".join(result.failures)
