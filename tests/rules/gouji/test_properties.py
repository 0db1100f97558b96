"""Property tests of 够级: cards conserved, games end, zero-sum scores, views hide secrets."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chieu.games.core import Outcome, replay
from chieu.games.gouji import cards as C
from chieu.games.gouji.game import GAME
from chieu.games.gouji.model import (
    REPORT_AT,
    Burned,
    BurnFailed,
    Dealt,
    Played,
    Redealt,
    SatOut,
    State,
    TributePaid,
    TributeReturned,
)
from chieu.games.gouji.tribute import decode_carry, encode_carry
from tests.rules.gouji.randgame import random_game

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _check_views(s: State) -> None:
    for seat in (None, *range(6)):
        v = GAME.view(s, seat)
        for p, n in enumerate(v.counts):
            assert n <= REPORT_AT
            total = sum(s.hands[p])
            assert n == (total if total <= REPORT_AT else -1)
        own = C.names(C.from_counts(s.hands[seat])) if seat is not None else ()
        assert v.hand == own
        assert v.to_act == (-1 if s.to_act is None else s.to_act)


def _cards_from_log(log: list[Any]) -> list[C.Counts]:
    """Each hand rebuilt from the event log alone (an independent ledger of cards)."""
    hands = [(0,) * C.NRANKS] * 6
    for e in log:
        if isinstance(e, Dealt | Redealt):
            hands = [C.to_counts(C.parse_cards(h.cards)) for h in e.hands]
        elif isinstance(e, SatOut):
            hands[e.seat] = C.sub(hands[e.seat], C.to_counts(C.parse_cards(e.dead)))
        elif isinstance(e, Played | Burned):
            hands[e.seat] = C.sub(hands[e.seat], C.to_counts(C.parse_cards(e.cards)))
        elif isinstance(e, BurnFailed):
            hands[e.seat] = C.sub(hands[e.seat], C.to_counts(C.parse_cards(e.dead)))
        elif isinstance(e, TributePaid | TributeReturned):
            c = C.to_counts(C.parse_cards(e.cards))
            hands[e.from_seat] = C.sub(hands[e.from_seat], c)
            hands[e.to_seat] = C.add(hands[e.to_seat], c)
    return hands


def _check_game(state: State, log: list[Any]) -> None:
    assert state.phase == "over", "a random legal game must end"
    out = GAME.outcome(state)
    assert out is not None
    a, b = state.end.totals if state.end else (0, 0)
    assert a + b == 0
    assert sum(out.scores) == 0 and sum(out.net(6)) == 0
    assert sorted(state.places) == [1, 2, 3, 4, 5, 6]
    assert replay(GAME, GAME.initial(state.options, 6), log) == state
    assert _cards_from_log(log) == list(state.hands)
    assert C.add(state.pile, tuple(map(sum, zip(*state.hands, strict=True)))) == C.DECK
    out2 = GAME.outcome(replay(GAME, GAME.initial(state.options, 6), log))
    assert out2 == out  # replay equals live, down to the settlement and the carry
    assert decode_carry(out.carry) == (state.end.shao, state.end.men) if state.end else True


@SETTINGS
@given(seed=st.binary(min_size=1, max_size=16), timeouts=st.booleans())
def test_full_deal_conserves_216_cards_and_ends_zero_sum(seed: bytes, timeouts: bool) -> None:
    dealt: list[State] = []

    def check(s: State) -> None:
        assert sum(map(sum, s.hands)) + sum(s.pile) == 216
        assert all(x >= 0 for h in s.hands for x in h) and all(x >= 0 for x in s.pile)
        if len(dealt) % 7 == 0:
            _check_views(s)
        dealt.append(s)

    state, log = random_game(seed, check=check, timeouts=timeouts)
    first = next(e for e in log if isinstance(e, Dealt))
    assert [len(h.cards) for h in first.hands] == [36] * 6
    _check_game(state, log)


@SETTINGS
@given(seed=st.binary(min_size=1, max_size=16), size=st.integers(2, 5),
       timeouts=st.booleans(), early=st.booleans())
def test_small_hands_with_burns_end_zero_sum(seed: bytes, size: int, timeouts: bool,
                                             early: bool) -> None:
    opts = GAME.parse_options({"END_EARLY_WHEN_ONE_TEAM_LEFT": "on" if early else "off"})
    state, log = random_game(seed, opts, check=_check_views, timeouts=timeouts, hand_size=size)
    _check_game(state, log)
    fails = [e for e in log if isinstance(e, BurnFailed)]
    assert [e.place for e in fails] == [6, 5, 4, 3][: len(fails)]


@SETTINGS
@given(seed=st.binary(min_size=1, max_size=16))
def test_tribute_game_ends_and_cards_are_conserved(seed: bytes) -> None:
    prev, _ = random_game(seed + b"p", hand_size=3)
    previous = GAME.outcome(prev)
    state, log = random_game(seed, previous=previous, timeouts=True)
    paid = [e for e in log if isinstance(e, TributePaid)]
    assert previous is not None
    assert [(e.from_seat, e.to_seat, len(e.cards)) for e in paid] == [
        (previous.ranking[5], previous.ranking[0], 2), (previous.ranking[4], previous.ranking[1], 1)]
    _check_game(state, log)


@settings(max_examples=200, deadline=None)
@given(hand=st.lists(st.integers(0, 14), min_size=1, max_size=14),
       top=st.lists(st.integers(0, 14), min_size=1, max_size=5))
def test_answers_are_exactly_the_beating_sets(hand: list[int], top: list[int]) -> None:
    h, t = C.to_counts(hand), C.to_counts(top)
    if not C.is_set(t):
        return
    fast = sorted(C.answers(h, C.key(t)))
    brute = sorted(c for c in set(C.all_sets(h)) if C.beats(c, t))
    assert fast == brute
    assert len(set(fast)) == len(fast)
    for c in fast:  # anything beating a 够级 set is 够级 (§2.3)
        assert not C.is_gouji(t) or C.is_gouji(c)


SEATS6 = st.lists(st.integers(0, 5), max_size=3, unique=True)


@SETTINGS
@given(seed=st.binary(min_size=1, max_size=16), shao=SEATS6, men=SEATS6,
       ge_ming=st.booleans())
def test_shaogong_and_mengong_conserve_216_cards(seed: bytes, shao: list[int], men: list[int],
                                                 ge_ming: bool) -> None:
    opts = GAME.parse_options({"SHAO_GONG": "on", "MEN_GONG": "on",
                               "GE_MING": "on" if ge_ming else "off"})
    previous = Outcome(0, (0, 3, 2, 5, 4, 1), (2, -2, 2, -2, 2, -2), (), "finished", first=0,
                       carry=encode_carry(shao, men))

    def check(s: State) -> None:
        assert sum(map(sum, s.hands)) + sum(s.pile) == 216
        assert all(x >= 0 for h in s.hands for x in h)

    state, log = random_game(seed, opts, check=check, previous=previous, timeouts=True)
    paid = [e for e in log if isinstance(e, TributePaid)]
    sitting = state.sitting
    expected = [(p, (p + 3) % 6, k) for k, ps in (("shaogong", shao), ("mengong", men))
                for p in ps if sitting not in (p, (p + 3) % 6)]
    assert [(e.from_seat, e.to_seat, e.kind) for e in paid if e.kind != "luogong"] == expected
    _check_game(state, log)


@SETTINGS
@given(seed=st.binary(min_size=1, max_size=16), size=st.integers(2, 5),
       timeouts=st.booleans(), revolt=st.sampled_from(["one", "random"]))
def test_games_with_revolution_end_zero_sum(seed: bytes, size: int, timeouts: bool,
                                            revolt: str) -> None:
    opts = GAME.parse_options({"GE_MING": "on"})
    state, log = random_game(seed, opts, check=_check_views, timeouts=timeouts, hand_size=size,
                             revolt=revolt)
    _check_game(state, log)
    sat = [e for e in log if isinstance(e, SatOut)]
    assert len(sat) <= 1
    if sat:
        out = GAME.outcome(state)
        assert out is not None and state.places[sat[0].seat] == 4
        assert out.ranking[3] == sat[0].seat
        assert out.scores[sat[0].seat] == state.end.totals[sat[0].seat % 2] if state.end else 0
        assert sum(out.scores) == 0 and sum(out.net(6)) == 0
