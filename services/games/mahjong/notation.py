"""Scenario notation of 洪洞王牌麻将 beyond single tiles (those are in
:mod:`~chieu.games.mahjong.tiles`): seats and melds.

Seats: an index (``0``), a letter ``A``–``D`` or ``P1``–``P4``. A meld is written
``<type> <tile> [from <seat>]``: ``peng E``, ``peng E from C``, ``ming_gang 9p from B``,
``bu_gang 5m``, ``an_gang 9p``; the type also reads in Chinese (碰 明杠 补杠 暗杠). A 碰, 明杠 or
补杠 (whose 碰 was claimed) comes by default from the previous seat (上家); an 暗杠 from nobody.
"""

from __future__ import annotations

from typing import Any

from chieu.games.mahjong import tiles as T
from chieu.games.mahjong.model import Meld, MeldType

_MELD_WORDS = {"碰": MeldType.PENG, "明杠": MeldType.MING_GANG, "补杠": MeldType.BU_GANG,
               "暗杠": MeldType.AN_GANG} | {t.value: t for t in MeldType}


def seat(v: Any) -> int:
    """A seat index from ``0``, ``"A"`` or ``"P1"``."""
    if isinstance(v, int):
        return v
    t = str(v).strip().upper()
    if t.startswith("P") and t[1:].isdigit():
        return int(t[1:]) - 1
    if t in ("A", "B", "C", "D"):
        return "ABCD".index(t)
    return int(t)


def by_seat(raw: Any) -> dict[int, Any]:
    """A per-seat mapping (``{A: ..., 2: ...}``) or list (in seat order) keyed by seat index."""
    if raw is None:
        return {}
    if isinstance(raw, list):
        return {i: v for i, v in enumerate(raw) if v is not None}
    return {seat(k): v for k, v in dict(raw).items()}


def meld(owner: int, text: str, players: int) -> Meld:
    """The meld written ``text`` (see the module docstring) of seat ``owner``."""
    parts = text.split()
    if len(parts) not in (2, 4) or parts[0] not in _MELD_WORDS or (len(parts) == 4 and parts[2] != "from"):
        raise ValueError(f"not a meld: {text!r} (write e.g. 'peng E', 'peng E from C', 'an_gang 9p')")
    t = _MELD_WORDS[parts[0]]
    k = T.kind(parts[1])
    frm = owner if t is MeldType.AN_GANG else (owner - 1) % players
    if len(parts) == 4:
        frm = seat(parts[3])
        if (frm == owner) != (t is MeldType.AN_GANG) or not 0 <= frm < players:
            raise ValueError(f"{text!r}: a 碰/明杠/补杠 comes from another seat, an 暗杠 from none")
    return Meld(owner, t, T.name(k), frm)


def meld_text(t: MeldType, k: int) -> str:
    """``peng E``: a meld as ``describe`` shows it."""
    return f"{t.value} {T.name(k)}"
