"""Every Phỏm scenario of shared/rules/phom.md (§A6), through the scenario runner."""

from __future__ import annotations

from pathlib import Path

import pytest

from chieu.table.scenario import Result, run_files

FOLDER = Path(__file__).parents[2] / "scenarios" / "phom"
RESULTS = run_files([str(FOLDER)])
RULES_IDS = (
    "PH-01", "PH-02", "PH-03", "PH-04", "PH-06", "PH-07", "PH-08", "PH-09", "PH-10", "PH-11",
    "PH-12", "PH-13", "PH-14", "PH-15", "PH-16", "PH-18", "PH-19", "PH-21", "PH-24", "PH-25",
    "PH-28", "PH-29", "PH-30",
)


def test_every_rules_scenario_has_a_file() -> None:
    ids = {r.id for r in RESULTS}
    assert set(RULES_IDS) <= ids, sorted(set(RULES_IDS) - ids)


@pytest.mark.parametrize("result", RESULTS, ids=[r.id for r in RESULTS])
def test_scenario(result: Result) -> None:
    assert result.passed, "\n".join(result.failures)
