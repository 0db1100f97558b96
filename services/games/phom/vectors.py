"""Phỏm's vectors of docs/fairness.md: the deal, the dealer and its first turn timed out
(labels ``deal`` and ``timeout:<k>``), from the code on the page's fixed seeds."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from chieu.games.fairness import Vector, setup
from chieu.games.phom.game import GAME
from chieu.games.phom.model import Dealt, Discarded


def hand(players: int, owner: int, previous: Mapping[str, Any] | None) -> Vector:
    """A hand of ``players`` at a table owned by seat ``owner``, after ``previous`` (or none)."""

    def vector() -> dict[str, Any]:
        su = setup(GAME, players, owner=owner, previous=previous)
        events = list(GAME.start(su))
        dealt = events[0]
        assert isinstance(dealt, Dealt)
        hands = {h.seat: list(h.cards) for h in dealt.hands}
        out: dict[str, Any] = {"players": players, "owner": owner,
                               "previous": None if previous is None else dict(previous), "dealer": dealt.dealer,
                               "hands": [hands[i] for i in range(players)], "stock": list(dealt.stock),
                               "unused": list(dealt.unused)}
        # the dealer's first turn runs out: the Ù window closes, then the turn itself times out
        state = GAME.initial(su.options, players)
        for e in events:
            state = GAME.evolve(state, e)
        timed: list[Any] = []
        for _ in range(2):
            timed = list(GAME.on_timeout(state, dealt.dealer, 0))
            for e in timed:
                state = GAME.evolve(state, e)
        discard = next(e for e in timed if isinstance(e, Discarded))
        out["timeout_0"] = {"seat": discard.seat, "discard": discard.card}
        return out

    return vector


VECTORS: dict[str, Vector] = {"4": hand(4, 0, None), "3": hand(3, 1, {"winner": 2, "first": 0})}
