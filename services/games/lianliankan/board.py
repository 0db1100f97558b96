"""The 连连看 board: the ≤ 2-turn path finder, the greedy solver and layout generation (§4.1–4.2).

Cells are numbered row by row, ``index = row * cols + col``; 0 is an empty cell, 1.. are
图案 (patterns). The path finder works on the board *padded* by the one-cell ring around it
(padded row ``r + 1``, column ``c + 1``), with one bit mask per padded row and per padded
column: bit set = a tile is there. The ring is always empty.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from chieu.games.fair import Stream

MAX_PATTERNS = 36
GENERATION_ATTEMPTS = 200


def _masks(rows: int, cols: int, cells: Sequence[int]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    rmask = [0] * (rows + 2)
    cmask = [0] * (cols + 2)
    for i, p in enumerate(cells):
        if p:
            r, c = divmod(i, cols)
            rmask[r + 1] |= 1 << (c + 1)
            cmask[c + 1] |= 1 << (r + 1)
    return tuple(rmask), tuple(cmask)


@dataclass(frozen=True, slots=True)
class Board:
    """One player's board with its occupancy masks (derived from ``cells``)."""

    rows: int
    cols: int
    cells: tuple[int, ...]
    rmask: tuple[int, ...]
    cmask: tuple[int, ...]

    @staticmethod
    def of(rows: int, cols: int, cells: Sequence[int]) -> Board:
        if len(cells) != rows * cols:
            raise ValueError(f"a {cols}x{rows} board has {rows * cols} cells, not {len(cells)}")
        rm, cm = _masks(rows, cols, cells)
        return Board(rows, cols, tuple(cells), rm, cm)

    @property
    def remaining(self) -> int:
        """Tiles left on the board (every view shows every seat's count: counted in C)."""
        return len(self.cells) - self.cells.count(0)

    def without(self, a: int, b: int) -> Board:
        """The board with the tiles at ``a`` and ``b`` removed."""
        cells = list(self.cells)
        cells[a] = cells[b] = 0
        rm = list(self.rmask)
        cm = list(self.cmask)
        for i in (a, b):
            r, c = divmod(i, self.cols)
            rm[r + 1] &= ~(1 << (c + 1))
            cm[c + 1] &= ~(1 << (r + 1))
        return Board(self.rows, self.cols, tuple(cells), tuple(rm), tuple(cm))

    def turns(self, a: int, b: int) -> int | None:
        """The fewest turns of a valid path joining ``a`` and ``b``, or ``None`` (no pair)."""
        return path_turns(self.rows, self.cols, self.cells, self.rmask, self.cmask, a, b)


def path_turns(
    rows: int,
    cols: int,
    cells: Sequence[int],
    rmask: Sequence[int],
    cmask: Sequence[int],
    a: int,
    b: int,
) -> int | None:
    """§4.2: the fewest turns (0, 1, 2) of a path of ≤ 3 straight segments from ``a`` to ``b``
    through empty cells and the outer ring, or ``None`` if the pair cannot be removed."""
    if a == b or not cells[a] or cells[a] != cells[b]:
        return None
    ra, ca = divmod(a, cols)
    rb, cb = divmod(b, cols)
    ra += 1
    ca += 1
    rb += 1
    cb += 1
    top_c = cols + 1
    top_r = rows + 1
    # The two end tiles count as empty (a path through one of them can be cut short there).
    row_a = rmask[ra] & ~(1 << ca)
    if rb == ra:
        row_a &= ~(1 << cb)
        row_b = row_a
    else:
        row_b = rmask[rb] & ~(1 << cb)
    col_a = cmask[ca] & ~(1 << ra)
    if cb == ca:
        col_a &= ~(1 << rb)
        col_b = col_a
    else:
        col_b = cmask[cb] & ~(1 << rb)
    # The straight runs of empty cells through a and b: [lo, hi] along a row / a column.
    ha_lo = (row_a & ((1 << ca) - 1)).bit_length()
    m = row_a >> (ca + 1)
    ha_hi = ca + (m & -m).bit_length() - 1 if m else top_c
    hb_lo = (row_b & ((1 << cb) - 1)).bit_length()
    m = row_b >> (cb + 1)
    hb_hi = cb + (m & -m).bit_length() - 1 if m else top_c
    va_lo = (col_a & ((1 << ra) - 1)).bit_length()
    m = col_a >> (ra + 1)
    va_hi = ra + (m & -m).bit_length() - 1 if m else top_r
    vb_lo = (col_b & ((1 << rb) - 1)).bit_length()
    m = col_b >> (rb + 1)
    vb_hi = rb + (m & -m).bit_length() - 1 if m else top_r
    # 0 turns: a straight segment.
    if (ra == rb and ha_lo <= cb <= ha_hi) or (ca == cb and va_lo <= rb <= va_hi):
        return 0
    # 1 turn: the corner (ra, cb) or (rb, ca).
    if (ha_lo <= cb <= ha_hi and vb_lo <= ra <= vb_hi) or (
        va_lo <= rb <= va_hi and hb_lo <= ca <= hb_hi
    ):
        return 1
    # 2 turns: horizontal - vertical - horizontal through some column c ...
    lo = ha_lo if ha_lo > hb_lo else hb_lo
    hi = ha_hi if ha_hi < hb_hi else hb_hi
    if lo <= hi:
        r1, r2 = (ra, rb) if ra < rb else (rb, ra)
        seg = ((1 << (r2 + 1)) - 1) ^ ((1 << r1) - 1)
        clear_a = ~(1 << ra)
        clear_b = ~(1 << rb)
        for c in range(lo, hi + 1):
            m = cmask[c]
            if c == ca:
                m &= clear_a
            if c == cb:
                m &= clear_b
            if not m & seg:
                return 2
    # ... or vertical - horizontal - vertical through some row r.
    lo = va_lo if va_lo > vb_lo else vb_lo
    hi = va_hi if va_hi < vb_hi else vb_hi
    if lo <= hi:
        c1, c2 = (ca, cb) if ca < cb else (cb, ca)
        seg = ((1 << (c2 + 1)) - 1) ^ ((1 << c1) - 1)
        clear_a = ~(1 << ca)
        clear_b = ~(1 << cb)
        for r in range(lo, hi + 1):
            m = rmask[r]
            if r == ra:
                m &= clear_a
            if r == rb:
                m &= clear_b
            if not m & seg:
                return 2
    return None


def path(board: Board, a: int, b: int) -> tuple[tuple[int, int], ...] | None:
    """A path of the fewest turns joining ``a`` and ``b`` as its corner points ``(row, col)``:
    ``a``, the turns (none, one or two), ``b``; the shortest such path, and on a tie the first
    of: the corner on ``a``'s row before the one on ``b``'s; a middle row before a middle column,
    lower indices first. Row -1 / ``rows`` and column -1 / ``cols`` are the empty ring around
    the board. ``None`` when the pair cannot be removed (as :meth:`Board.turns`)."""
    turns = board.turns(a, b)
    if turns is None:
        return None
    cols = board.cols
    ra, ca = divmod(a, cols)
    rb, cb = divmod(b, cols)
    ra, ca, rb, cb = ra + 1, ca + 1, rb + 1, cb + 1
    out: list[tuple[int, int]]
    if turns == 0:
        out = [(ra, ca), (rb, cb)]
    else:
        rm = list(board.rmask)
        cm = list(board.cmask)
        for r, c in ((ra, ca), (rb, cb)):  # the two tiles count as empty, as for path_turns
            rm[r] &= ~(1 << c)
            cm[c] &= ~(1 << r)

        def run(mask: int, at: int, top: int) -> tuple[int, int]:
            """The empty stretch through ``at`` along a row or column mask."""
            lo = (mask & ((1 << at) - 1)).bit_length()
            m = mask >> (at + 1)
            return lo, at + (m & -m).bit_length() - 1 if m else top

        def clear(mask: int, x: int, y: int) -> bool:
            lo, hi = (x, y) if x < y else (y, x)
            return not mask & (((1 << hi) - 1) ^ ((1 << (lo + 1)) - 1))

        ha, hb = run(rm[ra], ca, cols + 1), run(rm[rb], cb, cols + 1)
        va, vb = run(cm[ca], ra, board.rows + 1), run(cm[cb], rb, board.rows + 1)
        if turns == 1:
            if ha[0] <= cb <= ha[1] and vb[0] <= ra <= vb[1]:
                out = [(ra, ca), (ra, cb), (rb, cb)]
            else:
                out = [(ra, ca), (rb, ca), (rb, cb)]
        else:
            best: list[tuple[int, int]] = []
            length = 0
            lo, hi = max(va[0], vb[0]), min(va[1], vb[1])
            for r in range(lo, hi + 1):  # vertical, horizontal along row r, vertical
                if r not in (ra, rb) and clear(rm[r], ca, cb) and not rm[r] >> ca & 1 and not rm[r] >> cb & 1:
                    n = abs(ra - r) + abs(ca - cb) + abs(r - rb)
                    if not best or n < length:
                        best, length = [(ra, ca), (r, ca), (r, cb), (rb, cb)], n
            lo, hi = max(ha[0], hb[0]), min(ha[1], hb[1])
            for c in range(lo, hi + 1):  # horizontal, vertical along column c, horizontal
                if c not in (ca, cb) and clear(cm[c], ra, rb) and not cm[c] >> ra & 1 and not cm[c] >> rb & 1:
                    n = abs(ca - c) + abs(ra - rb) + abs(c - cb)
                    if not best or n < length:
                        best, length = [(ra, ca), (ra, c), (rb, c), (rb, cb)], n
            assert best, "path_turns found a path"
            out = best
    return tuple((r - 1, c - 1) for r, c in out)


def brute_turns(rows: int, cols: int, cells: Sequence[int], a: int, b: int) -> int | None:
    """A plain breadth-first search over straight segments (the test oracle for ``path_turns``)."""
    if a == b or not cells[a] or cells[a] != cells[b]:
        return None
    ph, pw = rows + 2, cols + 2

    def occupied(r: int, c: int) -> bool:
        return 1 <= r <= rows and 1 <= c <= cols and bool(cells[(r - 1) * cols + (c - 1)])

    start = divmod(a, cols)
    goal = divmod(b, cols)
    start = (start[0] + 1, start[1] + 1)
    goal = (goal[0] + 1, goal[1] + 1)
    frontier = {start}
    seen = {start}
    for turns in range(3):
        nxt: set[tuple[int, int]] = set()
        for r, c in frontier:
            for dr, dc in ((0, 1), (0, -1), (1, 0), (-1, 0)):
                y, x = r + dr, c + dc
                while 0 <= y < ph and 0 <= x < pw:
                    if (y, x) == goal:
                        return turns
                    if occupied(y, x):
                        break
                    if (y, x) not in seen:
                        nxt.add((y, x))
                    y, x = y + dr, x + dc
        seen |= nxt
        frontier = nxt
    return None


def _candidates(board: Board) -> Iterator[tuple[int, int]]:
    """The same-pattern pairs that might be removable, in pattern order: a path leaves a tile
    through a neighbour that is empty (the ring counts) or is the other tile, so two tiles
    that are not neighbours both need an empty neighbour (most tiles of a full board have none)."""
    cols, cells, rm = board.cols, board.cells, board.rmask
    # per padded row: the tiles with an empty neighbour (the ring's rows and columns are empty)
    open_rows = [0] + [rm[r] & ~((rm[r] << 1) & (rm[r] >> 1) & rm[r - 1] & rm[r + 1])
                       for r in range(1, board.rows + 1)]
    by_pattern: dict[int, list[int]] = {}
    for i, p in enumerate(cells):
        if p:
            by_pattern.setdefault(p, []).append(i)
    for group in by_pattern.values():
        opened = [open_rows[i // cols + 1] >> (i % cols + 1) & 1 for i in group]
        for x in range(len(group)):
            a = group[x]
            for y in range(x + 1, len(group)):
                b = group[y]
                if (opened[x] and opened[y]) or abs(a - b) == cols or (abs(a - b) == 1 and a // cols == b // cols):
                    yield a, b


def find_pair(board: Board) -> tuple[int, int] | None:
    """Some removable pair of ``board``, or ``None`` (a dead board)."""
    for a, b in _candidates(board):
        if board.turns(a, b) is not None:
            return a, b
    return None


def pairs(board: Board) -> list[tuple[int, int]]:
    """Every removable pair of ``board``."""
    return sorted((a, b) for a, b in _candidates(board) if board.turns(a, b) is not None)


def greedy_remaining(rows: int, cols: int, cells: Sequence[int]) -> list[int]:
    """§4.1.3's greedy solver: remove any removable pair until stuck; the cells left over.

    An empty result proves the layout solvable.
    """
    cl = list(cells)
    rm_t, cm_t = _masks(rows, cols, cl)
    rm, cm = list(rm_t), list(cm_t)
    by_pattern: dict[int, list[int]] = {}
    for i, p in enumerate(cl):
        if p:
            by_pattern.setdefault(p, []).append(i)
    groups = list(by_pattern.values())
    progress = True
    while progress:
        progress = False
        for g in groups:
            x = 0
            while x < len(g):
                y = x + 1
                removed = False
                while y < len(g):
                    a, b = g[x], g[y]
                    if path_turns(rows, cols, cl, rm, cm, a, b) is not None:
                        for i in (a, b):
                            cl[i] = 0
                            r, c = divmod(i, cols)
                            rm[r + 1] &= ~(1 << (c + 1))
                            cm[c + 1] &= ~(1 << (r + 1))
                        del g[y]
                        del g[x]
                        removed = progress = True
                        break
                    y += 1
                if not removed:
                    x += 1
    return [i for i, p in enumerate(cl) if p]


def tile_set(rows: int, cols: int) -> list[int]:
    """The tiles of a board: ``min(36, n / 4)`` patterns, each an even number of times."""
    n = rows * cols
    patterns = min(MAX_PATTERNS, n // 4)
    if n % 2 or patterns == 0 or n % patterns or (n // patterns) % 2:
        raise ValueError(f"a {cols}x{rows} board cannot hold even pattern counts")
    return [1 + i % patterns for i in range(n)]


def generate(rows: int, cols: int, stream: Stream) -> tuple[int, ...]:
    """A layout that the greedy solver clears (§4.1.3): shuffle; while the solver gets stuck,
    re-shuffle the stuck tiles among their cells, up to 200 times, else start over."""
    tiles = tile_set(rows, cols)
    while True:
        cells = stream.shuffle(tiles)
        for _ in range(GENERATION_ATTEMPTS):
            stuck = greedy_remaining(rows, cols, cells)
            if not stuck:
                return tuple(cells)
            for i, p in zip(stuck, stream.shuffle([cells[i] for i in stuck]), strict=True):
                cells[i] = p


def reshuffle(board: Board, stream: Stream) -> Board:
    """A dead board's tiles permuted over the same cells until a pair can be removed (§4.2)."""
    occupied = [i for i, p in enumerate(board.cells) if p]
    values = [board.cells[i] for i in occupied]
    while True:
        cells = list(board.cells)
        for i, p in zip(occupied, stream.shuffle(values), strict=True):
            cells[i] = p
        out = Board.of(board.rows, board.cols, cells)
        if find_pair(out) is not None:
            return out
