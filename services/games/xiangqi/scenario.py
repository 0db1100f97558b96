"""中国象棋 scenario hooks: a position from a FEN, what a scenario asserts (``describe``), the
``perft`` / ``legal_moves`` / ``is_legal`` / ``chinese`` queries and the command reader.

A position (every key may be left out)::

    position: {fen: "3k5/9/9/9/3R5/9/9/9/9/4K4 b - - 0 1", moves_made: [0, 0],
               clocks_ms: [3600000, 3600000]}

* ``fen`` — the position and the side to move (default: the start position);
* ``moves_made`` — the moves each seat has made, Red then Black (for the time control's periods
  and the move limit); default from the FEN's move number;
* ``clocks_ms`` — each seat's time left in its current period; default the main period.

A position whose side to move has no legal move is over before anybody moves: its events are
``Started`` then ``Ended`` — ``checkmate`` when that side is in check (将死, §3.3.1), else
``stalemate`` (困毙, §3.3.2), a loss for it either way — and the outcome is there at once.

Commands: ``h2e2`` (ICCS) or ``{move: h2e2}``, ``resign``, ``offer_draw``, ``accept_draw``,
``decline_draw``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from chieu.games.core import InvalidCommand, ScenarioHooks
from chieu.games.xiangqi import board as bd
from chieu.games.xiangqi.board import BLACK, START_FEN
from chieu.games.xiangqi.model import (
    AcceptDraw,
    DeclineDraw,
    Ended,
    Move,
    OfferDraw,
    Resign,
    Started,
    State,
    fen_of,
    side_of,
)
from chieu.games.xiangqi.notation import chinese
from chieu.games.xiangqi.options import Options


def position(options: Options, players: int, spec: Mapping[str, Any], now_ms: int) -> Sequence[Any]:
    """The events that set up the position ``spec`` (see the module docstring): ``Started``,
    and ``Ended`` when the side to move is already mated or stalemated."""
    fen = str(spec.get("fen", START_FEN))
    try:
        board, side = bd.parse_fen(fen)
    except bd.BadPosition as e:
        raise ValueError(str(e)) from None
    parts = fen.split()
    full = int(parts[5]) if len(parts) > 5 else 1
    default_moves = (full - 1 + (side == BLACK), full - 1)
    moves = tuple(int(x) for x in spec.get("moves_made", default_moves))
    main = options.main_minutes * 60_000
    clocks = tuple(int(x) for x in spec.get("clocks_ms", (main, main)))
    events: list[Any] = [Started(fen, clocks, moves, now_ms)]
    if not bd.has_legal_move(board, side):
        to_move = 1 if side == BLACK else 0
        events.append(Ended(1 - to_move, "checkmate" if bd.in_check(board, side) else "stalemate"))
    return events


_NAMES = {None: None, 0: "red", 1: "black"}


def describe(state: State) -> Mapping[str, Any]:
    """What scenarios assert about; seats are ``red`` and ``black``."""
    board = list(state.board)
    return {
        "fen": fen_of(state) if state.started else None,
        "to_move": _NAMES[state.to_move],
        "in_check": bool(state.to_move is not None and bd.in_check(board, side_of(state.to_move))),
        "ended": state.ended or None,
        "winner": _NAMES[state.winner],
        "clocks_ms": list(state.clocks_ms),
        "moves_made": list(state.moves_made),
        "draw_offer": _NAMES[state.draw_offer],
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


# ---------------------------------------------------------------- static queries


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
    return chinese(board, bd.parse_move(move))


HOOKS = ScenarioHooks(
    position=position,
    describe=describe,
    queries={"perft": query_perft, "legal_moves": query_legal_moves, "chinese": query_chinese,
             "is_legal": query_is_legal},
    command=parse_command,
)
