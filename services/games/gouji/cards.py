"""Cards and sets (一套牌) of 够级: §2.1–2.3 of shared/rules/gouji.md.

Suits never matter after the deal, so a hand is a tuple of 15 counts indexed by rank:
``3 4 5 6 7 8 9 10 J Q K A`` (0–11), ``2`` (12), ``SJ`` 小王 (13), ``BJ`` 大王 (14). A set is
written as a tuple of card names (``("10", "10", "2")``); 贴钱 (2s) count as the base rank,
挂花 (jokers) keep their own rank. Also the deal from seed material (suits decide 上班 only).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from chieu.games import fair

NAMES = ("3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A", "2", "SJ", "BJ")
RANK = {n: i for i, n in enumerate(NAMES)}
TEN, JACK, QUEEN, KING, ACE, TWO, SJ, BJ = 7, 8, 9, 10, 11, 12, 13, 14
NRANKS = 15
DECK: tuple[int, ...] = (16,) * 13 + (4, 4)
"""Four decks: 16 of each rank 3…2, four 小王 and four 大王 (216 cards)."""

Counts = tuple[int, ...]
_EMPTY: Counts = (0,) * NRANKS

# 够级牌 thresholds by base rank: 10 ≥5, J ≥4, Q ≥3, K ≥2, A ≥2, 2 ≥1 (§2.2.4).
_GOUJI_MIN = {TEN: 5, JACK: 4, QUEEN: 3, KING: 2, ACE: 2, TWO: 1}


def parse_cards(text: str | Iterable[str]) -> tuple[int, ...]:
    """Rank indices from ``"10 10 2"`` or ``["10", "10", "2"]``; raises ``ValueError``."""
    items = text.split() if isinstance(text, str) else list(text)
    out = []
    for item in items:
        name = str(item).strip().upper()
        if name not in RANK:
            raise ValueError(f"no card {item!r}; cards are {' '.join(NAMES)}")
        out.append(RANK[name])
    return tuple(out)


def names(ranks: Iterable[int]) -> tuple[str, ...]:
    """Card names, highest first."""
    return tuple(NAMES[r] for r in sorted(ranks, reverse=True))


def to_counts(ranks: Iterable[int]) -> Counts:
    """A count vector from rank indices."""
    c = [0] * NRANKS
    for r in ranks:
        c[r] += 1
    return tuple(c)


def from_counts(counts: Counts) -> tuple[int, ...]:
    """Rank indices, highest first."""
    return tuple(r for r in range(NRANKS - 1, -1, -1) for _ in range(counts[r]))


def sub(a: Counts, b: Counts) -> Counts:
    """``a − b`` (the caller checks ``contains``)."""
    return tuple(x - y for x, y in zip(a, b, strict=True))


def add(a: Counts, b: Counts) -> Counts:
    return tuple(x + y for x, y in zip(a, b, strict=True))


def contains(hand: Counts, cards: Counts) -> bool:
    return all(h >= c for h, c in zip(hand, cards, strict=True))


def base_rank(counts: Counts) -> int | None:
    """The set's base rank (0–11, or 12 when it has only 2s/jokers), ``None`` if not a set.

    A set is one ordinary rank plus any 2s (贴钱) and jokers (挂花); a joker-only set has
    base = its lowest joker.
    """
    ordinary = [r for r in range(TWO) if counts[r]]
    if len(ordinary) > 1 or sum(counts) == 0:
        return None
    if ordinary:
        return ordinary[0]
    if counts[TWO]:
        return TWO
    return SJ if counts[SJ] else BJ


def key(counts: Counts) -> tuple[int, ...]:
    """Effective ranks, highest first: 2s become the base rank, jokers stay (§2.3)."""
    b = base_rank(counts)
    if b is None:
        raise ValueError("not a set")
    plain = counts[TWO] + (counts[b] if b < TWO else 0)
    return (BJ,) * counts[BJ] + (SJ,) * counts[SJ] + (min(b, TWO),) * plain


def is_set(counts: Counts) -> bool:
    return base_rank(counts) is not None


def is_gouji(counts: Counts) -> bool:
    """够级牌: any joker, or base rank and size reaching the thresholds (§2.2.4)."""
    if counts[SJ] or counts[BJ]:
        return True
    b = base_rank(counts)
    if b is None:
        return False
    need = _GOUJI_MIN.get(b)
    size = counts[TWO] + (counts[b] if b < TWO else 0)
    return need is not None and size >= need


def beats_key(new: Sequence[int], old: Sequence[int]) -> bool:
    """Same size and every position strictly higher (both sorted highest first)."""
    return len(new) == len(old) and all(n > o for n, o in zip(new, old, strict=True))


def beats(new: Counts, old: Counts) -> bool:
    """Whether set ``new`` beats set ``old`` (§2.3)."""
    return is_set(new) and is_set(old) and beats_key(key(new), key(old))


def classify(cards: str | Sequence[str]) -> str:
    """``gouji``, ``plain`` or ``invalid`` (a scenario query, GJ-1)."""
    c = to_counts(parse_cards(cards))
    if not is_set(c):
        return "invalid"
    return "gouji" if is_gouji(c) else "plain"


def can_beat(top: str | Sequence[str], answer: str | Sequence[str]) -> bool:
    """Whether ``answer`` beats ``top`` (a scenario query, GJ-2/3/5)."""
    return beats(to_counts(parse_cards(answer)), to_counts(parse_cards(top)))


def burn_ok(rest: Counts) -> bool:
    """捎牌 precondition on the cards left: ``jokers ≥ R − 1`` (§2.4.5).

    R is the number of distinct ranks 3…A left; 2s attach to any set (only 2s left: R = 1).
    A single set (R ≤ 1) or nothing always qualifies.
    """
    r = sum(1 for i in range(TWO) if rest[i])
    if r == 0 and rest[TWO]:
        r = 1
    return rest[SJ] + rest[BJ] >= r - 1


def revolution_ok(hand: Counts) -> bool:
    """革命 eligibility: the highest card is below a 2 (no 2s, no jokers)."""
    return sum(hand) > 0 and hand[TWO] + hand[SJ] + hand[BJ] == 0


def deal(seed: bytes, label: str, seats: int) -> tuple[list[Counts], int | None]:
    """The four decks dealt round to ``seats`` seats (six: 36 cards each) from the seed material
    under ``label`` (``deal``, ``redeal:<n>``), and the 上班 seat (first seat dealt a second
    identical 3, by suit; ``None`` if nobody)."""
    order = fair.shuffled(seed, range(sum(DECK)), label)
    hands: list[list[int]] = [[] for _ in range(seats)]
    shangban: int | None = None
    threes: list[set[int]] = [set() for _ in range(seats)]
    for i, card in enumerate(order):
        seat = i % seats
        k = card % 54
        rank = k // 4 if k < 52 else (SJ if k == 52 else BJ)
        hands[seat].append(rank)
        if k < 4 and shangban is None:
            if k in threes[seat]:
                shangban = seat
            threes[seat].add(k)
    return [to_counts(h) for h in hands], shangban


def _make(base: int, n: int, twos: int, sj: int, bj: int) -> Counts:
    c = list(_EMPTY)
    if n:
        c[base] = n
    c[TWO] += twos
    c[SJ] = sj
    c[BJ] = bj
    return tuple(c)


def all_sets(hand: Counts) -> Iterator[Counts]:
    """Every distinct set the hand can form (for leading)."""
    for bj in range(hand[BJ] + 1):
        for sj in range(hand[SJ] + 1):
            for twos in range(hand[TWO] + 1):
                if bj or sj or twos:
                    yield _make(0, 0, twos, sj, bj)
                for base in range(TWO):
                    for n in range(1, hand[base] + 1):
                        yield _make(base, n, twos, sj, bj)


def answers(hand: Counts, top: Sequence[int]) -> Iterator[Counts]:
    """Every distinct set of the hand that beats the set with key ``top`` (sorted high first).

    With ``bj`` 大王 and ``sj`` 小王 on top positions, the rest (``m`` cards of one effective
    rank ``r``) must beat ``top[bj + sj]``: the sort order makes that the only check needed.
    """
    k = len(top)
    for bj in range(min(hand[BJ], k) + 1):
        if bj and top[0] >= BJ:
            break
        for sj in range(min(hand[SJ], k - bj) + 1):
            if sj and top[bj] >= SJ:
                break
            m = k - bj - sj
            if m == 0:
                yield _make(0, 0, 0, sj, bj)
                continue
            floor = top[bj + sj]
            if floor >= TWO:
                continue
            if hand[TWO] >= m:
                yield _make(0, 0, m, sj, bj)
            for base in range(floor + 1, TWO):
                have = hand[base]
                if have == 0 or have + hand[TWO] < m:
                    continue
                for n in range(max(1, m - hand[TWO]), min(have, m) + 1):
                    yield _make(base, n, m - n, sj, bj)
