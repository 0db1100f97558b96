"""The 连连看 path finder, greedy solver and layout generation (§4.1–4.2)."""

from __future__ import annotations

import itertools
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
    path,
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


@settings(max_examples=150, deadline=None)
@given(boards())
def test_the_drawn_path_joins_the_pair_through_empty_cells_with_the_fewest_turns(
        board: tuple[int, int, list[int]]) -> None:
    """``path``'s corners (what a view's pair and a Removed event carry): from the first tile to
    the second in straight segments over empty cells and the ring, turning exactly as few
    times as the path finder says; ``None`` exactly when no pair."""
    rows, cols, cells = board
    b = Board.of(rows, cols, cells)

    def empty(r: int, c: int) -> bool:
        return not (0 <= r < rows and 0 <= c < cols) or not cells[r * cols + c]

    for x in range(rows * cols):
        for y in range(rows * cols):
            corners = path(b, x, y)
            turns = b.turns(x, y)
            assert (corners is None) == (turns is None), (x, y)
            if corners is None:
                continue
            assert corners[0] == divmod(x, cols) and corners[-1] == divmod(y, cols)
            assert len(corners) - 2 == turns
            for (r1, c1), (r2, c2) in itertools.pairwise(corners):
                assert (r1 == r2) != (c1 == c2), "a segment is straight and not empty"
                assert min(r1, r2) >= -1 and max(r1, r2) <= rows and min(c1, c2) >= -1 and max(c1, c2) <= cols
                steps = max(abs(r2 - r1), abs(c2 - c1))
                dr, dc = (r2 - r1) // steps, (c2 - c1) // steps
                inner = [(r1 + dr * i, c1 + dc * i) for i in range(1, steps)]
                assert all(empty(r, c) for r, c in inner), (x, y, corners)
            assert all(empty(r, c) for r, c in corners[1:-1]), (x, y, corners)


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
