"""Given–When–Then tests of the regional options 烧贡 / 闷贡 (via ``Outcome.carry``) and 革命."""

from __future__ import annotations

from typing import Any

import pytest

from chieu.games import fair
from chieu.games.common import TimedOut
from chieu.games.core import IllegalMove, Outcome, Setup, replay
from chieu.games.gouji import cards as C
from chieu.games.gouji.game import GAME
from chieu.games.gouji.model import (
    SEATS,
    DealCancelled,
    Dealt,
    DeclareRevolution,
    DeclineRevolution,
    Redealt,
    ReturnCards,
    RevolutionOpened,
    SatOut,
    State,
    TributePaid,
    TurnStarted,
)
from chieu.games.gouji.tribute import decode_carry, encode_carry

GE_MING = {"GE_MING": "on"}
ONE_ELIGIBLE = bytes.fromhex("000f")  # seat 1 alone holds no 2s and no jokers
TWO_ELIGIBLE = bytes.fromhex("0911")  # seats 0 and 3; the redeal has nobody eligible


def start(options: dict[str, Any], seed: bytes, previous: Outcome | None = None,
          first: int | None = None) -> tuple[State, list[Any]]:
    opts = GAME.parse_options(options)
    events = list(GAME.start(Setup(opts, 6, seed, 0, hand_no=2 if previous else 1,
                                   previous=previous, first=first)))
    return replay(GAME, GAME.initial(opts, 6), events), events


def when(s: State, seat: int, cmd: Any, now: int = 1000) -> tuple[State, list[Any]]:
    events = list(GAME.decide(s, seat, cmd, now))
    return replay(GAME, s, events), events


def previous(carry: tuple[int, ...] = ()) -> Outcome:
    return Outcome(0, (0, 3, 2, 5, 4, 1), (2, -2, 2, -2, 2, -2), (), "finished", first=2,
                   carry=carry)


# ---------------------------------------------------------------- carry


def test_carry_round_trips_and_unreadable_carry_means_no_tribute() -> None:
    assert decode_carry(encode_carry((0, 3), (5,))) == ((0, 3), (5,))
    assert decode_carry(encode_carry((), ())) == ((), ())
    for bad in ((), (2, 0, 0), (1, 3, 0), (1, 1, 9, 0), (1, 0, 1), (1, 0, 0, 7)):
        assert decode_carry(bad) == ((), ())


def test_shaogong_and_mengong_pay_best_cards_to_the_payers_duimen() -> None:
    # Given seat 2 was burned and seat 5 was 闷 last game (same players, same seats)
    prev = previous(encode_carry((2,), (5,)))
    # When the next game starts with both options on
    s, events = start({"SHAO_GONG": "on", "MEN_GONG": "on"}, b"carry", prev)
    dealt = events[0]
    assert isinstance(dealt, Dealt)
    paid = [e for e in events if isinstance(e, TributePaid)]
    # Then 落贡 comes first, then 烧贡 and 闷贡, each one best card to the 对门
    assert [(e.from_seat, e.to_seat, len(e.cards), e.kind) for e in paid] == [
        (1, 0, 2, "luogong"), (4, 3, 1, "luogong"), (2, 5, 1, "shaogong"), (5, 2, 1, "mengong")]
    assert paid[2].cards == C.names(C.parse_cards(dealt.hands[2].cards))[:1]
    # seat 5 pays his best card after receiving seat 2's
    held5 = C.add(C.to_counts(C.parse_cards(dealt.hands[5].cards)),
                  C.to_counts(C.parse_cards(paid[2].cards)))
    assert paid[3].cards == C.names(C.from_counts(held5))[:1]
    assert sum(map(sum, s.hands)) + sum(s.pile) == 216 and s.phase == "tribute"
    assert {d.seat for d in GAME.deadlines(s)} == {0, 3, 5, 2}


def test_a_seat_owing_two_returns_returns_them_one_at_a_time() -> None:
    # Given 头科 (seat 0) also receives 烧贡 from seat 3, his 对门
    s, _ = start({"SHAO_GONG": "on"}, b"two", previous(encode_carry((3,), ())))
    assert [(d.seat, d.to_seat, d.count) for d in s.owed if d.seat == 0] == [(0, 1, 2), (0, 3, 1)]
    assert [d.seat for d in GAME.deadlines(s)].count(0) == 1
    assert GAME.view(s, 0).owe_return == 3
    # When his clock runs out, the first return (to 大落) goes back; the second is still due
    s, ev = replay(GAME, s, GAME.on_timeout(s, 0, 15000)), GAME.on_timeout(s, 0, 15000)
    assert [type(e).__name__ for e in ev] == ["TimedOut", "TributeReturned"]
    assert [(d.seat, d.to_seat, d.count) for d in s.owed if d.seat == 0] == [(0, 3, 1)]
    assert all(len(c.cards) == 1 for c in GAME.legal(s, 0))
    # Then the second return is one card to seat 3
    s, ev = when(s, 0, GAME.legal(s, 0)[0])
    assert ev[0].to_seat == 3 and not [d for d in s.owed if d.seat == 0]


def test_no_carry_no_shaogong() -> None:
    _, events = start({"SHAO_GONG": "on", "MEN_GONG": "on"}, b"carry", previous(()))
    assert [e.kind for e in events if isinstance(e, TributePaid)] == ["luogong", "luogong"]


# ---------------------------------------------------------------- 革命


def test_revolution_eligibility_is_no_twos_and_no_jokers() -> None:
    assert C.revolution_ok(C.to_counts(C.parse_cards("A A K 3")))
    for hand in ("A 2", "3 SJ", "BJ", ""):
        assert not C.revolution_ok(C.to_counts(C.parse_cards(hand)))


def test_revolution_window_waits_for_the_eligible_seat_only() -> None:
    # Given GE_MING on and a deal where seat 1 holds no 2s and no jokers
    s, events = start(GE_MING, ONE_ELIGIBLE)
    assert isinstance(events[-1], RevolutionOpened) and events[-1].eligible == (1,)
    assert isinstance(events[0], Dealt) and events[0].seed == ONE_ELIGIBLE.hex()
    assert s.phase == "revolution" and [(d.seat, d.at_ms) for d in GAME.deadlines(s)] == [
        (1, 15000)]
    assert GAME.legal(s, 1) == [DeclareRevolution(), DeclineRevolution()]
    assert GAME.legal(s, 0) == []
    # When another seat tries, or seat 1 tries to play, the command is refused
    for seat, cmd, code in ((0, DeclareRevolution(), "not_eligible"),
                            (1, ReturnCards(("3",)), "not_tribute")):
        with pytest.raises(IllegalMove) as e:
            GAME.decide(s, seat, cmd, 0)
        assert e.value.code == code
    with pytest.raises(IllegalMove):
        GAME.on_timeout(s, 0, 15000)
    # Then no view shows a seed or another seat's cards
    v = GAME.view(s, 0)
    assert v.revolution == (1,) and v.hand and GAME.view(s, None).hand == ()
    assert ONE_ELIGIBLE.hex() not in repr(v)


def test_seed_is_kept_only_with_ge_ming_on() -> None:
    _, events = start({}, ONE_ELIGIBLE)
    assert isinstance(events[0], Dealt) and events[0].seed == ""
    assert isinstance(events[-1], TurnStarted)


def test_two_declarations_cancel_the_deal_and_redeal_from_the_seed() -> None:
    # Given two eligible seats
    s, _ = start(GE_MING, TWO_ELIGIBLE)
    assert s.eligible == (0, 3)
    # When both declare
    s, _ = when(s, 3, DeclareRevolution())
    s, events = when(s, 0, DeclareRevolution())
    # Then 流局 and a redeal under the label redeal:1, exactly as fair derives it
    assert isinstance(events[1], DealCancelled) and events[1].seats == (3, 0)
    red = events[2]
    assert isinstance(red, Redealt) and red.deal_no == 1
    hands, _ = C.deal(TWO_ELIGIBLE, "redeal:1", SEATS)
    assert [C.to_counts(C.parse_cards(h.cards)) for h in red.hands] == hands
    assert fair.shuffled(TWO_ELIGIBLE, range(216), "redeal:1") != fair.shuffled(
        TWO_ELIGIBLE, range(216), "deal")
    assert s.phase == "play" and s.to_act == 0 and s.deal_no == 1 and s.sitting == -1
    assert sum(map(sum, s.hands)) == 216


def test_the_sitter_pays_and_receives_no_tribute_and_the_next_seat_leads_for_him() -> None:
    # Given seat 1 is eligible, was 大落 last game and is the first leader
    prev = Outcome(2, (2, 0, 3, 4, 5, 1), (2, -2, 2, -2, 2, -2), (), "finished", first=0)
    s, _ = start({"GE_MING": "on"}, ONE_ELIGIBLE, prev)
    assert s.first == 1 and s.eligible == (1,)
    # When he declares 革命
    s, events = when(s, 1, DeclareRevolution())
    # Then he sits out as 四科; only 二落 → 二科 (seat 5 → seat 0) is paid; nobody owes him
    assert isinstance(events[1], SatOut) and events[1].place == 4
    paid = [e for e in events if isinstance(e, TributePaid)]
    assert [(e.from_seat, e.to_seat) for e in paid] == [(5, 0)]
    s, ev = when(s, 0, GAME.legal(s, 0)[0])
    assert isinstance(ev[-1], TurnStarted) and ev[-1].seat == 2
    assert s.places[1] == 4 and sum(s.hands[1]) == 0 and GAME.view(s, 4).wutou == (4,)


def test_timeout_in_the_window_declines() -> None:
    s, _ = start(GE_MING, TWO_ELIGIBLE)
    s, _ = when(s, 0, DeclareRevolution())
    events = GAME.on_timeout(s, 3, 15000)
    assert isinstance(events[0], TimedOut)
    assert [type(e).__name__ for e in events][1:3] == ["RevolutionDeclined", "SatOut"]
