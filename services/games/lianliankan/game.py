"""连连看 (Lianliankan) as a decider: §4 of shared/rules/lianliankan.md.

Every player gets the **same** layout and clears his own copy; all players act at once, with
no turns: ``decide`` accepts a command from any seat at any time while the game runs, and a
command touches only its own seat's board, so commands of different seats commute (a table
that retries on a log conflict never has to refuse a valid move). The first to clear his
board wins; the others rank by remaining tiles (ties: who reached his count earlier, then
seat order) and are paid by the score table of §4.3 (:mod:`scoring`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from functools import lru_cache
from typing import Any

from chieu.games import clock, fair
from chieu.games.common import TimedOut, members, put, wrapper
from chieu.games.core import (
    BadOptions,
    Deadline,
    Game,
    IllegalMove,
    InvalidCommand,
    Outcome,
    Seat,
    Setup,
)
from chieu.games.lianliankan.board import Board, find_pair, generate, pairs, path, reshuffle
from chieu.games.lianliankan.model import (
    Cell,
    Command,
    Finished,
    GameCommand,
    GameEvent,
    Layout,
    Leave,
    Left,
    Pair,
    Point,
    Remove,
    Removed,
    Reshuffled,
    Started,
    State,
    View,
)
from chieu.games.lianliankan.options import BOARDS, Options, option_values, parse_options
from chieu.games.lianliankan.scoring import settle


def _cell(board: Board, c: Cell) -> int:
    if not (isinstance(c, Cell) and isinstance(c.row, int) and isinstance(c.col, int)):
        raise InvalidCommand("bad_cell", f"a cell is (row, col), not {c!r}")
    if not (0 <= c.row < board.rows and 0 <= c.col < board.cols):
        size = f"{board.cols}x{board.rows}"
        raise InvalidCommand("bad_cell", f"no cell ({c.row}, {c.col}) on a {size} board")
    return c.row * board.cols + c.col


def _at(board: Board, i: int) -> Cell:
    return Cell(*divmod(i, board.cols))


def _path(board: Board, a: int, b: int) -> tuple[Point, ...]:
    return tuple(Point(r, c) for r, c in path(board, a, b) or ())


_wrap = wrapper(Command)
_LEAVE = _wrap([Leave()])


@lru_cache(maxsize=256)
def removable(board: Board) -> tuple[Pair, ...]:
    """Every removable pair of ``board`` with the path its removal draws, in cell order.

    Pure and cached by board: between two versions of a game only the mover's board changes,
    so the other seats' views find theirs here."""
    return tuple(Pair(_at(board, a), _at(board, b), _path(board, a, b)) for a, b in pairs(board))


class Lianliankan:
    """The 连连看 game object registered under ``lianliankan``."""

    key = "lianliankan"
    title = "连连看"
    min_players = 2
    max_players = 6
    commands = members(GameCommand)
    events = members(GameEvent)
    option_type = Options
    view_type = View

    pot_options: tuple[str, ...] = ()
    """The options that change the gà pot's rules: 连连看 has no pot."""

    parse_options = staticmethod(parse_options)
    option_values = staticmethod(option_values)

    def initial(self, options: Options, players: int) -> State:
        return State(options=options, players=players)

    def start(self, setup: Setup) -> Sequence[GameEvent]:
        """One solvable layout for everybody, from the hand's seed material (§4.1)."""
        o: Options = setup.options
        if not self.min_players <= setup.players <= self.max_players:
            raise BadOptions(f"连连看 is for 2–6 players, not {setup.players}")
        rows, cols = BOARDS[o.board]
        cells = generate(rows, cols, fair.Stream(setup.seed, "layout"))
        deadline = clock.due_if(setup.now_ms, o.time_limit or 0)
        return [Started(rows, cols, (Layout(cells),) * setup.players, setup.seed.hex(), deadline)]

    # -- decide

    def decide(self, state: State, seat: Seat, command: GameCommand, now_ms: int) -> Sequence[GameEvent]:
        if not isinstance(command, Remove | Leave):
            name = type(command).__name__
            raise InvalidCommand("unknown_command", f"连连看 has no command {name}")
        if state.finished is not None:
            raise IllegalMove("game_over", "the game is over")
        if not state.started:
            raise IllegalMove("not_started", "the game has not started")
        if not isinstance(seat, int) or not 0 <= seat < state.players:
            raise InvalidCommand("bad_seat", f"no seat {seat!r}")
        if seat in state.left:
            raise IllegalMove("left_game", "you have left this game")
        if isinstance(command, Leave):
            after = self.evolve(state, Left(seat))
            if state.players - len(after.left) <= 1:
                return [Left(seat), settle(after, "abandoned")]
            return [Left(seat)]
        board = state.boards[seat]
        a = _cell(board, command.first)
        b = _cell(board, command.second)
        if a == b:
            raise IllegalMove("same_cell", "select two different tiles")
        if not board.cells[a] or not board.cells[b]:
            raise IllegalMove("empty_cell", "both cells must hold a tile")
        if board.cells[a] != board.cells[b]:
            raise IllegalMove("different_patterns", "the two tiles differ")
        if board.turns(a, b) is None:
            raise IllegalMove("no_path", "no path with at most two turns joins the tiles")
        removed = Removed(seat, _at(board, a), _at(board, b), board.cells[a], board.remaining - 2,
                          _path(board, a, b))
        after = self.evolve(state, removed)
        mine = after.boards[seat]
        if removed.remaining == 0:
            return [removed, settle(after, "cleared", seat)]
        if find_pair(mine) is None:
            label = f"reshuffle:{seat}:{state.reshuffles[seat]}"
            new = reshuffle(mine, fair.Stream(bytes.fromhex(state.seed), label))
            return [removed, Reshuffled(seat, new.cells)]
        return [removed]

    # -- evolve

    def evolve(self, state: State, event: GameEvent) -> State:
        s = state
        if isinstance(event, Removed):
            board = s.boards[event.seat]
            a = event.first.row * board.cols + event.first.col
            b = event.second.row * board.cols + event.second.col
            seq = s.seq + 1
            return replace(
                s, boards=put(s.boards, event.seat, board.without(a, b)), seq=seq,
                reached=put(s.reached, event.seat, seq),
            )
        if isinstance(event, Reshuffled):
            board = Board.of(s.rows, s.cols, event.cells)
            return replace(
                s, boards=put(s.boards, event.seat, board),
                reshuffles=put(s.reshuffles, event.seat, s.reshuffles[event.seat] + 1),
            )
        if isinstance(event, Left):
            return replace(s, left=(*s.left, event.seat))
        if isinstance(event, Finished):
            return replace(s, finished=event)
        if isinstance(event, TimedOut):
            return s
        if isinstance(event, Started):
            n = len(event.layouts)
            return replace(
                s, players=n, rows=event.rows, cols=event.cols,
                boards=tuple(Board.of(event.rows, event.cols, lay.cells) for lay in event.layouts),
                seed=event.seed, deadline_ms=event.deadline_ms, seq=0, reached=(0,) * n,
                reshuffles=(0,) * n, left=(), started=True, finished=None,
            )
        raise TypeError(f"not a 连连看 event: {event!r}")

    # -- views, hints, time, result

    def view(self, state: State, seat: Seat | None) -> View:
        me = seat if seat is not None and 0 <= seat < state.players else None
        running = state.started and state.finished is None
        return View(
            seat=-1 if me is None else me,
            rows=state.rows,
            cols=state.cols,
            board=state.boards[me].cells if me is not None and state.boards else (),
            remaining=tuple(b.remaining for b in state.boards),
            active=tuple(i not in state.left for i in range(state.players)),
            deadline_ms=state.deadline_ms if running else 0,
            finished=state.finished is not None,
            result=state.finished,
            **self._legal_view(state, me),
        )

    def _legal_view(self, state: State, seat: int | None) -> dict[str, Any]:
        """The view's ``legal`` (Leave) and ``legal_pairs`` (each Remove with its path)."""
        if seat is None or not self._playing(state, seat):
            return {"legal": (), "legal_pairs": ()}
        return {"legal": _LEAVE, "legal_pairs": removable(state.boards[seat])}

    @staticmethod
    def _playing(state: State, seat: int) -> bool:
        return state.started and state.finished is None and seat not in state.left

    def legal(self, state: State, seat: Seat) -> Sequence[GameCommand]:
        if not self._playing(state, seat):
            return []
        return [*(Remove(p.first, p.second) for p in removable(state.boards[seat])), Leave()]

    def deadlines(self, state: State) -> Sequence[Deadline]:
        """With a time limit, every seat still playing is on the one clock."""
        if not state.started or state.finished is not None or not state.deadline_ms:
            return ()
        return clock.each((i for i in range(state.players) if i not in state.left), state.deadline_ms)

    def on_timeout(self, state: State, seat: Seat, now_ms: int) -> Sequence[GameEvent]:
        """The time limit ran out: the fewest remaining tiles win (same tie-break, §4.3)."""
        if not state.started or state.finished is not None:
            raise IllegalMove("game_over", "the game is not running")
        if not state.deadline_ms:
            raise IllegalMove("no_deadline", "this game has no time limit")
        if now_ms < state.deadline_ms:
            raise IllegalMove("too_early", "the time limit has not run out")
        return [TimedOut(seat), settle(state, "time_up")]

    def outcome(self, state: State) -> Outcome | None:
        f = state.finished
        if f is None:
            return None
        return Outcome(
            winner=f.winner, ranking=f.ranking, scores=f.scores, transfers=f.transfers,
            reason=f.reason,
        )


GAME = Lianliankan()
CONTRACT: Game[State, Options, GameCommand, GameEvent] = GAME
"""The game as the contract over its own commands and events: mypy --strict checks ``decide``'s,
``start``'s and ``on_timeout``'s events against what ``evolve`` folds."""
