"""Đô Mi Nô data: commands, events, the state and the view (frozen, slotted dataclasses).

Tiles, ends and the recorded turns of the triệt analysis are :mod:`tiles`'s.
"""

from __future__ import annotations

from dataclasses import dataclass

from chieu.games.common import TimedOut, TurnPassed
from chieu.games.core import Transfer
from chieu.games.dominoes.options import Options
from chieu.games.dominoes.tiles import End, Ends, Tile, Turn

# ---------------------------------------------------------------- commands


@dataclass(frozen=True, slots=True)
class Play:
    """Put ``tile`` against the ``end`` of the line (any end for the lead)."""

    tile: Tile
    end: End


@dataclass(frozen=True, slots=True)
class Draw:
    """Bốc: take the boneyard's next tile (only while holding nothing playable)."""


@dataclass(frozen=True, slots=True)
class Pass:
    """Bỏ lượt: lose the turn (only with nothing playable and an empty boneyard)."""


# ---------------------------------------------------------------- events
# The turn events TimedOut(seat) (DM-R10) and TurnPassed(seat, deadline_ms) are common.py's.


@dataclass(frozen=True, slots=True)
class Hand:
    """One seat's tiles."""

    tiles: tuple[Tile, ...]


@dataclass(frozen=True, slots=True)
class Dealt:
    """A hand is dealt: every seat's tiles, the boneyard (top first) and the leader's deadline."""

    leader: int
    hands: tuple[Hand, ...]
    boneyard: tuple[Tile, ...]
    deadline_ms: int


@dataclass(frozen=True, slots=True)
class Drew:
    """``seat`` drew ``tile`` from the boneyard."""

    seat: int
    tile: Tile


@dataclass(frozen=True, slots=True)
class Played:
    """``seat`` put ``tile`` on ``end``; the open ends are now (``left``, ``right``)."""

    seat: int
    tile: Tile
    end: End
    left: int
    right: int


@dataclass(frozen=True, slots=True)
class Passed:
    """``seat`` passed (nothing playable, boneyard empty)."""

    seat: int


@dataclass(frozen=True, slots=True)
class Ended:
    """The hand is over.

    ``reason``: ``out`` (a player placed his last tile), ``triet_buoc`` (forced block),
    ``triet_win`` / ``triet_loss`` (a blocker who wins / loses). ``pips`` are the pips left per
    seat; ``transfers`` the whole settlement (§B4); ``next_leader`` leads the next hand, or is
    ``None`` for a random leader.
    """

    reason: str
    winner: int | None
    blocker: int | None
    assistant: int | None
    pips: tuple[int, ...]
    transfers: tuple[Transfer, ...]
    next_leader: int | None


# ---------------------------------------------------------------- state and view


@dataclass(frozen=True, slots=True)
class State:
    """The whole hand: hands, boneyard (top first), the line left to right, the turn record."""

    options: Options
    players: int
    hands: tuple[tuple[Tile, ...], ...] = ()
    boneyard: tuple[Tile, ...] = ()
    line: tuple[tuple[int, int], ...] = ()
    ends: Ends | None = None
    leader: int = 0
    to_move: int | None = None
    deadline_ms: int = 0
    turns: tuple[Turn, ...] = ()
    last_mover: int | None = None
    ended: Ended | None = None


@dataclass(frozen=True, slots=True)
class Command:
    """One entry of a view's ``legal`` list: exactly one command is set; send it (or this
    wrapper) in ``Act`` unchanged."""

    play: Play | None = None
    draw: Draw | None = None
    pass_: Pass | None = None


@dataclass(frozen=True, slots=True)
class LineTile:
    """A tile as it lies in the line: ``left`` half then ``right`` half."""

    left: int
    right: int


@dataclass(frozen=True, slots=True)
class OpenEnds:
    """The two open ends of the line."""

    left: int
    right: int


@dataclass(frozen=True, slots=True)
class View:
    """What ``seat`` sees: his own tiles, the line, the others' tile counts, the boneyard size.

    ``seat`` is -1 for a spectator (``hand`` empty); ``to_move`` is -1 when nobody is to act.
    ``legal`` is what the seat may send now (plays, else the draw or the pass; none off turn);
    ``revealed`` (every hand) and ``pips`` appear only once the hand is over.
    """

    seat: int
    hand: tuple[Tile, ...]
    line: tuple[LineTile, ...]
    ends: OpenEnds | None
    counts: tuple[int, ...]
    boneyard: int
    to_move: int
    deadline_ms: int
    legal: tuple[Command, ...]
    finished: bool
    result: Ended | None
    revealed: tuple[Hand, ...]


GameCommand = Play | Draw | Pass
"""Every command of Đô Mi Nô (what its ``decide`` takes and ``legal`` lists; ``GAME.commands``)."""
GameEvent = Dealt | Drew | Played | Passed | TimedOut | TurnPassed | Ended
"""Every event of Đô Mi Nô (what its decider makes and its ``evolve`` folds; ``GAME.events``)."""
