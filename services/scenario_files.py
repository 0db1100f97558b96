"""Scenario files: the YAML or JSON files of golden game scenarios, read and run through the
games' scenario runner (:mod:`chieu.games.scenarios`, which reads no file itself); behind
``chieu scenario run`` and the scenario tests."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import yaml

from chieu.games.scenarios import Result, run_scenario


def load(path: Path) -> list[Mapping[str, Any]]:
    """The scenarios of one file."""
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    if isinstance(data, Mapping) and "scenarios" in data:
        common = {k: v for k, v in data.items() if k != "scenarios"}
        return [{**common, **s} for s in data["scenarios"]]
    if isinstance(data, Mapping):
        return [data]
    raise ValueError(f"{path}: a scenario file holds a mapping")


def expand(paths: Iterable[str]) -> list[Path]:
    """Files named, and every ``*.yaml`` / ``*.json`` below named folders."""
    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            out.extend(sorted(q for q in p.rglob("*") if q.suffix in (".yaml", ".yml", ".json")))
        else:
            out.append(p)
    return out


def run_files(paths: Iterable[str]) -> list[Result]:
    """Run every scenario of every file."""
    results: list[Result] = []
    for path in expand(paths):
        try:
            specs = load(path)
        except (OSError, ValueError, yaml.YAMLError) as e:
            results.append(Result(str(path), "?", "", [f"cannot read: {e}"]))
            continue
        results.extend(run_scenario(s, str(path)) for s in specs)
    return results
