"""Ô ăn quan's first player as docs/fairness.md states it, from the page alone."""

from __future__ import annotations

from tests.games.fairness.page import Spec, Vector


def check(name: str, v: Vector, spec: Spec) -> None:
    """The page's vector `<key>-<name>`, derived from the page alone (spec: its seeds for n players)."""
    assert spec(2).choice((0, 1), "first_player") == v["first"]
