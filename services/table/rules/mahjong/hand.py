"""Winning hands and their score (§1.6–1.7 of shared/rules/mahjong.md).

Two evaluators share one model of a hand (a count vector over kinds 0..34, the seat's laizi
kind — 癞子/王, the wild tile — and its melds):

* :func:`is_win` answers yes/no fast, by suit-split lookup tables of "the fewest wilds that
  complete this group" (q_algorithm style, §1.9), filled lazily and memoised per group vector;
* :func:`score` enumerates every arrangement and returns the best-scoring one (倒牌如果有两种牌型，
  按分数大的牌型倒下去).

Laizi restrictions: a laizi stands for anything in a pung, a suited chow or the pair (L1), never
in a wind run (风顺) or dragon run (中发白, L2); in 七对 and for FULL_FLUSH / 字一色 / 一条龙 it counts
only as itself (L3, L4). "How many laizi act as themselves" is enumerated explicitly.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from chieu.table.rules.mahjong.tiles import BAI, DRAGONS, FA, WANG, ZHONG, counts, is_honour, suit

INF = 99

# ---------------------------------------------------------------- yes/no: fewest wilds per group


@cache
def _suit_min(v: tuple[int, ...], pair: bool) -> int:
    """Fewest wilds that complete a 9-kind suit vector into sets (and one pair if ``pair``)."""
    i = 0
    while i < 9 and not v[i]:
        i += 1
    if i == 9:
        return 2 if pair else 0
    lst = list(v)
    c = v[i]
    best = INF
    for k in range(1, min(3, c) + 1):
        lst[i] -= k
        best = min(best, _suit_min(tuple(lst), pair) + 3 - k)
        lst[i] += k
    for s in (i - 2, i - 1, i):
        if s < 0 or s + 2 > 8:
            continue
        miss = 0
        taken = []
        for p in range(s, s + 3):
            if p >= i and lst[p] > 0:
                lst[p] -= 1
                taken.append(p)
            else:
                miss += 1
        best = min(best, _suit_min(tuple(lst), pair) + miss)
        for p in taken:
            lst[p] += 1
    if pair:
        for k in range(1, min(2, c) + 1):
            lst[i] -= k
            best = min(best, _suit_min(tuple(lst), False) + 2 - k)
            lst[i] += k
    return best


@cache
def _honour_min(v: tuple[int, ...], pair: bool) -> int:
    """Fewest wilds for winds (4 kinds, any three different = a run) or dragons (中发白 = a run).

    Runs take natural tiles only (L2); pungs and the pair may use wilds.
    """
    n = len(v)
    i = 0
    while i < n and not v[i]:
        i += 1
    if i == n:
        return 2 if pair else 0
    lst = list(v)
    c = v[i]
    best = INF
    for k in range(1, min(3, c) + 1):
        lst[i] -= k
        best = min(best, _honour_min(tuple(lst), pair) + 3 - k)
        lst[i] += k
    if pair:
        for k in range(1, min(2, c) + 1):
            lst[i] -= k
            best = min(best, _honour_min(tuple(lst), False) + 2 - k)
            lst[i] += k
    for a, b in _runs_from(n, i):
        if lst[a] and lst[b]:
            lst[i] -= 1
            lst[a] -= 1
            lst[b] -= 1
            best = min(best, _honour_min(tuple(lst), pair))
            lst[i] += 1
            lst[a] += 1
            lst[b] += 1
    return best


def _runs_from(n: int, i: int) -> tuple[tuple[int, int], ...]:
    if n == 3:
        return ((1, 2),) if i == 0 else ()
    return tuple((a, b) for a in range(i + 1, n) for b in range(a + 1, n))


_SUIT: dict[tuple[int, ...], tuple[int, int]] = {}
_HONOUR: dict[tuple[int, ...], tuple[int, int]] = {}


def _suit_need(v: tuple[int, ...]) -> tuple[int, int]:
    r = _SUIT.get(v)
    if r is None:
        r = _SUIT[v] = (_suit_min(v, False), _suit_min(v, True))
    return r


def _honour_need(v: tuple[int, ...]) -> tuple[int, int]:
    r = _HONOUR.get(v)
    if r is None:
        r = _HONOUR[v] = (_honour_min(v, False), _honour_min(v, True))
    return r


_BOUNDS = ((0, 9), (9, 18), (18, 27), (27, 31), (31, 34))


def _group_need(c: Sequence[int], g: int) -> tuple[int, int]:
    lo, hi = _BOUNDS[g]
    v = tuple(c[lo:hi])
    return _suit_need(v) if g < 3 else _honour_need(v)


def _fits(needs: Sequence[tuple[int, int]], wilds: int) -> bool:
    base = 0
    for n, _ in needs:
        base += n
    if base + 2 <= wilds:
        return True
    for n, w in needs:  # noqa: SIM110 - a plain loop is faster on this hot path
        if base - n + w <= wilds:
            return True
    return False


def _standard(c: list[int], laizi: int) -> bool:
    """A 4-sets-and-a-pair shape (melds already removed), laizi wild under L1/L2."""
    if laizi < 0:
        return _fits([_group_need(c, g) for g in range(5)], 0)
    total = c[laizi]
    if laizi == WANG:
        return _fits([_group_need(c, g) for g in range(5)], total)
    lg = 0 if laizi < 9 else 1 if laizi < 18 else 2 if laizi < 27 else 3 if laizi < 31 else 4
    others = [_group_need(c, g) for g in range(5) if g != lg]
    try:
        for j in range(total + 1):
            c[laizi] = j
            if _fits([*others, _group_need(c, lg)], total - j):
                return True
        return False
    finally:
        c[laizi] = total


def _suit_mask(c: Sequence[int], skip: int) -> int:
    mask = 0
    for s in range(3):
        n = sum(c[9 * s : 9 * s + 9])
        if 9 * s <= skip < 9 * s + 9:
            n -= c[skip]
        if n:
            mask |= 1 << s
    return mask


def _bits(mask: int) -> int:
    return (mask & 1) + (mask >> 1 & 1) + (mask >> 2 & 1)


def _qidui(c: Sequence[int], quads: bool) -> bool:
    """七对: seven pairs of natural tiles, laizi as themselves (L4); 王 never pairs."""
    if c[WANG]:
        return False
    pairs = 0
    for k in range(34):
        n = c[k]
        if n & 1 or (n == 4 and not quads):
            return False
        pairs += n >> 1
    return pairs == 7


@dataclass(frozen=True, slots=True)
class HandRules:
    """What a mode and the options change in hand evaluation.

    ``lack_max``: the most suits allowed (缺一门 → 2, 缺两门 → 1); ``qidui``: 七对 allowed;
    ``quads``: four identical tiles count as two pairs in 七对 (QIDUI_QUAD_AS_TWO_PAIRS).
    """

    lack_max: int = 2
    qidui: bool = True
    quads: bool = True
    pinghu_only_if_no_pattern: bool = False
    flush_exclusive: bool = False
    loushanglou_replace: bool = False


def is_win(
    c: list[int], laizi: int, meld_suits: int = 0, rules: HandRules = HandRules(), melds: int = 0
) -> bool:
    """Whether the concealed counts ``c`` (35 long, ``14 − 3·melds`` tiles) win.

    ``meld_suits`` is the bitmask of suits among the melds' non-laizi tiles. ``c`` is restored.
    """
    if _bits(_suit_mask(c, laizi) | meld_suits) <= rules.lack_max and _standard(c, laizi):
        return True
    if rules.qidui and not melds and _qidui(c, rules.quads):
        return _bits(_suit_mask(c, -1)) <= rules.lack_max
    return False


def waits(
    c: list[int], laizi: int, meld_suits: int = 0, rules: HandRules = HandRules(), melds: int = 0
) -> list[int]:
    """Every kind that would complete the 13-tile (``13 − 3·melds``) concealed hand ``c``."""
    out = []
    for k in range(34):
        if c[k] >= 4:
            continue
        c[k] += 1
        if is_win(c, laizi, meld_suits, rules, melds):
            out.append(k)
        c[k] -= 1
    return out


# ---------------------------------------------------------------- arrangements and score

Feature = tuple[int, int, int]
"""(wind runs, dragon runs, bitmask of natural chows 123/456/789 per suit)."""


@cache
def _arrangements(c: tuple[int, ...], wilds: int, pair: bool) -> frozenset[Feature]:
    """Every feature triple of a complete arrangement of naturals ``c`` (34 long) + ``wilds``."""
    i = 0
    while i < 34 and not c[i]:
        i += 1
    if i == 34:
        left = wilds - 2 if pair else wilds
        return frozenset({(0, 0, 0)}) if left >= 0 and left % 3 == 0 else frozenset()
    out: set[Feature] = set()
    lst = list(c)
    n = c[i]

    def more(w: int, p: bool, add: Feature) -> None:
        for f in _arrangements(tuple(lst), w, p):
            out.add((f[0] + add[0], f[1] + add[1], f[2] | add[2]))

    for k in range(1, min(3, n) + 1):
        if 3 - k <= wilds:
            lst[i] -= k
            more(wilds - 3 + k, pair, (0, 0, 0))
            lst[i] += k
    if pair:
        for k in range(1, min(2, n) + 1):
            if 2 - k <= wilds:
                lst[i] -= k
                more(wilds - 2 + k, False, (0, 0, 0))
                lst[i] += k
    if i < 27:
        r = i % 9
        for s in (r - 2, r - 1, r):
            if s < 0 or s + 2 > 8:
                continue
            taken = []
            miss = 0
            for p in range(s, s + 3):
                q = i - r + p
                if p >= r and lst[q] > 0:
                    lst[q] -= 1
                    taken.append(q)
                else:
                    miss += 1
            if miss <= wilds:
                bit = 1 << (i // 9 * 3 + s // 3) if miss == 0 and s % 3 == 0 else 0
                more(wilds - miss, pair, (0, 0, bit))
            for q in taken:
                lst[q] += 1
    elif i < 31:
        for a in range(i + 1, 31):
            for b in range(a + 1, 31):
                if lst[a] and lst[b]:
                    lst[i] -= 1
                    lst[a] -= 1
                    lst[b] -= 1
                    more(wilds, pair, (1, 0, 0))
                    lst[i] += 1
                    lst[a] += 1
                    lst[b] += 1
    elif i == ZHONG and lst[FA] and lst[BAI]:
        lst[ZHONG] -= 1
        lst[FA] -= 1
        lst[BAI] -= 1
        more(wilds, pair, (0, 1, 0))
    return frozenset(out)


@dataclass(frozen=True, slots=True)
class Scored:
    """The best arrangement's items ``(code, points)`` and its total ``H``."""

    items: tuple[tuple[str, int], ...]
    total: int
    qidui: bool


MELD_TILES = {"peng": 3, "ming_gang": 4, "bu_gang": 4, "an_gang": 4}


def score(
    concealed: Sequence[int],
    meld_kinds: Sequence[int],
    laizi: int,
    win_tile: int,
    rules: HandRules = HandRules(),
    ying_kou: bool = False,
    meld_sizes: Sequence[int] = (),
) -> Scored | None:
    """The best score of a self-drawn win, or ``None`` when the hand does not win.

    ``concealed`` includes the winning tile; ``meld_kinds`` are the kinds of the seat's melds
    (pungs/gangs, laizi only as themselves). After 硬扣 (``ying_kou``) the win must be on a
    dragon and the arrangement must hold a 中发白 run; 七对 is then not available.
    """
    if ying_kou and win_tile not in DRAGONS:
        return None
    c = counts(concealed)
    sizes = list(meld_sizes) or [3] * len(meld_kinds)
    all_tiles = list(concealed)
    for k, n in zip(meld_kinds, sizes, strict=True):
        all_tiles += [k] * n
    nonlaizi = {suit(k) for k in all_tiles if k != laizi and k != WANG and suit(k) >= 0}
    face_suits = {suit(k) for k in all_tiles if suit(k) >= 0}
    has_wang = WANG in all_tiles
    any_honour = any(is_honour(k) for k in all_tiles)
    all_honour = all(is_honour(k) for k in all_tiles)
    best: Scored | None = None

    def consider(items: list[tuple[str, int]], qidui: bool) -> None:
        nonlocal best
        patterns = [it for it in items if it[0] not in ("dragon_runs", "wind_runs")]
        if not rules.pinghu_only_if_no_pattern or not patterns:
            items = [("pinghu", 1), *items]
        total = sum(p for _, p in items)
        if best is None or total > best.total:
            best = Scored(tuple(items), total, qidui)

    def flushes(pure: bool, suits: set[int]) -> list[tuple[str, int]]:
        out: list[tuple[str, int]] = []
        full = pure and not has_wang and not any_honour and len(face_suits) == 1
        if len(suits) == 1 and not (full and rules.flush_exclusive):
            out.append(("half_flush", 2))
        if full:
            out.append(("full_flush", 20))
        if pure and not has_wang and all_honour:
            out.append(("ziyise", 30))
        return out

    diaowang = [("diaowang", 2)] if laizi >= 0 and win_tile == laizi else []
    if len(nonlaizi) <= rules.lack_max:
        total_l = c[laizi] if laizi >= 0 else 0
        js = range(total_l + 1) if 0 <= laizi < WANG else [total_l if laizi < 0 else 0]
        for j in js:
            nat = c[:34]
            wilds = c[WANG] if laizi == WANG else 0
            if 0 <= laizi < WANG:
                nat[laizi] = j
                wilds = total_l - j
            for wr, dr, mask in _arrangements(tuple(nat), wilds, True):
                if ying_kou and dr == 0:
                    continue
                items = list(diaowang)
                items += flushes(wilds == 0, nonlaizi)
                lsl = ying_kou and dr >= 2
                if ying_kou and not (lsl and rules.loushanglou_replace):
                    items.append(("danyuanhu", 5))
                if lsl:
                    items.append(("loushanglou", 10))
                if any(mask >> (3 * s) & 7 == 7 for s in range(3)):
                    items.append(("yitiaolong", 10))
                runs = dr - 2 if lsl and rules.loushanglou_replace else dr
                if runs:
                    items.append(("dragon_runs", runs))
                if wr:
                    items.append(("wind_runs", wr))
                consider(items, False)
    qidui_ok = rules.qidui and not ying_kou and not meld_kinds and _qidui(c, rules.quads)
    if qidui_ok and len(face_suits) <= rules.lack_max:
        consider([*diaowang, ("qidui", 10), *flushes(True, face_suits)], True)
    return best
