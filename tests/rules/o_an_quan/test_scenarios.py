"""Every Ô ăn quan scenario of shared/rules/o_an_quan.md, through the scenario runner."""

from __future__ import annotations

from pathlib import Path

import pytest

from chieu.table.scenario import load, run_scenario

FOLDER = Path(__file__).parents[2] / "scenarios" / "o_an_quan"
CASES = [(p, s) for p in sorted(FOLDER.glob("*.yaml")) for s in load(p)]


def test_every_rules_scenario_has_a_file() -> None:
    ids = {str(s["id"]) for _, s in CASES}
    for wanted in ("OQ-01", "OQ-02", "OQ-03", "OQ-04", "OQ-05", "OQ-06a", "OQ-06b", "OQ-09",
                   "OQ-10", "OQ-12", "OQ-13"):
        assert wanted in ids


@pytest.mark.parametrize(("path", "spec"), CASES, ids=[str(s["id"]) for _, s in CASES])
def test_scenario(path: Path, spec: dict[str, object]) -> None:
    result = run_scenario(spec, str(path))
    assert result.passed, "\n".join(result.failures)
