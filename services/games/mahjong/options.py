"""Table options of 洪洞王牌麻将 (§1.8 of shared/rules/mahjong.md), named in camelCase
(``laiziMode``, ``turnSeconds``, ...: :data:`ALIASES`), the rules file's names (``LAIZI_MODE``,
``TURN_SECONDS``) accepted as aliases.

Switches take ``on`` / ``off`` (or true / false); the three clocks are ours, in seconds.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from enum import Enum
from typing import Any

from chieu.games.aliases import Aliases
from chieu.games.common import check_names, choice, flag, whole


class Mode(str, Enum):
    """LAIZI_MODE: how the wild tiles (癞子/王) are chosen (§1.3)."""

    PUTONG = "普通"
    SEPAI = "色牌"
    YIZHIWANG = "一支王"
    XIAOSHOUWANG = "小手王"
    DAJIANGWANG = "大将王黑风报"
    DUIWANG = "对王大将报"


@dataclass(frozen=True, slots=True)
class Options:
    """Table options of §1.8 (rules-file names in ``option_values``) plus the three clocks."""

    laizi_mode: Mode = Mode.PUTONG
    yimodaodi: bool = False
    mianpeng: bool = False
    players: int = 4
    pinghu_only_if_no_pattern: bool = False
    flush_exclusive: bool = False
    loushanglou_style: str = "stack"
    dealer_bonus: int = 0
    mianpeng_allows_angang: bool = False
    suit_lock_all_two_suit_modes: bool = False
    qidui_quad_as_two_pairs: bool = True
    turn_seconds: int = 20
    claim_seconds: int = 10
    pair_seconds: int = 15


_NAMES = {
    "LAIZI_MODE": "laizi_mode",
    "YIMODAODI": "yimodaodi",
    "MIANPENG": "mianpeng",
    "PLAYERS": "players",
    "PINGHU_ONLY_IF_NO_PATTERN": "pinghu_only_if_no_pattern",
    "FLUSH_EXCLUSIVE": "flush_exclusive",
    "LOUSHANGLOU_STYLE": "loushanglou_style",
    "DEALER_BONUS": "dealer_bonus",
    "MIANPENG_ALLOWS_ANGANG": "mianpeng_allows_angang",
    "SUIT_LOCK_ALL_TWO_SUIT_MODES": "suit_lock_all_two_suit_modes",
    "QIDUI_QUAD_AS_TWO_PAIRS": "qidui_quad_as_two_pairs",
    "TURN_SECONDS": "turn_seconds",
    "CLAIM_SECONDS": "claim_seconds",
    "PAIR_SECONDS": "pair_seconds",
}
_SWITCHES = {
    "yimodaodi", "mianpeng", "pinghu_only_if_no_pattern", "flush_exclusive",
    "mianpeng_allows_angang", "suit_lock_all_two_suit_modes", "qidui_quad_as_two_pairs",
}
_RANGES = {"players": (2, 4), "dealer_bonus": (0, 1)}
"""Whole-number options and their bounds; the clocks take 1..3600 s."""


ALIASES = Aliases({
    "laiziMode": "LAIZI_MODE", "yimodaodi": "YIMODAODI", "mianpeng": "MIANPENG", "players": "PLAYERS",
    "pinghuOnlyIfNoPattern": "PINGHU_ONLY_IF_NO_PATTERN", "flushExclusive": "FLUSH_EXCLUSIVE",
    "loushanglouStyle": "LOUSHANGLOU_STYLE", "dealerBonus": "DEALER_BONUS",
    "mianpengAllowsAngang": "MIANPENG_ALLOWS_ANGANG", "suitLockAllTwoSuitModes": "SUIT_LOCK_ALL_TWO_SUIT_MODES",
    "qiduiQuadAsTwoPairs": "QIDUI_QUAD_AS_TWO_PAIRS", "turnSeconds": "TURN_SECONDS",
    "claimSeconds": "CLAIM_SECONDS", "pairSeconds": "PAIR_SECONDS",
})
"""The options' names (:mod:`chieu.games.aliases`), defaults in :class:`Options` (``laiziMode``
普通, ``players`` 4, ``turnSeconds`` 20, ``claimSeconds`` 10, ``pairSeconds`` 15, ...); the rules
file's names (``LAIZI_MODE``, ``TURN_SECONDS``, ...) are aliases."""


def parse_options(raw: Mapping[str, Any]) -> Options:
    """Validate §1.8's options; unknown names and values are refused."""
    raw = ALIASES.read(raw)
    check_names(raw, _NAMES)
    values: dict[str, Any] = {}
    for key, value in raw.items():
        attr = _NAMES[key]
        if attr in _SWITCHES:
            values[attr] = flag(key, value, words=True)
        elif attr == "laizi_mode":
            values[attr] = Mode(choice(key, value, [m.value for m in Mode]))
        elif attr == "loushanglou_style":
            values[attr] = choice(key, value, ("stack", "replace"))
        else:
            values[attr] = whole(key, value, *_RANGES.get(attr, (1, 3600)))
    return replace(Options(), **values)


def option_values(options: Options) -> Mapping[str, Any]:
    """The options under their canonical names (:data:`ALIASES`; switches as ``on`` / ``off``)."""
    out: dict[str, Any] = {}
    for key, attr in _NAMES.items():
        v = getattr(options, attr)
        out[key] = v.value if isinstance(v, Mode) else ("on" if v else "off") if isinstance(v, bool) else v
    return ALIASES.write(out)
