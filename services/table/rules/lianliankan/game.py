"""连连看 (Lianliankan) as a decider: §4 of shared/rules/lianliankan.md.

Every player gets the **same** layout and clears his own copy; all players act at once, with
no turns: ``decide`` accepts a command from any seat at any time while the game runs, and a
command touches only its own seat's board, so commands of different seats commute (a table
that retries on a log conflict never has to refuse a valid move). The first to clear his
board wins; the others rank by remaining tiles (ties: who reached his count earlier, then
seat order) and are paid by the score table of §4.3.
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
    ScenarioHooks,
    Seat,
    Setup,
    Transfer,
)
from chieu.table.rules.lianliankan.board import (
    Board,
    brute_turns,
    find_pair,
    generate,
    pairs,
    reshuffle,
)

BOARDS: dict[str, tuple[int, int]] = {
    "18x8": (8, 18),
    "14x6": (6, 14),
    "16x9": (9, 16),
    "24x12": (12, 24),
}
"""``BOARD`` option values: columns x rows → (rows, cols)."""

SCORE_TABLE: dict[int, tuple[int, ...]] = {
    2: (5, -5),
    3: (8, -3, -5),
    4: (10, -2, -3, -5),
    5: (10, -1, -2, -3, -4),
    6: (10, -1, -1, -2, -2, -4),
}
"""§4.3: the score by rank, winner first (the seed's second "五人" row is the six-player one)."""

# ---------------------------------------------------------------- options


@dataclass(frozen=True, slots=True)
class Options:
    """Table options: ``BOARD`` (default 18x8) and ``TIME_LIMIT`` in seconds (default none)."""

    board: str = "18x8"
    time_limit: int | None = None


def parse_options(raw: Mapping[str, Any]) -> Options:
    """Validate ``BOARD`` and ``TIME_LIMIT``; unknown names and bad values are refused."""
    unknown = sorted(set(raw) - {"BOARD", "TIME_LIMIT"})
    if unknown:
        raise BadOptions(f"unknown option(s) {', '.join(unknown)}; known: BOARD, TIME_LIMIT")
    board = raw.get("BOARD", "18x8")
    if board not in BOARDS:
        raise BadOptions(f"BOARD must be one of {', '.join(BOARDS)}, not {board!r}")
    limit = raw.get("TIME_LIMIT")
    if limit in (None, "none"):
        limit = None
    elif (isinstance(limit, bool) or not isinstance(limit, int | float) or int(limit) != limit
          or not 0 < limit <= 24 * 3600):
        raise BadOptions(f"TIME_LIMIT must be seconds (1..86400) or none, not {limit!r}")
    else:
        limit = int(limit)
    return Options(str(board), limit)


def option_values(options: Options) -> Mapping[str, Any]:
    """The options under the rules file's names."""
    return {"BOARD": options.board, "TIME_LIMIT": options.time_limit}


# ---------------------------------------------------------------- commands and events


@dataclass(frozen=True, slots=True)
class Cell:
    """A board cell, ``row`` 0 at the top, ``col`` 0 at the left."""

    row: int
    col: int


@dataclass(frozen=True, slots=True)
class Remove:
    """Select two tiles of the same pattern joined by a path of at most two turns (§4.2)."""

    first: Cell
    second: Cell


@dataclass(frozen=True, slots=True)
class Leave:
    """Leave the game; the player ranks last (§4.3)."""


@dataclass(frozen=True, slots=True)
class Layout:
    """One seat's board, row by row; 0 is an empty cell, 1.. a pattern."""

    cells: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Started:
    """The game is set up: every seat's board (the same layout for all in a dealt game),
    the hand's seed material (hex, for dead-board reshuffles) and the time limit's end
    (``deadline_ms``; 0 = no limit)."""

    rows: int
    cols: int
    layouts: tuple[Layout, ...]
    seed: str
    deadline_ms: int


@dataclass(frozen=True, slots=True)
class Removed:
    """``seat`` removed the pair ``first``–``second`` of ``pattern``; ``remaining`` tiles left."""

    seat: int
    first: Cell
    second: Cell
    pattern: int
    remaining: int


@dataclass(frozen=True, slots=True)
class Reshuffled:
    """``seat``'s board had no removable pair: its tiles were permuted over the same cells."""

    seat: int
    cells: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Left:
    """``seat`` left the game."""

    seat: int


@dataclass(frozen=True, slots=True)
class TimedOut:
    """The time limit ran out (reported for ``seat``'s deadline)."""

    seat: int


@dataclass(frozen=True, slots=True)
class Finished:
    """The game is over. ``reason``: ``cleared`` (the winner cleared his board), ``time_up``
    (fewest remaining tiles wins) or ``abandoned`` (one player left in). ``ranking`` lists
    seats best first; ``scores`` and ``remaining`` are per seat."""

    reason: str
    winner: int
    ranking: tuple[int, ...]
    scores: tuple[int, ...]
    remaining: tuple[int, ...]
    transfers: tuple[Transfer, ...]


# ---------------------------------------------------------------- state and view


@dataclass(frozen=True, slots=True)
class State:
    """Every seat's board; ``reached`` is the log order (``seq``) of each seat's last removal."""

    options: Options
    players: int
    rows: int = 0
    cols: int = 0
    boards: tuple[Board, ...] = ()
    seed: str = ""
    deadline_ms: int = 0
    seq: int = 0
    reached: tuple[int, ...] = ()
    reshuffles: tuple[int, ...] = ()
    left: tuple[int, ...] = ()
    started: bool = False
    finished: Finished | None = None


@dataclass(frozen=True, slots=True)
class View:
    """``seat``'s own board and everybody's remaining counts (seat -1: a spectator, no board)."""

    seat: int
    rows: int
    cols: int
    board: tuple[int, ...]
    remaining: tuple[int, ...]
    active: tuple[bool, ...]
    deadline_ms: int
    finished: bool
    result: Finished | None


def _cell(board: Board, c: Cell) -> int:
    if not (isinstance(c, Cell) and isinstance(c.row, int) and isinstance(c.col, int)):
        raise InvalidCommand("bad_cell", f"a cell is (row, col), not {c!r}")
    if not (0 <= c.row < board.rows and 0 <= c.col < board.cols):
        size = f"{board.cols}x{board.rows}"
        raise InvalidCommand("bad_cell", f"no cell ({c.row}, {c.col}) on a {size} board")
    return c.row * board.cols + c.col


def _at(board: Board, i: int) -> Cell:
    return Cell(*divmod(i, board.cols))


def _set(t: tuple[Any, ...], i: int, v: Any) -> tuple[Any, ...]:
    return (*t[:i], v, *t[i + 1 :])


def rank(state: State, winner: int | None) -> tuple[int, ...]:
    """§4.3: the winner, then by remaining tiles (ties: reached earlier, then seat); leavers
    last, the earliest leaver at the bottom."""
    stay = [i for i in range(state.players) if i not in state.left]
    stay.sort(key=lambda i: (state.boards[i].remaining, state.reached[i], i))
    if winner is not None:
        stay = [winner] + [i for i in stay if i != winner]
    return (*stay, *reversed(state.left))


def settle(state: State, reason: str, winner: int | None = None) -> Finished:
    """The ranking, the score table of §4.3 and the payments (each loser pays the winner)."""
    order = rank(state, winner)
    table = SCORE_TABLE[state.players]
    scores = [0] * state.players
    for place, seat in enumerate(order):
        scores[seat] = table[place]
    win = order[0]
    transfers = tuple(Transfer(s, win, -scores[s], "rank") for s in order[1:] if scores[s] < 0)
    return Finished(
        reason, win, order, tuple(scores), tuple(b.remaining for b in state.boards), transfers
    )


# ---------------------------------------------------------------- the decider


class Lianliankan:
    """The 连连看 game object registered under ``lianliankan``."""

    key = "lianliankan"
    title = "连连看"
    min_players = 2
    max_players = 6
    commands: tuple[type, ...] = (Remove, Leave)
    events: tuple[type, ...] = (Started, Removed, Reshuffled, Left, TimedOut, Finished)
    option_type = Options
    view_type = View

    def __init__(self) -> None:
        self.scenario = ScenarioHooks(
            position=self._position,
            describe=describe,
            queries={"turns": query_turns, "connects": query_connects, "scores": query_scores},
            command=parse_command,
        )

    parse_options = staticmethod(parse_options)
    option_values = staticmethod(option_values)

    def initial(self, options: Options, players: int) -> State:
        return State(options=options, players=players)

    def start(self, setup: Setup) -> Sequence[Any]:
        """One solvable layout for everybody, from the hand's seed material (§4.1)."""
        o: Options = setup.options
        if not self.min_players <= setup.players <= self.max_players:
            raise BadOptions(f"连连看 is for 2–6 players, not {setup.players}")
        rows, cols = BOARDS[o.board]
        cells = generate(rows, cols, fair.Stream(setup.seed, "layout"))
        deadline = setup.now_ms + o.time_limit * 1000 if o.time_limit else 0
        return [Started(rows, cols, (Layout(cells),) * setup.players, setup.seed.hex(), deadline)]

    def _position(
        self, options: Options, players: int, spec: Mapping[str, Any], now_ms: int
    ) -> Sequence[Any]:
        """A scenario position: ``{board: ["A . B", ...]}`` for everybody, or ``boards: [...]``
        one per seat; ``seed`` (hex) for reshuffles."""
        raw = spec["boards"] if "boards" in spec else [spec["board"]] * players
        if len(raw) != players:
            raise ValueError(f"{players} boards expected")
        parsed = [parse_board(b) for b in raw]
        rows, cols = parsed[0][0], parsed[0][1]
        if any((r, c) != (rows, cols) for r, c, _ in parsed):
            raise ValueError("every seat's board must have the same size")
        for _, _, cells in parsed:
            counts: dict[int, int] = {}
            for p in cells:
                if p:
                    counts[p] = counts.get(p, 0) + 1
            if any(n % 2 for n in counts.values()):
                raise ValueError("every pattern must appear an even number of times")
            if any(cells) and find_pair(Board.of(rows, cols, cells)) is None:
                raise ValueError("a board without a removable pair")
        limit = options.time_limit
        deadline = now_ms + limit * 1000 if limit else 0
        layouts = tuple(Layout(cells) for _, _, cells in parsed)
        return [Started(rows, cols, layouts, str(spec.get("seed", "00")), deadline)]

    # -- decide

    def decide(self, state: State, seat: Seat, command: Any, now_ms: int) -> Sequence[Any]:
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
        removed = Removed(seat, _at(board, a), _at(board, b), board.cells[a], board.remaining - 2)
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

    def evolve(self, state: State, event: Any) -> State:
        s = state
        if isinstance(event, Removed):
            board = s.boards[event.seat]
            a = event.first.row * board.cols + event.first.col
            b = event.second.row * board.cols + event.second.col
            seq = s.seq + 1
            return replace(
                s, boards=_set(s.boards, event.seat, board.without(a, b)), seq=seq,
                reached=_set(s.reached, event.seat, seq),
            )
        if isinstance(event, Reshuffled):
            board = Board.of(s.rows, s.cols, event.cells)
            return replace(
                s, boards=_set(s.boards, event.seat, board),
                reshuffles=_set(s.reshuffles, event.seat, s.reshuffles[event.seat] + 1),
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
        )

    def legal(self, state: State, seat: Seat) -> Sequence[Any]:
        if not state.started or state.finished is not None or seat in state.left:
            return []
        board = state.boards[seat]
        moves: list[Any] = [Remove(_at(board, a), _at(board, b)) for a, b in pairs(board)]
        return [*moves, Leave()]

    def deadlines(self, state: State) -> Sequence[Deadline]:
        """With a time limit, every seat still playing is on the one clock."""
        if not state.started or state.finished is not None or not state.deadline_ms:
            return ()
        return tuple(
            Deadline(i, state.deadline_ms) for i in range(state.players) if i not in state.left
        )

    def on_timeout(self, state: State, seat: Seat, now_ms: int) -> Sequence[Any]:
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


# ---------------------------------------------------------------- notation


def _pattern(ch: str) -> int:
    if ch == ".":
        return 0
    if "A" <= ch <= "Z":
        return ord(ch) - ord("A") + 1
    if "a" <= ch <= "z":
        return ord(ch) - ord("a") + 27
    raise ValueError(f"a cell is '.' or a letter, not {ch!r}")


def _letter(p: int) -> str:
    if p == 0:
        return "."
    return chr(ord("A") + p - 1) if p <= 26 else chr(ord("a") + p - 27)


def parse_board(rows: Any) -> tuple[int, int, tuple[int, ...]]:
    """``["A . B", "B . A"]`` (or one string with ``/`` between rows) → (rows, cols, cells)."""
    if isinstance(rows, str):
        rows = rows.split("/")
    lines = ["".join(str(r).split()) for r in rows]
    if not lines or not lines[0] or any(len(x) != len(lines[0]) for x in lines):
        raise ValueError(f"a board is a rectangle of cells, not {rows!r}")
    return len(lines), len(lines[0]), tuple(_pattern(ch) for line in lines for ch in line)


def format_board(board: Board) -> list[str]:
    """The board as rows of letters (``.`` = empty)."""
    return [
        " ".join(_letter(p) for p in board.cells[r * board.cols : (r + 1) * board.cols])
        for r in range(board.rows)
    ]


def query_turns(board: Any, a: Sequence[int], b: Sequence[int]) -> int | None:
    """The fewest turns joining cells ``a`` and ``b`` (``[row, col]``) of ``board``, or ``None``.

    Checks the fast path finder against the brute-force search and fails if they differ.
    """
    rows, cols, cells = parse_board(board)
    x, y = a[0] * cols + a[1], b[0] * cols + b[1]
    fast = Board.of(rows, cols, cells).turns(x, y)
    if fast != brute_turns(rows, cols, cells, x, y):
        raise ValueError("the path finder and the brute-force search disagree")
    return fast


def query_connects(board: Any, a: Sequence[int], b: Sequence[int]) -> bool:
    """Whether the pair can be removed."""
    return query_turns(board, a, b) is not None


def query_scores(players: int, remaining: Sequence[int]) -> list[int]:
    """§4.3 scores when the seat with 0 remaining tiles has cleared first; ties by seat."""
    order = sorted(range(players), key=lambda i: (remaining[i], i))
    table = SCORE_TABLE[players]
    out = [0] * players
    for place, s in enumerate(order):
        out[s] = table[place]
    return out


def _name(seat: int | None) -> str | None:
    return None if seat is None else f"P{seat + 1}"


def describe(state: State) -> Mapping[str, Any]:
    """What scenarios assert; seats are named P1, P2, ..."""
    f = state.finished
    return {
        "remaining": [b.remaining for b in state.boards],
        "boards": [format_board(b) for b in state.boards],
        "left": [_name(s) for s in state.left],
        "reshuffles": list(state.reshuffles),
        "ended": None if f is None else f.reason,
        "winner": None if f is None else _name(f.winner),
        "ranking": None if f is None else [_name(s) for s in f.ranking],
    }


def parse_command(raw: Any) -> Remove | Leave:
    """Scenario notation: ``{remove: [[r, c], [r, c]]}`` or ``leave``."""
    try:
        if isinstance(raw, str) and raw.strip().lower() == "leave":
            return Leave()
        if isinstance(raw, Mapping) and "remove" in raw:
            (r1, c1), (r2, c2) = raw["remove"]
            return Remove(Cell(int(r1), int(c1)), Cell(int(r2), int(c2)))
        raise ValueError("expected {remove: [[r, c], [r, c]]} or leave")
    except (TypeError, ValueError) as e:
        raise InvalidCommand("bad_command", f"cannot read {raw!r}: {e}") from None


GAME = Lianliankan()
