"""Tiles of 洪洞王牌麻将: kinds 0..33 plus the faceless 王 (一支王 joker), and their notation.

Kinds in tile order (万 < 条 < 筒 < winds < dragons): ``0..8`` = 1m..9m (万, characters),
``9..17`` = 1s..9s (条, bamboos), ``18..26`` = 1p..9p (筒, dots), ``27..30`` = E S W N
(东南西北, winds), ``31..33`` = 中 发 白 (dragons), ``34`` = 王 (the faceless joker).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

WANG = 34
KINDS = 35
EAST, NORTH = 27, 30
ZHONG, FA, BAI = 31, 32, 33
DRAGONS = (ZHONG, FA, BAI)
WINDS = (27, 28, 29, 30)

_NAMES = (
    [f"{n}m" for n in range(1, 10)]
    + [f"{n}s" for n in range(1, 10)]
    + [f"{n}p" for n in range(1, 10)]
    + ["E", "S", "W", "N", "中", "发", "白", "王"]
)
_ALIASES = {"C": ZHONG, "F": FA, "P": BAI, "Z": ZHONG, "J": WANG, "红中": ZHONG, "發": FA}
_BY_NAME = {name: i for i, name in enumerate(_NAMES)} | _ALIASES


def name(kind: int) -> str:
    """The notation of a kind (``5s``, ``E``, ``中``, ``王``)."""
    return _NAMES[kind]


def kind(text: str) -> int:
    """The kind written ``text``; ``(L)`` laizi marks are ignored. Raises ``ValueError``."""
    t = text.strip().replace("(L)", "")
    if t not in _BY_NAME:
        raise ValueError(f"not a tile: {text!r}")
    return _BY_NAME[t]


def maybe_name(kind: int) -> str:
    """The notation of a kind, ``""`` for none (-1): a laizi or indicator that may be absent."""
    return "" if kind < 0 else _NAMES[kind]


def maybe_kind(text: str) -> int:
    """The kind written ``text``, -1 for ``""``."""
    return kind(text) if text else -1


def parse(text: str | Sequence[str]) -> list[int]:
    """Kinds of ``"1m 2m 中 5s(L)"`` (or a list of names)."""
    items = text.split() if isinstance(text, str) else list(text)
    return [kind(str(t)) for t in items]


def names(kinds: Iterable[int]) -> tuple[str, ...]:
    """The notation of each kind."""
    return tuple(_NAMES[k] for k in kinds)


def suit(kind: int) -> int:
    """0 万, 1 条, 2 筒; -1 for honours and 王."""
    return kind // 9 if kind < 27 else -1


def is_honour(kind: int) -> bool:
    """Winds and dragons (字牌)."""
    return 27 <= kind <= 33


def successor(indicator: int) -> int:
    """The laizi kind shown by an indicator (普通/色牌): 1→2…9→1 per suit, E→S→W→N→E, 中→发→白→中."""
    if indicator < 27:
        return indicator // 9 * 9 + (indicator % 9 + 1) % 9
    if indicator <= NORTH:
        return EAST + (indicator - EAST + 1) % 4
    if indicator <= BAI:
        return ZHONG + (indicator - ZHONG + 1) % 3
    raise ValueError("王 has no successor")


def full_set() -> list[int]:
    """The 136 ordinary tiles, four of each of the 34 kinds, in kind order."""
    return [k for k in range(34) for _ in range(4)]


def counts(kinds: Iterable[int]) -> list[int]:
    """A 35-long count vector."""
    c = [0] * KINDS
    for k in kinds:
        c[k] += 1
    return c


def add(hand: tuple[int, ...], k: int) -> tuple[int, ...]:
    """A sorted hand with ``k`` added."""
    return tuple(sorted((*hand, k)))


def remove(hand: tuple[int, ...], k: int, n: int = 1) -> tuple[int, ...]:
    """A hand with ``n`` copies of ``k`` taken out (``ValueError`` if it holds fewer)."""
    out = list(hand)
    for _ in range(n):
        out.remove(k)
    return tuple(out)
