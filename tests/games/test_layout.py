"""One home per game: the registry finds exactly the game packages present, nothing outside
``chieu.games`` names a game key, and the games stay apart from each other and from the services."""

from __future__ import annotations

import ast
import re
import sys
import types
from pathlib import Path

import grimp
import pytest

import chieu.games
from chieu.games import registry
from chieu.games.descriptor import Descriptor, Exercise, Titles

ROOT = Path(__file__).resolve().parents[2]
GAMES_DIR = ROOT / "services" / "games"


def _game_dirs() -> set[str]:
    return {p.name for p in GAMES_DIR.iterdir()
            if p.is_dir() and (p / "__init__.py").exists() and p.name not in registry.NOT_GAMES}


def test_the_registry_finds_exactly_the_packages_present() -> None:
    assert set(registry.KEYS) == _game_dirs()
    assert len(registry.KEYS) == len(set(registry.KEYS))
    for key in registry.KEYS:
        d = registry.descriptor(key)
        assert d.key == key == registry.get(key).key
        assert (d.min_seats, d.max_seats) == (registry.get(key).min_players, registry.get(key).max_players)
        assert d.titles.vi and d.titles.zh and d.titles.en
        assert (ROOT.parent / "shared" / "rules" / d.rules_file).name == f"{key}.md"
    assert [d.sort for d in registry.descriptors()] == sorted(d.sort for d in registry.descriptors())
    assert registry.team_games() == {d.key for d in registry.descriptors() if d.team_results}


def _plant(tmp_path: Path, name: str, body: str) -> None:
    pkg = tmp_path / name
    pkg.mkdir()
    (pkg / "__init__.py").write_text(body)


GAME_BODY = '''
from chieu.games.core import ScenarioHooks
from chieu.games.descriptor import Descriptor, Exercise, Titles

class _Game:
    key = "{key}"
    title = "Thử"
    min_players = 2
    max_players = 3

GAME = _Game()
DESCRIPTOR = Descriptor(key="{key}", titles=Titles("Thử", "试", "Trial"), min_seats=2, max_seats=3, sort=99,
                        team_results=False, short_clock={{}},
                        exercise=Exercise(players=2, full_players=3, short_room="points", full_rooms=("points",)))
'''


def test_a_new_package_is_found_without_being_listed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An eighth game is a package: dropped into chieu.games, it is a game (listed last, by its sort)."""
    _plant(tmp_path, "thu_nghiem", GAME_BODY.format(key="thu_nghiem"))
    monkeypatch.setattr(chieu.games, "__path__", [*chieu.games.__path__, str(tmp_path)])
    try:
        keys, descriptors, games = registry._discover()
        assert keys == (*registry.KEYS, "thu_nghiem")
        assert descriptors["thu_nghiem"].titles.en == "Trial" and games["thu_nghiem"].key == "thu_nghiem"
    finally:
        sys.modules.pop("chieu.games.thu_nghiem", None)


@pytest.mark.parametrize(("name", "body", "error"), [
    ("khong_mo_ta", "GAME = object()\n", "without GAME and DESCRIPTOR"),
    ("sai_ten", GAME_BODY.format(key="ten_khac"), "names itself"),
])
def test_a_package_that_is_not_a_whole_game_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       name: str, body: str, error: str) -> None:
    _plant(tmp_path, name, body)
    monkeypatch.setattr(chieu.games, "__path__", [*chieu.games.__path__, str(tmp_path)])
    try:
        with pytest.raises(ImportError, match=error):
            registry._discover()
    finally:
        sys.modules.pop(f"chieu.games.{name}", None)


def test_descriptors_refuse_what_cannot_be_true() -> None:
    ex = Exercise(players=2, full_players=2, short_room="points", full_rooms=("points",))
    with pytest.raises(ValueError, match="lower-case"):
        Descriptor("Phom", Titles("a", "b", "c"), 2, 4, 0, False, {}, ex)
    with pytest.raises(ValueError, match="min_seats"):
        Descriptor("x", Titles("a", "b", "c"), 3, 2, 0, False, {}, ex)
    with pytest.raises(ValueError, match="chaos run"):
        Descriptor("x", Titles("a", "b", "c"), 3, 4, 0, False, {}, ex)
    with pytest.raises(ValueError, match="vi, zh and en"):
        Titles("a", "", "c")
    with pytest.raises(ValueError, match="rooms"):
        Exercise(players=2, full_players=2, short_room="coins", full_rooms=("points",))


# --------------------------------------------------------------------------- no game key outside

PRODUCT = [ROOT / "services", ROOT / "tools"]
"""Python outside chieu.games that must read the descriptors rather than name a game."""
WEB = ROOT / "web" / "src"
WEB_GAME_PAGES = WEB / "app" / "games"
"""A game's own page in the browser (src/app/games/<key>.ts) may name its key."""


def _python_literals(path: Path, keys: set[str]) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    name = path.relative_to(ROOT) if ROOT in path.parents else path.name
    return [f"{name}:{node.lineno}: {node.value!r}" for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in keys]


def key_literals() -> list[str]:
    """Every string literal equal to a game key in product code outside chieu.games, and in the
    web client and page outside a game's own page."""
    keys = set(registry.KEYS)
    found: list[str] = []
    for top in PRODUCT:
        for path in sorted(top.rglob("*.py")):
            if GAMES_DIR in path.parents or "_pb2" in path.name:
                continue
            found += _python_literals(path, keys)
    for path in sorted(WEB.rglob("*.ts")):
        if WEB_GAME_PAGES not in path.parents:
            found += _typescript_literals(path, keys)
    return found


def _typescript_literals(path: Path, keys: set[str]) -> list[str]:
    alternatives = "|".join(map(re.escape, sorted(keys)))
    quoted = re.compile(rf"""(["'`])({alternatives})\1""")
    name = path.relative_to(ROOT) if ROOT in path.parents else path.name
    return [f"{name}:{n}: {m.group(0)}" for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
            if (m := quoted.search(line))]


def test_no_game_key_is_written_outside_the_games() -> None:
    assert key_literals() == [], "read the game's descriptor (chieu.games.registry) instead of naming it"


def test_the_literal_check_finds_a_planted_key(tmp_path: Path) -> None:
    planted = tmp_path / "planted.py"
    planted.write_text('TEAM = {"gouji"}\nOK = "gouji_like"\nROOM = f"{x}.points"\n')
    assert [hit.split(": ", 1)[1] for hit in _python_literals(planted, set(registry.KEYS))] == ["'gouji'"]
    page = tmp_path / "page.ts"
    page.write_text('const a = g.game === "phom";\nconst b = "phom_like";\n')
    assert [hit.split(": ", 1)[1] for hit in _typescript_literals(page, set(registry.KEYS))] == ['"phom"']


# --------------------------------------------------------------------------- the games stand apart

@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph("chieu")


def test_no_game_imports_another(graph: grimp.ImportGraph) -> None:
    for a in registry.KEYS:
        for b in registry.KEYS:
            if a != b:
                chain = graph.find_shortest_chain(f"chieu.games.{a}", f"chieu.games.{b}")
                assert chain is None, f"{a} imports {b}: {chain}"


def test_a_games_rules_do_not_read_its_generated_contract(graph: grimp.ImportGraph) -> None:
    """The rules are dataclasses; only the table's codec turns them into protobuf messages."""
    for key in registry.KEYS:
        package = f"chieu.games.{key}"
        for module in graph.find_descendants(package):
            if module.startswith(f"{package}.v1"):
                continue
            imported = graph.find_modules_directly_imported_by(module)
            assert not any(m.startswith(f"{package}.v1") or m.startswith("google") for m in imported), module


def test_every_game_package_has_the_same_shape() -> None:
    """Every game package has the same files with the same roles (docs/adding-a-game.md)."""
    for key in registry.KEYS:
        files = {p.name for p in (GAMES_DIR / key).glob("*.py")}
        assert {"__init__.py", "descriptor.py", "game.py", "model.py", "options.py", "scenario.py"} <= files, key
        module = sys.modules[f"chieu.games.{key}"]
        assert isinstance(module, types.ModuleType) and set(module.__all__) == {"DESCRIPTOR", "GAME"}


def test_every_short_clock_is_valid_under_the_games_own_option_names() -> None:
    """The short-clock options (the chaos run's rooms) parse, and use each game's canonical names
    (the ones ``option_values`` reports), not the aliases kept for old rooms and logs."""
    for d in registry.descriptors():
        game = registry.get(d.key)
        values = game.option_values(game.parse_options(dict(d.short_clock)))
        assert {k: values[k] for k in d.short_clock} == dict(d.short_clock), d.key
