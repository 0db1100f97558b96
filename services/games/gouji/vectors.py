"""够级's vectors of docs/fairness.md: the deal of six, 上班 and a 革命 redeal (labels ``deal``
and ``redeal:<n>``), from the code on the page's fixed seeds."""

from __future__ import annotations

from typing import Any

from chieu.games.fairness import Vector, material, setup
from chieu.games.gouji import cards
from chieu.games.gouji.game import GAME
from chieu.games.gouji.model import Dealt


def _counts(hand: tuple[str, ...]) -> list[int]:
    return list(cards.to_counts(cards.parse_cards(hand)))


def six() -> dict[str, Any]:
    """A hand of six: each seat's cards as counts per rank, who leads, and the first redeal."""
    dealt = GAME.start(setup(GAME, 6))[0]
    shangban_led = GAME.start(setup(GAME, 6, {"firstLeader": "shangban"}))[0]
    assert isinstance(dealt, Dealt) and isinstance(shangban_led, Dealt)
    _, shangban = cards.deal(material(6), "deal", 6)
    redeal, _ = cards.deal(material(6), "redeal:1", 6)
    return {"players": 6, "counts": [_counts(h.cards) for h in dealt.hands], "shangban": shangban,
            "first": dealt.first, "first_with_shangban": shangban_led.first, "redeal_1": [list(c) for c in redeal]}


VECTORS: dict[str, Vector] = {"6": six}
