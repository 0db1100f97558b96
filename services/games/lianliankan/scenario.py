"""连连看 scenario hooks: a position in board notation, what a scenario asserts (``describe``),
the ``turns`` / ``connects`` / ``scores`` queries and the command reader.

A position, one board for everybody or one per seat (see :mod:`notation`)::

    position: {board: ["A . B", "B . A"], seed: "00"}
    position: {boards: [["A A"], ["B . B"]]}

Every pattern must appear an even number of times and a non-empty board must have a removable
pair; ``seed`` (hex) is the seed material of dead-board reshuffles. Commands:
``{remove: [[r, c], [r, c]]}`` and ``leave``. Seats are named P1, P2, ...
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from chieu.games.core import InvalidCommand, ScenarioHooks
from chieu.games.lianliankan.board import Board, brute_turns, find_pair
from chieu.games.lianliankan.model import Cell, Layout, Leave, Remove, Started, State
from chieu.games.lianliankan.notation import format_board, parse_board
from chieu.games.lianliankan.options import Options
from chieu.games.lianliankan.scoring import SCORE_TABLE


def position(options: Options, players: int, spec: Mapping[str, Any], now_ms: int) -> Sequence[Any]:
    """The ``Started`` event of the position ``spec`` (see the module docstring)."""
    raw = spec["boards"] if "boards" in spec else [spec["board"]] * players
    if len(raw) != players:
        raise ValueError(f"{players} boards expected")
    parsed = [parse_board(b) for b in raw]
    rows, cols = parsed[0][0], parsed[0][1]
    if any((r, c) != (rows, cols) for r, c, _ in parsed):
        raise ValueError("every seat's board must have the same size")
    for _, _, cells in parsed:
        counts: dict[int, int] = {}
        for p in cells:
            if p:
                counts[p] = counts.get(p, 0) + 1
        if any(n % 2 for n in counts.values()):
            raise ValueError("every pattern must appear an even number of times")
        if any(cells) and find_pair(Board.of(rows, cols, cells)) is None:
            raise ValueError("a board without a removable pair")
    limit = options.time_limit
    deadline = now_ms + limit * 1000 if limit else 0
    layouts = tuple(Layout(cells) for _, _, cells in parsed)
    return [Started(rows, cols, layouts, str(spec.get("seed", "00")), deadline)]


def _name(seat: int | None) -> str | None:
    return None if seat is None else f"P{seat + 1}"


def describe(state: State) -> Mapping[str, Any]:
    """What scenarios assert; seats are named P1, P2, ..."""
    f = state.finished
    return {
        "remaining": [b.remaining for b in state.boards],
        "boards": [format_board(b) for b in state.boards],
        "left": [_name(s) for s in state.left],
        "reshuffles": list(state.reshuffles),
        "ended": None if f is None else f.reason,
        "winner": None if f is None else _name(f.winner),
        "ranking": None if f is None else [_name(s) for s in f.ranking],
    }


def parse_command(raw: Any) -> Remove | Leave:
    """Scenario notation: ``{remove: [[r, c], [r, c]]}`` or ``leave``."""
    try:
        if isinstance(raw, str) and raw.strip().lower() == "leave":
            return Leave()
        if isinstance(raw, Mapping) and "remove" in raw:
            (r1, c1), (r2, c2) = raw["remove"]
            return Remove(Cell(int(r1), int(c1)), Cell(int(r2), int(c2)))
        raise ValueError("expected {remove: [[r, c], [r, c]]} or leave")
    except (TypeError, ValueError) as e:
        raise InvalidCommand("bad_command", f"cannot read {raw!r}: {e}") from None


# ---------------------------------------------------------------- static queries


def query_turns(board: Any, a: Sequence[int], b: Sequence[int]) -> int | None:
    """The fewest turns joining cells ``a`` and ``b`` (``[row, col]``) of ``board``, or ``None``.

    Checks the fast path finder against the brute-force search and fails if they differ.
    """
    rows, cols, cells = parse_board(board)
    x, y = a[0] * cols + a[1], b[0] * cols + b[1]
    fast = Board.of(rows, cols, cells).turns(x, y)
    if fast != brute_turns(rows, cols, cells, x, y):
        raise ValueError("the path finder and the brute-force search disagree")
    return fast


def query_connects(board: Any, a: Sequence[int], b: Sequence[int]) -> bool:
    """Whether the pair can be removed."""
    return query_turns(board, a, b) is not None


def query_scores(players: int, remaining: Sequence[int]) -> list[int]:
    """§4.3 scores when the seat with 0 remaining tiles has cleared first; ties by seat."""
    order = sorted(range(players), key=lambda i: (remaining[i], i))
    table = SCORE_TABLE[players]
    out = [0] * players
    for place, s in enumerate(order):
        out[s] = table[place]
    return out


HOOKS = ScenarioHooks(
    position=position,
    describe=describe,
    queries={"turns": query_turns, "connects": query_connects, "scores": query_scores},
    command=parse_command,
)
