"""洪洞王牌麻将's deal and wild tiles as docs/fairness.md states them, from the page alone."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tests.games.fairness.page import FromTheDoc, Spec, Vector

KINDS = [f"{i}{s}" for s in "msp" for i in range(1, 10)] + ["E", "S", "W", "N", "中", "发", "白", "王"]


def successor(k: int) -> int:
    if k < 27:
        return k // 9 * 9 + (k % 9 + 1) % 9
    if k < 31:
        return 27 + (k - 27 + 1) % 4
    return 31 + (k - 31 + 1) % 3


def deal(page: FromTheDoc, n: int, mode: str) -> dict[str, Any]:
    dealer = page.choice(range(n), "dealer")
    wall = page.stream("deal").shuffle([k for k in range(34) for _ in range(4)])
    set_aside: list[int] = []
    if mode == "一支王":
        set_aside, wall = wall[:n], wall[n:]
    hands: list[list[int]] = [[] for _ in range(n)]
    for i in range(n):
        seat = (dealer + i) % n
        take = (14 if seat == dealer else 13) - (mode == "一支王")
        hands[seat], wall = wall[:take], wall[take:]
        if mode == "一支王":
            hands[seat].append(34)
    indicator, laizi = -1, [-1] * n
    if mode in ("普通", "色牌"):
        indicator = wall[-1]
        laizi = [successor(indicator)] * n
    elif mode == "一支王":
        laizi = [34] * n
    elif mode == "小手王":
        laizi = [page.choice(sorted(hands[i]), f"xiaoshouwang:{i}") for i in range(n)]
    elif mode == "大将王黑风报":
        for i in range(n):
            held = [hands[i].count(d) for d in (31, 32, 33)]
            tied = [d for d, c in zip((31, 32, 33), held, strict=True) if c == max(held)]
            laizi[i] = tied[0] if len(tied) == 1 else page.choice(tied, f"djw:{i}:0")

    def names(kinds: Sequence[int]) -> list[str]:
        return [KINDS[k] for k in kinds]

    return {"dealer": dealer, "set_aside": names(set_aside), "hands": [names(sorted(h)) for h in hands],
            "wall": names(wall), "indicator": "" if indicator < 0 else KINDS[indicator],
            "laizi": ["" if k < 0 else KINDS[k] for k in laizi]}


def check(name: str, v: Vector, spec: Spec) -> None:
    """The page's vector `<key>-<name>`, derived from the page alone (spec: its seeds for n players)."""
    got = deal(spec(v["players"]), v["players"], v["options"]["laiziMode"])
    assert {k: got[k] for k in v if k in got} == {k: v[k] for k in v if k in got}
