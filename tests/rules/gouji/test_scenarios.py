"""Every 够级 scenario file (the GJ scenarios of shared/rules/gouji.md and our own) passes."""

from __future__ import annotations

from pathlib import Path

import pytest

from chieu.table.scenario import expand, load, run_scenario

FOLDER = Path(__file__).resolve().parents[2] / "scenarios" / "gouji"
CASES = [(str(p), spec) for p in expand([str(FOLDER)]) for spec in load(p)]


def test_every_rules_file_scenario_is_present() -> None:
    ids = {str(spec.get("id")) for _, spec in CASES}
    for n in (1, 2, 3, 5, 6, 9, 10, 11, 13, 15, 17):
        assert f"GJ-{n}" in ids


@pytest.mark.parametrize(("path", "spec"), CASES, ids=[str(s.get("id")) for _, s in CASES])
def test_scenario(path: str, spec: dict[str, object]) -> None:
    result = run_scenario(spec, path)
    assert result.passed, "\n".join(result.failures)
