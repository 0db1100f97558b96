"""One home per game: the registry finds exactly the game packages present, nothing outside
``chieu.games`` names a game key, and the games stay apart from each other and from the services."""

from __future__ import annotations

import ast
import importlib.machinery
import importlib.util
import re
import shutil
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
SCRIPTS = [ROOT / "scripts", ROOT / "web" / "scripts"]
"""The generators and the check (Python or shell, no suffix): they read the registry too."""
WEB = ROOT / "web" / "src"
WEB_GAME_PAGES = WEB / "app" / "games"
"""A game's own page in the browser (src/app/games/<key>.ts) may name its key and import its
generated types; nothing else under web/src/ may."""
ALLOWED: dict[str, str] = {}
"""Files outside a game's home that may name a game, each with its reason (none today: the
generated files, web/gen/ and the ``_pb2`` modules, are outside the scanned folders or skipped)."""


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
    for top in SCRIPTS:
        for path in sorted(p for p in top.iterdir() if p.is_file()):
            text = path.read_text(encoding="utf-8")
            if text.startswith("#!/usr/bin/env python"):
                found += _python_literals(path, keys) + _python_game_imports(path, keys)
            else:
                found += _shell_words(path, keys)
    for path in sorted(WEB.rglob("*.ts")):
        if WEB_GAME_PAGES not in path.parents:
            found += _typescript_literals(path, keys) + _typescript_game_imports(path, keys)
    return [hit for hit in found if hit.split(":", 1)[0] not in ALLOWED]


def _python_game_imports(path: Path, keys: set[str]) -> list[str]:
    """An import of a game's package (``from chieu.games.gouji import cards``), at any depth."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    name = path.relative_to(ROOT) if ROOT in path.parents else path.name
    modules = [(n.lineno, a.name) for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    modules += [(n.lineno, f"{n.module}.{a.name}") for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
                for a in n.names]
    return [f"{name}:{line}: imports {module}" for line, module in modules
            if module.split(".")[:2] == ["chieu", "games"] and len(module.split(".")) > 2
            and module.split(".")[2] in keys]


def _shell_words(path: Path, keys: set[str]) -> list[str]:
    """A game key as a word of a shell script (a case, a list, a path part)."""
    alternatives = "|".join(map(re.escape, sorted(keys)))
    word = re.compile(rf"(?<![\w.-])({alternatives})(?![\w-])")
    name = path.relative_to(ROOT) if ROOT in path.parents else path.name
    return [f"{name}:{n}: {m.group(0)}" for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
            if (m := word.search(line))]


def _typescript_game_imports(path: Path, keys: set[str]) -> list[str]:
    """An import of a game's generated module (its View, its commands) outside the game's board."""
    alternatives = "|".join(map(re.escape, sorted(keys)))
    imported = re.compile(rf"""from\s+["'][^"']*gen/chieu/games/({alternatives})/""")
    name = path.relative_to(ROOT) if ROOT in path.parents else path.name
    text = path.read_text(encoding="utf-8")
    return [f"{name}:{text.count(chr(10), 0, m.start()) + 1}: imports {m.group(1)}'s types"
            for m in imported.finditer(text)]


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
    client = tmp_path / "client.ts"  # what web/src/client/index.ts did
    client.write_text('import type { View as OAnQuanView } from\n'
                      '  "../../gen/chieu/games/o_an_quan/v1/o_an_quan_pb.js";\n'
                      'import { GAMES } from "../../gen/chieu/games/registry.js";\n')
    assert [hit.split(": ", 1)[1] for hit in _typescript_game_imports(client, set(registry.KEYS))] == [
        "imports o_an_quan's types"]
    script = tmp_path / "gen"
    script.write_text('for g in phom dominoes_x; do echo "$g"; done\ncase "$1" in xiangqi) ;; esac\n')
    assert [hit.split(": ", 1)[1] for hit in _shell_words(script, set(registry.KEYS))] == ["phom", "xiangqi"]
    old_script = tmp_path / "fairvectors"  # what scripts/fairvectors did
    old_script.write_text('#!/usr/bin/env python3\nfrom chieu.games import fair, registry\n'
                          'from chieu.games.gouji import cards as gouji_cards\ngame = registry.get("phom")\n')
    assert [hit.split(": ", 1)[1] for hit in _python_literals(old_script, set(registry.KEYS))] == ["'phom'"]
    assert [hit.split(": ", 1)[1] for hit in _python_game_imports(old_script, set(registry.KEYS))] == [
        "imports chieu.games.gouji.cards"]


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


def test_nothing_outside_a_game_imports_it() -> None:
    """The services, the CLI and the tools reach a game through the registry only (``chieu perft``
    was ``from chieu.games.xiangqi import perft`` inside the CLI): imports inside functions count."""
    graph = grimp.build_graph("chieu", "chieu_tools", cache_dir=None)  # a cache may hold an old file's imports
    for key in registry.KEYS:
        package = f"chieu.games.{key}"
        for module in {package, *graph.find_descendants(package)}:
            outside = {m for m in graph.find_modules_that_directly_import(module)
                       if m != package and not m.startswith(f"{package}.")}
            assert not outside, f"{module} imported by {sorted(outside)}"


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


def test_every_game_has_its_page_and_its_row_in_the_games_table() -> None:
    """docs/adding-a-game.md, section 5: docs/games/<key>.md and a row of docs/games.md."""
    table = (ROOT / "docs" / "games.md").read_text(encoding="utf-8")
    for key in registry.KEYS:
        assert (ROOT / "docs" / "games" / f"{key}.md").is_file(), key
        assert f"| `{key}` |" in table and f"(games/{key}.md)" in table, key


def test_every_short_clock_is_valid_under_the_games_own_option_names() -> None:
    """The short-clock options (the chaos run's rooms) parse, and use each game's canonical names
    (the ones ``option_values`` reports), not the aliases kept for old rooms and logs."""
    for d in registry.descriptors():
        game = registry.get(d.key)
        values = game.option_values(game.parse_options(dict(d.short_clock)))
        assert {k: values[k] for k in d.short_clock} == dict(d.short_clock), d.key


# --------------------------------------------------------------------------- an eighth game, whole

EIGHTH = '''"""Cờ gánh: a planted eighth game, its rules reduced to a deal, a refusal and its fairness."""
from chieu.games import fair
from chieu.games.core import IllegalMove
from chieu.games.descriptor import Descriptor, Exercise, Titles
from chieu.games.fairness import Fairness, Label


class _Game:
    key = "co_ganh"
    title = "Cờ gánh"
    min_players = 2
    max_players = 2

    def parse_options(self, raw):
        return dict(raw)

    def start(self, setup):
        return [fair.choice(setup.seed, (0, 1), "first_player")]

    def decide(self, state, command):
        raise IllegalMove("no_own_stone", "this game's own")


GAME = _Game()
DESCRIPTOR = Descriptor(key="co_ganh", titles=Titles("Cờ gánh", "越南挑棋", "Co Ganh"), min_seats=2, max_seats=2,
                        sort=99, team_results=False, short_clock={},
                        exercise=Exercise(players=2, full_players=2, short_room="points", full_rooms=("points",)),
                        fairness=Fairness(labels=(Label("first_player", "who moves first"),)))
'''
EIGHTH_WORDS = '''[refusal]
no_own_stone = { en = "You have no stone there.", vi = "Bạn không có quân ở đó.", zh = "那里没有你的棋子。" }
'''


def _script(name: str) -> types.ModuleType:
    loader = importlib.machinery.SourceFileLoader(name, str(ROOT / "scripts" / name))
    spec = importlib.util.spec_from_loader(name, loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def test_an_eighth_game_with_words_and_fairness_changes_nothing_outside_its_home_but_generated_files(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Cờ gánh dropped into a copy of the product, with its words and its fairness labels: every
    check that once forced an edit elsewhere (the words' homes, the page's games table, the key
    literals) holds, and what changes outside its package is generated: the games table of
    docs/fairness.md (between its markers only), web/gen/chieu/games/registry.ts, the words."""
    from chieu.kit import words
    from tests.words.homes import misplaced

    product = tmp_path / "chieu"
    shutil.copytree(ROOT / "services", product, ignore=shutil.ignore_patterns("__pycache__", "v1", "*.pyi"))
    before = {p: p.read_bytes() for p in product.rglob("*") if p.is_file()}
    home = product / "games" / "co_ganh"
    home.mkdir()
    (home / "__init__.py").write_text(EIGHTH)
    (home / "words.toml").write_text(EIGHTH_WORDS)
    doc = (ROOT / "docs" / "fairness.md").read_text(encoding="utf-8")
    fairvectors, gamests = _script("fairvectors"), _script("gamests")
    old_registry_ts = gamests.render()

    monkeypatch.setattr(chieu.games, "__path__", [*chieu.games.__path__, str(product / "games")])
    try:
        keys, descriptors, games = registry._discover()
    finally:
        monkeypatch.setattr(chieu.games, "__path__", [p for p in chieu.games.__path__ if p != str(product / "games")])
    assert "co_ganh" in keys and games["co_ganh"].key == "co_ganh"
    monkeypatch.setattr(registry, "KEYS", keys)
    monkeypatch.setattr(registry, "_DESCRIPTORS", descriptors)
    monkeypatch.setattr(registry, "_GAMES", games)
    monkeypatch.setattr(registry, "descriptors", lambda: tuple(descriptors.values()))
    try:
        # its words: in its home, merged, no other home touched
        homes = words.find_homes(product)
        assert misplaced(homes, product) == []
        assert words.merge(homes)["refusal"]["no_own_stone"]["vi"] == "Bạn không có quân ở đó."
        # its fairness: the page's table gains its row, and nothing else on the page changes
        new, lacking = fairvectors.rewrite(doc)
        assert lacking == []
        row = "| Co Ganh | `co_ganh` | `first_player` | who moves first |"
        assert new.replace(row + "\n", "", 1) == doc and row in new.split(fairvectors.TABLE_END)[0]
        # the web's registry gains it (generated by scripts/gamests)
        assert '{ key: "co_ganh"' in gamests.render() and '{ key: "co_ganh"' not in old_registry_ts
        # no file outside a game names it or any game
        assert key_literals() == []
    finally:
        sys.modules.pop("chieu.games.co_ganh", None)
    after = {p: p.read_bytes() for p in product.rglob("*") if p.is_file() and home not in p.parents}
    assert after == before  # nothing outside its package changed
