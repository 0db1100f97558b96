"""Every 连连看 scenario of shared/rules/lianliankan.md, through the scenario runner."""

from __future__ import annotations

from pathlib import Path

import pytest

from chieu.table.scenario import Result, run_files

FOLDER = Path(__file__).parents[2] / "scenarios" / "lianliankan"
RESULTS = run_files([str(FOLDER)])


def test_every_rules_scenario_has_a_file() -> None:
    ids = {r.id for r in RESULTS}
    for wanted in ("LK-1", "LK-2", "LK-3", "LK-4", "LK-6", "LK-7", "LK-8", "LK-10"):
        assert wanted in ids


@pytest.mark.parametrize("result", RESULTS, ids=[r.id for r in RESULTS])
def test_scenario(result: Result) -> None:
    assert result.passed, "\n".join(result.failures)
    assert result.steps or result.id.startswith(("DM-01", "LK-2", "LK-7", "LK-deal"))
