"""One convention for table options: every game's options are named in lowerCamelCase, a
duration in seconds ends in ``Seconds`` (``turnSeconds``, ``claimSeconds``), the same as in
Phỏm, Ô ăn quan and Đô Mi Nô. The names the rules files of 够级, 麻将, 象棋 and 连连看 give
(``TURN_TIMEOUT_S``, ``TURN_SECONDS``, ``LAIZI_MODE``, ``TIME_LIMIT``) stay accepted as aliases, so
a room or a log written with them reads as before.

A game whose parser reads its rules file's names wraps it with :class:`Aliases`: what comes in
under either name reaches the parser under the rules file's name, and what the game reports
(``option_values``: the log, the views, the lobby's rooms) goes out under the canonical name.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Aliases:
    """A game's canonical option names → the rules file's names it also accepts."""

    canonical: Mapping[str, str]
    """Canonical name → the rules file's (alias) name."""

    def __post_init__(self) -> None:
        if len(set(self.canonical.values())) != len(self.canonical):
            raise ValueError("two canonical names for one rules-file name")

    def read(self, raw: Mapping[str, Any]) -> dict[str, Any]:
        """``raw`` under the rules file's names, for the game's parser. A name given twice (as
        itself and as its alias) takes the value later in ``raw``: a settings change merges its
        patch after the table's current options, so the patch wins whichever name it uses.
        Unknown names pass through unchanged (the parser refuses them)."""
        out: dict[str, Any] = {}
        for name, value in raw.items():
            key = self.canonical.get(name, name)
            out.pop(key, None)
            out[key] = value
        return out

    def write(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """The game's option values under their canonical names."""
        back = {alias: name for name, alias in self.canonical.items()}
        return {back.get(k, k): v for k, v in values.items()}
