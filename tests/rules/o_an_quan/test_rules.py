"""Ô ăn quan rules, Given–When–Then: given a position (events), when a command, then events or a rejection."""

from __future__ import annotations

from typing import Any

import pytest

from chieu.games.common import TimedOut, TurnPassed
from chieu.games.core import BadOptions, IllegalMove, InvalidCommand, Setup, replay
from chieu.games.o_an_quan import GAME
from chieu.games.o_an_quan.board import Direction
from chieu.games.o_an_quan.model import Captured, Ended, Refilled, Sow, Sowed, Started, State, scores
from chieu.games.o_an_quan.notation import format_position, parse_position
from chieu.games.o_an_quan.options import parse_options
from chieu.games.o_an_quan.scenario import HOOKS

CW, CCW = Direction.CW, Direction.CCW


def given(position: str, *, to_move: int = 0, stores: tuple[int, int] = (0, 0),
          quans: tuple[int, int] = (0, 0), moves: tuple[int, int] = (1, 1), **options: Any) -> State:
    board, quan = parse_position(position)
    state = GAME.initial(parse_options(options), 2)
    return GAME.evolve(state, Started(to_move, board, quan, stores, quans, (0, 0), moves, 30_000))


def when(state: State, seat: int, square: int, direction: Direction) -> tuple[list[Any], State]:
    events = list(GAME.decide(state, seat, Sow(square, direction), 0))
    return events, replay(GAME, state, events)


def test_setup_is_five_dan_per_square_and_two_quan() -> None:
    events = GAME.start(Setup(options=parse_options({}), players=2, seed=b"x", now_ms=0, first=0))
    state = replay(GAME, GAME.initial(parse_options({}), 2), events)
    assert format_position(state.board, state.quan) == "[Q+0 | 5 5 5 5 5 | Q+0 | 5 5 5 5 5]"
    assert state.to_move == 0 and state.deadline_ms == 30_000


def test_first_player_alternates_after_the_first_game() -> None:
    o = parse_options({})
    first = GAME.start(Setup(options=o, players=2, seed=b"s", now_ms=0))[0].first
    again = GAME.start(Setup(options=o, players=2, seed=b"s", now_ms=0))[0].first
    assert first == again  # the seed decides, deterministically
    prev = GAME.outcome(replay(GAME, GAME.initial(o, 2), [
        Started(first, (0,) * 12, (False, False), (25, 25), (1, 1), (0, 0), (1, 1), 0),
        Ended("quans_gone", (0, 0))]))
    assert prev is not None and prev.first == first
    nxt = GAME.start(Setup(options=o, players=2, seed=b"s", now_ms=0, previous=prev))[0].first
    assert nxt == 1 - first


def test_sowing_relays_and_captures_a_quan_then_passes_the_turn() -> None:
    state = given("[Q+0 | 5 5 5 5 5 | Q+0 | 5 5 5 5 5]")
    events, after = when(state, 0, 1, CW)
    assert events[0] == Sowed(0, 1, CW, (7,), (1, 0, 6, 6, 6, 6, 1, 0, 6, 6, 6, 6))
    assert events[1] == Captured(0, 0, 1, True)
    assert events[2] == TurnPassed(1, 30_000)
    assert after.stores == (1, 0) and after.quans_captured == (1, 0) and after.to_move == 1


def test_a_capture_never_resumes_sowing_and_the_chain_needs_an_empty_dan_gap() -> None:
    state = given("[Q+0 | 1 0 0 3 0 | Q+2 | 0 4 0 0 5]", stores=(20, 15))
    events, after = when(state, 0, 1, CCW)
    assert [e.square for e in events if isinstance(e, Captured)] == [4, 6, 8]
    assert after.board[11] == 5  # N11 untouched: two empty squares stopped the chain


@pytest.mark.parametrize(
    ("seat", "square", "code"),
    [(0, 2, "empty_square"), (0, 8, "not_your_square"), (0, 0, "quan_square"), (0, 6, "quan_square"),
     (1, 8, "not_your_turn")],
)
def test_illegal_moves_are_refused_with_a_stable_code(seat: int, square: int, code: str) -> None:
    state = given("[Q+0 | 1 0 0 3 0 | Q+2 | 0 4 0 0 5]", stores=(20, 15))
    with pytest.raises(IllegalMove) as err:
        GAME.decide(state, seat, Sow(square, CW), 0)
    assert err.value.code == code


@pytest.mark.parametrize("square", [-1, 12, 99])
def test_squares_off_the_board_are_malformed(square: int) -> None:
    state = given("[Q+0 | 1 0 0 3 0 | Q+2 | 0 4 0 0 5]", stores=(20, 15))
    with pytest.raises(InvalidCommand) as err:
        GAME.decide(state, 0, Sow(square, CW), 0)
    assert err.value.code == "bad_square"


def test_refill_takes_own_store_first_then_borrows() -> None:
    state = given("[0 | 0 0 0 0 0 | Q+2 | 4 3 4 3 2]", stores=(2, 30), quans=(1, 0))
    events, after = when(state, 0, 3, CCW)
    assert events[0] == Refilled(0, 2, 3)
    assert after.borrowed == (3, 0) and after.stores == (0, 27)


def test_refill_with_a_full_store_borrows_nothing() -> None:
    state = given("[0 | 0 0 0 0 0 | Q+2 | 4 3 4 3 2]", stores=(12, 20), quans=(1, 0))
    events, after = when(state, 0, 1, CW)
    assert events[0] == Refilled(0, 5, 0)
    assert after.borrowed == (0, 0)


OQ09_AFTER = {"position": "[0 | 1 1 0 2 0 | Q+3 | 0 4 5 4 3]", "to_move": "B", "stores": [0, 27],
              "quans": [1, 0], "borrowed": [3, 0]}


def test_a_scenario_position_states_the_debt_and_scoring_pays_it_back() -> None:
    o = parse_options({})
    state = replay(GAME, GAME.initial(o, 2), HOOKS.position(o, 2, OQ09_AFTER, 0))
    assert state.borrowed == (3, 0) and state.to_move == 1
    events, after = when(state, 1, 11, CW)
    assert events[-1] == Ended("quans_gone", (1, 16))
    assert scores(after) == (0 + 10 + 1 - 3, 33 + 10 + 16 + 3)


@pytest.mark.parametrize("bad", [{"borrowed": [3]}, {"borrowed": [-1, 0]}, {"borrowed": "3 0"},
                                 {"stores": [0, 26]}, {"to_move": "C"}])
def test_a_scenario_position_refuses_what_does_not_add_up(bad: dict[str, Any]) -> None:
    o = parse_options({})
    with pytest.raises(ValueError):
        HOOKS.position(o, 2, {**OQ09_AFTER, **bad}, 0)


def test_the_game_ends_when_both_quans_are_gone_and_sides_are_swept() -> None:
    state = given("[0 | 1 0 1 0 0 | Q+3 | 2 0 1 0 3]", stores=(20, 19), quans=(1, 0))
    events, after = when(state, 0, 3, CCW)
    assert events[-1] == Ended("quans_gone", (2, 6))
    assert scores(after) == (45, 25)
    outcome = GAME.outcome(after)
    assert outcome is not None and outcome.winner == 0 and outcome.net(2) == (1, -1)
    with pytest.raises(IllegalMove) as err:
        GAME.decide(after, 1, Sow(8, CW), 0)
    assert err.value.code == "game_over"


def test_equal_scores_are_a_draw_that_pays_nothing() -> None:
    state = given("[0 | 0 0 1 0 0 | Q+0 | 0 0 0 0 0]", stores=(14, 35), quans=(1, 0))
    events, after = when(state, 0, 3, CCW)
    assert isinstance(events[-1], Ended)
    outcome = GAME.outcome(after)
    assert outcome is not None and outcome.winner is None and outcome.transfers == ()


def test_max_moves_ends_the_game_without_counting_quan_squares() -> None:
    state = given("[Q+0 | 5 5 5 5 5 | Q+0 | 5 5 5 5 5]", maxMoves=1)
    events, after = when(state, 0, 3, CCW)
    assert isinstance(events[-1], Ended) and events[-1].reason == "max_moves"
    a, b = scores(after)
    assert a + b == 50 - after.board[0] - after.board[6]  # no quan captured yet


def test_timeout_plays_the_first_non_empty_square_counter_clockwise() -> None:
    state = given("[Q+0 | 0 0 0 3 1 | Q+2 | 0 4 0 0 1]", stores=(20, 19))
    events = GAME.on_timeout(state, 0, 31_000)
    assert events[0] == TimedOut(0)
    assert isinstance(events[1], Sowed) and (events[1].square, events[1].direction) == (4, CCW)


@pytest.mark.parametrize(
    "options",
    [{"quanValue": 7}, {"payout": "double"}, {"maxMoves": 0}, {"quanNon": "yes"}, {"bogus": 1},
     {"turnSeconds": 0}, {"firstPlayer": "me"}],
)
def test_bad_options_are_refused(options: dict[str, Any]) -> None:
    with pytest.raises(BadOptions):
        parse_options(options)


def test_options_round_trip_under_the_rules_names() -> None:
    o = parse_options({"quanValue": 5, "payout": "perPoint", "quanNon": True})
    assert parse_options(GAME.option_values(o)) == o
