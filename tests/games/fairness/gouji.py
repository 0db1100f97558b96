"""够级's deal and 上班 as docs/fairness.md states them, from the page alone."""

from __future__ import annotations

from tests.games.fairness.page import FromTheDoc, Spec, Vector


def deal(page: FromTheDoc, label: str) -> tuple[list[list[int]], int | None]:
    order = page.stream(label).shuffle(range(216))
    counts = [[0] * 15 for _ in range(6)]
    threes: list[set[int]] = [set() for _ in range(6)]
    shangban = None
    for i, c in enumerate(order):
        seat, k = i % 6, c % 54
        counts[seat][k // 4 if k < 52 else 13 if k == 52 else 14] += 1
        if k < 4 and shangban is None:
            if k in threes[seat]:
                shangban = seat
            threes[seat].add(k)
    return counts, shangban


def check(name: str, v: Vector, spec: Spec) -> None:
    """The page's vector `<key>-<name>`, derived from the page alone (spec: its seeds for n players)."""
    s = spec(6)
    counts, shangban = deal(s, "deal")
    assert (counts, shangban) == (v["counts"], v["shangban"])
    assert v["first"] == 0, "the owner (seat 0) leads the first hand with seat-rotation"
    assert v["first_with_shangban"] == shangban
    assert deal(s, "redeal:1")[0] == v["redeal_1"]
