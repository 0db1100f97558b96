"""连连看 table options of §4: ``board`` (the layout size) and ``timeLimitSeconds`` (seconds or
none), the rules file's ``BOARD`` and ``TIME_LIMIT`` accepted as aliases (:data:`ALIASES`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from chieu.games.aliases import Aliases
from chieu.games.common import check_names, choice, whole

BOARDS: dict[str, tuple[int, int]] = {
    "18x8": (8, 18),
    "14x6": (6, 14),
    "16x9": (9, 16),
    "24x12": (12, 24),
}
"""``BOARD`` option values: columns x rows → (rows, cols)."""


@dataclass(frozen=True, slots=True)
class Options:
    """Table options: ``BOARD`` (default 18x8) and ``TIME_LIMIT`` in seconds (default none)."""

    board: str = "18x8"
    time_limit: int | None = None


ALIASES = Aliases({"board": "BOARD", "timeLimitSeconds": "TIME_LIMIT"})
"""The options' names (:mod:`chieu.games.aliases`): ``board`` (default 18x8) and
``timeLimitSeconds`` (default none); the rules file's ``BOARD`` and ``TIME_LIMIT`` are aliases."""


def parse_options(raw: Mapping[str, Any]) -> Options:
    """Validate ``BOARD`` and ``TIME_LIMIT`` (1..86400 seconds, or ``none``); unknown names and
    bad values are refused."""
    raw = ALIASES.read(raw)
    check_names(raw, ("BOARD", "TIME_LIMIT"))
    board = choice("BOARD", raw.get("BOARD", "18x8"), tuple(BOARDS))
    limit = raw.get("TIME_LIMIT")
    return Options(board, None if limit in (None, "none") else whole("TIME_LIMIT", limit, 1, 24 * 3600))


def option_values(options: Options) -> Mapping[str, Any]:
    """The options under their canonical names (:data:`ALIASES`)."""
    return ALIASES.write({"BOARD": options.board, "TIME_LIMIT": options.time_limit})
