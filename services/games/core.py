"""The rules-core contract every game implements: the *decider* of DESIGN.md.

A game is a :class:`Game` object registered under a stable key. It is pure: no
I/O, no clock, no global randomness, no mutation of its inputs. Time and
randomness come in as data (``now_ms`` and the hand's seed material).

Commands, events and views are frozen, slotted dataclasses. Each has a protobuf
message of the same name in the game's ``chieu.games.<key>.v1`` package; the
table service converts between them by field name (see ``chieu.tablelog.codec``).

Seats are numbered 0..n-1 in **turn order** (P1 is seat 0, P2 acts right after
P1, ...). Money is counted in stake units (cược): the ledger multiplies by the
table's stake and currency.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

Seat = int
"""A seat index in turn order, 0-based."""

Command = Any
"""Any game's command, where the game is not known (the table, the codec, the scenario runner): a
frozen dataclass named in the imperative (``Sow``, ``Discard``). A game itself declares the union of
its own (``GameCommand`` in its ``model``), and is a :class:`Game` over it."""

Event = Any
"""Any game's event, where the game is not known: a frozen dataclass named in the past tense
(``Sowed``, ``Discarded``). A game declares the union of its own (``GameEvent`` in its ``model``)."""

S = TypeVar("S")
O = TypeVar("O")  # noqa: E741 - the game's options type
C = TypeVar("C")
"""The game's command union: what ``decide`` takes and ``legal`` lists."""
E = TypeVar("E")
"""The game's event union: what ``start``, ``decide`` and ``on_timeout`` return and ``evolve`` folds,
so mypy --strict checks every event a decider makes against what its ``evolve`` takes."""


class RuleViolation(ValueError):
    """A command the rules refuse. ``code`` is stable (``not_your_turn``); ``message`` is for people.

    Raising it means nothing happened: the decider changed no state. ``status`` names the gRPC
    status a service answers with (a name, so the core imports nothing of gRPC).
    """

    status = "FAILED_PRECONDITION"

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


class InvalidCommand(RuleViolation):
    """The command is malformed (unknown square, bad direction, wrong type)."""

    status = "INVALID_ARGUMENT"


class IllegalMove(RuleViolation):
    """The command is well formed but not allowed in this position (out of turn, empty square)."""


class BadOptions(RuleViolation):
    """Table options that the game's schema refuses."""

    status = "INVALID_ARGUMENT"

    def __init__(self, message: str) -> None:
        super().__init__("bad_options", message)


@dataclass(frozen=True, slots=True)
class Transfer:
    """One payment in stake units (cược). ``None`` as a party means the table's gà pot.

    ``reason`` is a stable code (``cuoc``, ``eat_1``, ``chot``, ``ga_deal``, ``u``, ``mom``, ...).
    """

    from_seat: int | None
    to_seat: int | None
    amount: int
    reason: str


@dataclass(frozen=True, slots=True)
class Outcome:
    """The result of a finished hand.

    ``ranking`` lists seats best first (ties share the rank of the first of them, in the
    order the rules break them); ``scores`` is the game's own score per seat; ``transfers``
    is the whole settlement of the hand, every payment in the order it happened.
    ``winner`` is ``None`` for a draw or a hand without a winner.
    """

    winner: Seat | None
    ranking: tuple[Seat, ...]
    scores: tuple[int, ...]
    transfers: tuple[Transfer, ...]
    reason: str
    pot_balance: int = 0
    """The gà pot's balance after the hand, carried over to the next hand."""
    first: Seat | None = None
    """The seat that acted (or dealt) first this hand, for the next hand's rotation."""
    carry: tuple[int, ...] = ()
    """Game-specific data the next hand at the same table needs (e.g. 够级's 烧贡 / 闷贡 payers),
    encoded by the game. The table passes it on only when the next hand has the same players in
    the same seats; otherwise the next hand gets ``()``."""

    def net(self, seats: int) -> tuple[int, ...]:
        """Each seat's net change in stake units over the hand's transfers."""
        totals = [0] * seats
        for t in self.transfers:
            if t.from_seat is not None:
                totals[t.from_seat] -= t.amount
            if t.to_seat is not None:
                totals[t.to_seat] += t.amount
        return tuple(totals)


@dataclass(frozen=True, slots=True)
class Deadline:
    """A seat must act by ``at_ms`` (server time, ms since the epoch) or ``on_timeout`` plays."""

    seat: Seat
    at_ms: int


@dataclass(frozen=True, slots=True)
class Setup:
    """Everything ``start`` needs to set up one hand.

    ``seed`` is the hand's seed material (bytes derived from the server seed and any client
    seeds, see ``chieu.games.fair``); every random choice of the hand derives from it.
    ``previous`` is the previous hand's outcome at this table, for dealer rotation and the
    carried-over gà pot. ``owner`` is the seat of the table's host (chủ bàn).
    """

    options: Any
    players: int
    seed: bytes
    now_ms: int
    hand_no: int = 1
    previous: Outcome | None = None
    owner: Seat = 0
    first: Seat | None = None
    """A first player fixed by the table (e.g. a scenario); ``None`` lets the rules choose."""


@dataclass(frozen=True, slots=True)
class ScenarioHooks:
    """What the scenario runner needs from a game beyond the contract: ``HOOKS`` in the game's
    ``scenario`` module, found by :func:`chieu.games.registry.scenario` (the rules never import it).

    ``position(options, players, spec, now_ms)`` returns the events that put the hand in a
    given starting position (an exact deal, a board); ``describe(state)`` returns a plain
    mapping of what a scenario may assert about; ``queries`` are pure functions a scenario may
    call with plain arguments for static checks (``is_phom``, ``points``).
    """

    position: Callable[[Any, int, Mapping[str, Any], int], Sequence[Any]]
    describe: Callable[[Any], Mapping[str, Any]]
    queries: Mapping[str, Callable[..., Any]] = field(default_factory=dict)
    command: Callable[[Any], Any] | None = None
    """Reads a scenario command written in the game's notation (a mapping or a string);
    ``None``: by field name."""


class Game(Protocol, Generic[S, O, C, E]):
    """The decider contract shared by every game: over its state ``S``, its options ``O``, its
    commands ``C`` and its events ``E`` (a game's own unions; ``Game[Any, Any, Any, Any]`` where the
    game is any: :data:`AnyGame`)."""

    key: str
    """Stable game key, ASCII (``o_an_quan``)."""
    title: str
    """The game's native name (``Ô ăn quan``)."""
    min_players: int
    max_players: int
    commands: tuple[type, ...]
    """Every command dataclass type, for decoding."""
    events: tuple[type, ...]
    """Every event dataclass type, for decoding."""

    @property
    def option_type(self) -> type:
        """The options dataclass."""
        ...

    @property
    def view_type(self) -> type:
        """The view dataclass."""
        ...

    pot_options: tuple[str, ...]
    """Option names that change the gà pot's rules: like the stake, the table changes them only
    while its pot is 0 (Phỏm's ``ga``); ``()`` for a game without a pot."""

    def parse_options(self, raw: Mapping[str, Any]) -> O:
        """Validate table options by the game's schema (missing keys take their defaults)."""
        ...

    def option_values(self, options: O) -> Mapping[str, Any]:
        """The options as a plain mapping with the rules file's names (the inverse of parse)."""
        ...

    def initial(self, options: O, players: int) -> S:
        """The state before the hand's first event."""
        ...

    def start(self, setup: Setup) -> Sequence[E]:
        """Deal or set up a hand."""
        ...

    def decide(self, state: S, seat: Seat, command: C, now_ms: int) -> Sequence[E]:
        """Validate ``command`` by ``seat``; return its events or raise :class:`RuleViolation`."""
        ...

    def evolve(self, state: S, event: E) -> S:
        """Fold one event into a new state; never fails on a logged event."""
        ...

    def view(self, state: S, seat: Seat | None) -> Any:
        """What ``seat`` (or a spectator, ``None``) may see; never another seat's secrets.

        Its ``legal`` field is ``legal(state, seat)``, each command in the game's ``Command``
        wrapper (one optional field per command, ``common.wrapper``), or part of it in a
        compact form beside it; nothing for a spectator (docs/front-ends.md)."""
        ...

    def legal(self, state: S, seat: Seat) -> Sequence[C]:
        """Every command ``seat`` may send now: what its view lists, what bots and auto-play
        choose from; every one of them ``decide`` accepts."""
        ...

    def deadlines(self, state: S) -> Sequence[Deadline]:
        """The seats that must act and by when; empty when nobody is on the clock."""
        ...

    def on_timeout(self, state: S, seat: Seat, now_ms: int) -> Sequence[E]:
        """The deterministic auto-play for ``seat`` when its deadline has passed."""
        ...

    def outcome(self, state: S) -> Outcome | None:
        """The result and settlement once the hand is over, else ``None``."""
        ...


AnyGame = Game[Any, Any, Any, Any]
"""A game not known in advance (the registry's, the table's)."""


def replay(game: Game[S, Any, Any, E], state: S, events: Sequence[E]) -> S:
    """Fold ``events`` into ``state`` with ``game.evolve``."""
    for event in events:
        state = game.evolve(state, event)
    return state
