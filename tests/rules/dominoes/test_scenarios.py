"""Every Đô Mi Nô scenario of shared/rules/dominoes.md, through the scenario runner."""

from __future__ import annotations

from pathlib import Path

import pytest

from chieu.table.scenario import Result, run_files

FOLDER = Path(__file__).parents[2] / "scenarios" / "dominoes"
RESULTS = run_files([str(FOLDER)])


def test_every_rules_scenario_has_a_file() -> None:
    ids = {r.id for r in RESULTS}
    for wanted in ("DM-01", "DM-02", "DM-03", "DM-04", "DM-06", "DM-08", "DM-10", "DM-12"):
        assert wanted in ids


@pytest.mark.parametrize("result", RESULTS, ids=[r.id for r in RESULTS])
def test_scenario(result: Result) -> None:
    assert result.passed, "\n".join(result.failures)
    assert result.steps or result.id.startswith(("DM-01", "LK-2", "LK-7", "LK-deal"))
