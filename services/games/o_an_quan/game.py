"""Ô ăn quan (mandarin square capturing) as a decider: rules OQ-R1…R14 of shared/rules/o_an_quan.md.

Two players: seat 0 is A (South, S1–S5), seat 1 is B (North, N7–N11). The sowing itself is
:mod:`board`'s; here are the turn, xuất quân (the refill of OQ-R4), the end and the result.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from chieu.games import clock
from chieu.games.common import TimedOut, TurnPassed, members, put, wrapper
from chieu.games.core import (
    Deadline,
    Game,
    IllegalMove,
    InvalidCommand,
    Outcome,
    RuleViolation,
    Seat,
    Setup,
    Transfer,
)
from chieu.games.o_an_quan.board import SIDES, START, Direction, is_quan, play, quan_index
from chieu.games.o_an_quan.model import (
    Captured,
    Command,
    Ended,
    GameCommand,
    GameEvent,
    Refilled,
    Sow,
    Sowed,
    Started,
    State,
    View,
    scores,
)
from chieu.games.o_an_quan.notation import format_position
from chieu.games.o_an_quan.options import Options, option_values, parse_options

_wrap = wrapper(Command)


def _add(t: tuple[int, ...], i: int, d: int) -> tuple[int, ...]:
    return put(t, i, t[i] + d)


class OAnQuan:
    """The Ô ăn quan game object registered under ``o_an_quan``."""

    key = "o_an_quan"
    title = "Ô ăn quan"
    min_players = 2
    max_players = 2
    commands = members(GameCommand)
    events = members(GameEvent)
    option_type = Options
    view_type = View
    pot_options: tuple[str, ...] = ()
    """The options that change the gà pot's rules: Ô ăn quan has no pot."""

    parse_options = staticmethod(parse_options)
    option_values = staticmethod(option_values)

    def initial(self, options: Options, players: int) -> State:
        return State(options=options)

    def start(self, setup: Setup) -> Sequence[GameEvent]:
        o: Options = setup.options

        def alternate(previous: Outcome) -> Seat | None:
            return 1 - previous.first if o.first_player == "alternate" and previous.first is not None else None

        first = clock.first_seat(setup, alternate, draw="first_player")
        return [Started(first, START, (True, True), (0, 0), (0, 0), (0, 0), (0, 0),
                        clock.due(setup.now_ms, o.turn_seconds))]

    # -- decide

    def decide(self, state: State, seat: Seat, command: GameCommand, now_ms: int) -> Sequence[GameEvent]:
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
        events: list[GameEvent] = []
        refill = self._refill(state, seat)
        if refill is not None:
            events.append(refill)
            state = self.evolve(state, refill)
        if state.board[command.square] == 0:
            raise IllegalMove("empty_square", "that square is empty")
        return events + self._move(state, seat, command, now_ms)

    def _refill(self, s: State, seat: int) -> Refilled | None:
        """Xuất quân (OQ-R4): own captured dân first, the shortfall borrowed from the opponent."""
        if any(s.board[i] for i in SIDES[seat]):
            return None
        own = min(5, s.stores[seat])
        return Refilled(seat, own, 5 - own)

    def _can_refill(self, s: State, seat: int) -> bool:
        if any(s.board[i] for i in SIDES[seat]):
            return True
        return s.stores[seat] + s.stores[1 - seat] >= 5

    def _move(self, s: State, seat: int, cmd: Sow, now_ms: int) -> list[GameEvent]:
        o = s.options
        result = play(
            s.board, (s.quan[0], s.quan[1]), cmd.square, cmd.direction,
            quan_non=o.quan_non,
            protect_quan=o.no_quan_capture_first_turn and s.moves[seat] == 0,
        )
        events: list[GameEvent] = [Sowed(seat, cmd.square, cmd.direction, result.relays, result.sown)]
        events += [Captured(seat, c.square, c.dan, c.quan) for c in result.captures]
        after = s
        for e in events:
            after = self.evolve(after, e)
        end = self._end_reason(after, seat)
        if end:
            swept = tuple(sum(after.board[i] for i in side) for side in SIDES)
            events.append(Ended(end, swept))
        else:
            events.append(TurnPassed(1 - seat, clock.due(now_ms, o.turn_seconds)))
        return events

    def _end_reason(self, s: State, mover: int) -> str:
        """OQ-R9 (both quans gone), OQ-R13 (the move cap), or no refill possible."""
        if not any(s.quan) and s.board[0] == 0 and s.board[6] == 0:
            return "quans_gone"
        if sum(s.moves) + 1 >= s.options.max_moves:
            return "max_moves"
        if not self._can_refill(s, 1 - mover):
            return "no_refill"
        return ""

    # -- evolve

    def evolve(self, state: State, event: GameEvent) -> State:
        s = state
        if isinstance(event, Sowed):
            return replace(s, board=event.board)
        if isinstance(event, Captured):
            quan = put(s.quan, quan_index(event.square), False) if event.quan else s.quan
            return replace(
                s,
                board=put(s.board, event.square, 0),
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
            legal=_wrap(self.legal(state, seat)) if seat is not None else (),
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
        return clock.to_act(state.to_move, state.deadline_ms)

    def on_timeout(self, state: State, seat: Seat, now_ms: int) -> Sequence[GameEvent]:
        """OQ-R14: the first non-empty own square (S1 / N7 side first), sown CCW."""
        clock.running(self.deadlines(state), seat)
        moves = [m for m in self.legal(state, seat) if m.direction is Direction.CCW]
        if not moves:
            raise RuleViolation("no_legal_move", "nothing can be played")
        return [TimedOut(seat), *self.decide(state, seat, moves[0], now_ms)]

    def outcome(self, state: State) -> Outcome | None:
        """OQ-R11–R12: the higher score wins 1 cược (``perPoint``: the difference); equal: a draw."""
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


GAME = OAnQuan()
CONTRACT: Game[State, Options, GameCommand, GameEvent] = GAME
"""The game as the contract over its own commands and events: mypy --strict checks ``decide``'s,
``start``'s and ``on_timeout``'s events against what ``evolve`` folds."""
