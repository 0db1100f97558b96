"""Given–When–Then unit tests of 够级 rules that the scenarios do not pin down."""

from __future__ import annotations

from typing import Any

import pytest

from chieu.games.core import BadOptions, IllegalMove, InvalidCommand, Outcome, Setup
from chieu.games.gouji import cards as C
from chieu.games.gouji.game import GAME
from chieu.games.gouji.model import (
    Burn,
    Dealt,
    Pass,
    Play,
    ReturnCards,
    State,
    TributePaid,
    TurnStarted,
)
from chieu.games.gouji.scenario import HOOKS


def given(hands: list[str], leader: int = 0, finished: tuple[int, ...] = (),
          options: dict[str, Any] | None = None) -> State:
    opts = GAME.parse_options(options or {})
    s = GAME.initial(opts, 6)
    spec = {"hands": hands, "leader": leader, "finished": list(finished)}
    for e in HOOKS.position(opts, 6, spec, 0):
        s = GAME.evolve(s, e)
    return s


def when(s: State, seat: int, cmd: Any) -> tuple[State, list[Any]]:
    events = list(GAME.decide(s, seat, cmd, 1000))
    for e in events:
        s = GAME.evolve(s, e)
    return s, events


def play(text: str) -> Play:
    return Play(tuple(text.split()))


def test_options_defaults_and_refusals() -> None:
    assert GAME.option_values(GAME.parse_options({})) == {
        "firstLeader": "seat-rotation", "tribute": "luogong",
        "endEarlyWhenOneTeamLeft": "off", "turnSeconds": 15,
        "tributeReturnSeconds": 15, "shaoGong": "off", "menGong": "off",
        "dianGong": "off", "maiSanMaiSi": "off", "bieSan": "off", "geMing": "off",
    }
    for bad in ({"FIRST_LEADER": "dealer"}, {"NOPE": 1}, {"TURN_TIMEOUT_S": 0},
                {"GE_MING": "yes"}, {"SHAO_GONG": 1}, {"END_EARLY_WHEN_ONE_TEAM_LEFT": "maybe"}):
        with pytest.raises(BadOptions):
            GAME.parse_options(bad)
    o = GAME.parse_options({"FIRST_LEADER": "shangban", "BIE_SAN": "on", "SHAO_GONG": "on",
                            "MEN_GONG": "on", "GE_MING": "on"})
    assert o.shao_gong and o.men_gong and o.ge_ming
    assert GAME.parse_options(GAME.option_values(o)) == o


@pytest.mark.parametrize(("name", "native"), [("DIAN_GONG", "点贡"), ("MAI_SAN_MAI_SI", "买三")])
def test_undefined_regional_options_are_refused_with_the_reason(name: str, native: str) -> None:
    # Given an option the rules file names but does not define; When it is turned on
    with pytest.raises(BadOptions) as err:
        GAME.parse_options({name: "on"})
    # Then the refusal says which rule and why
    assert native in err.value.message and "not defined by the rules file" in err.value.message
    assert GAME.parse_options({name: "off"}) == GAME.parse_options({})


def test_deal_gives_36_each_from_four_decks() -> None:
    events = GAME.start(Setup(GAME.parse_options({}), 6, b"seed", 0, owner=4))
    dealt = events[0]
    assert isinstance(dealt, Dealt) and dealt.first == 4
    counts = C.to_counts(r for h in dealt.hands for r in C.parse_cards(h.cards))
    assert counts == C.DECK and sum(counts) == 216
    assert isinstance(events[1], TurnStarted) and events[1].seat == 4 and events[1].lead


def test_shangban_leader_is_first_seat_dealt_a_second_identical_three() -> None:
    from chieu.games import fair

    opts = GAME.parse_options({"FIRST_LEADER": "shangban"})
    for seed in (b"a", b"b", b"c", b"d"):
        order = fair.shuffled(seed, range(216), "deal")
        seen: dict[tuple[int, int], int] = {}
        expected = 0
        for i, card in enumerate(order):
            k = card % 54
            if k < 4:  # the four 3s (by suit) of each deck
                seen[(i % 6, k)] = seen.get((i % 6, k), 0) + 1
                if seen[(i % 6, k)] == 2:
                    expected = i % 6
                    break
        first = GAME.start(Setup(opts, 6, seed, 0, owner=0))[0].first
        assert first == expected


def test_tribute_takes_the_best_cards_and_waits_for_returns() -> None:
    prev = Outcome(0, (0, 3, 2, 5, 4, 1), (2, -2, 2, -2, 2, -2), (), "finished", first=0)
    events = GAME.start(Setup(GAME.parse_options({}), 6, b"t", 0, hand_no=2, previous=prev))
    dealt = events[0]
    assert isinstance(dealt, Dealt)
    paid = [e for e in events if isinstance(e, TributePaid)]
    assert [(e.from_seat, e.to_seat) for e in paid] == [(1, 0), (4, 3)]
    assert paid[0].cards == C.names(C.parse_cards(dealt.hands[1].cards))[:2]
    assert paid[1].cards == C.names(C.parse_cards(dealt.hands[4].cards))[:1]
    s = GAME.initial(GAME.parse_options({}), 6)
    for e in events:
        s = GAME.evolve(s, e)
    assert {(d.seat, d.at_ms) for d in GAME.deadlines(s)} == {(0, 15000), (3, 15000)}
    assert all(len(c.cards) == 1 for c in GAME.legal(s, 3))
    low = C.names(C.from_counts(s.hands[3]))[-1:]
    s, _ = when(s, 3, ReturnCards(low))
    assert s.phase == "tribute" and sum(s.hands[4]) == 36
    with pytest.raises(IllegalMove) as e:
        when(s, 0, ReturnCards(low))
    assert e.value.code in ("not_in_hand", "wrong_count")
    two = GAME.legal(s, 0)[0]
    s, _ = when(s, 0, two)
    assert s.phase == "play" and s.to_act == 1 and s.leading


def test_malformed_and_illegal_plays_are_refused_without_change() -> None:
    s = given(["5 5 6 7", "8 8", "9", "10", "J", "Q"])
    for cmd, code, kind in (
        (play("5 6"), "illegal_set", IllegalMove),
        (play("Z"), "bad_cards", InvalidCommand),
        (play("8"), "not_in_hand", IllegalMove),
        (Pass(), "must_lead", IllegalMove),
        (Burn(("5",)), "cannot_burn", IllegalMove),
    ):
        with pytest.raises(kind) as e:
            GAME.decide(s, 0, cmd, 0)
        assert e.value.code == code
    with pytest.raises(IllegalMove) as e:
        GAME.decide(s, 1, play("8"), 0)
    assert e.value.code == "not_your_turn"
    s2, _ = when(s, 0, play("5 5"))
    for cmd, code in ((play("8"), "wrong_size"),):
        with pytest.raises(IllegalMove) as e:
            GAME.decide(s2, 1, cmd, 0)
        assert e.value.code == code


def test_answer_must_beat_every_position() -> None:
    s = given(["9 9 9 3", "10 10 2 9 9 9", "3", "3", "3", "3"])
    s, _ = when(s, 0, play("9 9 9"))
    with pytest.raises(IllegalMove) as e:
        GAME.decide(s, 1, play("9 9 9"), 0)
    assert e.value.code == "not_higher"
    s, ev = when(s, 1, play("10 10 2"))
    assert ev[0].gouji is False and s.owner == 1


def test_legal_commands_are_all_accepted_and_timeout_leads_lowest() -> None:
    s = given(["K K 2 SJ 7 7 4", "A A 5", "3 3", "2 2 6", "9 9", "BJ 8"])
    legal = GAME.legal(s, 0)
    assert Play(("4",)) in legal and Play(("SJ", "2", "K", "K")) in legal
    for cmd in legal:
        GAME.decide(s, 0, cmd, 0)
    timed = GAME.on_timeout(s, 0, 15000)
    assert [type(e).__name__ for e in timed][:2] == ["TimedOut", "Played"]
    assert timed[1].cards == ("4",)
    s, _ = when(s, 0, play("K K"))
    answers = GAME.legal(s, 3)
    assert Pass() in answers and Play(("2", "2")) in answers
    assert all(isinstance(c, Pass) or C.can_beat("K K", c.cards) for c in answers)
    for cmd in GAME.legal(s, 3):
        GAME.decide(s, 3, cmd, 0)
    # 够级: only the 对门 answers in turn; seat 1 may only declare 捎牌 (rest: one 5)
    assert GAME.legal(s, 1) == [Burn(("A", "A"))]
    assert GAME.legal(s, 2) == []


def test_wutou_player_may_answer_gouji_not_aimed_at_him() -> None:
    s = given(["", "K K 3", "A A 4", "2 2 5", "6 6", "7 7"], leader=1, finished=(0,))
    s, _ = when(s, 1, play("K K"))
    assert s.to_act == 3  # 无头 seat 3 comes before 对门 seat 4 in turn order
    s, _ = when(s, 3, play("2 2"))
    assert s.to_act == 4  # anyone may answer the 无头 player's set, in turn order


def test_view_of_spectator_and_finished_game() -> None:
    s = given(["", "", "", "", "3", "4"], leader=4, finished=(0, 1, 2, 3))
    s, ev = when(s, 4, play("3"))
    assert s.phase == "over" and type(ev[-1]).__name__ == "GameEnded"
    v = GAME.view(s, None)
    assert v.hand == () and v.places == (1, 2, 3, 4, 5, 6)
    assert v.scores == (2, -2, 2, -2, 2, -2)  # A: 1st, 3rd, 5th = 4 + 0 − 2
    out = GAME.outcome(s)
    assert out is not None and out.winner == 0 and out.net(6) == out.scores
    assert GAME.deadlines(s) == ()
    with pytest.raises(IllegalMove):
        GAME.decide(s, 5, play("4"), 0)


@pytest.mark.parametrize("options", [{}, {"SHAO_GONG": "on", "MEN_GONG": "on"}, {"GE_MING": "on"}])
def test_a_tribute_position_is_what_start_gives_for_the_same_hands(options: dict[str, Any]) -> None:
    # Given a seeded start of game 2 (落贡, and 烧贡 / 闷贡 from the carry)
    opts = GAME.parse_options(options)
    prev = Outcome(0, (0, 3, 2, 5, 4, 1), (2, -2, 2, -2, 2, -2), (), "finished", first=2,
                   carry=(1, 1, 2, 1, 5))
    started = list(GAME.start(Setup(opts, 6, bytes.fromhex("0911"), 0, hand_no=2, previous=prev)))
    dealt = started[0]
    assert isinstance(dealt, Dealt)
    # When the same hands and previous game are written as a position
    spec = {"hands": [" ".join(h.cards) for h in dealt.hands], "seed": "0911",
            "previous": {"places": [1, 6, 3, 2, 5, 4], "first": 2, "shao": [2], "men": [5]}}
    # Then the position's events are start()'s
    assert list(HOOKS.position(opts, 6, spec, 0)) == started
    raw = {**spec, "previous": {"ranking": [0, 3, 2, 5, 4, 1], "first": 2, "carry": [1, 1, 2, 1, 5]}}
    assert list(HOOKS.position(opts, 6, raw, 0)) == started


def test_a_tribute_position_refuses_what_cannot_be() -> None:
    opts = GAME.parse_options({})
    hands = ["3", "4", "5", "6", "7", "8"]
    for bad in ({"hands": hands, "previous": {"ranking": [0, 3, 2, 5, 4, 1]}, "finished": [0]},
                {"hands": hands, "previous": {"ranking": [0, 3, 2, 5, 4, 4]}},
                {"hands": hands, "previous": {"places": [1, 2, 3, 4, 5, 5]}},
                {"hands": hands, "previous": {"first": 2}}):
        with pytest.raises(ValueError):
            HOOKS.position(opts, 6, bad, 0)
