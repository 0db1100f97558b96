"""中国象棋 (Xiangqi) as a decider: rules §3 of shared/rules/xiangqi.md.

Two players: seat 0 is Red (红, moves first), seat 1 is Black (黑). Commands carry moves in
ICCS notation (``h2e2``); events and views carry the Chinese file notation (纵线记谱,
``炮二平五``) beside it. The game ends by 将死 (checkmate), 困毙 (stalemate, a loss), 认输
(resignation), 和棋 (agreed draw), 长将 (perpetual check, a loss), repetition, the optional
AXF 长捉 (perpetual chase) rule, the move limit, or 超时 (loss on time).

The clock (§3.3.7) is state: each seat's time left in its current period and the moves it
has made; the server time of each command arrives as ``now_ms``. Move generation is
:mod:`board`'s, 纵线记谱 :mod:`notation`'s, the 长将 / 长捉 verdicts :mod:`repetition`'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from chieu.games import clock
from chieu.games.common import members, put, wrapper
from chieu.games.core import (
    Deadline,
    Game,
    IllegalMove,
    InvalidCommand,
    Outcome,
    Seat,
    Setup,
    Transfer,
)
from chieu.games.xiangqi import board as bd
from chieu.games.xiangqi import notation
from chieu.games.xiangqi.board import BLACK, RED, START_FEN, Board
from chieu.games.xiangqi.model import (
    AcceptDraw,
    Command,
    DeclineDraw,
    DrawAccepted,
    DrawDeclined,
    DrawOffered,
    Ended,
    GameCommand,
    GameEvent,
    Move,
    Moved,
    OfferDraw,
    PieceMoves,
    PlayedMove,
    Ply,
    Resign,
    Resigned,
    Started,
    State,
    TimedOut,
    View,
    fen_of,
    side_of,
)
from chieu.games.xiangqi.options import Options, option_values, parse_options
from chieu.games.xiangqi.repetition import is_chase, verdict

_wrap = wrapper(Command)

WIN_POINTS = 2
"""局分: win +2, loss −2, draw 0 (§3.3.8)."""


def _key(board: Board, side: int) -> str:
    return bd.placement(board) + (" w" if side == RED else " b")


def _fen_key(fen: str) -> str:
    """The repetition key of a FEN: placement and side to move."""
    return " ".join(fen.split(" ", 2)[:2])


class Xiangqi:
    """The 中国象棋 game object registered under ``xiangqi``."""

    key = "xiangqi"
    title = "中国象棋"
    min_players = 2
    max_players = 2
    commands = members(GameCommand)
    events = members(GameEvent)
    option_type = Options
    view_type = View

    pot_options: tuple[str, ...] = ()
    """The options that change the gà pot's rules: 中国象棋 has no pot."""

    parse_options = staticmethod(parse_options)
    option_values = staticmethod(option_values)

    def initial(self, options: Options, players: int) -> State:
        return State(options=options)

    def start(self, setup: Setup) -> Sequence[GameEvent]:
        o: Options = setup.options
        main = o.main_minutes * 60_000
        return [Started(START_FEN, (main, main), (0, 0), setup.now_ms)]

    # -- decide

    def decide(self, state: State, seat: Seat, command: GameCommand, now_ms: int) -> Sequence[GameEvent]:
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
            if not self._may_offer_draw(state, seat):
                raise IllegalMove("draw_already_offered", "one draw offer per turn")
            return [DrawOffered(seat)]
        if isinstance(command, AcceptDraw | DeclineDraw):
            if state.draw_offer is None or state.draw_offer == seat:
                raise IllegalMove("no_draw_offer", "there is no draw offer of the opponent")
            if isinstance(command, AcceptDraw):
                return [DrawAccepted(seat), Ended(None, "agreement")]
            return [DrawDeclined(seat)]
        raise InvalidCommand("unknown_command", f"Xiangqi has no command {type(command).__name__}")

    def _move(self, state: State, seat: int, command: Move, now_ms: int) -> list[GameEvent]:
        if seat != state.to_move:
            raise IllegalMove("not_your_turn", "it is not your turn")
        if not isinstance(command.move, str):
            raise InvalidCommand("bad_move", "a move is ICCS text like h2e2")
        try:
            move = bd.parse_move(command.move)
        except bd.BadPosition as e:
            raise InvalidCommand("bad_move", str(e)) from None
        side = side_of(seat)
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
        chinese = notation.chinese(board, move)
        before = board[:] if o.chase_rule == "axf" else board
        captured = bd.make(board, move)
        check = bd.in_check(board, -side)
        chase = (not check and o.chase_rule == "axf" and not facing
                 and is_chase(before, board, side, move))
        key = bd.placement_after(state.keys[-1][:-2], board, move) + (" b" if side == RED
                                                                        else " w")
        fen = (f"{key} - - {0 if captured else state.quiet + 1} "
               f"{state.fullmove + (side == BLACK)}")
        moved = Moved(seat, text, chinese, _letter(captured), check, chase, clock, now_ms, fen)
        events: list[GameEvent] = [moved]
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
        if not bd.has_legal_move(board, -side_of(mover), moved.check):
            return Ended(mover, "checkmate" if moved.check else "stalemate")
        # Only positions since the last capture, with the same side to move, can equal it.
        if s.keys[-2 : -s.quiet - 3 : -2].count(key) >= 2:  # its third occurrence
            rep = verdict(s.options, (*s.keys, key),
                              (*s.plies, Ply(mover, moved.check, moved.chase)))
            if rep is not None:
                return rep
        m = put(s.moves_made, mover, s.moves_made[mover] + 1)
        if s.options.move_limit == "120-per-side":
            if m[0] >= 120 and m[1] >= 120:
                return Ended(None, "move_limit")
        elif m[0] + m[1] >= 120:
            return Ended(None, "move_limit")
        return None

    # -- evolve

    def evolve(self, state: State, event: GameEvent) -> State:
        s = state
        if isinstance(event, Moved):
            board = list(s.board)
            move = bd.parse_move(event.move)
            bd.make(board, move)
            nxt = 1 - event.seat
            return replace(
                s, board=tuple(board), to_move=nxt,
                clocks_ms=put(s.clocks_ms, event.seat, event.clock_ms),
                moves_made=put(s.moves_made, event.seat, s.moves_made[event.seat] + 1),
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
        check = False
        if state.to_move is not None:
            check = bd.in_check(board, side_of(state.to_move))
        legal: list[GameCommand] = []
        moves: list[PieceMoves] = []
        if seat is not None:
            for c in self.legal(state, seat):
                if isinstance(c, Move):
                    if moves and moves[-1].square == c.move[:2]:
                        moves[-1] = PieceMoves(c.move[:2], (*moves[-1].to, c.move[2:]))
                    else:
                        moves.append(PieceMoves(c.move[:2], (c.move[2:],)))
                else:
                    legal.append(c)
        out = self.outcome(state)
        return View(
            fen=fen_of(state) if state.started else "", to_move=state.to_move, in_check=check,
            legal=_wrap(legal), legal_moves=tuple(moves),
            may_offer_draw=seat is not None and self._may_offer_draw(state, seat),
            moves=state.played, clocks_ms=state.clocks_ms,
            deadline_ms=self._deadline(state) if state.options.timed and state.to_move is not None
            else 0,
            moves_made=state.moves_made, draw_offer=state.draw_offer,
            finished=bool(state.ended), winner=state.winner, reason=state.ended,
            scores=out.scores if out else (0, 0),
        )

    @staticmethod
    def _may_offer_draw(state: State, seat: int) -> bool:
        """提和 is open: the side to move, no offer pending, none made this turn."""
        return (state.started and not state.ended and seat == state.to_move
                and state.draw_offer is None and state.offer_ply != len(state.plies))

    def legal(self, state: State, seat: Seat) -> Sequence[GameCommand]:
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
        return [Move(bd.move_name(m)) for m in sorted(bd.legal_moves(board, side_of(seat)))]

    def _deadline(self, state: State) -> int:
        seat = state.to_move if state.to_move is not None else 0
        return state.turn_started_ms + state.clocks_ms[seat]

    def deadlines(self, state: State) -> Sequence[Deadline]:
        if state.to_move is None or not state.options.timed:
            return ()
        return clock.to_act(state.to_move, self._deadline(state))

    def on_timeout(self, state: State, seat: Seat, now_ms: int) -> Sequence[GameEvent]:
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


GAME = Xiangqi()
CONTRACT: Game[State, Options, GameCommand, GameEvent] = GAME
"""The game as the contract over its own commands and events: mypy --strict checks ``decide``'s,
``start``'s and ``on_timeout``'s events against what ``evolve`` folds."""
