"""中国象棋 table options of §3.5, named in camelCase (``facingKings``, ``chaseRule``, ``moveLimit``,
``carryOver``, ``timeControl``: :data:`ALIASES`), the rules file's names (``FACING_KINGS``, ...)
accepted as aliases."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from chieu.games.aliases import Aliases
from chieu.games.common import check_names, choice, flag
from chieu.games.core import BadOptions

_TIME_RE = re.compile(r"^\s*(\d+)\s*min\s*/\s*(\d+)\s*(?:\+\s*(\d+)\s*min\s*/\s*(\d+)\s*)?$")


@dataclass(frozen=True, slots=True)
class Options:
    """Table options of §3.5 (the rules file's names in :func:`option_values`).

    The time control is ``main_minutes`` for the first ``main_moves`` moves, then
    ``period_minutes`` for each further ``period_moves`` moves, repeating; ``main_minutes``
    0 means an untimed game (``TIME_CONTROL = none``).
    """

    facing_kings: str = "illegal"
    """将帅对面: ``illegal`` (the move is refused) or ``mover-loses`` (it ends the game)."""
    chase_rule: str = "none"
    """长捉: ``none`` or ``axf`` (the AXF perpetual chase rule)."""
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
}
OPTION_NAMES = (*_CHOICES, "CARRY_OVER", "TIME_CONTROL")
ALIASES = Aliases({"facingKings": "FACING_KINGS", "chaseRule": "CHASE_RULE", "moveLimit": "MOVE_LIMIT",
                   "carryOver": "CARRY_OVER", "timeControl": "TIME_CONTROL"})
"""The options' names (:mod:`chieu.games.aliases`), defaults in :class:`Options`: ``facingKings``
illegal, ``chaseRule`` none, ``moveLimit`` 120-per-side, ``carryOver`` on, ``timeControl``
60min/30+10min/10; the rules file's names (``FACING_KINGS``, ...) are aliases."""


def parse_options(raw: Mapping[str, Any]) -> Options:
    """Validate the options of §3.5; unknown names and values are refused.

    ``TIME_CONTROL`` is ``"60min/30+10min/10"`` (main period, then repeating periods) or
    ``"none"``; ``CARRY_OVER`` is ``on`` / ``off`` (also true / false).
    """
    raw = ALIASES.read(raw)
    check_names(raw, OPTION_NAMES)
    values: dict[str, Any] = {
        name.lower(): choice(name, raw[name], allowed) for name, allowed in _CHOICES.items() if name in raw
    }
    if "CARRY_OVER" in raw:
        values["carry_over"] = flag("CARRY_OVER", raw["CARRY_OVER"], words=True)
    if "TIME_CONTROL" in raw:
        values.update(_time_control(raw["TIME_CONTROL"]))
    return replace(Options(), **values)


def _time_control(text: Any) -> dict[str, int]:
    if text in (None, "none", "off"):
        return {"main_minutes": 0, "main_moves": 0, "period_minutes": 0, "period_moves": 0}
    m = _TIME_RE.match(str(text))
    if m is None:
        raise BadOptions(f"TIME_CONTROL must look like '60min/30+10min/10' or be 'none', not {text!r}")
    mm, mv = int(m.group(1)), int(m.group(2))
    pm, pv = int(m.group(3) or 0), int(m.group(4) or 0)
    if not (1 <= mm <= 600 and 1 <= mv <= 300):
        raise BadOptions("the main period needs 1..600 minutes for 1..300 moves")
    if (pm == 0) != (pv == 0) or pm > 600 or pv > 300:
        raise BadOptions("the repeating period needs 1..600 minutes for 1..300 moves")
    return {"main_minutes": mm, "main_moves": mv, "period_minutes": pm, "period_moves": pv}


def option_values(options: Options) -> Mapping[str, Any]:
    """The options under their canonical names (:data:`ALIASES`)."""
    return ALIASES.write({
        "FACING_KINGS": options.facing_kings,
        "CHASE_RULE": options.chase_rule,
        "MOVE_LIMIT": options.move_limit,
        "CARRY_OVER": "on" if options.carry_over else "off",
        "TIME_CONTROL": options.time_control,
    })

