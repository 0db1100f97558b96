"""Ô ăn quan data: the command, the events, the state and the view (frozen, slotted dataclasses).

Dân are the small stones (citizens), quan the two mandarin pieces. The state keeps the stones
physically: the board, each player's store of captured dân, captured quan pieces, and the dân
borrowed for a refill (xuất quân, OQ-R4), which is paid back at scoring.
"""

from __future__ import annotations

from dataclasses import dataclass

from chieu.games.common import TimedOut, TurnPassed
from chieu.games.o_an_quan.board import Direction
from chieu.games.o_an_quan.options import Options

# ---------------------------------------------------------------- command


@dataclass(frozen=True, slots=True)
class Sow:
    """Take all dân of one of your squares and sow them (rải quân) in ``direction`` (OQ-R5)."""

    square: int
    direction: Direction


# ---------------------------------------------------------------- events
# The turn events TimedOut(seat) (OQ-R14) and TurnPassed(seat, deadline_ms) are common.py's.


@dataclass(frozen=True, slots=True)
class Started:
    """A hand is set up: the whole position, who moves first, and their deadline."""

    first: int
    board: tuple[int, ...]
    quan: tuple[bool, ...]
    stores: tuple[int, ...]
    quans_captured: tuple[int, ...]
    borrowed: tuple[int, ...]
    moves: tuple[int, ...]
    deadline_ms: int


@dataclass(frozen=True, slots=True)
class Refilled:
    """Xuất quân (OQ-R4): ``seat`` put one dân on each empty square, ``borrowed`` of them lent."""

    seat: int
    from_store: int
    borrowed: int


@dataclass(frozen=True, slots=True)
class Sowed:
    """``seat`` sowed ``square``; ``relays`` are the squares picked up on the way; ``board`` after."""

    seat: int
    square: int
    direction: Direction
    relays: tuple[int, ...]
    board: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Captured:
    """``seat`` captured (ăn) ``square``: ``dan`` stones and, if ``quan``, its quan piece."""

    seat: int
    square: int
    dan: int
    quan: bool


@dataclass(frozen=True, slots=True)
class Ended:
    """The game is over (``reason``: ``quans_gone``, ``max_moves``, ``no_refill``).

    ``swept`` is the dân each side took home from its own squares (hết quan, toàn dân kéo về).
    """

    reason: str
    swept: tuple[int, ...]


# ---------------------------------------------------------------- state and view


@dataclass(frozen=True, slots=True)
class State:
    """The whole position; ``to_move`` is ``None`` before the start and after the end.

    ``borrowed[i]`` is the dân seat ``i`` took from the opponent's store for its refills: what
    it owes (and the opponent has lent), settled at scoring.
    """

    options: Options
    board: tuple[int, ...] = (0,) * 12
    quan: tuple[bool, ...] = (True, True)
    stores: tuple[int, ...] = (0, 0)
    quans_captured: tuple[int, ...] = (0, 0)
    borrowed: tuple[int, ...] = (0, 0)
    moves: tuple[int, ...] = (0, 0)
    first: int = 0
    to_move: int | None = None
    deadline_ms: int = 0
    started: bool = False
    ended: str = ""
    swept: tuple[int, ...] = (0, 0)


@dataclass(frozen=True, slots=True)
class Command:
    """One entry of a view's ``legal`` list: exactly one command is set; send it (or this
    wrapper) in ``Act`` unchanged."""

    sow: Sow | None = None


@dataclass(frozen=True, slots=True)
class View:
    """What anyone at the table sees: Ô ăn quan has no hidden information. ``legal`` is what
    the viewing seat may send now (the side to move's sowings; none for anyone else)."""

    board: tuple[int, ...]
    quan: tuple[bool, ...]
    stores: tuple[int, ...]
    quans_captured: tuple[int, ...]
    borrowed: tuple[int, ...]
    to_move: int
    deadline_ms: int
    moves_made: int
    position: str
    legal: tuple[Command, ...]
    finished: bool
    scores: tuple[int, ...]
    winner: int
    """The winner's seat, or -1 while playing or for a draw."""


def scores(s: State) -> tuple[int, int]:
    """OQ-R10 with the stones kept physically: store + quans + swept − borrowed + lent."""
    qv = s.options.quan_value
    a = s.stores[0] + qv * s.quans_captured[0] + s.swept[0] - s.borrowed[0] + s.borrowed[1]
    b = s.stores[1] + qv * s.quans_captured[1] + s.swept[1] - s.borrowed[1] + s.borrowed[0]
    return a, b


GameCommand = Sow
"""Every command of Ô ăn quan (what its ``decide`` takes and ``legal`` lists; ``GAME.commands``)."""
GameEvent = Started | Refilled | Sowed | Captured | TimedOut | TurnPassed | Ended
"""Every event of Ô ăn quan (what its decider makes and its ``evolve`` folds; ``GAME.events``)."""
