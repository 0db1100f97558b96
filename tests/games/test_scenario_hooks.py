"""The registry finds each game's scenario hooks itself (``HOOKS`` in ``chieu.games.<key>.scenario``);
no module of a game's rules imports them, at the top or inside a function."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from chieu.games import registry
from chieu.games.core import ScenarioHooks

GAMES_DIR = Path(__file__).resolve().parents[2] / "services" / "games"


def test_every_game_has_its_hooks() -> None:
    for key in registry.KEYS:
        hooks = registry.scenario(key)
        assert isinstance(hooks, ScenarioHooks) and hooks is registry.scenario(key), key
        assert not hasattr(registry.get(key), "scenario"), key


def test_an_unknown_game_has_no_hooks() -> None:
    with pytest.raises(registry.UnknownGame):
        registry.scenario("khong_co")


def _imports(path: Path) -> set[str]:
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = "." * node.level + (node.module or "")
            out |= {base, *(f"{base}.{a.name}" for a in node.names)}
    return out


def test_no_rules_module_imports_the_test_hooks() -> None:
    for key in registry.KEYS:
        hooks = f"chieu.games.{key}.scenario"
        for path in sorted((GAMES_DIR / key).glob("*.py")):
            if path.name != "scenario.py":
                assert not any(m == hooks or m.endswith(".scenario") for m in _imports(path)), path
