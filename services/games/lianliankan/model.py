"""连连看's data: commands, events, the state and the views, as frozen, slotted dataclasses.

Seats are named P1, P2, ... in scenarios. When the time limit runs out the table's clock
reports common.py's ``TimedOut(seat)`` for a seat on it, followed by ``Finished``.
"""

from __future__ import annotations

from dataclasses import dataclass

from chieu.games.common import TimedOut
from chieu.games.core import Transfer
from chieu.games.lianliankan.board import Board
from chieu.games.lianliankan.options import Options

# ---------------------------------------------------------------- commands and events


@dataclass(frozen=True, slots=True)
class Cell:
    """A board cell, ``row`` 0 at the top, ``col`` 0 at the left."""

    row: int
    col: int


@dataclass(frozen=True, slots=True)
class Point:
    """A corner of a path: a cell, or (row -1 / ``rows``, col -1 / ``cols``) the empty ring
    around the board."""

    row: int
    col: int


@dataclass(frozen=True, slots=True)
class Remove:
    """Select two tiles of the same pattern joined by a path of at most two turns (§4.2)."""

    first: Cell
    second: Cell


@dataclass(frozen=True, slots=True)
class Leave:
    """Leave the game; the player ranks last (§4.3)."""


@dataclass(frozen=True, slots=True)
class Layout:
    """One seat's board, row by row; 0 is an empty cell, 1.. a pattern."""

    cells: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Started:
    """The game is set up: every seat's board (the same layout for all in a dealt game),
    the hand's seed material (hex, for dead-board reshuffles) and the time limit's end
    (``deadline_ms``; 0 = no limit)."""

    rows: int
    cols: int
    layouts: tuple[Layout, ...]
    seed: str
    deadline_ms: int


@dataclass(frozen=True, slots=True)
class Removed:
    """``seat`` removed the pair ``first``–``second`` of ``pattern``; ``remaining`` tiles left.
    ``path`` is the line drawn between them: its corner points from ``first`` to ``second``
    (a path of the fewest turns, see :func:`~chieu.games.lianliankan.board.path`)."""

    seat: int
    first: Cell
    second: Cell
    pattern: int
    remaining: int
    path: tuple[Point, ...] = ()


@dataclass(frozen=True, slots=True)
class Reshuffled:
    """``seat``'s board had no removable pair: its tiles were permuted over the same cells."""

    seat: int
    cells: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Left:
    """``seat`` left the game."""

    seat: int


@dataclass(frozen=True, slots=True)
class Finished:
    """The game is over. ``reason``: ``cleared`` (the winner cleared his board), ``time_up``
    (fewest remaining tiles wins) or ``abandoned`` (one player left in). ``ranking`` lists
    seats best first; ``scores`` and ``remaining`` are per seat."""

    reason: str
    winner: int
    ranking: tuple[int, ...]
    scores: tuple[int, ...]
    remaining: tuple[int, ...]
    transfers: tuple[Transfer, ...]


# ---------------------------------------------------------------- state and view


@dataclass(frozen=True, slots=True)
class State:
    """Every seat's board; ``reached`` is the log order (``seq``) of each seat's last removal."""

    options: Options
    players: int
    rows: int = 0
    cols: int = 0
    boards: tuple[Board, ...] = ()
    seed: str = ""
    deadline_ms: int = 0
    seq: int = 0
    reached: tuple[int, ...] = ()
    reshuffles: tuple[int, ...] = ()
    left: tuple[int, ...] = ()
    started: bool = False
    finished: Finished | None = None


@dataclass(frozen=True, slots=True)
class Command:
    """One entry of a view's ``legal`` list: exactly one command is set; send it (or this
    wrapper) in ``Act`` unchanged."""

    remove: Remove | None = None
    leave: Leave | None = None


@dataclass(frozen=True, slots=True)
class Pair:
    """A removable pair, compactly: ``Remove(first, second)``, with the ``path`` a removal would
    draw (as :class:`Removed`'s)."""

    first: Cell
    second: Cell
    path: tuple[Point, ...]


@dataclass(frozen=True, slots=True)
class View:
    """``seat``'s own board and everybody's remaining counts (seat -1: a spectator, no board).

    ``legal_pairs`` (each a ``Remove``) and ``legal`` (``Leave``) are what the seat may send
    now; both are empty for a spectator, a seat that left and once the game is over."""

    seat: int
    rows: int
    cols: int
    board: tuple[int, ...]
    remaining: tuple[int, ...]
    active: tuple[bool, ...]
    deadline_ms: int
    finished: bool
    result: Finished | None
    legal: tuple[Command, ...]
    legal_pairs: tuple[Pair, ...]


GameCommand = Remove | Leave
"""Every command of 连连看 (what its ``decide`` takes and ``legal`` lists; ``GAME.commands``)."""
GameEvent = Started | Removed | Reshuffled | Left | TimedOut | Finished
"""Every event of 连连看 (what its decider makes and its ``evolve`` folds; ``GAME.events``)."""
