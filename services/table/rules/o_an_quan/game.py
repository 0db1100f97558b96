"""Ô ăn quan (mandarin square capturing) as a decider: rules OQ-R1…R14 of shared/rules/o_an_quan.md.

Two players: seat 0 is A (South, S1–S5), seat 1 is B (North, N7–N11). Dân are the small
stones (citizens), quan the two mandarin pieces. The state keeps the stones physically: the
board, each player's store of captured dân, captured quan pieces, and the dân borrowed for a
refill (xuất quân, OQ-R4), which is paid back at scoring.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from chieu.table.rules import fair
from chieu.table.rules.core import (
    BadOptions,
    Deadline,
    IllegalMove,
    InvalidCommand,
    Outcome,
    RuleViolation,
    ScenarioHooks,
    Seat,
    Setup,
    Transfer,
)
from chieu.table.rules.o_an_quan.board import SIDES, Direction, is_quan, play
from chieu.table.rules.o_an_quan.notation import format_position, parse_position, parse_square

DAN_TOTAL = 50


# ---------------------------------------------------------------- options


@dataclass(frozen=True, slots=True)
class Options:
    """Table options of §C3 (names in the rules file's spelling in ``option_values``)."""

    quan_value: int = 10
    first_player: str = "alternate"
    quan_non: bool = False
    no_quan_capture_first_turn: bool = False
    payout: str = "fixed"
    max_moves: int = 300
    turn_seconds: int = 30


_OPTION_NAMES = {
    "quanValue": "quan_value",
    "firstPlayer": "first_player",
    "quanNon": "quan_non",
    "noQuanCaptureFirstTurn": "no_quan_capture_first_turn",
    "payout": "payout",
    "maxMoves": "max_moves",
    "turnSeconds": "turn_seconds",
}


def _as_bool(name: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    raise BadOptions(f"{name} must be true or false, not {value!r}")


def _as_int(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float) or int(value) != value:
        raise BadOptions(f"{name} must be a whole number, not {value!r}")
    return int(value)


def parse_options(raw: Mapping[str, Any]) -> Options:
    """Validate the options of §C3; unknown names and out-of-range values are refused."""
    unknown = sorted(set(raw) - set(_OPTION_NAMES))
    if unknown:
        raise BadOptions(f"unknown option(s) {', '.join(unknown)}; known: {', '.join(_OPTION_NAMES)}")
    o = Options()
    values: dict[str, Any] = {}
    for name, value in raw.items():
        attr = _OPTION_NAMES[name]
        if attr in ("quan_non", "no_quan_capture_first_turn"):
            values[attr] = _as_bool(name, value)
        elif attr in ("quan_value", "max_moves", "turn_seconds"):
            values[attr] = _as_int(name, value)
        else:
            values[attr] = value
    o = replace(o, **values)
    if o.quan_value not in (10, 5):
        raise BadOptions(f"quanValue must be 10 or 5, not {o.quan_value}")
    if o.first_player not in ("alternate", "random"):
        raise BadOptions(f"firstPlayer must be 'alternate' or 'random', not {o.first_player!r}")
    if o.payout not in ("fixed", "perPoint"):
        raise BadOptions(f"payout must be 'fixed' or 'perPoint', not {o.payout!r}")
    if o.max_moves < 1:
        raise BadOptions(f"maxMoves must be at least 1, not {o.max_moves}")
    if not 0 < o.turn_seconds <= 3600:
        raise BadOptions(f"turnSeconds must be in 1..3600, not {o.turn_seconds}")
    return o


def option_values(options: Options) -> Mapping[str, Any]:
    """The options under the rules file's names."""
    return {name: getattr(options, attr) for name, attr in _OPTION_NAMES.items()}


# ---------------------------------------------------------------- commands and events


@dataclass(frozen=True, slots=True)
class Sow:
    """Take all dân of one of your squares and sow them in ``direction`` (OQ-R5)."""

    square: int
    direction: Direction


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
class TimedOut:
    """``seat``'s turn timer ran out; the server plays for it (OQ-R14)."""

    seat: int


@dataclass(frozen=True, slots=True)
class TurnPassed:
    """It is ``seat``'s turn until ``deadline_ms``."""

    seat: int
    deadline_ms: int


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
    """The whole position; ``to_move`` is ``None`` before the start and after the end."""

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
class Move:
    """A legal move as shown in a view."""

    square: int
    direction: Direction


@dataclass(frozen=True, slots=True)
class View:
    """What anyone at the table sees: Ô ăn quan has no hidden information."""

    board: tuple[int, ...]
    quan: tuple[bool, ...]
    stores: tuple[int, ...]
    quans_captured: tuple[int, ...]
    borrowed: tuple[int, ...]
    to_move: int
    deadline_ms: int
    moves_made: int
    position: str
    legal: tuple[Move, ...]
    finished: bool
    scores: tuple[int, ...]
    winner: int
    """The winner's seat, or -1 while playing or for a draw."""


def _set(t: tuple[int, ...], i: int, v: int) -> tuple[int, ...]:
    return t[:i] + (v,) + t[i + 1 :]


def _add(t: tuple[int, ...], i: int, d: int) -> tuple[int, ...]:
    return _set(t, i, t[i] + d)


def scores(s: State) -> tuple[int, int]:
    """OQ-R10 with the stones kept physically: store + quans + swept − borrowed + lent."""
    qv = s.options.quan_value
    a = s.stores[0] + qv * s.quans_captured[0] + s.swept[0] - s.borrowed[0] + s.borrowed[1]
    b = s.stores[1] + qv * s.quans_captured[1] + s.swept[1] - s.borrowed[1] + s.borrowed[0]
    return a, b


# ---------------------------------------------------------------- the decider


class OAnQuan:
    """The Ô ăn quan game object registered under ``o_an_quan``."""

    key = "o_an_quan"
    title = "Ô ăn quan"
    min_players = 2
    max_players = 2
    commands: tuple[type, ...] = (Sow,)
    events: tuple[type, ...] = (Started, Refilled, Sowed, Captured, TimedOut, TurnPassed, Ended)
    option_type = Options
    view_type = View

    def __init__(self) -> None:
        self.scenario = ScenarioHooks(
            position=self._position, describe=describe, queries={"scores": scores},
            command=parse_command,
        )

    parse_options = staticmethod(parse_options)
    option_values = staticmethod(option_values)

    def initial(self, options: Options, players: int) -> State:
        return State(options=options)

    def start(self, setup: Setup) -> Sequence[Any]:
        o: Options = setup.options
        if setup.first is not None:
            first = setup.first
        elif o.first_player == "alternate" and setup.previous is not None and setup.previous.first is not None:
            first = 1 - setup.previous.first
        else:
            first = fair.choice(setup.seed, (0, 1), "first_player")
        board = (0,) + (5,) * 5 + (0,) + (5,) * 5
        return [
            Started(first, board, (True, True), (0, 0), (0, 0), (0, 0), (0, 0),
                    setup.now_ms + o.turn_seconds * 1000)
        ]

    def _position(self, options: Options, players: int, spec: Mapping[str, Any], now_ms: int) -> Sequence[Any]:
        board, quan = parse_position(str(spec["position"]))
        stores = tuple(int(x) for x in spec.get("stores", (0, 0)))
        quans = tuple(int(x) for x in spec.get("quans", (0, 0)))
        moves = tuple(int(x) for x in spec.get("moves", (1, 1)))
        first = {"A": 0, "B": 1}[str(spec.get("to_move", "A"))]
        if sum(board) + sum(stores) != DAN_TOTAL:
            raise ValueError(f"position holds {sum(board) + sum(stores)} dân, not {DAN_TOTAL}")
        if sum(quan) + sum(quans) != 2:
            raise ValueError("the two quan pieces must be on the board or captured")
        return [Started(first, board, quan, stores, quans, (0, 0), moves,
                        now_ms + options.turn_seconds * 1000)]

    # -- decide

    def decide(self, state: State, seat: Seat, command: Any, now_ms: int) -> Sequence[Any]:
        if not isinstance(command, Sow):
            raise InvalidCommand("unknown_command", f"Ô ăn quan has no command {type(command).__name__}")
        if not isinstance(command.direction, Direction):
            raise InvalidCommand("bad_direction", "direction must be CW or CCW")
        if not (isinstance(command.square, int) and 0 <= command.square < 12):
            raise InvalidCommand("bad_square", f"square must be 0..11, not {command.square!r}")
        if state.ended or not state.started:
            raise IllegalMove("game_over", "the game is over" if state.ended else "the game has not started")
        if seat != state.to_move:
            raise IllegalMove("not_your_turn", "it is not your turn")
        if is_quan(command.square):
            raise IllegalMove("quan_square", "a quan square cannot be sown")
        if command.square not in SIDES[seat]:
            raise IllegalMove("not_your_square", "that square belongs to your opponent")
        events: list[Any] = []
        refill = self._refill(state, seat)
        if refill is not None:
            events.append(refill)
            state = self.evolve(state, refill)
        if state.board[command.square] == 0:
            raise IllegalMove("empty_square", "that square is empty")
        return events + self._move(state, seat, command, now_ms)

    def _refill(self, s: State, seat: int) -> Refilled | None:
        if any(s.board[i] for i in SIDES[seat]):
            return None
        own = min(5, s.stores[seat])
        return Refilled(seat, own, 5 - own)

    def _can_refill(self, s: State, seat: int) -> bool:
        if any(s.board[i] for i in SIDES[seat]):
            return True
        return s.stores[seat] + s.stores[1 - seat] >= 5

    def _move(self, s: State, seat: int, cmd: Sow, now_ms: int) -> list[Any]:
        o = s.options
        result = play(
            s.board, (s.quan[0], s.quan[1]), cmd.square, cmd.direction,
            quan_non=o.quan_non,
            protect_quan=o.no_quan_capture_first_turn and s.moves[seat] == 0,
        )
        events: list[Any] = [Sowed(seat, cmd.square, cmd.direction, result.relays, result.sown)]
        events += [Captured(seat, c.square, c.dan, c.quan) for c in result.captures]
        after = s
        for e in events:
            after = self.evolve(after, e)
        end = self._end_reason(after, seat)
        if end:
            swept = tuple(sum(after.board[i] for i in side) for side in SIDES)
            events.append(Ended(end, swept))
        else:
            events.append(TurnPassed(1 - seat, now_ms + o.turn_seconds * 1000))
        return events

    def _end_reason(self, s: State, mover: int) -> str:
        if not any(s.quan) and s.board[0] == 0 and s.board[6] == 0:
            return "quans_gone"
        if sum(s.moves) + 1 >= s.options.max_moves:
            return "max_moves"
        if not self._can_refill(s, 1 - mover):
            return "no_refill"
        return ""

    # -- evolve

    def evolve(self, state: State, event: Any) -> State:
        s = state
        if isinstance(event, Sowed):
            return replace(s, board=event.board)
        if isinstance(event, Captured):
            quan = s.quan
            if event.quan:
                qi = 0 if event.square == 0 else 1
                quan = quan[:qi] + (False,) + quan[qi + 1 :]
            return replace(
                s,
                board=_set(s.board, event.square, 0),
                quan=quan,
                stores=_add(s.stores, event.seat, event.dan),
                quans_captured=_add(s.quans_captured, event.seat, 1 if event.quan else 0),
            )
        if isinstance(event, TurnPassed):
            return replace(
                s, to_move=event.seat, deadline_ms=event.deadline_ms,
                moves=_add(s.moves, 1 - event.seat, 1),
            )
        if isinstance(event, Refilled):
            board = s.board
            for i in SIDES[event.seat]:
                board = _add(board, i, 1)
            stores = _add(s.stores, event.seat, -event.from_store)
            stores = _add(stores, 1 - event.seat, -event.borrowed)
            return replace(s, board=board, stores=stores, borrowed=_add(s.borrowed, event.seat, event.borrowed))
        if isinstance(event, Ended):
            board = tuple(0 if not is_quan(i) else b for i, b in enumerate(s.board))
            mover = s.to_move if s.to_move is not None else 0
            return replace(
                s, board=board, swept=event.swept, ended=event.reason, to_move=None,
                moves=_add(s.moves, mover, 1),
            )
        if isinstance(event, Started):
            return replace(
                s, board=event.board, quan=event.quan, stores=event.stores,
                quans_captured=event.quans_captured, borrowed=event.borrowed, moves=event.moves,
                first=event.first, to_move=event.first, deadline_ms=event.deadline_ms, started=True,
            )
        if isinstance(event, TimedOut):
            return s
        raise TypeError(f"not an Ô ăn quan event: {event!r}")

    # -- views, hints, time, result

    def view(self, state: State, seat: Seat | None) -> View:
        out = self.outcome(state)
        return View(
            board=state.board, quan=state.quan, stores=state.stores,
            quans_captured=state.quans_captured, borrowed=state.borrowed,
            to_move=-1 if state.to_move is None else state.to_move,
            deadline_ms=state.deadline_ms if state.to_move is not None else 0,
            moves_made=sum(state.moves), position=format_position(state.board, state.quan),
            legal=tuple(Move(m.square, m.direction) for m in self.legal(state, state.to_move))
            if state.to_move is not None else (),
            finished=bool(state.ended),
            scores=out.scores if out else (0, 0),
            winner=-1 if out is None or out.winner is None else out.winner,
        )

    def legal(self, state: State, seat: Seat) -> Sequence[Sow]:
        if state.ended or not state.started or seat != state.to_move:
            return []
        side = SIDES[seat]
        if not any(state.board[i] for i in side):
            squares: Sequence[int] = side if self._can_refill(state, seat) else ()
        else:
            squares = [i for i in side if state.board[i]]
        return [Sow(i, d) for i in squares for d in (Direction.CW, Direction.CCW)]

    def deadlines(self, state: State) -> Sequence[Deadline]:
        if state.to_move is None:
            return ()
        return (Deadline(state.to_move, state.deadline_ms),)

    def on_timeout(self, state: State, seat: Seat, now_ms: int) -> Sequence[Any]:
        """OQ-R14: the first non-empty own square (S1 / N7 side first), sown CCW."""
        if state.to_move != seat or state.ended:
            raise IllegalMove("not_your_turn", "no deadline of this seat is running")
        moves = [m for m in self.legal(state, seat) if m.direction is Direction.CCW]
        if not moves:
            raise RuleViolation("no_legal_move", "nothing can be played")
        return [TimedOut(seat), *self.decide(state, seat, moves[0], now_ms)]

    def outcome(self, state: State) -> Outcome | None:
        if not state.ended:
            return None
        a, b = scores(state)
        if a == b:
            return Outcome(None, (0, 1), (a, b), (), state.ended, first=state.first)
        winner, loser = (0, 1) if a > b else (1, 0)
        amount = 1 if state.options.payout == "fixed" else abs(a - b)
        return Outcome(
            winner, (winner, loser), (a, b),
            (Transfer(loser, winner, amount, "cuoc"),), state.ended, first=state.first,
        )


def describe(state: State) -> Mapping[str, Any]:
    """What scenarios assert: the position string and the stores, seat A then B."""
    out: dict[str, Any] = {
        "position": format_position(state.board, state.quan),
        "to_move": {None: None, 0: "A", 1: "B"}[state.to_move],
        "stores": list(state.stores),
        "quans": list(state.quans_captured),
        "borrowed": list(state.borrowed),
        "ended": state.ended or None,
    }
    if state.ended:
        out["scores"] = list(scores(state))
        out["swept"] = list(state.swept)
    return out


def parse_command(raw: Mapping[str, Any]) -> Sow:
    """A scenario command ``{square: S1, direction: CW}``; squares by name or index."""
    try:
        return Sow(parse_square(raw["square"]), Direction(str(raw["direction"])))
    except (KeyError, ValueError) as e:
        raise InvalidCommand("bad_command", f"cannot read {dict(raw)!r}: {e}") from None


GAME = OAnQuan()
