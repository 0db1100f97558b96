"""过关斩将 (the level ladder): what one finished game does to a player's level, best level and
level points (关积分), and who may sit at a ladder table. Pure: no I/O, no clock.

Follows shared/rules/ladder.md §5; its worked scenarios (LV-1..6, 8, 11, 12) are tests
(tests/ladder/test_rules.py). Names: ``level`` 当前关, ``best`` 最高关, ``lp`` 关积分,
强退 a forced quit, 断线不重连 a disconnect without reconnecting.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

from chieu.games import registry

GAMES = registry.KEYS
"""The games with a ladder: every registered game."""

TEAM_GAMES = registry.team_games()
"""Games whose result is a team's (§5.3.6, their descriptors' ``team_results``): each seat's own
score says win, loss or draw."""

MAX_LEVEL = 1000
"""The highest level a table or a correction may name."""


class Result(Enum):
    """One player's result of one game, as the ladder counts it."""

    WIN = "W"
    LOSS = "L"
    DRAW = "D"
    QUIT = "Q"
    """强退: left during the game."""
    DISCONNECT = "X"
    """断线不重连: lost the connection and did not come back in time."""


DELTA = {Result.WIN: 1, Result.LOSS: -1, Result.DRAW: 0, Result.QUIT: -2, Result.DISCONNECT: -1}
"""§5.3.1: the change of ``lp``; a penalty replaces the game's result for the offender."""


@dataclass(frozen=True, slots=True)
class Params:
    """The ladder's parameters (§5.1) and options (§5.3)."""

    up: int = 5
    """Promotion when ``lp`` > ``up``."""
    down: int = 5
    """Demotion when ``lp`` < −``down``."""
    floor_style: str = "at"
    """``FLOOR_STYLE``: at level 1 ``lp`` stops at −2×``down`` (``at``) or one below it (``below``)."""
    only_lose_basis: str = "table-level"
    """``ONLY_LOSE_BASIS``: a win gives nothing when the table's level (``table-level``) or every
    opponent's level (``opponent-level``) is below the player's own."""

    def __post_init__(self) -> None:
        if self.up < 1 or self.down < 1:
            raise ValueError("UP and DOWN must be at least 1")
        if self.floor_style not in ("at", "below"):
            raise ValueError(f"FLOOR_STYLE must be at or below, not {self.floor_style!r}")
        if self.only_lose_basis not in ("table-level", "opponent-level"):
            raise ValueError(f"ONLY_LOSE_BASIS must be table-level or opponent-level, not {self.only_lose_basis!r}")

    @property
    def floor(self) -> int:
        """The lowest ``lp`` at level 1 (a negative number)."""
        return -2 * self.down - (1 if self.floor_style == "below" else 0)


@dataclass(frozen=True, slots=True)
class Standing:
    """A player's place on the ladder: ``(level, best, lp)``; a new player is (1, 1, 0)."""

    level: int = 1
    best: int = 1
    lp: int = 0


@dataclass(frozen=True, slots=True)
class Change:
    """What one game did: the standing after it, and whether ``best`` rose (a reward may follow)."""

    standing: Standing
    best_level_up: bool


def valid(standing: Standing, params: Params = Params()) -> bool:
    """Whether a standing can be reached: 1 ≤ level ≤ best ≤ MAX_LEVEL, and lp within its bounds
    (down to the floor at level 1, −DOWN above it; at most UP)."""
    low = params.floor if standing.level == 1 else -params.down
    return (1 <= standing.level <= standing.best <= MAX_LEVEL) and low <= standing.lp <= params.up


def may_sit(standing: Standing, table_level: int) -> bool:
    """§5.2: a player sits only at tables of his level or below (anyone may watch)."""
    return table_level <= standing.level


def record(standing: Standing, result: Result, table_level: int, params: Params = Params(),
           opponent_levels: Sequence[int] = ()) -> Change:
    """§5.3: the standing after one finished game."""
    delta = DELTA[result]
    if result is Result.WIN and _below_own(standing, table_level, params, opponent_levels):
        delta = 0  # only-lose rule: a high player gains nothing at a lower table
    lp = standing.lp + delta
    level, best = standing.level, standing.best
    if lp > params.up:
        level, lp = level + 1, 0
        best = max(best, level)
    elif lp < -params.down:
        if level > 1:
            level, lp = level - 1, 0
        else:
            lp = max(lp, params.floor)
    return Change(Standing(level, best, lp), best > standing.best)


def _below_own(standing: Standing, table_level: int, params: Params, opponent_levels: Sequence[int]) -> bool:
    if params.only_lose_basis == "table-level":
        return table_level < standing.level
    return bool(opponent_levels) and max(opponent_levels) < standing.level


def game_results(seats: int, winner: int | None, scores: Sequence[int], *, teams: bool,
                 quit_seats: Sequence[int] = (), lost_seats: Sequence[int] = ()) -> tuple[Result, ...]:
    """Each seat's result of a finished game (§5.3.1, §5.3.6).

    Team games (够级): a seat's own score says it, positive a win, negative a loss, 0 a draw.
    Other games: the winner wins and everyone else loses (连连看; [CHOICE] the same for the
    other games with more than two seats); no winner is a draw for all. A forced quit or a
    disconnect replaces the seat's result with its penalty.
    """
    if teams:
        out = [Result.WIN if s > 0 else Result.LOSS if s < 0 else Result.DRAW for s in scores]
    elif winner is None:
        out = [Result.DRAW] * seats
    else:
        out = [Result.WIN if seat == winner else Result.LOSS for seat in range(seats)]
    for seat in lost_seats:
        out[seat] = Result.DISCONNECT
    for seat in quit_seats:
        out[seat] = Result.QUIT
    return tuple(out)
