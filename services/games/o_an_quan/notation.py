"""The position notation of §C1: ``[Q+0 | 5 5 5 5 5 | Q+0 | 5 5 5 5 5]`` and square names.

A quan square is ``Q+k`` while its quan piece is there (k = its dân), else just ``k``.
Squares are named Q0, S1..S5, Q6, N7..N11 (ring indices 0..11).
"""

from __future__ import annotations

import re

NAMES = ("Q0", "S1", "S2", "S3", "S4", "S5", "Q6", "N7", "N8", "N9", "N10", "N11")
_QUAN = re.compile(r"^Q\+(\d+)$")


def square_name(index: int) -> str:
    """``S1`` for 1, ``Q6`` for 6, ..."""
    return NAMES[index]


def parse_square(text: object) -> int:
    """A square index from its name (``S1``) or index (``1``)."""
    if isinstance(text, int) and not isinstance(text, bool):
        if 0 <= text < 12:
            return text
        raise ValueError(f"no square {text}")
    name = str(text).strip().upper()
    if name in NAMES:
        return NAMES.index(name)
    raise ValueError(f"no square {text!r}; squares are {', '.join(NAMES)}")


def _quan_cell(dan: int, present: bool) -> str:
    return f"Q+{dan}" if present else str(dan)


def format_position(board: tuple[int, ...], quan: tuple[bool, ...]) -> str:
    """The §C1 string of a board."""
    south = " ".join(str(board[i]) for i in range(1, 6))
    north = " ".join(str(board[i]) for i in range(7, 12))
    return f"[{_quan_cell(board[0], quan[0])} | {south} | {_quan_cell(board[6], quan[1])} | {north}]"


def _parse_quan(cell: str) -> tuple[int, bool]:
    m = _QUAN.match(cell)
    if m:
        return int(m.group(1)), True
    if cell.isdigit():
        return int(cell), False
    raise ValueError(f"bad quan square {cell!r}")


def parse_position(text: str) -> tuple[tuple[int, ...], tuple[bool, ...]]:
    """Board and quan pieces from a §C1 string."""
    body = text.strip()
    if not (body.startswith("[") and body.endswith("]")):
        raise ValueError(f"a position is written [Q0 | S1..S5 | Q6 | N7..N11], not {text!r}")
    parts = [p.split() for p in body[1:-1].split("|")]
    if len(parts) != 4 or len(parts[0]) != 1 or len(parts[2]) != 1 or len(parts[1]) != 5 or len(parts[3]) != 5:
        raise ValueError(f"a position has 1 + 5 + 1 + 5 squares: {text!r}")
    q0, p0 = _parse_quan(parts[0][0])
    q6, p6 = _parse_quan(parts[2][0])
    board = (q0, *(int(x) for x in parts[1]), q6, *(int(x) for x in parts[3]))
    if any(x < 0 for x in board):
        raise ValueError("negative stone count")
    return board, (p0, p6)
