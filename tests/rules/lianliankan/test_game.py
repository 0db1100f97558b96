"""连连看 as a game: the shared layout, simultaneous play, views, time limit, settlement."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chieu.games.core import BadOptions, IllegalMove, Setup
from chieu.games.lianliankan import GAME
from chieu.games.lianliankan.board import greedy_remaining
from chieu.games.lianliankan.model import (
    Cell,
    Leave,
    Remove,
    Removed,
    Started,
    State,
)
from chieu.games.lianliankan.options import Options


def started(players: int, seed: bytes = b"seed", options: dict[str, Any] | None = None,
            now_ms: int = 0) -> State:
    o = GAME.parse_options(options or {"BOARD": "14x6"})
    s = GAME.initial(o, players)
    for e in GAME.start(Setup(o, players, seed, now_ms)):
        s = GAME.evolve(s, e)
    return s


def test_options() -> None:
    assert GAME.option_values(GAME.parse_options({})) == {"board": "18x8", "timeLimitSeconds": None}
    assert GAME.parse_options({"TIME_LIMIT": 90}).time_limit == 90
    for bad in ({"BOARD": "10x10"}, {"TIME_LIMIT": 0}, {"TIME_LIMIT": True}, {"HINTS": 1}):
        with pytest.raises(BadOptions):
            GAME.parse_options(bad)


def test_every_player_gets_the_same_solvable_layout() -> None:
    o = Options()
    events = GAME.start(Setup(o, 5, b"hand-7", 0))
    (ev,) = events
    assert isinstance(ev, Started) and (ev.rows, ev.cols) == (8, 18)
    assert len({lay.cells for lay in ev.layouts}) == 1 and len(ev.layouts) == 5
    assert greedy_remaining(8, 18, ev.layouts[0].cells) == []
    (other,) = GAME.start(Setup(o, 5, b"hand-8", 0))
    assert isinstance(other, Started) and other.layouts[0] != ev.layouts[0]


def test_views_show_own_board_and_the_others_counts_only() -> None:
    s = started(3)
    move = GAME.legal(s, 1)[0]
    for e in GAME.decide(s, 1, move, 0):
        s = GAME.evolve(s, e)
    v0, v1, spectator = GAME.view(s, 0), GAME.view(s, 1), GAME.view(s, None)
    assert v0.board == s.boards[0].cells and v1.board == s.boards[1].cells
    assert v0.board != v1.board
    assert v0.remaining == v1.remaining == (84, 82, 84)
    assert spectator.board == () and spectator.remaining == (84, 82, 84)
    assert "seed" not in {f for f in type(v0).__slots__}


def test_a_removal_draws_the_path_its_view_showed() -> None:
    """What happened is drawable from the events alone: Removed carries the pair's path, the
    one the remover's view offered with the pair; nobody else's view offers it."""
    s = started(3)
    v = GAME.view(s, 1)
    assert [c.leave for c in v.legal] == [Leave()] and v.legal_pairs
    pair = v.legal_pairs[-1]
    (removed,) = GAME.decide(s, 1, Remove(pair.first, pair.second), 0)
    assert isinstance(removed, Removed) and removed.path == pair.path
    assert (removed.path[0].row, removed.path[0].col) == (pair.first.row, pair.first.col)
    assert (removed.path[-1].row, removed.path[-1].col) == (pair.second.row, pair.second.col)
    assert GAME.view(s, None).legal_pairs == () and GAME.view(s, None).legal == ()


def test_moves_of_different_seats_commute() -> None:
    # Simultaneous play: whichever order the log takes, both moves are accepted and the
    # resulting state is the same (a retry after a log conflict never refuses a valid move).
    s = started(4)
    m0 = GAME.legal(s, 0)[0]
    m3 = GAME.legal(s, 3)[-2]
    a = s
    for seat, m in ((0, m0), (3, m3)):
        for e in GAME.decide(a, seat, m, 0):
            a = GAME.evolve(a, e)
    b = s
    for seat, m in ((3, m3), (0, m0)):
        for e in GAME.decide(b, seat, m, 0):
            b = GAME.evolve(b, e)
    assert a.boards == b.boards and a.boards[0] != s.boards[0] and a.boards[3] != s.boards[3]


def test_time_limit_puts_every_playing_seat_on_the_clock() -> None:
    s = started(3, options={"BOARD": "14x6", "TIME_LIMIT": 120}, now_ms=5000)
    assert [(d.seat, d.at_ms) for d in GAME.deadlines(s)] == [(0, 125000), (1, 125000), (2, 125000)]
    for e in GAME.decide(s, 1, Leave(), 0):
        s = GAME.evolve(s, e)
    assert [d.seat for d in GAME.deadlines(s)] == [0, 2]
    assert GAME.deadlines(started(3)) == ()


def test_a_rejected_move_changes_nothing() -> None:
    s = started(2)
    before = s
    with pytest.raises(IllegalMove):
        GAME.decide(s, 0, Remove(Cell(0, 0), Cell(0, 0)), 0)
    assert s == before


@settings(max_examples=8, deadline=None)
@given(seed=st.binary(min_size=1, max_size=8), players=st.integers(2, 6),
       choice_seed=st.integers(0, 2**32))
def test_random_simultaneous_games_conserve_tiles_pay_zero_sum_and_replay(
    seed: bytes, players: int, choice_seed: int
) -> None:
    rnd = random.Random(choice_seed)
    o = Options(board="14x6")
    s = GAME.initial(o, players)
    log: list[Any] = list(GAME.start(Setup(o, players, seed, 0)))
    for e in log:
        s = GAME.evolve(s, e)
    start = Counter(s.boards[0].cells)
    while s.finished is None:
        seat = rnd.randrange(players)
        if seat in s.left:
            continue
        moves = [m for m in GAME.legal(s, seat) if isinstance(m, Remove)]
        assert moves, "a playing seat always has a removable pair (dead boards are re-shuffled)"
        cmd: Any = Leave() if rnd.random() < 0.003 else rnd.choice(moves)
        events = list(GAME.decide(s, seat, cmd, 0))
        for e in events:
            s = GAME.evolve(s, e)
        log += events
        for b in s.boards:
            left = Counter(p for p in b.cells if p)
            assert all(n % 2 == 0 and n <= start[p] for p, n in left.items())
    out = GAME.outcome(s)
    assert out is not None and sum(out.scores) == 0 and sum(out.net(players)) == 0
    assert list(out.net(players)) == list(out.scores)
    assert sorted(out.ranking) == list(range(players))
    # each payment is worded as the race's (not Phỏm's "rank": nhất, nhì, ba, bét)
    assert {t.reason for t in out.transfers} <= {"race_place"}
    r = GAME.initial(o, players)
    for e in log:
        r = GAME.evolve(r, e)
    assert r == s
