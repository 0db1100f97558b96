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
from functools import cache, lru_cache

from chieu.games.mahjong.tiles import BAI, DRAGONS, FA, WANG, ZHONG, counts, is_honour, suit

INF = 99

# ---------------------------------------------------------------- yes/no: fewest wilds per group

SUIT_VECTORS = 65_536
"""The most suit vectors :data:`_SUIT` holds before it is emptied (issue 28: the memos grew with every
hand played). Random hands reach some 14,000 vectors in 400,000 hands and 22,000 in 2,000,000 (of
405,350 possible), hands of two suits (缺门) 44,000 in 200,000 (``bench_mahjong``: at 16,384 they
emptied it again and again, 3.9× slower); 5.1 MiB at the cap (the answers shared); a vector
refills in some 20 µs."""
SUIT_MINS = 4_096
"""The answers :func:`_suit_min` keeps, least recently used out (about 260 bytes each, 1 MiB at the
cap): it only fills :data:`_SUIT` (a miss there costs some 20 µs at this size, 13 µs unbounded,
when it held twice ``_SUIT``'s vectors)."""


@lru_cache(maxsize=SUIT_MINS)
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

    Runs take natural tiles only (L2); pungs and the pair may use wilds. The memo is bounded by its
    domain: 2 × (5⁴ + 5³) vectors at most.
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


_SUIT: dict[bytes, tuple[int, int]] = {}
"""Suit vector → (fewest wilds without the pair, with it); at most :data:`SUIT_VECTORS`."""
_HONOUR: dict[bytes, tuple[int, int]] = {}
"""The same for the winds and the dragons (bounded by the domain: 5⁴ + 5³ vectors)."""
_NEEDS: dict[tuple[int, int], tuple[int, int]] = {}
"""One tuple per distinct answer, shared by every vector that has it (a few dozen in all)."""


_LO = (0, 9, 18, 27, 31)
_HI = (9, 18, 27, 31, 34)
_GROUP_OF = (0,) * 9 + (1,) * 9 + (2,) * 9 + (3,) * 4 + (4,) * 3 + (5,)
"""The group of each kind: three suits, winds, dragons; 5 for 王 (wild only)."""


def _need(c: Sequence[int], g: int) -> tuple[int, int]:
    """(fewest wilds without the pair, with the pair) for group ``g`` of ``c``."""
    return _lookup(bytes(c[_LO[g] : _HI[g]]), g)


def _lookup(key: bytes, g: int) -> tuple[int, int]:
    table = _SUIT if g < 3 else _HONOUR
    r = table.get(key)
    if r is None:
        v = tuple(key)
        if g < 3:
            r = (_suit_min(v, False), _suit_min(v, True))
            if len(table) >= SUIT_VECTORS:
                table.clear()
        else:
            r = (_honour_min(v, False), _honour_min(v, True))
        r = _NEEDS.setdefault(r, r)
        table[key] = r
    return r


def _laizi_group_ok(c: Sequence[int], laizi: int, lg: int, base: int, delta: int) -> bool:
    """Try every count ``j`` of laizi acting as themselves; the rest are wild."""
    total = c[laizi]
    lo = _LO[lg]
    v = bytearray(c[lo : _HI[lg]])
    pos = laizi - lo
    for j in range(total + 1):
        v[pos] = j
        n, w = _lookup(bytes(v), lg)
        b = base + n
        wilds = total - j
        if b + 2 <= wilds or b + min(delta, w - n) <= wilds:
            return True
    return False


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


DEFAULT_RULES = HandRules()


def is_win(
    c: list[int], laizi: int, meld_suits: int = 0, rules: HandRules = DEFAULT_RULES, melds: int = 0
) -> bool:
    """Whether the concealed counts ``c`` (35 long, ``14 − 3·melds`` tiles) win.

    ``meld_suits`` is the bitmask of suits among the melds' non-laizi tiles. This is the hot
    path of the yes/no check: one ``bytes`` copy, then per-group table look-ups written inline.
    """
    b = bytes(c)
    vm = b[0:9]
    vs = b[9:18]
    vp = b[18:27]
    s0 = sum(vm)
    s1 = sum(vs)
    s2 = sum(vp)
    if 0 <= laizi < 27:
        n = b[laizi]
        if laizi < 9:
            s0 -= n
        elif laizi < 18:
            s1 -= n
        else:
            s2 -= n
    mask = meld_suits | (s0 > 0) | (s1 > 0) << 1 | (s2 > 0) << 2
    if (mask & 1) + (mask >> 1 & 1) + (mask >> 2 & 1) > rules.lack_max:
        return False
    if (laizi < 0 or not b[laizi]) and not b[WANG]:
        # no wild in hand: every group's size is 0 mod 3 but one (2 mod 3, the pair's)
        tw = b[27:31]
        dr = b[31:34]
        m = (s0 % 3, s1 % 3, s2 % 3, sum(tw) % 3, sum(dr) % 3)
        if m.count(0) != 4 or 2 not in m:
            return (
                rules.qidui and not melds and b.count(0) >= 28 and _qidui(b, rules.quads)
                and _bits(_suit_mask(b, -1)) <= rules.lack_max
            )
    lg = _GROUP_OF[laizi] if laizi >= 0 else 5
    suits = _SUIT
    base = 0
    delta = INF
    if lg != 0:
        r = suits.get(vm) or _lookup(vm, 0)
        base = r[0]
        delta = r[1] - r[0]
    if lg != 1:
        r = suits.get(vs) or _lookup(vs, 1)
        base += r[0]
        if r[1] - r[0] < delta:
            delta = r[1] - r[0]
    if lg != 2:
        r = suits.get(vp) or _lookup(vp, 2)
        base += r[0]
        if r[1] - r[0] < delta:
            delta = r[1] - r[0]
    if lg != 3:
        r = _HONOUR.get(b[27:31]) or _lookup(b[27:31], 3)
        base += r[0]
        if r[1] - r[0] < delta:
            delta = r[1] - r[0]
    if lg != 4:
        r = _HONOUR.get(b[31:34]) or _lookup(b[31:34], 4)
        base += r[0]
        if r[1] - r[0] < delta:
            delta = r[1] - r[0]
    if lg < 5:
        if _laizi_group_ok(b, laizi, lg, base, delta):
            return True
    else:
        wilds = b[WANG] if laizi == WANG else 0
        if base + 2 <= wilds or base + delta <= wilds:
            return True
    if rules.qidui and not melds and b.count(0) >= 28 and _qidui(b, rules.quads):
        return _bits(_suit_mask(b, -1)) <= rules.lack_max
    return False


def waits(
    c: list[int], laizi: int, meld_suits: int = 0, rules: HandRules = DEFAULT_RULES, melds: int = 0
) -> list[int]:
    """Every kind that would complete the 13-tile (``13 − 3·melds``) concealed hand ``c``.

    Incremental: a candidate tile changes one group, so only that group is looked up again;
    without wilds in hand a candidate must also leave every group's size 0 mod 3 but one.
    """
    out: list[int] = []
    mask = meld_suits | _suit_mask(c, laizi)
    lg = _GROUP_OF[laizi] if laizi >= 0 else 5
    needs = [_need(c, g) for g in range(5)]
    mods = [sum(c[_LO[g] : _HI[g]]) % 3 for g in range(5)]
    total = c[laizi] if 0 <= laizi < WANG else 0
    wang = c[WANG] if laizi == WANG else 0
    lopts: list[tuple[int, int, int]] = []
    if lg < 5:
        v = bytearray(c[_LO[lg] : _HI[lg]])
        pos = laizi - _LO[lg]
        for j in range(total + 1):
            v[pos] = j
            n, w = _lookup(bytes(v), lg)
            lopts.append((n, w, total - j))
    nowild = total == 0 and not c[WANG]
    odd = [k for k in range(34) if c[k] & 1]
    qidui_kind = odd[0] if (rules.qidui and not melds and not c[WANG] and len(odd) == 1) else -1
    lack = rules.lack_max
    for k in range(34):
        if c[k] >= 4:
            continue
        if k < 27 and k != laizi:
            if _bits(mask | 1 << (k // 9)) > lack:
                continue
        elif _bits(mask) > lack:
            continue
        g = _GROUP_OF[k]
        if nowild and k != laizi:
            m = list(mods)
            m[g] = (m[g] + 1) % 3
            if m.count(0) != 4 or 2 not in m:
                if k == qidui_kind:
                    c[k] += 1
                    if _qidui(c, rules.quads) and _bits(_suit_mask(c, -1)) <= lack:
                        out.append(k)
                    c[k] -= 1
                continue
        c[k] += 1
        base = 0
        delta = INF
        for h in range(5):
            if h != lg:
                n, w = _need(c, h) if h == g else needs[h]
                base += n
                if w - n < delta:
                    delta = w - n
        if lg == 5:
            ok = base + 2 <= wang or base + delta <= wang
        elif g == lg:
            ok = _laizi_group_ok(c, laizi, lg, base, delta)
        else:
            ok = False
            for n, w, wl in lopts:
                if base + n + 2 <= wl or base + n + min(delta, w - n) <= wl:
                    ok = True
                    break
        if not ok and k == qidui_kind:
            ok = _qidui(c, rules.quads) and _bits(_suit_mask(c, -1)) <= lack
        c[k] -= 1
        if ok:
            out.append(k)
    return out


def _reachable(needs: Sequence[tuple[int, int]], lg: int, lopts: Sequence[tuple[int, int, int]], wang: int,
               laizi_too: bool) -> bool:
    """Whether one more tile might complete a hand whose groups need ``needs`` (the fewest wilds
    without the pair, with it) as :func:`is_win` counts them: ``False`` only when none can.

    ``lg`` is the laizi's group (5: none), ``lopts`` its options as :func:`_laizi_group_ok`
    tries them (the needs with ``j`` laizi as themselves, the wilds left), ``wang`` the wilds
    when there is no laizi group; ``laizi_too``: the laizi kind itself is a candidate. No tile
    is tried: a tile of group ``g`` changes ``g``'s needs only, and bounds them below — a suit's
    by its needs less one (that tile turned into a wild completes the group as before: wilds are
    welcome in a suit's sets and pair), an honour group's by 0 (a wind or dragon run takes no
    wild). is_win's test of the wilds only grows with each need, so a hand that fails it at the
    bound fails it whatever the tile of that group. One more laizi is one more wild (each
    option with one more wild left), or acts as itself (the last option's needs bounded).
    """
    base = 0
    d1 = d2 = 2  # the two least (with the pair − without) of the groups besides the laizi's, or 2
    i1 = -1  # (the pair of wilds alone): what the pair adds to the sets' needs at best
    for h in range(5):
        if h != lg:
            n, w = needs[h]
            base += n
            d = w - n
            if d < d1:
                d2, d1, i1 = d1, d, h
            elif d < d2:
                d2 = d
    if laizi_too and any(base + n + (d1 if d1 < w - n else w - n) <= wl + 1 for n, w, wl in lopts):
        return True  # one more laizi, as a wild
    for g in range(5):
        if g == lg:  # a tile of the laizi group, not the laizi
            for n, w, wl in lopts:
                if g < 3:
                    n, w = n - (n > 0), w - (w > 0)
                else:
                    n = w = 0
                if base + n + (d1 if d1 < w - n else w - n) <= wl:
                    return True
            continue
        n, w = needs[g]
        if g < 3:
            bn, bw = n - (n > 0), w - (w > 0)
        else:
            bn = bw = 0
        b = base - n + bn
        delta = d2 if g == i1 else d1
        if bw - bn < delta:
            delta = bw - bn
        if lg == 5:
            if b + delta <= wang:
                return True
            continue
        for n, w, wl in lopts:
            if b + n + (delta if delta < w - n else w - n) <= wl:
                return True
    if laizi_too:  # one more laizi, as itself
        n, w, _ = lopts[-1]
        if lg < 3:
            n, w = n - (n > 0), w - (w > 0)
        else:
            n = w = 0
        return base + n + (d1 if d1 < w - n else w - n) <= 0
    return False


def _laizi_options(c: Sequence[int], laizi: int, lg: int) -> list[tuple[int, int, int]]:
    """The laizi group's (needs without the pair, with it, wilds left) for each count ``j`` of
    the laizi acting as themselves, as :func:`_laizi_group_ok` tries them."""
    total = c[laizi]
    lo = _LO[lg]
    v = bytearray(c[lo : _HI[lg]])
    pos = laizi - lo
    out = []
    for j in range(total + 1):
        v[pos] = j
        n, w = _lookup(bytes(v), lg)
        out.append((n, w, total - j))
    return out


def may_be_ready_after(c: list[int], laizi: int, rules: HandRules, melds: int, kinds: Sequence[int]) -> list[int]:
    """Of ``kinds`` (tiles the concealed counts ``c`` hold), those whose discard might leave a
    ready hand (a tile after it makes :func:`is_win` true): a kind left out leaves none.

    A necessary test, for a seat's offered 报听 discards: per discard the one group it leaves
    looked up again, then :func:`_reachable`'s bound, no candidate tile tried; 七对 one pair
    off is let through. Most hands are far from ready: their waits need not be searched, and
    most are too far for any discard, which one bound over the whole hand tells first (a tile
    that leaves a group lowers its needs by two at most: set in a pung with two wilds, it
    completes the group as before; fewer laizi leave fewer wilds)."""
    lg = _GROUP_OF[laizi] if laizi >= 0 else 5
    needs14 = [_need(c, g) for g in range(5)]
    lopts14: list[tuple[int, int, int]] = []
    if lg < 5:
        lopts14 = _laizi_options(c, laizi, lg)
    odd = sum(n & 1 for n in c)
    qidui = rules.qidui and not melds
    if not (qidui and odd <= 2):
        wang = c[WANG] if laizi == WANG else 0
        for gk in {_GROUP_OF[k] for k in kinds}:
            needs = list(needs14)
            lopts = lopts14
            if gk == lg:
                lopts = [(n - 2 if n > 2 else 0, w - 2 if w > 2 else 0, wl) for n, w, wl in lopts14]
            elif gk < 5:
                n, w = needs14[gk]
                needs[gk] = (n - 2 if n > 2 else 0, w - 2 if w > 2 else 0)
            if _reachable(needs, lg, lopts, wang, lg < 5):
                break
        else:
            return []
    out: list[int] = []
    for k in kinds:
        c[k] -= 1
        if qidui and not c[WANG] and odd + (1 if c[k] & 1 else -1) == 1:
            out.append(k)  # 七对 one tile off: left to the search
        else:
            gk = _GROUP_OF[k]
            needs = needs14
            if gk < 5:
                needs = list(needs14)
                needs[gk] = _need(c, gk)
            lopts = _laizi_options(c, laizi, lg) if gk == lg < 5 else lopts14
            if _reachable(needs, lg, lopts, c[WANG] if laizi == WANG else 0, lg < 5 and c[laizi] < 4):
                out.append(k)
        c[k] += 1
    return out


# ---------------------------------------------------------------- arrangements and score

Feature = tuple[int, int, int]
"""(wind runs, dragon runs, bitmask of natural chows 123/456/789 per suit)."""


ARRANGEMENTS = 2048
"""The arrangements :func:`_arrangements` keeps, least recently used out: about 620 bytes each, 1.2
MiB at the cap. A score's search and the scores of the same hand from several views ask the same
ones; unbounded it grew by some 120 a hand played, for good (issue 28)."""


@lru_cache(maxsize=ARRANGEMENTS)
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
    rules: HandRules = DEFAULT_RULES,
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
