"""docs/fairness.md against the code, and against a verifier written from the page alone.

The page's ```vector name=...``` blocks are parsed and each is derived twice: by the code
(``scripts/fairvectors``: ``chieu.games.fair`` and each game's descriptor's vectors, its own
``start`` and dealing functions), and by :class:`FromTheDoc`, an implementation of
chieu-fair-v1 and of every game's deal written only from the page, with plain ``hashlib`` and
``hmac`` (it imports nothing of ``chieu``). A change of the code or of the page that disagrees
with the other fails here. The games' table of labels is the one the script writes from the
descriptors, and a game draws from no label its descriptor does not name.
``scripts/fairvectors --write docs/fairness.md`` rewrites the table and the blocks from the code.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import importlib.machinery
import importlib.util
import inspect
import json
import random
import re
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from chieu.games import fair, fairness, registry
from chieu.games.core import Setup
from chieu.games.fairness import Fairness, Label
from tests.rules.test_legal_views import VARIANTS

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "fairness.md"
BLOCK = re.compile(r"^```vector name=(\S+)\n(.*?)^```$", re.M | re.S)

Vector = dict[str, Any]


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


def _rows(v: Vector, key: str) -> list[int]:
    return [x for row in v[key] for x in row]


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
            events = game.on_timeout(state, due.seat, now)
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


class FromTheDoc:
    """chieu-fair-v1 and the games' deals as docs/fairness.md states them, and nothing else."""

    def __init__(self, server_seed: bytes, client_seeds: Sequence[bytes]) -> None:
        pre = b"chieu-fair-v1" + server_seed
        for c in client_seeds:
            pre += len(c).to_bytes(4, "big") + c
        self.preimage = pre
        self.material = hashlib.sha256(pre).digest()

    # -- the algorithm

    def block(self, label: str, k: int) -> bytes:
        return hmac.new(self.material, label.encode() + k.to_bytes(8, "big"), hashlib.sha256).digest()

    class Stream:
        def __init__(self, spec: FromTheDoc, label: str) -> None:
            self.spec, self.label, self.w = spec, label, 0

        def draw(self) -> int:
            block = self.spec.block(self.label, self.w // 4)
            x = int.from_bytes(block[8 * (self.w % 4):8 * (self.w % 4) + 8], "big")
            self.w += 1
            return x

        def below(self, n: int) -> int:
            limit = 2**64 - 2**64 % n
            while True:
                x = self.draw()
                if x < limit:
                    return x % n

        def shuffle(self, items: Sequence[Any]) -> list[Any]:
            out = list(items)
            for i in range(len(out) - 1, 0, -1):
                j = self.below(i + 1)
                out[i], out[j] = out[j], out[i]
            return out

    def stream(self, label: str) -> FromTheDoc.Stream:
        return FromTheDoc.Stream(self, label)

    def choice(self, items: Sequence[Any], label: str) -> Any:
        return items[self.stream(label).below(len(items))]

    # -- Phỏm

    def phom(self, n: int, owner: int, previous_winner: int | None) -> dict[str, Any]:
        ranks = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"]

        def name(c: int) -> str:
            return ranks[c // 4] + "♠♣♦♥"[c % 4]

        deck = self.stream("deal").shuffle(range(52))
        dealer = owner if previous_winner is None else previous_winner
        hands: list[list[int]] = [[] for _ in range(n)]
        pos = 0
        for _ in range(9):
            for i in range(n):
                hands[(owner + i) % n].append(deck[pos])
                pos += 1
        hands[dealer].append(deck[pos])
        pos += 1
        stock, unused = deck[pos:pos + 4 * n - 1], deck[pos + 4 * n - 1:]
        discard = self.choice(sorted(hands[dealer]), "timeout:0")  # the dealer's first turn: nothing eaten
        return {"dealer": dealer, "hands": [[name(c) for c in h] for h in hands],
                "stock": [name(c) for c in stock], "unused": [name(c) for c in unused],
                "timeout_0": {"seat": dealer, "discard": name(discard)}}

    # -- Đô Mi Nô

    def dominoes(self, n: int) -> dict[str, Any]:
        tiles = [f"[{a}|{b}]" for a in range(7) for b in range(a, 7)]
        deck = self.stream("deal").shuffle(tiles)
        return {"leader": self.choice(range(n), "leader"), "hands": [deck[7 * i:7 * i + 7] for i in range(n)],
                "boneyard": deck[7 * n:]}

    # -- 洪洞王牌麻将

    KINDS = [f"{i}{s}" for s in "msp" for i in range(1, 10)] + ["E", "S", "W", "N", "中", "发", "白", "王"]

    @staticmethod
    def successor(k: int) -> int:
        if k < 27:
            return k // 9 * 9 + (k % 9 + 1) % 9
        if k < 31:
            return 27 + (k - 27 + 1) % 4
        return 31 + (k - 31 + 1) % 3

    def mahjong(self, n: int, mode: str) -> dict[str, Any]:
        dealer = self.choice(range(n), "dealer")
        wall = self.stream("deal").shuffle([k for k in range(34) for _ in range(4)])
        set_aside: list[int] = []
        if mode == "一支王":
            set_aside, wall = wall[:n], wall[n:]
        hands: list[list[int]] = [[] for _ in range(n)]
        for i in range(n):
            seat = (dealer + i) % n
            take = (14 if seat == dealer else 13) - (mode == "一支王")
            hands[seat], wall = wall[:take], wall[take:]
            if mode == "一支王":
                hands[seat].append(34)
        indicator, laizi = -1, [-1] * n
        if mode in ("普通", "色牌"):
            indicator = wall[-1]
            laizi = [self.successor(indicator)] * n
        elif mode == "一支王":
            laizi = [34] * n
        elif mode == "小手王":
            laizi = [self.choice(sorted(hands[i]), f"xiaoshouwang:{i}") for i in range(n)]
        elif mode == "大将王黑风报":
            for i in range(n):
                held = [hands[i].count(d) for d in (31, 32, 33)]
                tied = [d for d, c in zip((31, 32, 33), held, strict=True) if c == max(held)]
                laizi[i] = tied[0] if len(tied) == 1 else self.choice(tied, f"djw:{i}:0")

        def names(kinds: Sequence[int]) -> list[str]:
            return [self.KINDS[k] for k in kinds]

        return {"dealer": dealer, "set_aside": names(set_aside), "hands": [names(sorted(h)) for h in hands],
                "wall": names(wall), "indicator": "" if indicator < 0 else self.KINDS[indicator],
                "laizi": ["" if k < 0 else self.KINDS[k] for k in laizi]}

    # -- 够级

    def gouji(self, label: str) -> tuple[list[list[int]], int | None]:
        order = self.stream(label).shuffle(range(216))
        counts = [[0] * 15 for _ in range(6)]
        threes: list[set[int]] = [set() for _ in range(6)]
        shangban = None
        for i, c in enumerate(order):
            seat, k = i % 6, c % 54
            counts[seat][k // 4 if k < 52 else 13 if k == 52 else 14] += 1
            if k < 4 and shangban is None:
                if k in threes[seat]:
                    shangban = seat
                threes[seat].add(k)
        return counts, shangban

    # -- 连连看

    @staticmethod
    def removable(rows: int, cols: int, cells: Sequence[int], a: int, b: int) -> bool:
        """At most three straight segments through empty cells and the ring around the board."""
        if a == b or not cells[a] or cells[a] != cells[b]:
            return False

        def free(r: int, c: int) -> bool:
            return not (0 <= r < rows and 0 <= c < cols) or not cells[r * cols + c]

        start, goal = divmod(a, cols), divmod(b, cols)
        frontier, seen = [start], {start}
        for _segment in range(3):
            reached = []
            for r, c in frontier:
                for dr, dc in ((0, 1), (0, -1), (1, 0), (-1, 0)):
                    y, x = r + dr, c + dc
                    while -1 <= y <= rows and -1 <= x <= cols:
                        if (y, x) == goal:
                            return True
                        if not free(y, x):
                            break
                        if (y, x) not in seen:
                            seen.add((y, x))
                            reached.append((y, x))
                        y, x = y + dr, x + dc
            frontier = reached
        return False

    def stuck(self, rows: int, cols: int, layout: Sequence[int]) -> list[int]:
        cells = list(layout)
        groups: dict[int, list[int]] = {}
        for i, p in enumerate(cells):
            if p:
                groups.setdefault(p, []).append(i)
        progress = True
        while progress:
            progress = False
            for g in groups.values():
                x = 0
                while x < len(g):
                    y = next((y for y in range(x + 1, len(g)) if self.removable(rows, cols, cells, g[x], g[y])), None)
                    if y is None:
                        x += 1
                        continue
                    cells[g[x]] = cells[g[y]] = 0
                    del g[y], g[x]
                    progress = True
        return [i for i, p in enumerate(cells) if p]

    def layout(self, rows: int, cols: int) -> tuple[list[int], int, list[int]]:
        """The first shuffle, the repair rounds of the layout found, the layout."""
        n = rows * cols
        patterns = min(36, n // 4)
        tiles = [1 + i % patterns for i in range(n)]
        s = self.stream("layout")
        first: list[int] = []
        while True:
            cells = s.shuffle(tiles)
            first = first or list(cells)
            for repairs in range(200):
                stuck = self.stuck(rows, cols, cells)
                if not stuck:
                    return first, repairs, cells
                for i, p in zip(stuck, s.shuffle([cells[i] for i in stuck]), strict=True):
                    cells[i] = p

    def reshuffle(self, rows: int, cols: int, cells: Sequence[int], label: str) -> list[int]:
        occupied = [i for i, p in enumerate(cells) if p]
        patterns = [cells[i] for i in occupied]
        s = self.stream(label)
        while True:
            out = list(cells)
            for i, p in zip(occupied, s.shuffle(patterns), strict=True):
                out[i] = p
            if any(self.removable(rows, cols, out, a, b) for a in occupied for b in occupied):
                return out


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


def doc_phom(v: Vector) -> None:
    winner = (v["previous"] or {}).get("winner")
    got = spec(v["players"]).phom(v["players"], v["owner"], winner)
    assert got == {k: v[k] for k in got}


def doc_dominoes(v: Vector) -> None:
    got = spec(v["players"]).dominoes(v["players"])
    assert got == {k: v[k] for k in got}


def doc_mahjong(v: Vector) -> None:
    got = spec(v["players"]).mahjong(v["players"], v["options"]["laiziMode"])
    assert {k: got[k] for k in v if k in got} == {k: v[k] for k in v if k in got}


def doc_gouji(v: Vector) -> None:
    s = spec(6)
    counts, shangban = s.gouji("deal")
    assert (counts, shangban) == (v["counts"], v["shangban"])
    assert v["first"] == 0, "the owner (seat 0) leads the first hand with seat-rotation"
    assert v["first_with_shangban"] == shangban
    assert s.gouji("redeal:1")[0] == v["redeal_1"]


def doc_lianliankan(v: Vector) -> None:
    first, repairs, layout = spec(v["players"]).layout(v["rows"], v["cols"])
    assert (first, repairs, layout) == (_rows(v, "first_shuffle"), v["repairs"], _rows(v, "layout"))


def doc_lianliankan_reshuffle(v: Vector) -> None:
    s = spec(v["players"])
    cells = v["cells"]
    assert not any(s.removable(v["rows"], v["cols"], cells, a, b) for a in range(len(cells)) for b in range(len(cells)))
    assert s.reshuffle(v["rows"], v["cols"], cells, v["label"]) == v["result"]


def doc_o_an_quan(v: Vector) -> None:
    assert spec(2).choice((0, 1), "first_player") == v["first"]


def _by_doc(name: str) -> Callable[[Vector], None]:
    fixed = {"seeds": doc_seeds, "materials": doc_materials, "stream": doc_stream,
             "rejection": doc_rejection, "lianliankan-reshuffle": doc_lianliankan_reshuffle}
    if name in fixed:
        return fixed[name]
    prefix = name.split("-")[0]
    by_prefix = {"shuffle": doc_shuffle, "phom": doc_phom, "dominoes": doc_dominoes, "mahjong": doc_mahjong,
                 "gouji": doc_gouji, "lianliankan": doc_lianliankan, "o_an_quan": doc_o_an_quan}
    assert prefix in by_prefix, f"{name}: implement the game's deal from the page in FromTheDoc, and doc_{prefix}"
    return by_prefix[prefix]


@pytest.mark.parametrize("name", list(vectors()))
def test_the_page_alone_gives_the_vector(name: str) -> None:
    _by_doc(name)(vectors()[name])


def test_the_page_alone_is_written_without_the_code() -> None:
    source = inspect.getsource(FromTheDoc)
    assert not re.search(r"\b(chieu|fair|registry|llk|gouji_cards|Setup|Outcome)\b\.?", source.replace(
        "chieu-fair-v1", "")), "FromTheDoc may use only hashlib, hmac and the page"
