"""Properties of Xiangqi over random legal games (Hypothesis).

After every move the mover's own king is not in check and the two kings do not face on an
open file; ``decide`` accepts exactly the moves that ``legal`` lists; replaying the log from
the initial state gives the live state.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from chieu.games.core import Setup, replay
from chieu.games.xiangqi.board import (
    BLACK,
    RED,
    K,
    count_legal,
    has_legal_move,
    in_check,
    parse_fen,
    perft,
)
from chieu.games.xiangqi.game import GAME
from chieu.games.xiangqi.model import Ended, Move, Moved, State, fen_of
from chieu.games.xiangqi.options import parse_options

OPTIONS = st.fixed_dictionaries({}, optional={
    "FACING_KINGS": st.sampled_from(["illegal", "mover-loses"]),
    "CHASE_RULE": st.sampled_from(["none", "axf"]),
    "MOVE_LIMIT": st.sampled_from(["120-per-side", "120-plies"]),
    "CARRY_OVER": st.sampled_from(["on", "off"]),
})


def kings_face(board: tuple[int, ...]) -> bool:
    red, black = board.index(K), board.index(-K)
    if red % 9 != black % 9:
        return False
    return not any(board[s] for s in range(red + 9, black, 9))


def play_random(data: Any, raw: dict[str, Any], max_plies: int) -> tuple[State, list[Any]]:
    options = parse_options(raw)
    state = GAME.initial(options, 2)
    log = list(GAME.start(Setup(options=options, players=2, seed=b"s", now_ms=0)))
    state = replay(GAME, state, log)
    now = 0
    for _ in range(max_plies):
        if GAME.outcome(state) is not None:
            break
        seat = state.to_move
        assert seat is not None
        moves = GAME.legal(state, seat)
        assert moves, "a running game always has a legal move (else it has ended)"
        assert all(isinstance(m, Move) for m in moves)
        move = data.draw(st.sampled_from(moves), label="move")
        now += data.draw(st.integers(0, 20_000), label="think_ms")
        events = GAME.decide(state, seat, move, now)
        assert isinstance(events[0], Moved)
        for e in events:
            state = GAME.evolve(state, e)
        log.extend(events)
        board = list(state.board)
        mover = RED if seat == 0 else BLACK
        assert not in_check(board, mover), "a move left its own king in check"
        assert not kings_face(state.board), "the kings face each other"
        assert events[0].check == in_check(board, -mover)
        assert parse_fen(events[0].fen)[0] == board
        assert has_legal_move(board, -mover) == (count_legal(board, -mover) > 0)
    return state, log


@settings(max_examples=25, deadline=None)
@given(data=st.data(), raw=OPTIONS)
def test_random_games_keep_kings_safe_and_replay_equals_live(data: Any, raw: dict[str, Any]) -> None:
    state, log = play_random(data, raw, max_plies=80)
    assert replay(GAME, GAME.initial(parse_options(raw), 2), log) == state
    assert parse_fen(fen_of(state))[0] == list(state.board)


@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_every_legal_move_is_accepted_and_nothing_else_is(data: Any) -> None:
    state, _ = play_random(data, {}, max_plies=data.draw(st.integers(0, 30), label="plies"))
    if state.to_move is None:
        return
    legal = {m.move for m in GAME.legal(state, state.to_move)}
    board = list(state.board)
    files = "abcdefghi"
    candidates = [f"{files[f % 9]}{f // 9}{files[t % 9]}{t // 9}"
                  for f in range(90) if board[f] for t in range(90) if t != f]
    accepted = set()
    for text in candidates:
        try:
            GAME.decide(state, state.to_move, Move(text), state.turn_started_ms)
            accepted.add(text)
        except ValueError:
            pass
    assert accepted == legal
    side = RED if state.to_move == 0 else BLACK
    assert perft(board, side, 1) == len(legal)


@settings(max_examples=20, deadline=None)
@given(data=st.data())
def test_a_game_that_ends_has_a_settlement_summing_to_zero(data: Any) -> None:
    state, log = play_random(data, {"MOVE_LIMIT": "120-plies"}, max_plies=130)
    out = GAME.outcome(state)
    assert out is not None, "120 plies end the game at the latest"
    assert isinstance(log[-1], Ended)
    assert sum(out.net(2)) == 0
    assert sum(out.scores) == 0
    assert out.scores in ((2, -2), (-2, 2), (0, 0))
