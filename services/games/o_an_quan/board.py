"""The Ô ăn quan ring and its sowing (rải quân), relays and captures (ăn), rules OQ-R5…R7.

Ring indices: Q0 = 0, S1..S5 = 1..5, Q6 = 6, N7..N11 = 7..11. CCW is index + 1.
Seat 0 is A (South, owns S1–S5); seat 1 is B (North, owns N7–N11).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

QUAN_SQUARES = (0, 6)
SIDES: tuple[tuple[int, ...], tuple[int, ...]] = ((1, 2, 3, 4, 5), (7, 8, 9, 10, 11))
START: tuple[int, ...] = (0,) + (5,) * 5 + (0,) + (5,) * 5
"""OQ-R1: 5 dân on each dân square, none on the quan squares (their pieces are kept apart)."""
DAN_TOTAL = 50
"""The dân in play: on the board, in the stores, or swept home at the end."""
MAX_DROPS = 10_000
"""Safety bound on stones dropped in one turn; relay sowing that reaches it ends the turn."""


class Direction(str, Enum):
    """Sowing direction: CCW (index + 1) or CW (index - 1)."""

    CW = "CW"
    CCW = "CCW"


def is_quan(square: int) -> bool:
    """Whether ``square`` is one of the two quan (mandarin) squares."""
    return square in QUAN_SQUARES


def quan_index(square: int) -> int:
    """0 for Q0, 1 for Q6."""
    return 0 if square == 0 else 1


def step(square: int, direction: Direction) -> int:
    """The next square in ``direction``."""
    return (square + (1 if direction is Direction.CCW else -1)) % 12


def owner(square: int) -> int | None:
    """The seat that owns a dân square; ``None`` for a quan square."""
    if is_quan(square):
        return None
    return 0 if square < 6 else 1


@dataclass(frozen=True, slots=True)
class Capture:
    """One captured square: its dân and whether its quan piece went with it."""

    square: int
    dan: int
    quan: bool


@dataclass(frozen=True, slots=True)
class MoveResult:
    """What one move does: the relay squares, the board after sowing, then the captures."""

    relays: tuple[int, ...]
    sown: tuple[int, ...]
    captures: tuple[Capture, ...]


def _holds(board: list[int], quan: list[bool], square: int) -> bool:
    return board[square] > 0 or (is_quan(square) and quan[quan_index(square)])


def play(
    board: tuple[int, ...],
    quan: tuple[bool, bool],
    square: int,
    direction: Direction,
    *,
    quan_non: bool,
    protect_quan: bool,
) -> MoveResult:
    """Sow from ``square`` (OQ-R5), relay and capture (OQ-R6, OQ-R7).

    ``quan_non``: a quan square with its piece and fewer than 5 dân cannot be captured.
    ``protect_quan``: no quan piece may be captured (``noQuanCaptureFirstTurn``).
    A capture aimed at a protected square ends the turn.
    """
    b = list(board)
    q = list(quan)
    pos = square
    stones = b[pos]
    b[pos] = 0
    relays: list[int] = []
    drops = 0
    target: int | None = None
    while True:
        while stones:
            pos = step(pos, direction)
            b[pos] += 1
            stones -= 1
            drops += 1
        n1 = step(pos, direction)
        if is_quan(n1) or drops >= MAX_DROPS:
            break
        if b[n1] > 0:
            relays.append(n1)
            stones = b[n1]
            b[n1] = 0
            pos = n1
            continue
        n2 = step(n1, direction)
        if _holds(b, q, n2):
            target = n2
        break
    sown = tuple(b)
    captures: list[Capture] = []
    while target is not None:
        guarded = is_quan(target) and q[quan_index(target)]
        if guarded and (protect_quan or (quan_non and b[target] < 5)):
            break
        took_quan = is_quan(target) and q[quan_index(target)]
        captures.append(Capture(target, b[target], took_quan))
        b[target] = 0
        if took_quan:
            q[quan_index(target)] = False
        y = step(target, direction)
        z = step(y, direction)
        target = z if (not is_quan(y) and b[y] == 0 and _holds(b, q, z)) else None
    return MoveResult(tuple(relays), sown, tuple(captures))
