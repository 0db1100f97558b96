"""Given–When–Then tests of Phỏm rules beyond the worked scenarios of §A6."""

from __future__ import annotations

from typing import Any

import pytest

from chieu.games.core import BadOptions, Deadline, Outcome, RuleViolation, Setup, replay
from chieu.games.phom import cards as C
from chieu.games.phom.game import GAME
from chieu.games.phom.model import (
    Accuse,
    Ate,
    ClaimU,
    Discard,
    Draw,
    Eat,
    Lay,
    Phase,
    Send,
    State,
    TurnKind,
    WinKind,
    WonU,
)
from chieu.games.phom.scenario import parse_command, position
from chieu.games.phom.scoring import balances

PH07 = ["3♠ 4♠ 5♠ 9♦ 9♣ 9♥ K♣ Q♦ 2♥ 7♣", "6♥ 7♥ 8♥ J♠ J♦ A♣ 4♦ 10♣ K♦"]
PH07_STOCK = "5♦ 2♣ J♥ 8♠ 10♠ 6♣ 10♦"
PH09 = ["10♠ 7♦ 4♥ 4♣ 4♦ A♠ 2♠ 3♠ K♣ 9♥", "7♣ 7♥ J♠ Q♠ 8♥ 2♦ 3♦ K♦ 6♣"]
PH09_STOCK = "Q♣ 5♦ 9♣ 6♠ A♦ 8♣ J♥"
PH13 = [
    "6♣ J♠ Q♥ A♠ 2♥ 3♦ 5♠ 8♣ K♦ 4♣",
    "6♥ 6♦ 9♠ 10♠ Q♦ Q♣ 2♣ 7♥ K♥",
    "2♠ 3♠ 4♥ 7♣ 8♦ 9♥ J♦ K♣ A♦",
    "4♠ 5♥ 7♠ 8♠ 10♦ J♣ Q♠ A♥ 3♥",
]
PH13_STOCK = "6♠ K♠ A♣ 3♣ 5♣ 9♣ 10♣ 2♦ 4♦ 5♦ 7♦ 9♦ 8♥ 10♥ J♥"


def given(hands: list[str], stock: str | None = None, **options: Any) -> State:
    opts = GAME.parse_options(options)
    spec: dict[str, Any] = {"hands": hands}
    if stock:
        spec["stock"] = stock
    return replay(GAME, GAME.initial(opts, len(hands)), position(opts, len(hands), spec, 0))


def when(s: State, *steps: tuple[int, str]) -> State:
    for seat, text in steps:
        s = replay(GAME, s, GAME.decide(s, seat, parse_command(text), 0))
    return s


def events(s: State, seat: int, text: str) -> list[Any]:
    return list(GAME.decide(s, seat, parse_command(text), 0))


# ---------------------------------------------------------------- options


def test_options_defaults_follow_a5() -> None:
    o = GAME.parse_options({})
    v = GAME.option_values(o)
    assert (v["ga"], v["taiGui"], v["chuyenBai"], v["allowULao"], v["uDen"]) == (
        False, True, True, False, True)
    assert (v["uWindowSeconds"], v["turnSeconds"], v["chotInTai"], v["uTronPays"]) == (5, 20, True, 10)
    assert v["amounts"] == {
        "uThuong": 5, "uTron": 10, "uKhan": 5, "bao": 5, "uLao": 5, "mom": 4, "chot": 4,
        "eat1": 1, "eat2": 2, "rank": [1, 2, 3], "wrongAccusation": 1,
    }
    assert GAME.parse_options(v) == o


@pytest.mark.parametrize(
    "raw",
    [
        {"bogus": 1}, {"ga": "yes"}, {"uTronPays": 7}, {"uTronPays": 5, "amounts": {"uTron": 10}},
        {"amounts": {"rank": [1, 2]}}, {"amounts": {"uThuong": -1}}, {"amounts": {"x": 1}},
        {"stake": 0}, {"turnSeconds": 0}, {"players": 5},
    ],
)
def test_bad_options_are_refused(raw: dict[str, Any]) -> None:
    with pytest.raises(BadOptions):
        GAME.parse_options(raw)


def test_amounts_are_configurable() -> None:
    s = given(PH09, PH09_STOCK, amounts={"eat1": 3, "uThuong": 7}, uTronPays=5)
    assert s.options.amounts.u_tron == 5
    ate = events(when(s, (0, "discard 7♦")), 1, "eat")[0]
    assert ate.transfers[0].amount == 3


# ---------------------------------------------------------------- deal and dealer


def test_deal_goes_from_the_owner_and_the_dealer_gets_ten() -> None:
    opts = GAME.parse_options({})
    setup = Setup(opts, 3, b"seed", 0, owner=1)
    dealt = GAME.start(setup)[0]
    assert dealt.dealer == 1 and dealt.owner == 1
    sizes = {h.seat: len(h.cards) for h in dealt.hands}
    assert sizes == {0: 9, 1: 10, 2: 9} and len(dealt.stock) == 11 and len(dealt.unused) == 13
    again = GAME.start(setup)[0]
    assert again == dealt  # the deal derives from the seed material only


def test_previous_winner_deals_and_the_pot_carries_over() -> None:
    opts = GAME.parse_options({"ga": True})
    prev = Outcome(1, (1, 0), (0, 0), (), "u", pot_balance=3, first=0)
    dealt = GAME.start(Setup(opts, 2, b"b", 0, previous=prev))[0]
    assert dealt.dealer == 1 and dealt.pot == 3
    nobody = Outcome(None, (0, 1), (0, 0), (), "bao", pot_balance=0, first=1)
    assert GAME.start(Setup(opts, 2, b"b", 0, previous=nobody, owner=0))[0].dealer == 0


def test_window_deadline_is_the_dealers_and_only_he_closes_it() -> None:
    opts = GAME.parse_options({})
    s = replay(GAME, GAME.initial(opts, 2), GAME.start(Setup(opts, 2, b"x", 1000)))
    assert s.phase is Phase.WINDOW
    assert list(GAME.deadlines(s)) == [Deadline(s.dealer, 6000)]
    with pytest.raises(RuleViolation):
        GAME.on_timeout(s, 1 - s.dealer, 6000)
    s = replay(GAME, s, GAME.on_timeout(s, s.dealer, 6000))
    assert s.turn == s.dealer and s.turn_kind is TurnKind.FIRST
    assert list(GAME.deadlines(s)) == [Deadline(s.dealer, 26000)]


# ---------------------------------------------------------------- eating, chuyển bài, chốt


def test_chuyen_bai_off_keeps_rows_but_updates_counts() -> None:
    s = given(PH09, PH09_STOCK, chuyenBai=False)
    s = when(s, (0, "discard 7♦"), (1, "eat"), (1, "discard K♦"), (0, "draw"), (0, "discard 10♠"))
    ate = events(s, 1, "eat")[0]
    assert isinstance(ate, Ate) and ate.mover == 1 and ate.moved == ""
    s = replay(GAME, s, [ate])
    assert s.rows == ((), (C.parse_card("K♦"),)) and s.d == (1, 0) and s.order == (0, 1)


def test_chot_only_in_the_laydown_turn_when_chot_in_tai_is_off() -> None:
    hands = ["2♠ 3♠ 4♠ 8♦ 8♣ 8♥ Q♥ 6♣ J♦ 5♣", "5♥ 5♦ 9♠ 10♠ J♠ 4♥ 3♣ K♥ 7♦"]
    s = given(hands, "2♥ K♠ 4♦ Q♣ 7♠ A♣ 5♠", chotInTai=False)
    s = when(s, (0, "discard Q♥"), (1, "draw"), (1, "discard K♥"), (0, "draw"), (0, "discard K♠"),
             (1, "draw"), (1, "discard 4♦"), (0, "draw"), (0, "discard Q♣"), (1, "draw"),
             (1, "discard 7♠"), (0, "draw"), (0, "lay 2♠3♠4♠"), (0, "lay 8♦8♣8♥"),
             (0, "discard 5♣"))
    ate = events(s, 1, "eat")[0]
    assert ate.chot  # the lay-down turn: still a chốt
    assert ate.transfers[0].reason == "chot" and ate.transfers[0].to_seat == 1


def test_u_den_off_makes_everyone_pay() -> None:
    s = given(PH13, PH13_STOCK, uDen=False)
    s = when(s, (0, "discard 6♣"), (1, "eat"), (1, "discard K♥"), (2, "draw"), (2, "discard 6♠"),
             (3, "draw"), (3, "discard K♠"), (0, "draw"), (0, "discard J♠"), (1, "eat"),
             (1, "discard 7♥"), (2, "draw"), (2, "discard 3♣"), (3, "draw"), (3, "discard 5♣"),
             (0, "draw"), (0, "discard Q♥"))
    won = events(s, 1, "eat")[-1]
    assert isinstance(won, WonU) and won.victim == -1
    assert [(t.from_seat, t.amount, t.reason) for t in won.transfers] == [
        (2, 5, "u"), (3, 5, "u"), (0, 5, "u")]


def test_third_eat_of_a_bao_hand_is_caught_not_u() -> None:
    s = given(PH13, PH13_STOCK)
    s = when(s, (0, "discard 6♣"), (1, "eat"), (1, "discard 6♦"))  # 6♣* loses a partner
    s = when(s, (2, "draw"), (2, "discard 6♠"), (3, "draw"), (3, "discard K♠"), (0, "draw"),
             (0, "discard J♠"), (1, "eat"), (1, "discard 7♥"), (2, "draw"), (2, "discard 3♣"),
             (3, "draw"), (3, "discard 5♣"), (0, "draw"), (0, "discard Q♥"))
    last = events(s, 1, "eat")[-1]
    assert type(last).__name__ == "BaoCaught" and last.seat == 1 and last.accuser == -1


def test_eat_with_named_partners_must_fit() -> None:
    s = when(given(PH09, PH09_STOCK), (0, "discard 7♦"))
    with pytest.raises(RuleViolation) as e:
        GAME.decide(s, 1, Eat(("7♣", "J♠")), 0)
    assert e.value.code == "illegal_eat"
    assert GAME.decide(s, 1, Eat(("7♣", "7♥")), 0)


# ---------------------------------------------------------------- lay, send, Ù


def test_laying_every_card_is_u_tron() -> None:
    hands = ["2♠ 3♠ 4♠ 8♦ 8♣ 8♥ K♣ J♦ 6♣ 7♦", "9♥ 10♥ J♥ 5♣ 5♦ 5♥ 6♠ 7♠ 8♠"]
    s = given(hands, "K♦ 3♥ 10♣ Q♣ 9♦ 2♣ 9♠")
    s = when(s, (0, "discard K♣"), (1, "draw"), (1, "discard K♦"), (0, "draw"), (0, "discard 3♥"),
             (1, "draw"), (1, "discard 10♣"), (0, "draw"), (0, "discard J♦"), (1, "draw"),
             (1, "discard 9♦"), (0, "draw"), (0, "lay 2♠3♠4♠"), (0, "discard Q♣"), (1, "draw"),
             (1, "lay 9♥10♥J♥"), (1, "lay 5♣5♦5♥"))
    last = events(s, 1, "lay 6♠7♠8♠9♠")
    assert isinstance(last[-1], WonU) and last[-1].kind is WinKind.TRON


def test_legal_lists_eats_with_partners_draw_lays_sends_and_discards() -> None:
    s = when(given(PH09, PH09_STOCK), (0, "discard 7♦"))
    assert set(GAME.legal(s, 1)) == {Draw(), Eat(("7♣", "7♥"))}
    assert GAME.legal(s, 0) == []
    s = when(given(["2♠ 3♠ 4♠ 8♦ 8♣ 8♥ K♣ J♦ 6♣ 7♦", "9♥ 10♥ J♥ 5♣ 5♦ 5♥ A♠ 5♠ 8♠"],
                   "K♦ 3♥ 10♣ Q♣ 9♦ 2♣ Q♥"),
             (0, "discard K♣"), (1, "draw"), (1, "discard K♦"), (0, "draw"), (0, "discard 3♥"),
             (1, "draw"), (1, "discard 10♣"), (0, "draw"), (0, "discard J♦"), (1, "draw"),
             (1, "discard 9♦"), (0, "draw"), (0, "lay 2♠3♠4♠"), (0, "lay 8♦8♣8♥"),
             (0, "discard Q♣"), (1, "draw"), (1, "lay 9♥10♥J♥"))
    moves = set(GAME.legal(s, 1))
    assert Lay(("5♣", "5♦", "5♥")) in moves and Lay(("5♠", "5♣", "5♦", "5♥")) in moves
    assert {Send("A♠", "2♠"), Send("5♠", "2♠"), Send("8♠", "8♣"), Send("Q♥", "9♥")} <= moves
    assert Discard("A♠") in moves and ClaimU() not in moves
    for m in moves:
        GAME.decide(s, 1, m, 0)


def test_wrong_accusation_without_ga_pays_the_accused() -> None:
    s = given(PH07, PH07_STOCK)
    ev = GAME.decide(s, 1, Accuse(0), 0)[0]
    assert ev.transfers[0].to_seat == 0 and ev.transfers[0].from_seat == 1
    with pytest.raises(RuleViolation):
        GAME.decide(s, 1, Accuse(1), 0)


def test_nothing_is_accepted_after_the_end() -> None:
    s = given(["2♦ 3♦ 4♦ 5♦ 9♥ 9♣ 9♦ J♥ Q♥ K♥", "A♠ 4♠ 7♠ 10♠ K♠ 2♣ 5♣ 8♣ J♣"])
    s = when(s, (0, "u"))
    assert s.phase is Phase.OVER
    with pytest.raises(RuleViolation) as e:
        GAME.decide(s, 1, Draw(), 0)
    assert e.value.code == "game_over"
    assert GAME.legal(s, 0) == [] and GAME.deadlines(s) == ()


# ---------------------------------------------------------------- timeouts and views


def test_timeout_on_the_dealers_first_turn_discards_a_seeded_random_card() -> None:
    s = given(PH07, PH07_STOCK)
    ev = GAME.on_timeout(s, 0, 20000)
    assert [type(e).__name__ for e in ev] == ["TimedOut", "Discarded", "TurnPassed"]
    assert ev == GAME.on_timeout(s, 0, 20000)
    with pytest.raises(RuleViolation):
        GAME.on_timeout(s, 1, 20000)


def test_timeout_after_drawing_does_not_draw_again() -> None:
    s = when(given(PH07, PH07_STOCK), (0, "discard K♣"), (1, "draw"))
    ev = GAME.on_timeout(s, 1, 20000)
    assert [type(e).__name__ for e in ev] == ["TimedOut", "Discarded", "TurnPassed"]


def test_view_shows_own_hand_public_rows_and_counts_only() -> None:
    s = when(given(PH09, PH09_STOCK), (0, "discard 7♦"), (1, "eat"))
    v1 = GAME.view(s, 1)
    assert "7♦" in v1.hand and v1.seats[1].eaten == ("7♦",) and v1.seats[1].cards == 10
    v0 = GAME.view(s, 0)
    assert set(v0.hand) == set(C.names(s.hands[0]))
    assert v0.seats[1].eaten == ("7♦",) and v0.seats[0].balance == -1 and v0.stock_left == 7
    spectator = GAME.view(s, None)
    assert spectator.hand == () and spectator.seat == -1
    assert balances(s) == (-1, 1)


def test_when_everybody_is_mom_the_first_to_lay_down_wins() -> None:
    s = given(PH07, PH07_STOCK)
    s = when(s, (0, "discard K♣"), (1, "draw"), (1, "discard K♦"), (0, "draw"), (0, "discard Q♦"),
             (1, "draw"), (1, "discard 10♣"), (0, "draw"), (0, "discard 8♠"), (1, "draw"),
             (1, "discard 10♠"), (0, "draw"), (0, "discard 7♣"), (1, "draw"), (1, "discard 10♦"))
    out = GAME.outcome(s)
    assert out is not None and out.reason == "scored"
    assert out.winner == 0 and out.ranking == (0, 1)
    assert [(t.from_seat, t.to_seat, t.amount, t.reason) for t in out.transfers] == [(1, 0, 4, "mom")]


def test_u_lao_with_three_players_pays_each_other_player() -> None:
    hands = [PH13[0], PH13[1], PH13[2]]
    s = given(hands, None, allowULao=True)
    s = when(s, (0, "discard 6♣"), (1, "draw"))
    ev = events(s, 1, "u")
    assert [(t.from_seat, t.to_seat, t.amount, t.reason) for t in ev[0].transfers] == [
        (1, 2, 5, "u_lao"), (1, 0, 5, "u_lao")]
    end = replay(GAME, s, ev)
    out = GAME.outcome(end)
    assert out is not None and out.winner is None and out.ranking[-1] == 1


def test_an_eaten_card_kept_past_the_laydown_discard_is_bao() -> None:
    s = given(PH09, PH09_STOCK)
    s = when(s, (0, "discard 7♦"), (1, "eat"), (1, "discard K♦"), (0, "draw"), (0, "discard Q♣"),
             (1, "draw"), (1, "discard 5♦"), (0, "draw"), (0, "discard 9♣"), (1, "draw"),
             (1, "discard 6♠"), (0, "draw"), (0, "discard A♦"), (1, "draw"))
    assert s.turn_kind is TurnKind.LAYDOWN and s.phase is Phase.PLAY
    last = events(s, 1, "discard 8♣")[-1]
    assert type(last).__name__ == "BaoCaught" and last.seat == 1


def test_send_refusals() -> None:
    s = given(PH07, PH07_STOCK)
    s = when(s, (0, "discard K♣"), (1, "draw"), (1, "discard K♦"), (0, "draw"), (0, "discard Q♦"),
             (1, "draw"), (1, "discard 10♣"), (0, "draw"), (0, "discard 8♠"), (1, "draw"),
             (1, "discard 10♠"), (0, "draw"), (0, "lay 3♠4♠5♠"))
    for text, code in [("send 2♥ to 3♠", "illegal_send"), ("send 6♠ to 3♠", "not_in_hand"),
                       ("send 6♣ to K♥", "no_such_meld"), ("lay 9♦9♣", "illegal_meld")]:
        with pytest.raises(RuleViolation) as e:
            GAME.decide(s, 0, parse_command(text), 0)
        assert e.value.code == code
    with pytest.raises(RuleViolation) as e:
        GAME.decide(s, 0, Send("XX", "3♠"), 0)
    assert e.value.code == "bad_card"
