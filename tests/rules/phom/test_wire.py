"""A real Phỏm game's events, commands and views survive the protobuf codec unchanged."""

from __future__ import annotations

from chieu.games.phom.game import GAME
from chieu.tablelog import codec
from tests.rules.phom.randgame import random_game


def test_a_real_game_round_trips_through_protobuf() -> None:
    opts = GAME.parse_options({"ga": True})
    for i in range(6):
        state, log, played = random_game(bytes([i, 7]), 2 + i % 3, opts, timeout_rate=50,
                                         accuse_rate=10)
        for obj in [*log, *(c for _, c in played if c is not None)]:
            assert codec.unpack(codec.pack(obj, "phom"), "phom") == obj
        for seat in [None, *range(state.players)]:
            view = GAME.view(state, seat)
            assert codec.unpack(codec.pack(view, "phom"), "phom") == view
