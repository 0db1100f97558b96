"""Given–When–Then tests of the 洪洞王牌麻将 turn flow: claims, gangs, 报听, 荒庄, modes, views."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from chieu.games.core import BadOptions, IllegalMove, Setup, Transfer
from chieu.games.mahjong import GAME
from chieu.games.mahjong.model import (
    ChoosePair,
    ClaimAnswered,
    ClaimOpened,
    Discarded,
    Drew,
    Ganged,
    HandDrawn,
    MeldType,
    PairChosen,
    Penged,
    State,
    TurnStarted,
    Won,
)
from chieu.games.mahjong.scenario import describe, parse_command, position


def given(spec: Mapping[str, Any], options: Mapping[str, Any] | None = None, players: int = 4) -> State:
    o = GAME.parse_options({"LAIZI_MODE": "普通", **(options or {})})
    s = GAME.initial(o, players)
    for e in position(o, players, spec, 0):
        s = GAME.evolve(s, e)
    return s


def when(s: State, seat: int, cmd: str) -> tuple[State, list[Any]]:
    events = list(GAME.decide(s, seat, parse_command(cmd), 1000))
    for e in events:
        s = GAME.evolve(s, e)
    return s, events


def types(events: Sequence[Any]) -> list[str]:
    return [type(e).__name__ for e in events]


def rejected(s: State, seat: int, cmd: str) -> str:
    with pytest.raises(IllegalMove) as err:
        GAME.decide(s, seat, parse_command(cmd), 1000)
    return err.value.code


# ---------------------------------------------------------------- claims

PENG_POS = {"indicator": "4s", "hands": {
    "A": "E 1m 2m 3m 4m 5m 6m 7m 8m 9m 1p 2p 3p 4p",
    "B": "E E 1s 2s 3s 4s 6s 7s 8s 9s 6p 7p 8p"}}


def test_a_discard_that_can_be_penged_opens_a_claim_window_for_that_seat() -> None:
    s = given(PENG_POS)
    s, events = when(s, 0, "discard E")
    assert types(events) == ["Discarded", "ClaimOpened"]
    assert events[1] == ClaimOpened((1,), "E", 1000 + 10_000)
    assert [(d.seat, d.at_ms) for d in GAME.deadlines(s)] == [(1, 11_000)]
    assert rejected(s, 2, "peng") == "no_claim"
    assert rejected(s, 0, "discard 1m") == "claim_window"


def test_peng_takes_the_tile_and_the_penger_discards_without_drawing() -> None:
    s, _ = when(given(PENG_POS), 0, "discard E")
    s, events = when(s, 1, "peng")
    assert types(events) == ["ClaimAnswered", "Penged"]
    assert describe(s)["melds"][1] == ["peng E"]
    assert s.turn == 1 and s.drawn == -1
    assert rejected(s, 1, "win") == "not_ready"
    s, events = when(s, 1, "discard 9s")
    assert types(events) == ["Discarded", "Drew"] and events[1].seat == 2


def test_a_claim_window_timeout_passes_and_play_goes_on() -> None:
    s, _ = when(given(PENG_POS), 0, "discard E")
    events = list(GAME.on_timeout(s, 1, 12_000))
    assert types(events) == ["TimedOut", "ClaimAnswered", "Drew"]
    assert events[2].seat == 1


def test_declining_a_peng_does_not_forbid_a_later_peng() -> None:
    pos = {**PENG_POS, "hands": {**PENG_POS["hands"], "C": "E 1s 2s 3s 4s 6s 7s 8s 9s 6p 7p 8p 9p"}}
    s, _ = when(given(pos), 0, "discard E")
    s, _ = when(s, 1, "pass")
    s, _ = when(s, 1, f"discard {describe(s)['drawn']}")
    s, events = when(s, 2, "discard E")
    assert types(events)[:2] == ["Discarded", "ClaimOpened"] and events[1].seats == (1,)


def test_ming_gang_draws_a_replacement_and_raises_the_reserve() -> None:
    pos = {"indicator": "4s", "wall": "9p", "hands": {
        "A": "E 1m 2m 3m 4m 5m 6m 7m 8m 9m 1p 2p 3p 4p",
        "B": "E E E 1s 2s 3s 4s 6s 7s 8s 6p 7p"}}
    s, _ = when(given(pos), 0, "discard E")
    before = describe(s)
    s, events = when(s, 1, "gang E")
    assert types(events) == ["ClaimAnswered", "Ganged", "Drew"]
    assert events[1].meld_type is MeldType.MING_GANG and events[2] == Drew(1, "9p", True, "5s", 21_000)
    after = describe(s)
    assert after["reserve"] == before["reserve"] + 1 == 15
    assert after["wall"] == before["wall"] - 1


# ---------------------------------------------------------------- gangs, payments, 荒庄

GANG_WIN = {"indicator": "4s", "wall": "E 9s 8p 6s E", "hands": {
    "A": "9p 9p 9p 9p 1m 2m 3m 4m 5m 6m 7m 8m 9m E"}}


def test_an_gang_pays_two_from_everyone_beside_the_win() -> None:
    s, events = when(given(GANG_WIN), 0, "gang 9p")
    assert types(events) == ["Ganged", "Drew"] and events[0].meld_type is MeldType.AN_GANG
    s, _ = when(s, 0, "ting E")
    assert describe(s)["waits"][0] == "5s E"
    s, _ = when(s, 1, "discard 9s")
    s, _ = when(s, 2, "discard 8p")
    s, events = when(s, 3, "discard 6s")
    assert events[-1] == Drew(0, "E", False, "5s", 21_000)
    s, events = when(s, 0, "win")
    won = events[0]
    assert isinstance(won, Won) and won.total == 11
    assert won.transfers == (
        Transfer(1, 0, 2, "gang_an_gang"), Transfer(2, 0, 2, "gang_an_gang"),
        Transfer(3, 0, 2, "gang_an_gang"),
        Transfer(1, 0, 11, "win"), Transfer(2, 0, 11, "win"), Transfer(3, 0, 11, "win"),
    )
    out = GAME.outcome(s)
    assert out is not None and out.net(4) == (39, -13, -13, -13) and out.winner == 0


def test_dealer_bonus_adds_one_when_the_dealer_wins() -> None:
    s = given(GANG_WIN, {"DEALER_BONUS": 1})
    for seat, cmd in [(0, "gang 9p"), (0, "ting E"), (1, "discard 9s"), (2, "discard 8p"),
                      (3, "discard 6s"), (0, "win")]:
        s, _ = when(s, seat, cmd)
    out = GAME.outcome(s)
    assert out is not None and out.net(4) == (42, -14, -14, -14)


def test_huangzhuang_after_a_gang_cancels_gang_points_and_passes_the_deal() -> None:
    s = given({"indicator": "4s", "wall_count": 16, "wall": "2p",
               "hands": {"A": "9p 9p 9p 9p 1m 2m 3m 4m 5m 6m 7m 8m 9m E"}})
    assert describe(s)["live"] == 2
    s, _ = when(s, 0, "gang 9p")
    assert describe(s)["live"] == 0
    s, events = when(s, 0, "discard E")
    assert events[-1] == HandDrawn(True, 1)
    out = GAME.outcome(s)
    assert out is not None and out.transfers == () and out.winner is None
    assert out.reason == "huangzhuang_gang"
    nxt = GAME.start(Setup(s.options, 4, b"x", 0, previous=out))
    assert nxt[0].dealer == 1


def test_huangzhuang_without_a_gang_keeps_the_dealer_and_a_win_passes_it_to_the_winner() -> None:
    s = given({"indicator": "4s", "wall_count": 15, "dealer": "B", "wall": "N",
               "hands": {"B": "1m 2m 3m 4m 5m 6m 7m 8m 9m 1p 2p 3p 4p E"}})
    assert describe(s)["live"] == 1
    s, _ = when(s, 1, "discard E")
    s, events = when(s, 2, "discard N")
    assert events[-1] == HandDrawn(False, 1)
    out = GAME.outcome(s)
    assert out is not None
    assert GAME.start(Setup(s.options, 4, b"x", 0, previous=out))[0].dealer == 1
    won = given(GANG_WIN)
    for seat, cmd in [(0, "gang 9p"), (0, "ting E"), (1, "discard 9s"), (2, "discard 8p"),
                      (3, "discard 6s"), (0, "win")]:
        won, _ = when(won, seat, cmd)
    out = GAME.outcome(won)
    assert out is not None
    assert GAME.start(Setup(won.options, 4, b"x", 0, previous=out))[0].dealer == 0


def test_the_last_live_discard_may_be_ganged_but_not_penged() -> None:
    base = {"indicator": "4s", "wall_count": 15, "wall": "N",
            "hands": {"A": "1m 2m 3m 4m 5m 6m 7m 8m 9m 1p 2p 3p 4p S"}}
    s, _ = when(given({**base, "hands": {**base["hands"], "C": "N N 1s 2s 3s 4s 5s 6s 7s 8s 9s 9p 8p"}}),
                0, "discard S")
    s, events = when(s, 1, "discard N")
    assert types(events) == ["Discarded", "HandDrawn"]
    s, _ = when(given({**base, "hands": {**base["hands"], "C": "N N N 1s 2s 3s 4s 5s 6s 7s 8s 9s 9p"}}),
                0, "discard S")
    s, events = when(s, 1, "discard N")
    assert types(events) == ["Discarded", "ClaimOpened"]
    assert GAME.legal(s, 2) == [parse_command("pass"), parse_command("gang N")]
    s, events = when(s, 2, "gang N")
    assert types(events) == ["ClaimAnswered", "Ganged", "Drew"] and events[2].replacement
    s, events = when(s, 2, f"discard {describe(s)['drawn']}")
    assert types(events) == ["Discarded", "HandDrawn"]


# ---------------------------------------------------------------- 报听 and 硬扣

def test_after_bao_ting_a_drawn_tile_that_neither_wins_nor_gangs_is_discarded_automatically() -> None:
    s = given({"indicator": "4s", "declared": {"A": "ting"}, "wall": "N", "draw": "A",
               "hands": {"A": "1m 2m 3m 4m 5m 6m 7m 8m 9m E E E 2p"}})
    assert describe(s)["discards"][0] == "N" and s.turn == 1


def test_after_bao_ting_a_gang_is_offered_only_if_the_hand_stays_ready() -> None:
    s = given({"indicator": "4s", "declared": {"A": "ting"}, "wall": "1m", "draw": "A",
               "hands": {"A": "1m 1m 1m 3p 4p 5p 6p 7p 8p E E S S"}})
    assert s.turn == 0 and parse_command("gang 1m") in GAME.legal(s, 0)
    assert rejected(s, 0, "discard 3p") == "hand_frozen"
    s, events = when(s, 0, "gang 1m")
    assert types(events)[:2] == ["Ganged", "Drew"] and events[0].waits == ("5s", "E", "S")
    broken = given({"indicator": "4s", "declared": {"A": "ting"}, "wall": "2m", "draw": "A",
                    "hands": {"A": "1m 2m 2m 2m 3m 5m 5m 6m 6m 7m 6s 7s 8s"}})
    assert describe(broken)["discards"][0] == "2m" and broken.turn == 1


def test_bao_ting_needs_a_ready_hand_and_ying_kou_a_dragon_wait() -> None:
    s = given({"indicator": "4s", "hands": {"A": "1m 2m 3m 4m 5m 6m 7p 7p 7p 中 发 9m 9m N"}})
    assert rejected(s, 0, "ting 1m") == "not_ready"
    legal = GAME.legal(s, 0)
    assert parse_command("ting N") in legal and parse_command("yingkou N") in legal
    plain = given({"indicator": "4s", "hands": {"A": "1m 2m 3m 4m 5m 6m 7p 7p 7p 9m 9m 1p 2p N"}})
    assert rejected(plain, 0, "yingkou N") == "not_ying_kou"
    s, _ = when(plain, 0, "ting N")
    assert describe(s)["declared"][0] == "ting" and describe(s)["waits"][0] == "5s 3p"


def test_ying_kou_wins_only_on_the_dragon() -> None:
    s = given({"indicator": "4s", "declared": {"A": "ying_kou"}, "wall": "9m", "draw": "A",
               "hands": {"A": "1m 2m 3m 4m 5m 6m 中 发 白 7p 7p 7p 9m"}})
    # 9m would complete the hand, but not on a dragon: drawn and discarded automatically
    assert describe(s)["discards"][0] == "9m"


# ---------------------------------------------------------------- 免碰 and the modes

def test_mianpeng_forbids_peng_and_gang_unless_angang_is_allowed() -> None:
    _, events = when(given(PENG_POS, {"MIANPENG": "on"}), 0, "discard E")
    assert types(events) == ["Discarded", "Drew"]
    quad = {"indicator": "4s", "hands": {"A": "9p 9p 9p 9p 1m 2m 3m 4m 5m 6m 7m 8m 9m E"}}
    assert rejected(given(quad, {"MIANPENG": "on"}), 0, "gang 9p") == "cannot_gang"
    _, events = when(given(quad, {"MIANPENG": "on", "MIANPENG_ALLOWS_ANGANG": "on"}), 0, "gang 9p")
    assert types(events) == ["Ganged", "Drew"]


def test_duiwang_pairs_are_chosen_with_a_timeout_on_the_lowest_pair() -> None:
    o = GAME.parse_options({"LAIZI_MODE": "对王大将报"})
    s = GAME.initial(o, 4)
    for e in GAME.start(Setup(o, 4, b"seed-7", 0, first=0)):
        s = GAME.evolve(s, e)
    pending = [d.seat for d in GAME.deadlines(s)]
    assert describe(s)["phase"] == "choose_pair" and pending
    assert all(d.at_ms == 15_000 for d in GAME.deadlines(s))
    first = pending[0]
    pairs = GAME.legal(s, first)
    assert pairs and all(isinstance(c, ChoosePair) for c in pairs)
    events: list[Any] = []
    for seat in pending:
        events = list(GAME.on_timeout(s, seat, 15_000))
        assert isinstance(events[1], PairChosen)
        assert events[1].tile == pairs[0].tile or seat != first
        for e in events:
            s = GAME.evolve(s, e)
    assert isinstance(events[-1], TurnStarted) and s.turn == 0
    laizi = describe(s)["laizi"][first]
    assert GAME.view(s, (first + 1) % 4).players[first].exposed_laizi == (laizi, laizi)


def test_duiwang_suit_lock_after_a_peng_and_ting_needs_a_dragon_discard() -> None:
    pos = {"laizi": {"B": "E"}, "hands": {
        "A": "2m 1p 1s 2s 3s 4s 6s 7s 8s 9s 7p 8p 9p 中",
        "B": "E E 2m 2m 1p 1p 3m 4m 5m 6m 7m 8m 中"}}
    s = given(pos, {"LAIZI_MODE": "对王大将报"})
    s, _ = when(s, 0, "discard 2m")
    s, _ = when(s, 1, "peng")
    assert describe(s)["locked_suit"][1] == 0
    assert rejected(s, 1, "discard E") == "locked_laizi"
    assert rejected(s, 1, "ting 3m") in ("ting_needs_dragon",)
    s, _ = when(s, 1, "discard 8m")
    s, _ = when(s, 2, f"discard {describe(s)['drawn']}")
    s, _ = when(s, 3, f"discard {describe(s)['drawn']}")
    s, events = when(s, 0, "discard 1p")
    assert "ClaimOpened" not in types(events)


def test_locked_laizi_and_the_wang_can_never_be_discarded() -> None:
    s = given({"laizi": {"A": "7p"}, "hands": {"A": "7p 1p 2p 3p 4p 5p 6p 8p 8p E S W 中 中"}},
              {"LAIZI_MODE": "小手王"})
    assert rejected(s, 0, "discard 7p") == "locked_laizi"
    w = given({"hands": {"A": "王 1m 2m 3m 4m 5m 6m 7m 8m 9p 9p E E E"}}, {"LAIZI_MODE": "一支王"})
    assert rejected(w, 0, "discard 王") == "locked_laizi"
    assert all(getattr(c, "tile", "") != "王" for c in GAME.legal(w, 0))


def test_dajiangwang_laizi_is_re_evaluated_on_every_draw() -> None:
    s = given({"laizi": {"A": "中", "B": "中"}, "wall": "白 白",
               "hands": {"A": "中 白 1s 2s 3s 4s 5s 6s 7s 8s 9s E S W", "B": "白 1p 2p 3p 4p 5p 6p 7p 8p 9p 1m 2m 3m"}},
              {"LAIZI_MODE": "大将王黑风报"})
    s, events = when(s, 0, "discard 9s")
    assert isinstance(events[-1], Drew) and events[-1].laizi == "白"
    assert GAME.view(s, 0).players[1].laizi == ""
    assert GAME.view(s, 1).players[1].laizi == "白"


# ---------------------------------------------------------------- views, options, deals

def test_views_hide_other_hands_the_wall_and_concealed_gangs() -> None:
    s, _ = when(given(GANG_WIN), 0, "gang 9p")
    v = GAME.view(s, 1)
    assert v.players[0].melds[0].tile == "" and v.players[0].melds[0].meld_type is MeldType.AN_GANG
    assert v.hand == tuple(describe(s)["hands"][1].split())
    assert GAME.view(s, 0).players[0].melds[0].tile == "9p"
    spectator = GAME.view(s, None)
    assert spectator.hand == () and spectator.drawn == ""
    assert v.wall_count == describe(s)["wall"] and v.indicator == "4s"
    assert not any(hasattr(pv, "hand") for pv in v.players)


def test_options_parse_and_round_trip() -> None:
    o = GAME.parse_options({"LAIZI_MODE": "色牌", "MIANPENG": True, "LOUSHANGLOU_STYLE": "replace"})
    values = GAME.option_values(o)
    assert values["laiziMode"] == "色牌" and values["mianpeng"] == "on"
    assert GAME.parse_options(values) == o
    with pytest.raises(BadOptions):
        GAME.parse_options({"LAIZI_MODE": "混"})
    with pytest.raises(BadOptions):
        GAME.parse_options({"PLAYERS": 5})
    with pytest.raises(BadOptions):
        GAME.parse_options({"NOPE": 1})


@pytest.mark.parametrize("players", [2, 3, 4])
@pytest.mark.parametrize("mode", ["普通", "一支王", "小手王"])
def test_the_deal_gives_the_dealer_fourteen_and_keeps_136_tiles(players: int, mode: str) -> None:
    o = GAME.parse_options({"LAIZI_MODE": mode, "PLAYERS": players})
    s = GAME.initial(o, players)
    events = GAME.start(Setup(o, players, b"abc", 0))
    for e in events:
        s = GAME.evolve(s, e)
    sizes = [len(p.hand) for p in s.seats]
    assert sizes[s.dealer] == 14 and sorted(sizes) == [13] * (players - 1) + [14]
    assert describe(s)["tiles"] == 136
    if mode == "一支王":
        assert all(p.hand.count(34) == 1 for p in s.seats) and len(s.set_aside) == players


def test_replay_of_the_logged_events_gives_the_live_state() -> None:
    s0 = given(GANG_WIN)
    log: list[Any] = []
    s = s0
    for seat, cmd in [(0, "gang 9p"), (0, "ting E"), (1, "discard 9s"), (2, "discard 8p"),
                      (3, "discard 6s"), (0, "win")]:
        s, events = when(s, seat, cmd)
        log += events
    replayed = s0
    for e in log:
        replayed = GAME.evolve(replayed, e)
    assert replayed == s
    assert any(isinstance(e, Ganged) for e in log) and any(isinstance(e, Discarded) for e in log)
    assert not any(isinstance(e, (Penged, ClaimAnswered)) for e in log)


def test_position_melds_count_as_played_and_impossible_ones_are_refused() -> None:
    s = given({"melds": {"B": ["碰 5m from A", "暗杠 9m"], "C": ["bu_gang E"]}},
              {"LAIZI_MODE": "对王大将报"})
    assert describe(s)["melds"] == [[], ["peng 5m", "an_gang 9m"], ["bu_gang E"], []]
    assert describe(s)["locked_suit"] == [-1, 0, -1, -1]
    assert [len(p.hand) for p in s.seats] == [14, 7, 10, 13] and describe(s)["tiles"] == 136
    assert s.gangs == 2 and s.gang_log == ((1, MeldType.AN_GANG), (2, MeldType.BU_GANG))
    assert s.seats[1].melds[0][2] == 0 and s.seats[2].melds[0][2] == 1
    for spec, options in [
        ({"melds": {"B": ["peng 5m", "peng 3p"]}}, {"LAIZI_MODE": "对王大将报"}),
        ({"melds": {"B": ["peng 5m"]}}, {"MIANPENG": "on"}),
        ({"melds": {"B": ["an_gang 5m"]}, "gangs": 0}, {}),
        ({"melds": {"B": ["peng 王"]}}, {"LAIZI_MODE": "一支王"}),
        ({"melds": {"B": ["peng 5m from B"]}}, {}),
        ({"melds": {"B": ["chi 5m"]}}, {}),
    ]:
        with pytest.raises(ValueError):
            given(spec, options)
    assert given({"melds": {"B": ["an_gang 5m"]}}, {"MIANPENG": "on", "MIANPENG_ALLOWS_ANGANG": "on"}).gangs == 1


def test_the_suit_lock_reaches_sepai_only_with_its_option() -> None:
    pos = {"indicator": "9s", "hands": {
        "A": "2m 1p 3s 4s 5s 6s 7s 8s 9s 7p 8p 9p 中 中",
        "B": "2m 2m 1p 1p 3m 4m 5m 6m 7m 8m 中 发 白"}}
    for option, lock in (("off", -1), ("on", 0)):
        s = given(pos, {"LAIZI_MODE": "色牌", "SUIT_LOCK_ALL_TWO_SUIT_MODES": option})
        s, _ = when(s, 0, "discard 2m")
        s, _ = when(s, 1, "peng")
        assert describe(s)["locked_suit"][1] == lock
        s, _ = when(s, 1, "discard 8m")
        for seat in (2, 3):
            s, _ = when(s, seat, f"discard {describe(s)['drawn']}")
        s, events = when(s, 0, "discard 1p")
        assert ("ClaimOpened" in types(events)) == (option == "off")
