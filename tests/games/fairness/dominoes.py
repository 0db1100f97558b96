"""Đô Mi Nô's deal as docs/fairness.md states it, from the page alone."""

from __future__ import annotations

from typing import Any

from tests.games.fairness.page import FromTheDoc, Spec, Vector


def deal(page: FromTheDoc, n: int) -> dict[str, Any]:
    tiles = [f"[{a}|{b}]" for a in range(7) for b in range(a, 7)]
    deck = page.stream("deal").shuffle(tiles)
    return {"leader": page.choice(range(n), "leader"), "hands": [deck[7 * i:7 * i + 7] for i in range(n)],
            "boneyard": deck[7 * n:]}


def check(name: str, v: Vector, spec: Spec) -> None:
    """The page's vector `<key>-<name>`, derived from the page alone (spec: its seeds for n players)."""
    got = deal(spec(v["players"]), v["players"])
    assert got == {k: v[k] for k in got}
