"""连连看 board notation: a board written as rows of letters, ``.`` for an empty cell, ``A``…``Z``
for patterns 1…26 and ``a``…``z`` for 27…52 (``["A . B", "B . A"]`` or ``"A.B/B.A"``)."""

from __future__ import annotations

from typing import Any

from chieu.games.lianliankan.board import Board


def _pattern(ch: str) -> int:
    if ch == ".":
        return 0
    if "A" <= ch <= "Z":
        return ord(ch) - ord("A") + 1
    if "a" <= ch <= "z":
        return ord(ch) - ord("a") + 27
    raise ValueError(f"a cell is '.' or a letter, not {ch!r}")


def _letter(p: int) -> str:
    if p == 0:
        return "."
    return chr(ord("A") + p - 1) if p <= 26 else chr(ord("a") + p - 27)


def parse_board(rows: Any) -> tuple[int, int, tuple[int, ...]]:
    """``["A . B", "B . A"]`` (or one string with ``/`` between rows) → (rows, cols, cells)."""
    if isinstance(rows, str):
        rows = rows.split("/")
    lines = ["".join(str(r).split()) for r in rows]
    if not lines or not lines[0] or any(len(x) != len(lines[0]) for x in lines):
        raise ValueError(f"a board is a rectangle of cells, not {rows!r}")
    return len(lines), len(lines[0]), tuple(_pattern(ch) for line in lines for ch in line)


def format_board(board: Board) -> list[str]:
    """The board as rows of letters (``.`` = empty)."""
    return [
        " ".join(_letter(p) for p in board.cells[r * board.cols : (r + 1) * board.cols])
        for r in range(board.rows)
    ]
