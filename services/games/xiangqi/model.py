"""中国象棋's data: commands, events, the state and the view, as frozen, slotted dataclasses, and
the state's position as FEN.

Seat 0 is Red (红, moves first), seat 1 Black (黑). Moves travel in ICCS (``h2e2``) beside the
Chinese file notation (纵线记谱, ``炮二平五``); positions as FEN.
"""

from __future__ import annotations

from dataclasses import dataclass

from chieu.games.xiangqi import board as bd
from chieu.games.xiangqi.board import BLACK, RED
from chieu.games.xiangqi.options import Options

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
class Command:
    """One entry of a view's ``legal`` list: exactly one command is set; send it (or this
    wrapper) in ``Act`` unchanged."""

    move: Move | None = None
    resign: Resign | None = None
    offer_draw: OfferDraw | None = None
    accept_draw: AcceptDraw | None = None
    decline_draw: DeclineDraw | None = None


@dataclass(frozen=True, slots=True)
class PieceMoves:
    """The legal moves of the piece on ``square`` (ICCS ``h2``): one ``Move(square + t)`` for
    each ``t`` in ``to``."""

    square: str
    to: tuple[str, ...]


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

    ``legal`` and ``legal_moves`` are what the viewing seat may send now (none for a
    spectator): the draw answers, and the side to move's moves per piece; ``may_offer_draw``:
    the seat may propose a draw now. ``clocks_ms`` is each seat's time left as of
    the start of the current turn (the side to move's clock runs until ``deadline_ms``, 0 when
    untimed or over); ``winner`` is ``None`` for a draw or while playing.
    """

    fen: str
    to_move: int | None
    in_check: bool
    legal: tuple[Command, ...]
    legal_moves: tuple[PieceMoves, ...]
    may_offer_draw: bool
    moves: tuple[PlayedMove, ...]
    clocks_ms: tuple[int, ...]
    deadline_ms: int
    moves_made: tuple[int, ...]
    draw_offer: int | None
    finished: bool
    winner: int | None
    reason: str
    scores: tuple[int, ...]


def side_of(seat: int) -> int:
    """The board side of a seat: Red (+1) for seat 0, Black (-1) for seat 1."""
    return RED if seat == 0 else BLACK


def fen_of(state: State) -> str:
    """The state's position as FEN; after the end, with the side that would move next."""
    if state.to_move is not None:
        side = side_of(state.to_move)
    else:
        side = BLACK if state.keys and state.keys[-1].endswith(" b") else RED
    return bd.to_fen(state.board, side, state.quiet, state.fullmove)


GameCommand = Move | Resign | OfferDraw | AcceptDraw | DeclineDraw
"""Every command of 中国象棋 (what its ``decide`` takes and ``legal`` lists; ``GAME.commands``)."""
GameEvent = Started | Moved | DrawOffered | DrawDeclined | DrawAccepted | Resigned | TimedOut | Ended
"""Every event of 中国象棋 (what its decider makes and its ``evolve`` folds; ``GAME.events``)."""
