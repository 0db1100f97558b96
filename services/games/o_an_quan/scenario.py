"""Ô ăn quan scenario hooks: a position written as the rules file writes it, what a scenario
asserts (``describe``), the ``scores`` query and the command reader.

A position (every key but ``position`` may be left out)::

    position: {position: "[0 | 0 0 0 0 0 | Q+2 | 4 3 4 3 2]", to_move: A,
               stores: [2, 30], quans: [1, 0], borrowed: [0, 0], moves: [1, 1]}

* ``position`` — the §C1 string; ``to_move`` — ``A`` (default) or ``B``;
* ``stores`` — the dân each player has captured and still holds, A then B (default ``[0, 0]``);
* ``quans`` — the quan pieces each player has captured (default ``[0, 0]``);
* ``borrowed`` — the dân each player has borrowed from the other's store for a refill (vay,
  xuất quân OQ-R4) and not yet paid back: ``[3, 0]`` is "A owes B 3" (B has lent 3). The debt
  is settled at scoring (OQ-R10): the borrower's score −3, the lender's +3. Default ``[0, 0]``;
* ``moves`` — the moves each player has made (``noQuanCaptureFirstTurn``, ``maxMoves``); default
  ``[1, 1]``.

Borrowed dân moved from the lender's store to the board, so the stones are counted where they
lie: the board and the stores must hold the 50 dân, and board and captures the 2 quan pieces.
Commands: ``{square: S1, direction: CW}`` (squares by name or ring index).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from chieu.games.core import InvalidCommand, ScenarioHooks
from chieu.games.o_an_quan.board import DAN_TOTAL, Direction
from chieu.games.o_an_quan.model import Sow, Started, State, scores
from chieu.games.o_an_quan.notation import format_position, parse_position, parse_square
from chieu.games.o_an_quan.options import Options

SEATS = ("A", "B")


def _pair(spec: Mapping[str, Any], key: str, default: tuple[int, int]) -> tuple[int, ...]:
    raw = spec.get(key, default)
    values = tuple(raw) if isinstance(raw, list | tuple) else ()
    if len(values) != 2 or not all(isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in values):
        raise ValueError(f"{key} is two counts, A then B: [a, b], not {raw!r}")
    return values


def position(options: Options, players: int, spec: Mapping[str, Any], now_ms: int) -> Sequence[Any]:
    """The events that set up the position ``spec`` (see the module docstring)."""
    board, quan = parse_position(str(spec["position"]))
    stores = _pair(spec, "stores", (0, 0))
    quans = _pair(spec, "quans", (0, 0))
    borrowed = _pair(spec, "borrowed", (0, 0))
    moves = _pair(spec, "moves", (1, 1))
    to_move = str(spec.get("to_move", "A"))
    if to_move not in SEATS:
        raise ValueError(f"to_move is A or B, not {to_move!r}")
    if sum(board) + sum(stores) != DAN_TOTAL:
        raise ValueError(f"position holds {sum(board) + sum(stores)} dân, not {DAN_TOTAL}")
    if sum(quan) + sum(quans) != 2:
        raise ValueError("the two quan pieces must be on the board or captured")
    return [Started(SEATS.index(to_move), board, quan, stores, quans, borrowed, moves,
                    now_ms + options.turn_seconds * 1000)]


def describe(state: State) -> Mapping[str, Any]:
    """What scenarios assert: the position string and the stores, seat A then B."""
    out: dict[str, Any] = {
        "position": format_position(state.board, state.quan),
        "to_move": None if state.to_move is None else SEATS[state.to_move],
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


HOOKS = ScenarioHooks(position=position, describe=describe, queries={"scores": scores}, command=parse_command)
