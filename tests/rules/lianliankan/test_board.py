"""The 连连看 path finder, greedy solver and layout generation (§4.1–4.2)."""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from chieu.games.fair import Stream
from chieu.games.lianliankan.board import (
    Board,
    brute_turns,
    find_pair,
    generate,
    greedy_remaining,
    reshuffle,
    tile_set,
)


@st.composite
def boards(draw: st.DrawFn) -> tuple[int, int, list[int]]:
    rows = draw(st.integers(1, 6))
    cols = draw(st.integers(1, 8))
    cells = draw(st.lists(st.sampled_from([0, 0, 0, 1, 2, 3]), min_size=rows * cols,
                          max_size=rows * cols))
    return rows, cols, cells


@settings(max_examples=150, deadline=None)
@given(boards())
def test_path_finder_agrees_with_brute_force(board: tuple[int, int, list[int]]) -> None:
    rows, cols, cells = board
    b = Board.of(rows, cols, cells)
    for x in range(rows * cols):
        for y in range(rows * cols):
            assert b.turns(x, y) == brute_turns(rows, cols, cells, x, y), (x, y)


def test_the_outer_ring_is_one_cell_wide_and_enough() -> None:
    # A at both ends of a full row: up into the ring, across, down.
    assert Board.of(1, 3, [1, 2, 1]).turns(0, 2) == 2
    # Three turns would be needed: not allowed.
    assert Board.of(2, 2, [1, 2, 2, 1]).turns(0, 3) is None


@settings(max_examples=12, deadline=None)
@given(seed=st.binary(min_size=1, max_size=8),
       size=st.sampled_from([(8, 18), (6, 14), (9, 16), (12, 24)]))
def test_every_generated_layout_is_solved_by_the_greedy_solver(
    seed: bytes, size: tuple[int, int]
) -> None:
    rows, cols = size
    cells = generate(rows, cols, Stream(seed, "layout"))
    assert Counter(cells) == Counter(tile_set(rows, cols))
    assert all(n % 2 == 0 for n in Counter(cells).values())
    assert greedy_remaining(rows, cols, cells) == []


def test_generation_is_deterministic_in_the_seed() -> None:
    a = generate(8, 18, Stream(b"x", "layout"))
    assert a == generate(8, 18, Stream(b"x", "layout"))
    assert a != generate(8, 18, Stream(b"y", "layout"))


def test_greedy_solver_reports_a_stuck_board() -> None:
    assert greedy_remaining(2, 2, [1, 2, 2, 1]) == [0, 1, 2, 3]
    assert greedy_remaining(2, 2, [1, 1, 2, 2]) == []


def test_reshuffle_keeps_the_tiles_and_cells_and_finds_a_move() -> None:
    dead = Board.of(2, 3, [1, 2, 0, 2, 1, 0])
    assert find_pair(dead) is None
    new = reshuffle(dead, Stream(b"s", "reshuffle:0:0"))
    assert find_pair(new) is not None
    assert Counter(new.cells) == Counter(dead.cells)
    assert [i for i, p in enumerate(new.cells) if p] == [0, 1, 3, 4]
