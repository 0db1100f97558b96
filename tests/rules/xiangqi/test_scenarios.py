"""Every Xiangqi scenario of shared/rules/xiangqi.md §3.6, through the scenario runner."""

from __future__ import annotations

from pathlib import Path

import pytest

from chieu.table.scenario import load, run_files, run_scenario

FOLDER = Path(__file__).parents[2] / "scenarios" / "xiangqi"
CASES = [(p, s) for p in sorted(FOLDER.glob("*.yaml")) for s in load(p)]


def test_every_rules_scenario_has_a_file() -> None:
    ids = {str(s["id"]) for _, s in CASES}
    for wanted in ("XQ-1", "XQ-2", "XQ-3", "XQ-4", "XQ-6", "XQ-7", "XQ-11", "XQ-12", "XQ-13"):
        assert wanted in ids


def test_the_folder_passes_through_run_files() -> None:
    results = run_files([str(FOLDER)])
    assert len(results) == len(CASES)
    assert all(r.passed for r in results), [r.failures for r in results if not r.passed]


@pytest.mark.parametrize(("path", "spec"), CASES, ids=[str(s["id"]) for _, s in CASES])
def test_scenario(path: Path, spec: dict[str, object]) -> None:
    result = run_scenario(spec, str(path))
    assert result.passed, "\n".join(result.failures)
