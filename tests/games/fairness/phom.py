"""Phỏm's deal as docs/fairness.md states it, from the page alone."""

from __future__ import annotations

from typing import Any

from tests.games.fairness.page import FromTheDoc, Spec, Vector


def deal(page: FromTheDoc, n: int, owner: int, previous_winner: int | None) -> dict[str, Any]:
    ranks = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"]

    def name(c: int) -> str:
        return ranks[c // 4] + "♠♣♦♥"[c % 4]

    deck = page.stream("deal").shuffle(range(52))
    dealer = owner if previous_winner is None else previous_winner
    hands: list[list[int]] = [[] for _ in range(n)]
    pos = 0
    for _ in range(9):
        for i in range(n):
            hands[(owner + i) % n].append(deck[pos])
            pos += 1
    hands[dealer].append(deck[pos])
    pos += 1
    stock, unused = deck[pos:pos + 4 * n - 1], deck[pos + 4 * n - 1:]
    discard = page.choice(sorted(hands[dealer]), "timeout:0")  # the dealer's first turn: nothing eaten
    return {"dealer": dealer, "hands": [[name(c) for c in h] for h in hands],
            "stock": [name(c) for c in stock], "unused": [name(c) for c in unused],
            "timeout_0": {"seat": dealer, "discard": name(discard)}}


def check(name: str, v: Vector, spec: Spec) -> None:
    """The page's vector `<key>-<name>`, derived from the page alone (spec: its seeds for n players)."""
    winner = (v["previous"] or {}).get("winner")
    got = deal(spec(v["players"]), v["players"], v["owner"], winner)
    assert got == {k: v[k] for k in got}
