"""Ô ăn quan table options of §C3, under the rules file's names (``quanValue``, ``quanNon``, ...)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from chieu.games.common import check_names, choice, flag, whole

MAX_MOVES = 1000
"""``maxMoves``' bound: it scales money too, with ``payout`` perPoint (each refill may borrow 5 dân)."""
MAX_MOVE_UNITS = 70 + 2 * 5 * MAX_MOVES
"""The most stake units one Ô ăn quan move settles: 1 (``fixed``), or the score difference
(``perPoint``): 70 for the whole board (50 dân, 2 quan of 10) plus twice what was borrowed, at
most 5 a refill and one refill a move — 10,070 at the bound."""


@dataclass(frozen=True, slots=True)
class Options:
    """Table options of §C3 (names in the rules file's spelling in ``option_values``)."""

    quan_value: int = 10
    """What a quan (mandarin) piece is worth in dân: 10 or 5 (OQ-R2)."""
    first_player: str = "alternate"
    quan_non: bool = False
    """Quan non: a quan square with its piece and fewer than 5 dân cannot be captured (OQ-R8)."""
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


def parse_options(raw: Mapping[str, Any]) -> Options:
    """Validate the options of §C3; unknown names and out-of-range values are refused."""
    check_names(raw, _OPTION_NAMES)
    d = Options()
    return Options(
        quan_value=choice("quanValue", whole("quanValue", raw.get("quanValue", d.quan_value)), (10, 5)),
        first_player=choice("firstPlayer", raw.get("firstPlayer", d.first_player), ("alternate", "random")),
        quan_non=flag("quanNon", raw.get("quanNon", d.quan_non)),
        no_quan_capture_first_turn=flag(
            "noQuanCaptureFirstTurn", raw.get("noQuanCaptureFirstTurn", d.no_quan_capture_first_turn)
        ),
        payout=choice("payout", raw.get("payout", d.payout), ("fixed", "perPoint")),
        max_moves=whole("maxMoves", raw.get("maxMoves", d.max_moves), 1, MAX_MOVES),
        turn_seconds=whole("turnSeconds", raw.get("turnSeconds", d.turn_seconds), 1, 3600),
    )


def option_values(options: Options) -> Mapping[str, Any]:
    """The options under the rules file's names."""
    return {name: getattr(options, attr) for name, attr in _OPTION_NAMES.items()}
