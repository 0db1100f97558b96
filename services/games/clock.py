"""The turn clock every game keeps the same way: who acts first in a hand, when a clock started now
runs out, which seats are on the clock, and the check that a timed-out seat's clock is running.

What differs between games is data given to these functions: each game's rotation from the
previous hand, the label its seed draw is made under, the codes of its refusals.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from chieu.games import fair
from chieu.games.core import Deadline, IllegalMove, Outcome, RuleViolation, Seat, Setup


def first_seat(setup: Setup, after: Callable[[Outcome], Seat | None] | None = None, *, draw: str = "",
               otherwise: Seat | None = None) -> Seat:
    """Who acts (or deals) first this hand, asked in the order every game asks it: the seat the table
    fixes (``setup.first``: a scenario's); else the game's rotation from the previous hand
    (``after(previous)``, ``None`` where no rule applies); else ``otherwise``; else a seat drawn from
    the hand's seed material under the label ``draw``."""
    if setup.first is not None:
        return setup.first
    if after is not None and setup.previous is not None:
        seat = after(setup.previous)
        if seat is not None:
            return seat
    if otherwise is not None:
        return otherwise
    if not draw:
        raise ValueError("no first seat: give the label of a seed draw or a seat otherwise")
    return fair.choice(setup.seed, tuple(range(setup.players)), draw)


def due(now_ms: int, seconds: int) -> int:
    """When a clock of ``seconds`` started at ``now_ms`` runs out (ms since the epoch)."""
    return now_ms + seconds * 1000


def due_if(now_ms: int, seconds: int) -> int:
    """:func:`due` of an optional clock: 0 (no clock) when ``seconds`` is 0."""
    return now_ms + seconds * 1000 if seconds > 0 else 0


def to_act(seat: Seat | None, at_ms: int) -> tuple[Deadline, ...]:
    """The deadline of the one seat to act (none: nobody is)."""
    return () if seat is None else (Deadline(seat, at_ms),)


def each(seats: Iterable[Seat], at_ms: int) -> tuple[Deadline, ...]:
    """The same deadline for each of ``seats`` (once each, in their order)."""
    return tuple(Deadline(seat, at_ms) for seat in dict.fromkeys(seats))


OFF_CLOCK = "no deadline of this seat is running"
"""The words of every refusal of an auto-play for a seat whose clock is not running."""


def running(deadlines: Sequence[Deadline], seat: Seat, refusal: RuleViolation | None = None) -> Deadline:
    """The seat's running deadline; else ``refusal`` is raised (a game's own code, written where the
    game is), by default ``IllegalMove("not_your_turn")``: an auto-play for a seat whose clock is not
    running is refused."""
    for d in deadlines:
        if d.seat == seat:
            return d
    raise refusal if refusal is not None else IllegalMove("not_your_turn", OFF_CLOCK)
