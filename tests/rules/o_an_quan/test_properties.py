"""Properties of Ô ăn quan that must always hold, over random games (Hypothesis)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from chieu.games.core import Setup, replay
from chieu.games.o_an_quan import GAME
from chieu.games.o_an_quan.board import DAN_TOTAL, SIDES
from chieu.games.o_an_quan.model import State, scores
from chieu.games.o_an_quan.options import parse_options

OPTIONS = st.fixed_dictionaries({}, optional={
    "quanValue": st.sampled_from([10, 5]),
    "quanNon": st.booleans(),
    "noQuanCaptureFirstTurn": st.booleans(),
    "payout": st.sampled_from(["fixed", "perPoint"]),
    "maxMoves": st.integers(1, 400),
})


def dan_everywhere(s: State) -> int:
    """Dân on the board + in stores + swept home at the end (borrowing moves stones between stores)."""
    return sum(s.board) + sum(s.stores) + sum(s.swept)


def play_random(data: Any, raw_options: dict[str, Any]) -> tuple[State, list[Any]]:
    options = parse_options(raw_options)
    seed = data.draw(st.binary(min_size=1, max_size=8), label="seed")
    state = GAME.initial(options, 2)
    log = list(GAME.start(Setup(options=options, players=2, seed=seed, now_ms=0)))
    state = replay(GAME, state, log)
    now = 0
    while GAME.outcome(state) is None:
        seat = state.to_move
        assert seat is not None
        moves = GAME.legal(state, seat)
        assert moves, "a running game always has a legal move"
        move = data.draw(st.sampled_from(moves), label="move")
        now += 1000
        events = list(GAME.decide(state, seat, move, now))
        for e in events:
            state = GAME.evolve(state, e)
            assert dan_everywhere(state) == DAN_TOTAL
            assert sum(state.quan) + sum(state.quans_captured) == 2
        log.extend(events)
    return state, log


@settings(max_examples=60, deadline=None)
@given(data=st.data(), raw=OPTIONS)
def test_random_games_end_and_conserve_pieces_and_points(data: Any, raw: dict[str, Any]) -> None:
    state, _ = play_random(data, raw)
    a, b = scores(state)
    qv = state.options.quan_value
    if state.ended == "quans_gone":
        assert a + b == DAN_TOTAL + 2 * qv
    else:  # max_moves / no_refill: stones left in quan squares are not counted (OQ-R13)
        uncounted = state.board[0] + state.board[6] + qv * sum(state.quan)
        assert a + b == DAN_TOTAL + 2 * qv - uncounted
    outcome = GAME.outcome(state)
    assert outcome is not None
    assert sum(outcome.net(2)) == 0
    if outcome.winner is not None:
        assert outcome.scores[outcome.winner] > outcome.scores[1 - outcome.winner]


@settings(max_examples=40, deadline=None)
@given(data=st.data(), raw=OPTIONS)
def test_replaying_the_log_gives_the_live_state(data: Any, raw: dict[str, Any]) -> None:
    state, log = play_random(data, raw)
    assert replay(GAME, GAME.initial(parse_options(raw), 2), log) == state


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_every_legal_move_is_accepted_and_nothing_else_on_own_side(data: Any) -> None:
    options = parse_options({})
    state = replay(GAME, GAME.initial(options, 2),
                   GAME.start(Setup(options=options, players=2, seed=b"p", now_ms=0)))
    for _ in range(data.draw(st.integers(0, 30))):
        if GAME.outcome(state) is not None:
            return
        seat = state.to_move
        assert seat is not None
        legal = GAME.legal(state, seat)
        for move in legal:
            GAME.decide(state, seat, move, 0)  # must not raise
        assert GAME.legal(state, 1 - seat) == []
        own_nonempty = [i for i in SIDES[seat] if state.board[i]]
        if own_nonempty:
            assert {m.square for m in legal} == set(own_nonempty)
        state = replay(GAME, state, GAME.decide(state, seat, data.draw(st.sampled_from(legal)), 0))


@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_timeouts_alone_finish_a_game(data: Any) -> None:
    options = parse_options({"maxMoves": 400})
    seed = data.draw(st.binary(min_size=1, max_size=4))
    state = replay(GAME, GAME.initial(options, 2), GAME.start(Setup(options=options, players=2, seed=seed, now_ms=0)))
    for _ in range(401):
        if GAME.outcome(state) is not None:
            break
        (deadline,) = GAME.deadlines(state)
        state = replay(GAME, state, GAME.on_timeout(state, deadline.seat, deadline.at_ms))
    assert GAME.outcome(state) is not None
