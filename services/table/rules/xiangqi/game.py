"""中国象棋 (Xiangqi) as a decider: rules §3 of shared/rules/xiangqi.md.

Two players: seat 0 is Red (红, moves first), seat 1 is Black (黑). Commands carry moves in
ICCS notation (``h2e2``); events and views carry the Chinese file notation (纵线记谱,
``炮二平五``) beside it. The game ends by 将死 (checkmate), 困毙 (stalemate, a loss), 认输
(resignation), 和棋 (agreed draw), 长将 (perpetual check, a loss), repetition, the optional
AXF 长捉 (perpetual chase) rule, the move limit, or 超时 (loss on time).

The clock (§3.3.7) is state: each seat's time left in its current period and the moves it
has made; the server time of each command arrives as ``now_ms``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from chieu.table.rules.core import (
    BadOptions,
    Deadline,
    IllegalMove,
    InvalidCommand,
    Outcome,
    ScenarioHooks,
    Seat,
    Setup,
    Transfer,
)
from chieu.table.rules.xiangqi import board as bd
from chieu.table.rules.xiangqi.board import BLACK, RED, START_FEN, Board

WIN_POINTS = 2
"""局分: win +2, loss −2, draw 0 (§3.3.8)."""

# ---------------------------------------------------------------- options

_TIME_RE = re.compile(r"^\s*(\d+)\s*min\s*/\s*(\d+)\s*(?:\+\s*(\d+)\s*min\s*/\s*(\d+)\s*)?$")


@dataclass(frozen=True, slots=True)
class Options:
    """Table options of §3.5 (the rules file's names in :func:`option_values`).

    The time control is ``main_minutes`` for the first ``main_moves`` moves, then
    ``period_minutes`` for each further ``period_moves`` moves, repeating; ``main_minutes``
    0 means an untimed game (``TIME_CONTROL = none``).
    """

    facing_kings: str = "illegal"
    chase_rule: str = "none"
    move_limit: str = "120-per-side"
    carry_over: bool = True
    main_minutes: int = 60
    main_moves: int = 30
    period_minutes: int = 10
    period_moves: int = 10

    @property
    def timed(self) -> bool:
        return self.main_minutes > 0

    @property
    def time_control(self) -> str:
        if not self.timed:
            return "none"
        return (f"{self.main_minutes}min/{self.main_moves}"
                f"+{self.period_minutes}min/{self.period_moves}")


_CHOICES = {
    "FACING_KINGS": ("illegal", "mover-loses"),
    "CHASE_RULE": ("none", "axf"),
    "MOVE_LIMIT": ("120-per-side", "120-plies"),
    "CARRY_OVER": ("on", "off"),
}
OPTION_NAMES = (*_CHOICES, "TIME_CONTROL")


def parse_options(raw: Mapping[str, Any]) -> Options:
    """Validate the options of §3.5; unknown names and values are refused.

    ``TIME_CONTROL`` is ``"60min/30+10min/10"`` (main period, then repeating periods) or
    ``"none"``; ``CARRY_OVER`` also takes true/false.
    """
    unknown = sorted(set(raw) - set(OPTION_NAMES))
    if unknown:
        known = ", ".join(OPTION_NAMES)
        raise BadOptions(f"unknown option(s) {', '.join(unknown)}; known: {known}")
    values: dict[str, Any] = {}
    for name, allowed in _CHOICES.items():
        if name not in raw:
            continue
        value = raw[name]
        if name == "CARRY_OVER" and isinstance(value, bool):
            value = "on" if value else "off"
        if value not in allowed:
            raise BadOptions(f"{name} must be one of {', '.join(allowed)}, not {value!r}")
        if name == "CARRY_OVER":
            values["carry_over"] = value == "on"
        else:
            values[name.lower()] = value
    if "TIME_CONTROL" in raw:
        text = raw["TIME_CONTROL"]
        if text in (None, "none", "off"):
            values.update(main_minutes=0, main_moves=0, period_minutes=0, period_moves=0)
        else:
            m = _TIME_RE.match(str(text))
            if m is None:
                raise BadOptions(f"TIME_CONTROL must look like '60min/30+10min/10' or be 'none', "
                                 f"not {text!r}")
            mm, mv = int(m.group(1)), int(m.group(2))
            pm, pv = int(m.group(3) or 0), int(m.group(4) or 0)
            if not (1 <= mm <= 600 and 1 <= mv <= 300):
                raise BadOptions("the main period needs 1..600 minutes for 1..300 moves")
            if (pm == 0) != (pv == 0) or pm > 600 or pv > 300:
                raise BadOptions("the repeating period needs 1..600 minutes for 1..300 moves")
            values.update(main_minutes=mm, main_moves=mv, period_minutes=pm, period_moves=pv)
    return replace(Options(), **values)


def option_values(options: Options) -> Mapping[str, Any]:
    """The options under the rules file's names."""
    return {
        "FACING_KINGS": options.facing_kings,
        "CHASE_RULE": options.chase_rule,
        "MOVE_LIMIT": options.move_limit,
        "CARRY_OVER": "on" if options.carry_over else "off",
        "TIME_CONTROL": options.time_control,
    }


# ---------------------------------------------------------------- commands


@dataclass(frozen=True, slots=True)
class Move:
    """Move a piece; ``move`` in ICCS notation (``h2e2`` = 炮二平五)."""

    move: str


@dataclass(frozen=True, slots=True)
class Resign:
    """认输: give up the game (either seat, any time while it runs)."""


@dataclass(frozen=True, slots=True)
class OfferDraw:
    """提和: propose a draw; only the side to move may (§3.3.3)."""


@dataclass(frozen=True, slots=True)
class AcceptDraw:
    """Accept the opponent's pending draw offer."""


@dataclass(frozen=True, slots=True)
class DeclineDraw:
    """Decline the opponent's pending draw offer."""


# ---------------------------------------------------------------- events


@dataclass(frozen=True, slots=True)
class Started:
    """A game is set up: the position, each seat's clock (ms left in its period) and moves made.

    ``at_ms`` is when the side to move's clock starts.
    """

    fen: str
    clocks_ms: tuple[int, ...]
    moves_made: tuple[int, ...]
    at_ms: int


@dataclass(frozen=True, slots=True)
class Moved:
    """``seat`` played ``move`` (ICCS) = ``chinese`` (纵线记谱) at ``at_ms``.

    ``captured`` is the FEN letter of the captured piece (``""`` if none); ``check``: it gives
    check (将军); ``chase``: it starts a chase (捉) in the sense of the AXF rule (only computed
    with ``CHASE_RULE = axf``); ``clock_ms``: the mover's time left after it, a new period's
    time included; ``fen``: the position after it.
    """

    seat: int
    move: str
    chinese: str
    captured: str
    check: bool
    chase: bool
    clock_ms: int
    at_ms: int
    fen: str


@dataclass(frozen=True, slots=True)
class DrawOffered:
    """``seat`` (the side to move) proposed a draw."""

    seat: int


@dataclass(frozen=True, slots=True)
class DrawDeclined:
    """``seat`` declined the pending draw offer."""

    seat: int


@dataclass(frozen=True, slots=True)
class DrawAccepted:
    """``seat`` accepted the pending draw offer."""

    seat: int


@dataclass(frozen=True, slots=True)
class Resigned:
    """``seat`` resigned (认输)."""

    seat: int


@dataclass(frozen=True, slots=True)
class TimedOut:
    """``seat``'s clock reached 0 before it completed its period's moves (超时)."""

    seat: int
    at_ms: int


@dataclass(frozen=True, slots=True)
class Ended:
    """The game is over: ``winner`` (``None`` for a draw) and a stable ``reason``.

    Reasons: ``checkmate``, ``stalemate``, ``resignation``, ``agreement``, ``perpetual_check``,
    ``mutual_perpetual_check``, ``perpetual_chase``, ``mutual_perpetual_chase``,
    ``repetition``, ``move_limit``, ``time``, ``facing_kings``.
    """

    winner: int | None
    reason: str


# ---------------------------------------------------------------- state and view


@dataclass(frozen=True, slots=True)
class Ply:
    """One played move as the repetition rules need it (state only)."""

    seat: int
    check: bool
    chase: bool


@dataclass(frozen=True, slots=True)
class PlayedMove:
    """A move in both notations: ICCS ``h2e2`` and Chinese ``炮二平五``."""

    move: str
    chinese: str


@dataclass(frozen=True, slots=True)
class State:
    """The whole game. ``to_move`` is ``None`` before the start and after the end."""

    options: Options
    board: tuple[int, ...] = (0,) * 90
    to_move: int | None = None
    started: bool = False
    ended: str = ""
    winner: int | None = None
    clocks_ms: tuple[int, ...] = (0, 0)
    moves_made: tuple[int, ...] = (0, 0)
    turn_started_ms: int = 0
    keys: tuple[str, ...] = ()
    """Position keys (placement + side) from the start on, for repetitions."""
    plies: tuple[Ply, ...] = ()
    played: tuple[PlayedMove, ...] = ()
    draw_offer: int | None = None
    offer_ply: int = -1
    """The ply count at which the last draw offer was made (one offer per turn)."""
    quiet: int = 0
    fullmove: int = 1


@dataclass(frozen=True, slots=True)
class View:
    """What anyone at the table sees (Xiangqi hides nothing).

    ``legal`` lists the side to move's legal moves; ``clocks_ms`` is each seat's time left as of
    the start of the current turn (the side to move's clock runs until ``deadline_ms``, 0 when
    untimed or over); ``winner`` is ``None`` for a draw or while playing.
    """

    fen: str
    to_move: int | None
    in_check: bool
    legal: tuple[PlayedMove, ...]
    moves: tuple[PlayedMove, ...]
    clocks_ms: tuple[int, ...]
    deadline_ms: int
    moves_made: tuple[int, ...]
    draw_offer: int | None
    finished: bool
    winner: int | None
    reason: str
    scores: tuple[int, ...]


def _side(seat: int) -> int:
    return RED if seat == 0 else BLACK


def _key(board: Board, side: int) -> str:
    return bd.placement(board) + (" w" if side == RED else " b")


def _fen_key(fen: str) -> str:
    """The repetition key of a FEN: placement and side to move."""
    return " ".join(fen.split(" ", 2)[:2])


def fen_of(state: State) -> str:
    """The state's position as FEN (side ``w`` after the game too, if Red would move)."""
    side = _side(state.to_move if state.to_move is not None else _next_seat(state))
    return bd.to_fen(state.board, side, state.quiet, state.fullmove)


def _next_seat(state: State) -> int:
    return 1 - state.plies[-1].seat if state.plies else 0


def _set(t: tuple[int, ...], i: int, v: int) -> tuple[int, ...]:
    return (*t[:i], v, *t[i + 1 :])


# ---------------------------------------------------------------- the chase rule (AXF 长捉)


_STRONGER = {bd.N: (bd.R,), bd.C: (bd.R,), bd.A: (bd.R, bd.N, bd.C), bd.B: (bd.R, bd.N, bd.C)}
"""Per attacker, the pieces it chases even when they are protected (a weaker piece attacking
a stronger one: 马/炮 against 车, 仕/相 against 车/马/炮, as Fairy-Stockfish's ``chased()``)."""


def _threats(board: Board, side: int) -> set[tuple[int, int]]:
    """``(attacker square, target square)`` pairs that count as chases (捉) by ``side``.

    The attacker is neither king nor soldier (帅/将 and 兵/卒 may chase freely) and can capture
    legally; the target is neither the king (that is check) nor a soldier still on its own half.
    It counts when the target is stronger than the attacker (:data:`_STRONGER`) or else
    unprotected (its owner could not legally recapture), except that a piece attacking one of
    its own kind that could legally take it back offers an exchange (兑), not a chase.
    """
    out: set[tuple[int, int]] = set()
    for f in range(90):
        p = board[f] * side
        if p <= 0 or p == bd.K or p == bd.P:
            continue
        for t in bd.targets(board, side, f):
            target = -board[t] * side
            if target <= 0 or target == bd.K:
                continue
            if target == bd.P and (t // 9 >= 5 if side == RED else t // 9 <= 4):
                continue  # an uncrossed enemy soldier, still on its own half
            if not bd.is_legal(board, side, f << 7 | t):
                continue
            if target == p and bd.is_legal(board, -side, t << 7 | f):
                continue  # the target could take the attacker back: an exchange offer
            if target in _STRONGER.get(p, ()):
                out.add((f, t))
                continue
            q = bd.make(board, f << 7 | t)
            protected = any(bd.is_legal(board, -side, g << 7 | t)
                            for g in bd.attackers_of(board, t, -side))
            bd.unmake(board, f << 7 | t, q)
            if not protected:
                out.add((f, t))
    return out


def _is_chase(before: Board, after: Board, side: int, move: int) -> bool:
    """Does ``move`` start a chase: a threat (:func:`_threats`) after it that was no capture
    the same pieces could make before it (the moved piece followed)?

    "Before" is judged by the movement rules alone, not by legality or protection: a side
    that was in check could capture nothing legally, and getting out of check is no chase.
    """
    f, t = move >> 7, move & 127
    old = {(t if a == f else a, b) for a, b in bd.capture_pairs(before, side)}
    return bool(_threats(after, side) - old)


# ---------------------------------------------------------------- the decider


class Xiangqi:
    """The 中国象棋 game object registered under ``xiangqi``."""

    key = "xiangqi"
    title = "中国象棋"
    min_players = 2
    max_players = 2
    commands: tuple[type, ...] = (Move, Resign, OfferDraw, AcceptDraw, DeclineDraw)
    events: tuple[type, ...] = (Started, Moved, DrawOffered, DrawDeclined, DrawAccepted,
                                Resigned, TimedOut, Ended)
    option_type = Options
    view_type = View

    def __init__(self) -> None:
        self.scenario = ScenarioHooks(
            position=self._position, describe=describe, command=parse_command,
            queries={"perft": query_perft, "legal_moves": query_legal_moves,
                     "chinese": query_chinese, "is_legal": query_is_legal},
        )

    parse_options = staticmethod(parse_options)
    option_values = staticmethod(option_values)

    def initial(self, options: Options, players: int) -> State:
        return State(options=options)

    def start(self, setup: Setup) -> Sequence[Any]:
        o: Options = setup.options
        main = o.main_minutes * 60_000
        return [Started(START_FEN, (main, main), (0, 0), setup.now_ms)]

    def _position(self, options: Options, players: int, spec: Mapping[str, Any],
                  now_ms: int) -> Sequence[Any]:
        """Scenario position: ``{fen, moves_made: [red, black], clocks_ms: [red, black]}``."""
        fen = str(spec.get("fen", START_FEN))
        try:
            _, side = bd.parse_fen(fen)
        except bd.BadPosition as e:
            raise ValueError(str(e)) from None
        parts = fen.split()
        full = int(parts[5]) if len(parts) > 5 else 1
        default_moves = (full - 1 + (side == BLACK), full - 1)
        moves = tuple(int(x) for x in spec.get("moves_made", default_moves))
        main = options.main_minutes * 60_000
        clocks = tuple(int(x) for x in spec.get("clocks_ms", (main, main)))
        return [Started(fen, clocks, moves, now_ms)]

    # -- decide

    def decide(self, state: State, seat: Seat, command: Any, now_ms: int) -> Sequence[Any]:
        if not state.started:
            raise IllegalMove("not_started", "the game has not started")
        if state.ended:
            raise IllegalMove("game_over", "the game is over")
        if seat not in (0, 1):
            raise InvalidCommand("bad_seat", f"Xiangqi has seats 0 and 1, not {seat!r}")
        if state.options.timed and now_ms >= self._deadline(state):
            raise IllegalMove("out_of_time", "the clock of the side to move has run out")
        if isinstance(command, Move):
            return self._move(state, seat, command, now_ms)
        if isinstance(command, Resign):
            return [Resigned(seat), Ended(1 - seat, "resignation")]
        if isinstance(command, OfferDraw):
            if seat != state.to_move:
                raise IllegalMove("not_your_turn", "only the side to move may propose a draw")
            if state.draw_offer is not None or state.offer_ply == len(state.plies):
                raise IllegalMove("draw_already_offered", "one draw offer per turn")
            return [DrawOffered(seat)]
        if isinstance(command, AcceptDraw | DeclineDraw):
            if state.draw_offer is None or state.draw_offer == seat:
                raise IllegalMove("no_draw_offer", "there is no draw offer of the opponent")
            if isinstance(command, AcceptDraw):
                return [DrawAccepted(seat), Ended(None, "agreement")]
            return [DrawDeclined(seat)]
        raise InvalidCommand("unknown_command", f"Xiangqi has no command {type(command).__name__}")

    def _move(self, state: State, seat: int, command: Move, now_ms: int) -> list[Any]:
        if seat != state.to_move:
            raise IllegalMove("not_your_turn", "it is not your turn")
        if not isinstance(command.move, str):
            raise InvalidCommand("bad_move", "a move is ICCS text like h2e2")
        try:
            move = bd.parse_move(command.move)
        except bd.BadPosition as e:
            raise InvalidCommand("bad_move", str(e)) from None
        side = _side(seat)
        board = list(state.board)
        f = move >> 7
        facing = False
        if board[f] * side <= 0:
            raise IllegalMove("no_own_piece", f"no piece of yours on {bd.square_name(f)}")
        if not bd.is_legal(board, side, move):
            facing = state.options.facing_kings == "mover-loses" and _only_facing(board, side, move)
            if not facing:
                raise IllegalMove("illegal_move", _why(board, side, move))
        o = state.options
        clock = state.clocks_ms[seat]
        made = state.moves_made[seat] + 1
        if o.timed:
            clock -= max(0, now_ms - state.turn_started_ms)
            if o.period_moves and (made == o.main_moves or (
                    made > o.main_moves and (made - o.main_moves) % o.period_moves == 0)):
                clock = o.period_minutes * 60_000 + (clock if o.carry_over else 0)
        text = command.move if len(command.move) == 4 else bd.move_name(move)
        chinese = bd.chinese(board, move)
        before = board[:] if o.chase_rule == "axf" else board
        captured = bd.make(board, move)
        check = bd.in_check(board, -side)
        chase = (not check and o.chase_rule == "axf" and not facing
                 and _is_chase(before, board, side, move))
        key = bd.placement_after(state.keys[-1][:-2], board, move) + (" b" if side == RED
                                                                        else " w")
        fen = (f"{key} - - {0 if captured else state.quiet + 1} "
               f"{state.fullmove + (side == BLACK)}")
        moved = Moved(seat, text, chinese, _letter(captured), check, chase, clock, now_ms, fen)
        events: list[Any] = [moved]
        end = self._end(state, moved, board, facing, key)
        if end is not None:
            events.append(end)
        return events

    def _end(self, s: State, moved: Moved, board: Board, facing: bool,
             key: str) -> Ended | None:
        """The game end after ``moved`` (``key``: the position after it), in order: §3.2.9,
        §3.3.1–2, §3.3.4–5, §3.3.6."""
        mover = moved.seat
        if facing:
            return Ended(1 - mover, "facing_kings")
        if not bd.has_legal_move(board, -_side(mover), moved.check):
            return Ended(mover, "checkmate" if moved.check else "stalemate")
        # Only positions since the last capture, with the same side to move, can equal it.
        if s.keys[-2 : -s.quiet - 3 : -2].count(key) >= 2:  # its third occurrence
            rep = _repetition(s.options, (*s.keys, key),
                              (*s.plies, Ply(mover, moved.check, moved.chase)))
            if rep is not None:
                return rep
        m = _set(s.moves_made, mover, s.moves_made[mover] + 1)
        if s.options.move_limit == "120-per-side":
            if m[0] >= 120 and m[1] >= 120:
                return Ended(None, "move_limit")
        elif m[0] + m[1] >= 120:
            return Ended(None, "move_limit")
        return None

    # -- evolve

    def evolve(self, state: State, event: Any) -> State:
        s = state
        if isinstance(event, Moved):
            board = list(s.board)
            move = bd.parse_move(event.move)
            bd.make(board, move)
            nxt = 1 - event.seat
            return replace(
                s, board=tuple(board), to_move=nxt,
                clocks_ms=_set(s.clocks_ms, event.seat, event.clock_ms),
                moves_made=_set(s.moves_made, event.seat, s.moves_made[event.seat] + 1),
                turn_started_ms=event.at_ms,
                keys=(*s.keys, _fen_key(event.fen)),
                plies=(*s.plies, Ply(event.seat, event.check, event.chase)),
                played=(*s.played, PlayedMove(event.move, event.chinese)),
                draw_offer=None, quiet=0 if event.captured else s.quiet + 1,
                fullmove=s.fullmove + (event.seat == 1),
            )
        if isinstance(event, DrawOffered):
            return replace(s, draw_offer=event.seat, offer_ply=len(s.plies))
        if isinstance(event, DrawDeclined | DrawAccepted):
            return replace(s, draw_offer=None)
        if isinstance(event, Ended):
            return replace(s, ended=event.reason, winner=event.winner, to_move=None,
                           draw_offer=None)
        if isinstance(event, Resigned | TimedOut):
            return s
        if isinstance(event, Started):
            board, side = bd.parse_fen(event.fen)
            parts = event.fen.split()
            return replace(
                s, board=tuple(board), to_move=0 if side == RED else 1, started=True,
                clocks_ms=event.clocks_ms, moves_made=event.moves_made,
                turn_started_ms=event.at_ms, keys=(_key(board, side),),
                quiet=int(parts[4]) if len(parts) > 4 else 0,
                fullmove=int(parts[5]) if len(parts) > 5 else 1,
            )
        raise TypeError(f"not a Xiangqi event: {event!r}")

    # -- views, hints, time, result

    def view(self, state: State, seat: Seat | None) -> View:
        board = list(state.board)
        legal: tuple[PlayedMove, ...] = ()
        check = False
        if state.to_move is not None:
            side = _side(state.to_move)
            legal = tuple(PlayedMove(bd.move_name(m), bd.chinese(board, m))
                          for m in sorted(bd.legal_moves(board, side)))
            check = bd.in_check(board, side)
        out = self.outcome(state)
        return View(
            fen=fen_of(state) if state.started else "", to_move=state.to_move, in_check=check,
            legal=legal, moves=state.played, clocks_ms=state.clocks_ms,
            deadline_ms=self._deadline(state) if state.options.timed and state.to_move is not None
            else 0,
            moves_made=state.moves_made, draw_offer=state.draw_offer,
            finished=bool(state.ended), winner=state.winner, reason=state.ended,
            scores=out.scores if out else (0, 0),
        )

    def legal(self, state: State, seat: Seat) -> Sequence[Any]:
        """The side to move's legal moves; for the seat facing a draw offer, accept/decline.

        Resign (always) and OfferDraw (side to move, once per turn) are allowed but not listed.
        """
        if not state.started or state.ended:
            return []
        if state.draw_offer is not None and seat != state.draw_offer:
            return [AcceptDraw(), DeclineDraw()]
        if seat != state.to_move:
            return []
        board = list(state.board)
        return [Move(bd.move_name(m)) for m in sorted(bd.legal_moves(board, _side(seat)))]

    def _deadline(self, state: State) -> int:
        seat = state.to_move if state.to_move is not None else 0
        return state.turn_started_ms + state.clocks_ms[seat]

    def deadlines(self, state: State) -> Sequence[Deadline]:
        if state.to_move is None or not state.options.timed:
            return ()
        return (Deadline(state.to_move, self._deadline(state)),)

    def on_timeout(self, state: State, seat: Seat, now_ms: int) -> Sequence[Any]:
        """超时: the side to move whose clock has run out loses, whatever the material."""
        if state.ended or not state.started or state.to_move != seat or not state.options.timed:
            raise IllegalMove("no_deadline", "no clock of this seat is running")
        if now_ms < self._deadline(state):
            raise IllegalMove("not_timed_out", "the clock has not run out yet")
        return [TimedOut(seat, now_ms), Ended(1 - seat, "time")]

    def outcome(self, state: State) -> Outcome | None:
        if not state.ended:
            return None
        if state.winner is None:
            return Outcome(None, (0, 1), (0, 0), (), state.ended, first=0)
        w, loser = state.winner, 1 - state.winner
        scores = (WIN_POINTS, -WIN_POINTS) if w == 0 else (-WIN_POINTS, WIN_POINTS)
        return Outcome(w, (w, loser), scores, (Transfer(loser, w, WIN_POINTS, "win"),),
                       state.ended, first=0)


def _letter(piece: int) -> str:
    if not piece:
        return ""
    letter = "kabnrcp"[abs(piece) - 1]
    return letter.upper() if piece > 0 else letter


def _only_facing(board: Board, side: int, move: int) -> bool:
    """Is ``move`` refused only because it leaves the two kings facing (将帅对面)?"""
    f, t = move >> 7, move & 127
    if not bd._piece_reaches(board, side, f, t):
        return False
    q = bd.make(board, move)
    king = bd.king_square(board, side)
    enemy = bd.king_square(board, -side)
    board[enemy] = 99  # a neutral blocker: the enemy king attacks nothing else
    safe = not bd.attacked(board, king, side)
    board[enemy] = -bd.K * side
    facing = king % 9 == enemy % 9 and not any(
        board[s] for s in range(min(king, enemy) + 9, max(king, enemy), 9))
    bd.unmake(board, move, q)
    return safe and facing


def _why(board: Board, side: int, move: int) -> str:
    f, t = move >> 7, move & 127
    name = bd.move_name(move)
    if not bd._piece_reaches(board, side, f, t):
        return f"{name}: the piece on {bd.square_name(f)} cannot move there"
    q = bd.make(board, move)
    facing = _only_facing_after(board, side)
    bd.unmake(board, move, q)
    if facing:
        return f"{name} would leave the two kings facing each other (将帅对面)"
    return f"{name} would leave your king in check"


def _only_facing_after(board: Board, side: int) -> bool:
    king, enemy = bd.king_square(board, side), bd.king_square(board, -side)
    return king % 9 == enemy % 9 and not any(
        board[s] for s in range(min(king, enemy) + 9, max(king, enemy), 9))


def _repetition(options: Options, keys: tuple[str, ...], plies: tuple[Ply, ...]) -> Ended | None:
    """§3.3.4–5 at the third occurrence of a position (same placement, same side to move).

    ``keys`` are the positions from the start on, ``plies`` the moves between them. The moves
    since the position's first occurrence decide: a side that checked with every move loses
    (长将), both: draw; then, with ``CHASE_RULE = axf``, the same for check-or-chase (长捉);
    otherwise a draw by repetition.
    """
    key = keys[-1]
    if keys.count(key) < 3:
        return None
    span = plies[keys.index(key) :]
    all_check = [all(p.check for p in span if p.seat == seat) for seat in (0, 1)]
    if all_check[0] != all_check[1]:
        return Ended(1 if all_check[0] else 0, "perpetual_check")
    if all_check[0]:
        return Ended(None, "mutual_perpetual_check")
    if options.chase_rule == "axf":
        chase = [all(p.check or p.chase for p in span if p.seat == seat) for seat in (0, 1)]
        if chase[0] != chase[1]:
            return Ended(1 if chase[0] else 0, "perpetual_chase")
        if chase[0]:
            return Ended(None, "mutual_perpetual_chase")
    return Ended(None, "repetition")


# ---------------------------------------------------------------- scenarios and queries


def describe(state: State) -> Mapping[str, Any]:
    """What scenarios assert about."""
    names = {None: None, 0: "red", 1: "black"}
    board = list(state.board)
    return {
        "fen": fen_of(state) if state.started else None,
        "to_move": names[state.to_move],
        "in_check": bool(state.to_move is not None and bd.in_check(board, _side(state.to_move))),
        "ended": state.ended or None,
        "winner": names[state.winner],
        "clocks_ms": list(state.clocks_ms),
        "moves_made": list(state.moves_made),
        "draw_offer": names[state.draw_offer],
        "repetitions": state.keys.count(state.keys[-1]) if state.keys else 0,
        "moves": [p.move for p in state.played],
        "chinese": [p.chinese for p in state.played],
    }


_WORDS: dict[str, type] = {
    "resign": Resign, "offer_draw": OfferDraw, "accept_draw": AcceptDraw,
    "decline_draw": DeclineDraw,
}


def parse_command(raw: Any) -> Any:
    """A scenario command: ``h2e2``, ``{move: h2e2}``, or ``resign`` / ``offer_draw`` /
    ``accept_draw`` / ``decline_draw``."""
    if isinstance(raw, Mapping):
        if "move" in raw:
            return Move(str(raw["move"]))
        raise InvalidCommand("bad_command", f"cannot read {dict(raw)!r}")
    text = str(raw).strip()
    if text in _WORDS:
        return _WORDS[text]()
    return Move(text)


def query_perft(fen: str, depth: int) -> int:
    """Perft of a FEN to ``depth``."""
    board, side = bd.parse_fen(fen)
    return bd.perft(board, side, depth)


def query_legal_moves(fen: str) -> list[str]:
    """The legal moves of a FEN's side to move, ICCS, sorted as text."""
    board, side = bd.parse_fen(fen)
    return sorted(bd.move_name(m) for m in bd.legal_moves(board, side))


def query_is_legal(fen: str, move: str) -> bool:
    """Is one ICCS move legal in a FEN?"""
    board, side = bd.parse_fen(fen)
    return bd.is_legal(board, side, bd.parse_move(move))


def query_chinese(fen: str, move: str) -> str:
    """The Chinese notation of an ICCS move in a FEN (``炮二平五``)."""
    board, _ = bd.parse_fen(fen)
    return bd.chinese(board, bd.parse_move(move))


GAME = Xiangqi()
