"""What the rest of the system needs to know of a game besides its rules: its names in the
players' three languages, its seats, how its results count, the options of a short-clock room,
and how a tool may exercise or draw it.

Every game package exports one :class:`Descriptor` as ``DESCRIPTOR``; the registry
(:mod:`chieu.games.registry`) finds them, and the ladder, the lobby's default rooms, the chaos
run, the audit's replay page, the web client (``web/gen/chieu/games/registry.ts``, generated
by ``scripts/gamests``) and the ``chieu`` command line (a game's :class:`Tool`) read them.
Nothing outside ``chieu.games`` names a game key.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from chieu.games.fairness import Fairness

ROOM_KINDS = ("points", "coins", "ladder")
"""The kinds of room a game can be played in: for points, for 金币 at a stake, or on the
过关斩将 ladder."""


@dataclass(frozen=True, slots=True)
class Titles:
    """A game's name in each language a player may choose (Vietnamese, Chinese, English)."""

    vi: str
    zh: str
    en: str

    def __post_init__(self) -> None:
        if not (self.vi and self.zh and self.en):
            raise ValueError("a game has a title in vi, zh and en")

    def get(self, lang: str) -> str:
        """The title in ``lang`` (``vi``, ``zh`` or ``en``); English for any other language."""
        return {"vi": self.vi, "zh": self.zh}.get(lang, self.en)


@dataclass(frozen=True, slots=True)
class Exercise:
    """How the chaos run's bots play the game: how many of them sit at a table, in which kind of
    room the short (CI) run plays it, and in which kinds the full run does."""

    players: int
    """Players at the short run's table."""
    full_players: int
    """Players at each of the full run's tables."""
    short_room: str
    full_rooms: tuple[str, ...]

    def __post_init__(self) -> None:
        rooms = (self.short_room, *self.full_rooms)
        if any(r not in ROOM_KINDS for r in rooms) or self.short_room not in self.full_rooms:
            raise ValueError(f"rooms are among {ROOM_KINDS}, and the short run's room is one of the full run's")


MaxLoss = Callable[[Any, int], int]
"""The most one seat can lose in one hand, in stake units (cược), given the game's parsed options
and the number of seats: what a coin table reserves of each seat's 金币 (× the stake) before the
hand starts (docs/ledger.md, "Reservations"). Pure and bounded (a product of the options, never a
search); every settlement of the hand is capped within it."""

Drawing = Callable[[Any, Sequence[str]], str]
"""Draws a state as an HTML fragment for the audit's replay page, given the hand's player ids.
Pure: text in, text out; the page escapes nothing the function did not."""


@dataclass(frozen=True, slots=True)
class Tool:
    """A command a game adds to the ``chieu`` command line (``chieu perft``): the CLI finds it
    through the registry and names no game. Its name must not be one of the CLI's own commands
    nor another game's tool (the CLI refuses to start otherwise)."""

    name: str
    """The subcommand (``chieu <name>``)."""
    help: str
    """One line for ``chieu --help``."""
    arguments: Callable[[argparse.ArgumentParser], None]
    """Adds the command's arguments to its subparser (so ``chieu <name> --help`` shows them)."""
    run: Callable[[argparse.Namespace], int]
    """Runs the command on the parsed arguments; the exit code."""


@dataclass(frozen=True, slots=True)
class Descriptor:
    """One game as the rest of the system sees it (see the module's docstring)."""

    key: str
    """The stable ASCII key: the package's name and the proto package's (``chieu.games.<key>.v1``)."""
    titles: Titles
    min_seats: int
    max_seats: int
    sort: int
    """Where the game is listed among the others (the lobby's rooms and home screen, the page);
    also the hundreds of its default rooms' ``sort``."""
    team_results: bool
    """Whether a hand's result is a team's (够级): the ladder reads each seat's own score as the
    team's win, loss or draw (ladder rules §5.3.6)."""
    short_clock: Mapping[str, Any]
    """Table options, with the rules file's names, that make every clock a few seconds long: the
    chaos run's rooms and any test that wants timeouts soon."""
    exercise: Exercise
    max_move_units: int = 0
    """The most stake units one move (one logged record) can settle in all, at every option's
    upper bound and the most seats, a gà pot's payout aside (docs/ledger.md, "Bounded amounts"):
    the table refuses a stake at which this times the stake does not fit a 64-bit integer."""
    draw: Drawing | None = None
    """The audit replay page's drawing of a state; ``None``: the page lists each seat's view."""
    max_loss: MaxLoss | None = None
    """A seat's largest loss in one hand (:data:`MaxLoss`); every game has one (a test holds them
    to it), ``None`` only for a game that cannot be played for 金币."""
    rules_file: str = ""
    """The rules file, relative to the shared rules folder (``phom.md``); empty if it has none."""
    extra: Mapping[str, Any] = field(default_factory=dict)
    tools: tuple[Tool, ...] = ()
    """The game's commands on the ``chieu`` command line (中国象棋's ``perft``)."""
    fairness: Fairness = field(default_factory=Fairness)
    """The labels its rules draw at random from and what each decides, and its test vectors
    (docs/fairness.md, written from it by ``scripts/fairvectors``); the default: nothing is random."""

    def seat_reservation(self, options: Any, seats: int, stake: int) -> int | None:
        """What one seat of a ``seats``-player coin hand at ``stake`` reserves, in 金币: the largest
        loss (:data:`MaxLoss`, at least one stake unit) × the stake; ``None``: no bound (the game is
        not played for 金币). The one rule: the table reserves it before a hand, and every entry
        gate (the table's seat, the lobby's rooms and quick seat) asks the ledger whether the
        player's 金币 not already reserved cover it (:meth:`most_reserved`)."""
        if self.max_loss is None:
            return None
        return max(1, self.max_loss(options, seats)) * stake

    def most_reserved(self, options: Any, stake: int, most_seats: int | None = None) -> int | None:
        """The most one seat of any hand at a coin table of these options and stake reserves,
        with ``min_seats`` .. ``most_seats`` (default: the game's most) seated: what an entry gate
        asks a player to cover, so that whoever sits can start every hand the table may deal."""
        top = self.max_seats if most_seats is None else max(self.min_seats, min(most_seats, self.max_seats))
        found = [self.seat_reservation(options, n, stake) for n in range(self.min_seats, top + 1)]
        return None if found[0] is None else max(c for c in found if c is not None)

    def __post_init__(self) -> None:
        if not (self.key.isascii() and self.key.isidentifier() and self.key.islower()):
            raise ValueError(f"a game key is a lower-case ASCII identifier, not {self.key!r}")
        if self.max_move_units < 0:
            raise ValueError("max_move_units is not negative")
        if not 1 <= self.min_seats <= self.max_seats:
            raise ValueError("1 <= min_seats <= max_seats")
        if not all(self.min_seats <= n <= self.max_seats for n in (self.exercise.players, self.exercise.full_players)):
            raise ValueError("the chaos run seats between min_seats and max_seats players")
