"""连连看's layout and reshuffle as docs/fairness.md states them, from the page alone."""

from __future__ import annotations

from collections.abc import Sequence

from tests.games.fairness.page import FromTheDoc, Spec, Vector, rows


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


def remaining(rows: int, cols: int, layout: Sequence[int]) -> list[int]:
    """The tiles a greedy clearing leaves (the page's check of a layout)."""
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
                y = next((y for y in range(x + 1, len(g)) if removable(rows, cols, cells, g[x], g[y])), None)
                if y is None:
                    x += 1
                    continue
                cells[g[x]] = cells[g[y]] = 0
                del g[y], g[x]
                progress = True
    return [i for i, p in enumerate(cells) if p]


def layout(page: FromTheDoc, rows: int, cols: int) -> tuple[list[int], int, list[int]]:
    """The first shuffle, the repair rounds of the layout found, the layout."""
    n = rows * cols
    patterns = min(36, n // 4)
    tiles = [1 + i % patterns for i in range(n)]
    s = page.stream("layout")
    first: list[int] = []
    while True:
        cells = s.shuffle(tiles)
        first = first or list(cells)
        for repairs in range(200):
            stuck = remaining(rows, cols, cells)
            if not stuck:
                return first, repairs, cells
            for i, p in zip(stuck, s.shuffle([cells[i] for i in stuck]), strict=True):
                cells[i] = p


def reshuffle(page: FromTheDoc, rows: int, cols: int, cells: Sequence[int], label: str) -> list[int]:
    occupied = [i for i, p in enumerate(cells) if p]
    patterns = [cells[i] for i in occupied]
    s = page.stream(label)
    while True:
        out = list(cells)
        for i, p in zip(occupied, s.shuffle(patterns), strict=True):
            out[i] = p
        if any(removable(rows, cols, out, a, b) for a in occupied for b in occupied):
            return out


def check(name: str, v: Vector, spec: Spec) -> None:
    """The page's vector `<key>-<name>`, derived from the page alone (spec: its seeds for n players)."""
    s = spec(v["players"])
    if name == "reshuffle":
        cells = v["cells"]
        assert not any(removable(v["rows"], v["cols"], cells, a, b) for a in range(len(cells))
                       for b in range(len(cells)))
        assert reshuffle(s, v["rows"], v["cols"], cells, v["label"]) == v["result"]
        return
    first, repairs, cells = layout(s, v["rows"], v["cols"])
    assert (first, repairs, cells) == (rows(v, "first_shuffle"), v["repairs"], rows(v, "layout"))
