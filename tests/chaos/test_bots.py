"""The chaos run's coin players: each sits at two or three coin tables at once, every coin room
has several of them, every two of them meet in some room (the screen sees each one win and lose
against several opponents), and the stake lets two hands' reservations fit in the welcome bonus
and not a third; the players' client addresses are spread as real players' are."""

from __future__ import annotations

from collections import Counter
from itertools import combinations

from chieu.games import registry
from chieu.kit.settings import Settings
from chieu_tools.chaos.bots import ROOM_OPTIONS, Group, address, coin_stake, room_id, room_players, rooms, rooms_of
from chieu_tools.chaos.run import FULL, LONG_COIN, SHORT, WELCOME, groups, service_env


def test_coin_players_sit_at_several_rooms_and_meet_every_other() -> None:
    (g,) = [g for g in SHORT if g.kind == "coins"]
    seats = [rooms_of(g, i) for i in range(g.players)]
    assert all(2 <= len(set(s)) == len(s) <= 3 for s in seats)
    assert all(room_players(g, n) >= 3 for n in range(g.tables))
    for a, b in combinations(range(g.players), 2):
        assert set(seats[a]) & set(seats[b]), (a, b)
    assert {r.room_id for r in rooms([g])} == {room_id(g.game, "coins", n) for n in range(g.tables)} | {
        room_id(g.game, "points")}
    assert rooms_of(Group("xiangqi", "ladder", 2), 1) == [0]


def test_two_reservations_fit_in_the_welcome_and_a_third_does_not() -> None:
    assert Settings().welcome_coins == WELCOME
    (g,) = [g for g in SHORT if g.kind == "coins"]
    d = registry.descriptor(g.game)
    assert d.max_loss is not None
    hand = d.max_loss(registry.get(g.game).parse_options(ROOM_OPTIONS[g.game]), 3) * g.stake
    assert 2 * hand <= WELCOME < 3 * hand
    assert coin_stake(1, 200) == 10 and coin_stake(10_000, 200) == 1
    stakes = service_env(FULL)["CHIEU_COIN_STAKES"].split(",")
    assert {str(x.stake) for x in FULL if x.kind == "coins"} <= set(stakes) and {"1", "10", "100"} <= set(stakes)


def test_addresses_are_spread_and_within_the_cafe_rules() -> None:
    names = [f"{g.game[:6]}{g.kind[:2]}{i}" for g in FULL for i in range(g.players)]
    by = Counter(address(26, n) for n in names)
    assert len(by) >= len(names) // 3
    assert max(by.values()) <= Settings().lobby_new_players_per_address
    assert address(26, names[0]) == address(26, names[0])


def test_a_long_run_has_more_coin_players_in_more_rooms() -> None:
    assert groups(False, 3) == SHORT and groups(True, 3) == FULL
    (g,) = [g for g in groups(False, 35) if g.kind == "coins"]
    assert (g.players, g.tables) == LONG_COIN and g.stake == 2
    assert all(room_players(g, n) >= 3 for n in range(g.tables))
