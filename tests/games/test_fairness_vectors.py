"""docs/fairness.md against the code, and against a verifier written from the page alone.

The page's ```vector name=...``` blocks are parsed and each is derived twice: by the code
(``scripts/fairvectors``: ``chieu.games.fair`` and each game's descriptor's vectors, its own
``start`` and dealing functions), and by tests/games/fairness/, an implementation of
chieu-fair-v1 (``page.FromTheDoc``) and of each random game's deal (``<key>.py``) written only
from the page, with plain ``hashlib`` and ``hmac`` (it imports nothing of ``chieu``). A change
of the code or of the page that disagrees with the other fails here. The games' table of labels
is the one the script writes from the descriptors, and a game draws exactly the labels its
descriptor names.
``scripts/fairvectors --write docs/fairness.md`` rewrites the table and the blocks from the code.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import importlib
import importlib.machinery
import importlib.util
import json
import random
import re
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import ModuleType

import pytest

from chieu.games import fair, fairness, registry
from chieu.games.core import RuleViolation, Setup
from chieu.games.fairness import Fairness, Label
from tests.games.fairness.page import FromTheDoc, Vector
from tests.rules.test_legal_views import VARIANTS

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "fairness.md"
PAGE_ALONE = Path(__file__).resolve().parent / "fairness"
"""The verifier written from the page alone: chieu-fair-v1 (page.py) and each random game's deal."""
BLOCK = re.compile(r"^```vector name=(\S+)\n(.*?)^```$", re.M | re.S)

@functools.cache
def vectors() -> dict[str, Vector]:
    found = [(m.group(1), json.loads(m.group(2))) for m in BLOCK.finditer(DOC.read_text(encoding="utf-8"))]
    names = [name for name, _ in found]
    assert len(names) == len(set(names)), f"a vector name twice in {DOC.name}"
    return dict(found)


def server_seed() -> bytes:
    return bytes.fromhex(vectors()["seeds"]["server_seed"])


def client_seeds(n: int) -> list[bytes]:
    return [bytes.fromhex(s) for s in vectors()["seeds"]["client_seeds"][:n]]


# =============================================================================== the code


@functools.cache
def script() -> ModuleType:
    """scripts/fairvectors, the one writer of the page's table and blocks, as a module."""
    path = ROOT / "scripts" / "fairvectors"
    loader = importlib.machinery.SourceFileLoader("fairvectors", str(path))
    spec = importlib.util.spec_from_loader("fairvectors", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def test_the_page_has_every_vector_and_its_two_placeholders() -> None:
    assert set(vectors()) == set(script().vectors()), "run scripts/fairvectors --write docs/fairness.md"
    assert {"seeds", "materials", "stream", "rejection", "shuffle-52"} <= set(vectors())
    text = DOC.read_text(encoding="utf-8")
    for heading in ("## Commitment before the players choose", "## Sealed secrets"):
        assert heading in text
    for d in registry.descriptors():
        assert f"| `{d.key}` |" in text, f"the games' table of {DOC.name} lists no {d.key}"
        assert all(f"{d.key}-{name}" in vectors() for name in d.fairness.vectors)


def test_the_games_table_is_the_descriptors() -> None:
    """The table of labels is written from the descriptors, between its markers, and nowhere else."""
    text = DOC.read_text(encoding="utf-8")
    s = script()
    written = f"{s.TABLE_START}\n{s.games_table()}\n{s.TABLE_END}"
    assert text.count(s.TABLE_START) == 1 and written in text, "run scripts/fairvectors --write docs/fairness.md"
    for d in registry.descriptors():
        assert fairness.row(d.key, d.titles.en, d.fairness) in s.games_table()
    assert s.rewrite(text) == (text, [])  # what --check says


@pytest.mark.parametrize("name", list(vectors()))
def test_the_code_gives_the_vector(name: str) -> None:
    made = script().vectors()[name]()
    assert json.loads(json.dumps(made, ensure_ascii=False)) == vectors()[name]


# =============================================================================== the labels


@pytest.fixture
def drawn(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Every label a stream is made for while the test runs (every draw of chieu-fair-v1 makes one)."""
    labels: list[str] = []
    made = fair.Stream.__init__

    def record(self: fair.Stream, material: bytes, label: str) -> None:
        labels.append(label)
        made(self, material, label)

    monkeypatch.setattr(fair.Stream, "__init__", record)
    yield labels


def undeclared(declared: Fairness, labels: Sequence[str]) -> list[str]:
    """The labels drawn that the game's descriptor does not name."""
    return sorted({label for label in labels if not declared.allows(label)})


def walk(key: str, seed: int, steps: int = 200) -> None:
    """A random hand of ``key`` (its other options on odd seeds): random legal commands, and its
    earliest deadline run out now and then (the timeouts' own draws)."""
    game = registry.get(key)
    rng = random.Random(seed)
    variants = [{}, *VARIANTS.get(key, [])]
    options = game.parse_options(variants[seed % len(variants)])
    players = rng.randint(game.min_players, game.max_players)
    now = 1_000_000
    state = game.initial(options, players)
    for e in game.start(Setup(options, players, rng.randbytes(32), now)):
        state = game.evolve(state, e)
    for _ in range(steps):
        if game.outcome(state) is not None:
            return
        now += 10
        deadlines = game.deadlines(state)
        moves = [(s, c) for s in range(players) for c in game.legal(state, s)]
        if deadlines and (not moves or rng.random() < 0.3):
            due = min(deadlines, key=lambda d: d.at_ms)
            now = max(now, due.at_ms)
            try:
                events = game.on_timeout(state, due.seat, now)
            except RuleViolation:  # a clock nobody may run out now (a game's choice)
                return
        elif moves:
            seat, command = rng.choice(moves)
            events = game.decide(state, seat, command, now)
        else:
            return
        for e in events:
            state = game.evolve(state, e)


@pytest.mark.parametrize("key", registry.KEYS)
def test_a_game_draws_exactly_the_labels_its_descriptor_names(key: str, drawn: list[str]) -> None:
    """The game's vectors, a first hand at every table size and a few random hands draw from its
    descriptor's labels only, and from each of them; a game with labels has vectors on the page."""
    d = registry.descriptor(key)
    game = registry.get(key)
    for vector in d.fairness.vectors.values():
        vector()
    for players in range(d.min_seats, d.max_seats + 1):
        game.start(fairness.setup(game, players))
    for seed in range(6):
        walk(key, seed)
    assert undeclared(d.fairness, drawn) == [], f"name them in {key}'s descriptor (fairness.labels)"
    assert [mine.name for mine in d.fairness.labels if not any(mine.matches(x) for x in drawn)] == [], \
        f"{key}'s descriptor names a label its rules never drew"
    if d.fairness.labels:
        assert d.fairness.vectors, f"{key} draws at random: its descriptor gives vectors for the page"
    else:
        assert drawn == [], f"{key} says nothing is random"


def test_an_undeclared_label_is_found() -> None:
    declared = Fairness(labels=(Label("deal", "the deck"), Label("timeout:<k>", "a discard"),
                                Label("djw:<seat>:<d>", "a dragon")))
    assert undeclared(declared, ["deal", "timeout:3", "djw:1:0", "timeout", "timeout:3:1", "deal:2", "leader"]) == [
        "deal:2", "leader", "timeout", "timeout:3:1"]
    with pytest.raises(ValueError, match="draws nothing has no vectors"):
        Fairness(vectors={"2": dict})
    with pytest.raises(ValueError, match="named once"):
        Fairness(labels=(Label("deal", "a"), Label("deal", "b")))


# =============================================================================== from the page alone


def spec(n: int) -> FromTheDoc:
    return FromTheDoc(server_seed(), client_seeds(n))


def doc_seeds(v: Vector) -> None:
    assert hashlib.sha256(server_seed()).hexdigest() == v["commitment"]


def doc_materials(v: Vector) -> None:
    for key, m in v.items():
        s = spec(int(key.removeprefix("players_")))
        assert (s.preimage.hex(), s.material.hex()) == (m["preimage"], m["material"])


def doc_stream(v: Vector) -> None:
    s = spec(v["players"])
    assert [s.block(v["label"], k).hex() for k in range(len(v["blocks"]))] == v["blocks"]
    st = s.stream(v["label"])
    assert [st.below(v["n"]) for _ in v["draws"]] == v["draws"]


def doc_rejection(v: Vector) -> None:
    st = spec(v["players"]).stream(v["label"])
    assert [f"{st.draw():016x}" for _ in v["words"]] == v["words"]
    st = spec(v["players"]).stream(v["label"])
    assert [str(st.below(int(v["n"]))) for _ in v["draws"]] == v["draws"]
    assert st.w == len(v["words"]), "the draws use exactly the words shown"


def doc_shuffle(v: Vector) -> None:
    n = int(v["items"].removeprefix("range(").removesuffix(")"))
    assert spec(v["players"]).stream(v["label"]).shuffle(range(n)) == v["result"]


def doc_client_commitments(v: Vector) -> None:
    """chieu-fair-v2's commitment and material, from the page's words."""
    for c in v["cases"]:
        t, p = c["table_id"].encode(), c["player_id"].encode()
        pre = (b"chieu-fair-v2 client" + b"\x00" + len(t).to_bytes(4, "big") + t + int(c["hand_no"]).to_bytes(8, "big")
               + len(p).to_bytes(4, "big") + p + bytes.fromhex(c["seed"]))
        assert (pre.hex(), hashlib.sha256(pre).hexdigest()) == (c["preimage"], c["commitment"])
    revealed = [bytes.fromhex(s) for s in v["v2_material"]["revealed"]]
    assert FromTheDoc(server_seed(), revealed).material.hex() == v["v2_material"]["material"]


def _by_doc(name: str) -> Callable[[Vector], None]:
    """The page-alone check of a vector: the algorithm's here, a game's in its own module of
    tests/games/fairness/ (named by its key), as a new game writes it."""
    fixed = {"seeds": doc_seeds, "materials": doc_materials, "stream": doc_stream, "rejection": doc_rejection,
             "client-commitments": doc_client_commitments}
    if name in fixed:
        return fixed[name]
    if name.startswith("shuffle-"):
        return doc_shuffle
    key = next(k for k in registry.KEYS if name.startswith(f"{k}-"))
    assert (PAGE_ALONE / f"{key}.py").is_file(), f"{name}: write {key}'s deal from the page alone in " \
        f"tests/games/fairness/{key}.py (check(name, vector, spec))"
    module = importlib.import_module(f"tests.games.fairness.{key}")
    return functools.partial(module.check, name.removeprefix(f"{key}-"), spec=spec)


@pytest.mark.parametrize("name", list(vectors()))
def test_the_page_alone_gives_the_vector(name: str) -> None:
    _by_doc(name)(vectors()[name])


def test_the_page_alone_is_written_without_the_code() -> None:
    """The verifier (tests/games/fairness/) reads the page, never the code it checks: it imports
    only hashlib, hmac, typing helpers and itself."""
    allowed = {"__future__", "hashlib", "hmac", "collections.abc", "typing"}
    for path in sorted(PAGE_ALONE.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        imported |= {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        assert {m for m in imported if not m.startswith("tests.games.fairness")} <= allowed, path.name
        names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
        assert not names & {"chieu", "fair", "registry", "llk", "gouji_cards", "Setup", "Outcome"}, path.name
