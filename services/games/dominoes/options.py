"""Đô Mi Nô table options of §B5, under the rules file's names (``pipStake``, ``blockTie``, ...)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from chieu.games.common import check_names, choice, flag, whole

BLOCK_TIES = ("noWinner", "fewerTiles", "afterLastMover")
"""Who wins a triệt buộc (forced block) when the lowest pips tie."""


MAX_PIP_STAKE = 10
"""The most stake units a pip may be worth (``pipStake``, 1 by default)."""
MAX_PIPS = 168
"""The pips of a whole double-six set: no payment counts more pips than the others hold."""
MAX_MOVE_UNITS = 2 * MAX_PIP_STAKE * MAX_PIPS
"""The most stake units one Đô Mi Nô move settles in all: a winning blocker is paid twice the
pips the others hold (§B4), 2·u·Σp ≤ 2 × 10 × 168 = 3,360 at the bound."""


@dataclass(frozen=True, slots=True)
class Options:
    """Table options of §B5 (rules-file names in ``option_values``)."""

    pip_stake: int = 1
    """The cược per pip (u of §B4)."""
    block_tie: str = "noWinner"
    blocker_tie_counts_as_loss: bool = True
    """A người triệt (blocker) tying the lowest pips loses."""
    assistant_same_tile_counts: bool = False
    """Gài triệt: another placement of the same tile counts as "holding another playable tile"."""
    turn_seconds: int = 20


_OPTION_NAMES = {
    "pipStake": "pip_stake",
    "blockTie": "block_tie",
    "blockerTieCountsAsLoss": "blocker_tie_counts_as_loss",
    "assistantSameTileCounts": "assistant_same_tile_counts",
    "turnSeconds": "turn_seconds",
}


def parse_options(raw: Mapping[str, Any]) -> Options:
    """Validate the options of §B5; unknown names and out-of-range values are refused
    (``pipStake`` 1..:data:`MAX_PIP_STAKE`)."""
    check_names(raw, _OPTION_NAMES)
    d = Options()
    return Options(
        pip_stake=whole("pipStake", raw.get("pipStake", d.pip_stake), 1, MAX_PIP_STAKE),
        block_tie=choice("blockTie", raw.get("blockTie", d.block_tie), BLOCK_TIES),
        blocker_tie_counts_as_loss=flag(
            "blockerTieCountsAsLoss", raw.get("blockerTieCountsAsLoss", d.blocker_tie_counts_as_loss)
        ),
        assistant_same_tile_counts=flag(
            "assistantSameTileCounts", raw.get("assistantSameTileCounts", d.assistant_same_tile_counts)
        ),
        turn_seconds=whole("turnSeconds", raw.get("turnSeconds", d.turn_seconds), 1, 3600),
    )


def option_values(options: Options) -> Mapping[str, Any]:
    """The options under the rules file's names."""
    return {name: getattr(options, attr) for name, attr in _OPTION_NAMES.items()}
