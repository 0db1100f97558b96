"""Tiles, placements and the triệt (blocked game) analysis of shared/rules/dominoes.md §B3.

A tile ``[a|b]`` has ``a <= b``; the line has two open ends ``(L, R)`` (no spinners). An
*option* (DM-R11) is a distinct (tile, resulting unordered pair of ends) placement.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum


class End(StrEnum):
    """Which open end of the line a tile goes on: the left or the right one."""

    LEFT = "L"
    RIGHT = "R"


@dataclass(frozen=True, slots=True, order=True)
class Tile:
    """A domino ``[a|b]`` with ``0 <= a <= b <= 6``."""

    a: int
    b: int

    @property
    def pips(self) -> int:
        return self.a + self.b

    def __str__(self) -> str:
        return f"[{self.a}|{self.b}]"


ALL_TILES: tuple[Tile, ...] = tuple(Tile(a, b) for a in range(7) for b in range(a, 7))
"""The double-six set (DM-R1): 28 tiles, 168 pips."""
HAND_SIZE = 7
"""Tiles dealt to each player (DM-R2); the rest is the boneyard."""

Ends = tuple[int, int]
_TILE = re.compile(r"\[?\s*(\d)\s*\|\s*(\d)\s*\]?")


def tile(a: int, b: int) -> Tile:
    """The tile with halves ``a`` and ``b`` in either order."""
    return Tile(min(a, b), max(a, b))


def parse_tile(text: str) -> Tile:
    """``[3|5]`` (or ``3|5``) as a tile; halves may be given in either order."""
    m = _TILE.fullmatch(text.strip())
    if not m:
        raise ValueError(f"a tile is written [a|b], not {text!r}")
    a, b = int(m.group(1)), int(m.group(2))
    if a > 6 or b > 6:
        raise ValueError(f"tile halves are 0..6: {text!r}")
    return tile(a, b)


def parse_tiles(text: str) -> tuple[Tile, ...]:
    """Every ``[a|b]`` in ``text``, in order."""
    return tuple(tile(int(a), int(b)) for a, b in re.findall(r"\[(\d)\|(\d)\]", text))


def format_tiles(tiles: Sequence[Tile]) -> str:
    """The tiles written ``[a|b] [c|d] ...``."""
    return " ".join(str(t) for t in tiles)


def pip_count(tiles: Sequence[Tile]) -> int:
    """The pips of ``tiles`` together (a hand's pips left, lower is better)."""
    return sum(t.pips for t in tiles)


def place(ends: Ends | None, t: Tile, end: End) -> Ends | None:
    """The open ends after putting ``t`` on ``end`` (DM-R6), or ``None`` if it does not match."""
    if ends is None:
        return (t.a, t.b)
    left, right = ends
    if end is End.LEFT:
        if t.a == left:
            return (t.b, right)
        if t.b == left:
            return (t.a, right)
        return None
    if t.a == right:
        return (left, t.b)
    if t.b == right:
        return (left, t.a)
    return None


def matches(ends: Ends | None, t: Tile) -> bool:
    """Whether ``t`` can be played (every tile can lead)."""
    return ends is None or t.a in ends or t.b in ends


def playable(hand: Sequence[Tile], ends: Ends | None) -> bool:
    return any(matches(ends, t) for t in hand)


@dataclass(frozen=True, slots=True)
class Option:
    """One distinct placement (DM-R11): the tile, an end it goes on, and the ends after it."""

    tile: Tile
    end: End
    ends: Ends


def options(hand: Sequence[Tile], ends: Ends | None) -> list[Option]:
    """The mover's distinct options; the same tile giving the same pair of ends counts once."""
    out: list[Option] = []
    seen: set[tuple[Tile, Ends]] = set()
    for t in sorted(set(hand)):
        for end in (End.LEFT, End.RIGHT):
            after = place(ends, t, end)
            if after is None:
                continue
            key = (t, (min(after), max(after)))
            if key not in seen:
                seen.add(key)
                out.append(Option(t, end, after))
            if ends is None:
                break
    return out


def dead(hands: Sequence[Sequence[Tile]], boneyard_left: int, ends: Ends | None) -> bool:
    """A *dead* position (DM-R9, DM-R11): boneyard empty and no hand matches an open end."""
    if boneyard_left or ends is None:
        return False
    return not any(playable(h, ends) for h in hands)


def _without(hand: Sequence[Tile], t: Tile) -> list[Tile]:
    out = list(hand)
    out.remove(t)
    return out


def _dead_after(hands: Sequence[Sequence[Tile]], mover: int, boneyard_left: int, o: Option) -> bool:
    rest = _without(hands[mover], o.tile)
    if not rest:
        return False
    new = [rest if i == mover else h for i, h in enumerate(hands)]
    return dead(new, boneyard_left, o.ends)


def forced_continuation(
    hands: Sequence[Sequence[Tile]], boneyard: Sequence[Tile], ends: Ends | None, mover: int
) -> bool:
    """FC of DM-R11 from a position with ``mover`` to act: ``True`` = OPEN, ``False`` = BLOCK."""
    hs = [list(h) for h in hands]
    bone = list(boneyard)
    n = len(hs)
    p = mover
    while True:
        if dead(hs, len(bone), ends):
            return False
        while bone and not playable(hs[p], ends):
            hs[p].append(bone.pop(0))
        opts = options(hs[p], ends)
        if len(opts) >= 2 and not all(_dead_after(hs, p, len(bone), o) for o in opts):
            return True
        if opts:
            o = opts[0]
            hs[p].remove(o.tile)
            ends = o.ends
            if not hs[p]:
                return True
        p = (p + 1) % n


@dataclass(frozen=True, slots=True)
class Turn:
    """One finished turn, for the triệt analysis: the position after its compulsory draws."""

    mover: int
    hands: tuple[tuple[Tile, ...], ...]
    boneyard: tuple[Tile, ...]
    ends: Ends | None
    played: Option | None
    """The placement made, or ``None`` for a pass."""


def _key(o: Option) -> tuple[Tile, Ends]:
    return (o.tile, (min(o.ends), max(o.ends)))


def find_blocker(turns: Sequence[Turn]) -> tuple[int | None, int | None]:
    """The turn index and seat of the người triệt (blocker) by DM-R11, or ``(None, None)``.

    ``None`` means the block is triệt buộc (forced).
    """
    for idx in range(len(turns) - 1, -1, -1):
        t = turns[idx]
        if t.played is None:
            continue
        hand = t.hands[t.mover]
        opts = options(hand, t.ends)
        if len(opts) == 1:
            continue
        if all(_dead_after(t.hands, t.mover, len(t.boneyard), o) for o in opts):
            continue
        chosen = _key(t.played)
        n = len(t.hands)
        for o in opts:
            if _key(o) == chosen:
                continue
            rest = _without(hand, o.tile)
            if not rest:
                return idx, t.mover
            hands = [tuple(rest) if i == t.mover else h for i, h in enumerate(t.hands)]
            if forced_continuation(hands, t.boneyard, o.ends, (t.mover + 1) % n):
                return idx, t.mover
        return None, None
    return None, None


def find_assistant(
    turns: Sequence[Turn], turn_index: int, blocker: int, same_tile_counts: bool
) -> int | None:
    """The gài triệt (assistant) of DM-R12: the blocker's upstream neighbour, if on his latest
    turn before the blocking turn he placed a tile while holding another playable tile."""
    n = len(turns[turn_index].hands)
    candidate = (blocker - 1) % n
    for j in range(turn_index - 1, -1, -1):
        t = turns[j]
        if t.mover != candidate:
            continue
        if t.played is None:
            return None
        opts = options(t.hands[candidate], t.ends)
        other = len(opts) >= 2 if same_tile_counts else any(o.tile != t.played.tile for o in opts)
        return candidate if other else None
    return None
