"""Cards, phỏm (melds), cạ (near-melds), cover and Ù tests for Phỏm, on 52-bit masks.

A card is an int ``(rank - 1) * 4 + suit`` with ranks A=1 … K=13 and suits ♠=0 ♣=1 ♦=2 ♥=3, so
integer order is the sort order of PH-R27 (rank, then suit ♠ ♣ ♦ ♥) and the same card of the
next rank is ``c + 4``. A hand is a mask with bit ``c`` set for each card it holds.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from functools import lru_cache

RANKS = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
SUITS = ("♠", "♣", "♦", "♥")
_ASCII_SUITS = {"S": 0, "C": 1, "D": 2, "H": 3}
DECK = tuple(range(52))
NAMES = tuple(f"{RANKS[c >> 2]}{SUITS[c & 3]}" for c in DECK)
INDEX = {n: i for i, n in enumerate(NAMES)}


def rank(c: int) -> int:
    """The rank 1 (A) … 13 (K)."""
    return (c >> 2) + 1


def suit(c: int) -> int:
    """The suit 0 ♠, 1 ♣, 2 ♦, 3 ♥."""
    return c & 3


def value(c: int) -> int:
    """Point value (PH-R3): A=1, 2..10 face value, J=11, Q=12, K=13."""
    return (c >> 2) + 1


def parse_card(text: str) -> int:
    """A card from ``7♠``, ``10♥``, ``Q♦`` (ASCII ``7S``, ``10H``, ``TD`` also read); an eaten
    mark ``*`` is ignored. Raises ``ValueError``."""
    t = text.strip().rstrip("*")
    hit = INDEX.get(t)
    if hit is not None:
        return hit
    if len(t) >= 2:
        r, s = t[:-1].upper(), t[-1].upper()
        if r == "T":
            r = "10"
        if r in RANKS and s in _ASCII_SUITS:
            return RANKS.index(r) * 4 + _ASCII_SUITS[s]
    raise ValueError(f"not a card: {text!r}")


def split_cards(text: str) -> list[str]:
    """Card tokens of ``"3♠ 4♠ 5♠"`` or ``"3♠4♠5♠"`` (eaten marks ``*`` kept)."""
    out: list[str] = []
    cur = ""
    for ch in text.replace(",", " "):
        if ch.isspace():
            if cur:
                out.append(cur)
            cur = ""
            continue
        cur += ch
        if ch in "♠♣♦♥" or (ch.upper() in "SCDH" and len(cur) >= 2):
            out.append(cur)
            cur = ""
        elif ch == "*" and out and not cur[:-1]:
            out[-1] += "*"
            cur = ""
    if cur:
        out.append(cur)
    return out


def parse_cards(text: str | Iterable[str]) -> list[int]:
    """Cards from a string of tokens or a list of card names."""
    tokens = split_cards(text) if isinstance(text, str) else list(text)
    return [parse_card(t) for t in tokens]


def mask_of(cards: Iterable[int]) -> int:
    """The mask of some cards."""
    m = 0
    for c in cards:
        m |= 1 << c
    return m


def cards_of(mask: int) -> list[int]:
    """The cards of a mask, ascending."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def names(mask_or_cards: int | Iterable[int]) -> tuple[str, ...]:
    """Card names, ascending for a mask, in the given order for a sequence."""
    cards = cards_of(mask_or_cards) if isinstance(mask_or_cards, int) else mask_or_cards
    return tuple(NAMES[c] for c in cards)


def points(mask: int) -> int:
    """Sum of the point values of a mask's cards (PH-R3)."""
    return sum((c >> 2) + 1 for c in cards_of(mask))


# ---------------------------------------------------------------- phỏm


def _is_phom_cards(cards: Sequence[int]) -> bool:
    n = len(cards)
    if n < 3:
        return False
    cs = sorted(cards)
    if all(c >> 2 == cs[0] >> 2 for c in cs):
        return n <= 4
    return all(cs[i + 1] - cs[i] == 4 for i in range(n - 1))


def is_phom_mask(mask: int) -> bool:
    """A phỏm ngang (set of 3–4 of a rank) or phỏm dọc (run ≥ 3 of a suit, ace low only)."""
    return _is_phom_cards(cards_of(mask))


def _build_tables() -> tuple[tuple[tuple[int, ...], ...], tuple[tuple[int, ...], ...]]:
    triples: list[tuple[int, ...]] = []
    lowest: list[tuple[int, ...]] = []
    for c in DECK:
        r, s = c >> 2, c & 3
        same = [r * 4 + t for t in range(4) if t != s]
        tri = [(1 << a) | (1 << b) for i, a in enumerate(same) for b in same[i + 1 :]]
        for lo in (c - 8, c - 4, c):
            if lo >= 0 and (lo >> 2) + 2 <= 12:
                m = (1 << lo) | (1 << (lo + 4)) | (1 << (lo + 8))
                tri.append(m & ~(1 << c))
        triples.append(tuple(tri))
        low: list[int] = []
        higher = [r * 4 + t for t in range(s + 1, 4)]
        for i, a in enumerate(higher):
            for j, b in enumerate(higher[i + 1 :], i + 1):
                low.append((1 << c) | (1 << a) | (1 << b))
                for e in higher[j + 1 :]:
                    low.append((1 << c) | (1 << a) | (1 << b) | (1 << e))
        run = (1 << c) | (1 << (c + 4)) if r <= 11 else 0
        nxt = c + 8
        while run and nxt < 52:
            run |= 1 << nxt
            low.append(run)
            nxt += 4
        lowest.append(tuple(low))
    return tuple(triples), tuple(lowest)


TRIPLES, FROM_LOWEST = _build_tables()
"""``TRIPLES[c]``: masks of the two partner cards of every 3-card phỏm containing ``c``;
``FROM_LOWEST[c]``: every phỏm mask whose lowest card is ``c``."""


def eat_partners(card: int, free: int) -> list[int]:
    """Masks of the partner pairs in ``free`` that make a phỏm with ``card`` (PH-R14)."""
    return [m for m in TRIPLES[card] if m & free == m]


def can_eat(card: int, free: int) -> bool:
    """The local eat check: ``card`` and two of the ``free`` cards form a phỏm."""
    return any(m & free == m for m in TRIPLES[card])


def _cover(es: Sequence[int], i: int, free: int) -> bool:
    if i == len(es):
        return True
    for m in TRIPLES[es[i]]:  # noqa: SIM110 - a plain loop is faster on this hot path
        if m & free == m and _cover(es, i + 1, free & ~m):
            return True
    return False


def has_cover(hand: int, eaten: int) -> bool:
    """A cover exists: disjoint phỏm of hand cards, one per eaten card, each with one eaten card.

    Every phỏm holding an eaten card contains a 3-card phỏm holding it, so 3-card phỏm suffice.
    """
    if not eaten:
        return True
    return _cover(cards_of(eaten), 0, hand & ~eaten)


def is_bao(hand: int, eaten: int) -> bool:
    """Báo (fouled hand): the eaten cards in ``hand`` have no cover."""
    return bool(eaten) and not has_cover(hand, eaten)


PARTITIONS = 4096
"""The Ù answers :func:`_partition` keeps, least recently used out: about 175 bytes each, 0.7 MiB at
the cap (65,536 were 11 MiB). A hand asks some fifty new ones and another hand's are seldom asked
again (random 4-player games: 5 % of the calls found one), so a small cache loses nothing."""


@lru_cache(maxsize=PARTITIONS)
def _partition(mask: int, eaten: int, skip: bool) -> bool:
    if not mask:
        return True
    low = mask & -mask
    c = low.bit_length() - 1
    if skip and not (eaten & low) and _partition(mask ^ low, eaten, False):
        return True
    for p in FROM_LOWEST[c]:
        if p & mask == p:
            e = p & eaten
            if (e & (e - 1)) == 0 and _partition(mask & ~p, eaten & ~p, skip):
                return True
    return False


def u_kind(hand: int, eaten: int) -> str | None:
    """PH-R25: ``"tron"`` if the hand is a cover-compatible partition into phỏm, ``"thuong"`` if
    it is one after leaving out one non-eaten card, else ``None``."""
    if _partition(hand, eaten, False):
        return "tron"
    if _partition(hand, eaten, True):
        return "thuong"
    return None


def is_tron(hand: int, eaten: int) -> bool:
    """The whole hand partitions into phỏm with at most one eaten card each."""
    return _partition(hand, eaten, False)


def has_ca(hand: int) -> bool:
    """Some two cards form a cạ: same rank, or same suit with ranks 1 or 2 apart (no A–K wrap)."""
    m = hand
    while m:
        low = m & -m
        c = low.bit_length() - 1
        m ^= low
        r = c >> 2
        if hand & (0xF << (r * 4)) & ~low:
            return True
        if hand & ((1 << (c + 4)) | (1 << (c + 8))):
            return True
    return False


def is_ca(a: int, b: int) -> bool:
    """Two cards form a cạ (ngang or dọc)."""
    return has_ca((1 << a) | (1 << b)) and a != b


def is_u_khan(hand: int) -> bool:
    """Ù khan (PH-R11): the dealt hand holds no cạ at all."""
    return not has_ca(hand)


def phom_in(hand: int, eaten: int) -> Iterator[int]:
    """Every phỏm made of ``hand`` cards with at most one eaten card, as masks."""
    m = hand
    while m:
        low = m & -m
        c = low.bit_length() - 1
        m ^= low
        for p in FROM_LOWEST[c]:
            if p & hand == p:
                e = p & eaten
                if (e & (e - 1)) == 0:
                    yield p


def extensions(meld: int) -> int:
    """The cards that could be sent (gửi) to a laid phỏm: the missing suit of a 3-set, or the
    cards just below and above a run."""
    cs = cards_of(meld)
    lo, hi = cs[0], cs[-1]
    if lo >> 2 == hi >> 2:
        return 0 if len(cs) >= 4 else (0xF << ((lo >> 2) * 4)) & ~meld
    out = 0
    if lo >= 4:
        out |= 1 << (lo - 4)
    if hi + 4 < 52:
        out |= 1 << (hi + 4)
    return out


def is_run(meld: int) -> bool:
    """A phỏm dọc (run), not a set."""
    cs = cards_of(meld)
    return cs[0] >> 2 != cs[-1] >> 2


# ---------------------------------------------------------------- auto-lay and auto-sort


def auto_lay(hand: int, eaten: int) -> list[int]:
    """PH-R28: for each eaten card (lowest first) the phỏm with the highest point total, a run
    before a set on equal points, keeping the other eaten cards coverable."""
    chosen: list[int] = []
    avail = hand
    todo = cards_of(eaten)
    for i, e in enumerate(todo):
        bit = 1 << e
        rest = mask_of(todo[i + 1 :])
        best: tuple[int, int, int] | None = None
        for p in phom_in(avail, eaten):
            if not p & bit or p & rest:
                continue
            if not has_cover(avail & ~p, rest):
                continue
            key = (points(p), 1 if is_run(p) else 0, -p)
            if best is None or key > best:
                best = key
        if best is None:
            continue
        chosen.append(-best[2])
        avail &= ~-best[2]
    return chosen


def _packings(mask: int, eaten: int) -> Iterator[list[int]]:
    if not mask:
        yield []
        return
    low = mask & -mask
    c = low.bit_length() - 1
    for rest in _packings(mask ^ low, eaten):
        yield rest
    for p in FROM_LOWEST[c]:
        if p & mask == p:
            e = p & eaten
            if (e & (e - 1)) == 0:
                for rest in _packings(mask & ~p, eaten):
                    yield [p, *rest]


def sort_hand(hand: int, eaten: int) -> list[int]:
    """PH-R27 auto-sort: eaten phỏm, natural phỏm, cạ ngang pairs, cạ dọc pairs, single cards."""
    best: tuple[int, int, int, list[list[int]]] | None = None
    best_pack: list[int] = []
    for pack in _packings(hand, eaten):
        used = 0
        for p in pack:
            used |= p
        key = (
            -bin(used & eaten).count("1"),
            points(hand & ~used),
            -bin(used).count("1"),
            sorted(cards_of(p) for p in pack),
        )
        if best is None or key < best:
            best, best_pack = key, pack
    eaten_ph = sorted((p for p in best_pack if p & eaten), key=lambda p: cards_of(p)[0])
    natural = sorted((p for p in best_pack if not p & eaten), key=lambda p: cards_of(p)[0])
    out: list[int] = []
    for p in (*eaten_ph, *natural):
        out.extend(cards_of(p))
    rest = [c for c in cards_of(hand) if c not in out]
    pairs_n: list[int] = []
    left: list[int] = []
    for c in rest:
        if c in pairs_n:
            continue
        mate = next((d for d in rest if d > c and d >> 2 == c >> 2 and d not in pairs_n), None)
        if mate is None:
            left.append(c)
        else:
            pairs_n.extend((c, mate))
    pairs_d: list[int] = []
    singles: list[int] = []
    for c in left:
        if c in pairs_d:
            continue
        mate = next(
            (d for d in (c + 4, c + 8) if d in left and d not in pairs_d), None
        )
        if mate is None:
            singles.append(c)
        else:
            pairs_d.extend((c, mate))
    return out + pairs_n + pairs_d + singles
