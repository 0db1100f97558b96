"""The end of a hand shows what the rules show (issue 34): once a hand is over, every game view —
a player's and a spectator's alike — lays open what the rules lay open, so anyone can check the
scores: Phỏm's remaining cards (the laid phỏm are the view's melds), mahjong's concealed hands and
the wall's end, dominoes' remaining tiles, 够级's remaining cards. Each game is played to its end
over gRPC by random choices among what the views offer."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pytest

from chieu.games import registry
from chieu.kit.settings import Settings
from chieu.table.client import TableClient, game_view
from chieu.table.v1 import table_service_pb2 as pb
from tests.table.helpers import client
from tests.table.test_ruleless_client import PLAYERS, SHORT, entries

pytestmark = pytest.mark.integration


async def _played(settings: Settings, addr: str, key: str) -> tuple[list[Any], Any, list[Any]]:
    """Every player's game view and a spectator's, during the hand (the last before its end) and after."""
    n = PLAYERS.get(key, registry.get(key).min_players)
    names = [f"{key}-end{i}" for i in range(n)]
    players: dict[str, TableClient] = {p: client(settings, addr, p) for p in names}
    spectator = client(settings, addr, f"{key}-end-fan")
    rng = random.Random(f"end-{key}")
    try:
        table_id = (await players[names[0]].create(key, SHORT.get(key, {}))).table_id
        for p in names[1:]:
            await players[p].sit(table_id)
        hand = (await players[names[0]].start(table_id)).hand_no
        during = game_view(await spectator.get(table_id))
        for _ in range(3000):
            views = {p: await c.get(table_id) for p, c in players.items()}
            if any(v.status != pb.TABLE_STATUS_PLAYING or v.hand_no != hand for v in views.values()):
                break
            during = game_view(await spectator.get(table_id))
            player, entry = rng.choice([(p, e) for p, v in views.items() for e in entries(key, game_view(v))])
            await players[player].act(table_id, key, entry)
        else:
            raise AssertionError(f"{key}: no end")
        ends = []
        for p in names:
            v = await players[p].get(table_id)
            ends.append((v.hand_seat, game_view(v)))
        fan = await spectator.get(table_id)
        assert fan.status != pb.TABLE_STATUS_PLAYING
        return ends, game_view(fan), [during]
    finally:
        for c in (*players.values(), spectator):
            await c.close()


async def test_phom_lays_open_the_remaining_cards(settings: Settings, table_server: str) -> None:
    ends, fan, during = await _played(settings, table_server, "phom")
    assert all(s.shown == () for s in during[0].seats)  # hidden while the hand runs
    for view in (fan, *(v for _, v in ends)):
        assert [len(s.shown) for s in view.seats] == [s.cards for s in view.seats]
    for seat, view in ends:  # a player's own cards are the ones shown for its seat
        assert sorted(view.seats[seat].shown) == sorted(view.hand)
        assert view.seats == fan.seats
    every = [c for s in fan.seats for c in s.shown] + [c for m in fan.melds for c in m.cards]
    assert len(every) == len(set(every))  # no card shown twice: remaining and laid are apart


async def test_mahjong_lays_open_the_hands_and_the_walls_end(settings: Settings, table_server: str) -> None:
    ends, fan, during = await _played(settings, table_server, "mahjong")
    assert all(p.concealed == () for p in during[0].players) and during[0].wall_left == ()
    assert len(fan.wall_left) == fan.wall_count
    for view in (fan, *(v for _, v in ends)):
        assert [len(p.concealed) for p in view.players] == [p.concealed_count for p in view.players]
        assert view.wall_left == fan.wall_left
    for seat, view in ends:
        assert Counter(view.players[seat].concealed) == Counter(view.hand)
        assert view.players == fan.players or all(  # a seat's own laizi may be shown to itself only
            a.concealed == b.concealed for a, b in zip(view.players, fan.players, strict=True))


async def test_dominoes_lays_open_the_remaining_tiles(settings: Settings, table_server: str) -> None:
    ends, fan, during = await _played(settings, table_server, "dominoes")
    assert during[0].revealed == ()
    assert [len(h.tiles) for h in fan.revealed] == list(fan.counts)
    for seat, view in ends:
        assert view.revealed == fan.revealed and list(view.revealed[seat].tiles) == list(view.hand)


async def test_gouji_lays_open_the_remaining_cards(settings: Settings, table_server: str) -> None:
    ends, fan, during = await _played(settings, table_server, "gouji")
    assert during[0].revealed == ()
    assert [s.seat for s in fan.revealed] == list(range(6))
    for seat, view in ends:
        assert view.revealed == fan.revealed
        assert Counter(view.revealed[seat].cards) == Counter(view.hand)
