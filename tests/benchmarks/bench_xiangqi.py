"""中国象棋 (Xiangqi) benchmarks (issue 6), each beside a baseline measured in the same run.

1. perft(4) from the start position (3,290,240 leaf nodes): leaf nodes per second on one core
   (target ≥ 100,000/s). Baseline: Fairy-Stockfish through its Python binding (``pyffish``),
   perft(3) by the same method (the last ply counted from the legal-move list).
2. Checking one move's legality (target ≤ 50 µs): ``board.is_legal`` and a whole
   ``GAME.decide`` (legality, notation, check, mate and repetition tests, FEN) on positions
   from random games, and decide + evolve for information; baseline: one
   ``pyffish.legal_moves`` call on the same positions.
"""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from chieu.games.xiangqi import board as bd
from chieu.games.xiangqi.game import GAME
from chieu.games.xiangqi.model import Move, State
from chieu.games.xiangqi.options import parse_options
from chieu.games.xiangqi.scenario import HOOKS
from tests.benchmarks.common import line, median

try:
    import pyffish
except ImportError:  # the baseline is optional; the measurement of ours is not
    pyffish = None


def ffish_perft(moves: list[str], depth: int) -> int:
    legal = pyffish.legal_moves("xiangqi", bd.START_FEN, moves)
    if depth == 1:
        return len(legal)
    return sum(ffish_perft([*moves, m], depth - 1) for m in legal)


def bench_perft() -> None:
    board, side = bd.parse_fen(bd.START_FEN)
    t = time.perf_counter()
    nodes = bd.perft(board, side, 4)
    ours = nodes / (time.perf_counter() - t)
    assert nodes == 3_290_240, nodes
    extra = ""
    if pyffish is not None:
        t = time.perf_counter()
        base_nodes = ffish_perft([], 3)
        base = base_nodes / (time.perf_counter() - t)
        assert base_nodes == 79_666, base_nodes
        print(f"  baseline: pyffish {pyffish.version()} perft(3) = {base_nodes} at {base:,.0f} nodes/s")
        extra = f"(ratio to pyffish: {ours / base:.1f}x)"
    else:
        print("  baseline: pyffish is not installed (pip install pyffish); ratio not measured")
    line("perft(4) leaf nodes/s", ours, "nodes/s", ">= 100000", ours >= 100_000, extra)


def sample_positions(n: int, rng: random.Random) -> list[tuple[State, list[str], str]]:
    """(state, ICCS moves from the start, a legal move) from random games of our own."""
    out = []
    options = parse_options({"TIME_CONTROL": "none"})
    while len(out) < n:
        state = GAME.initial(options, 2)
        for e in HOOKS.position(options, 2, {}, 0):
            state = GAME.evolve(state, e)
        moves: list[str] = []
        for _ in range(rng.randrange(0, 80)):
            if state.to_move is None:
                break
            legal = GAME.legal(state, state.to_move)
            move = rng.choice(legal)
            for e in GAME.decide(state, state.to_move, move, 0):
                state = GAME.evolve(state, e)
            moves.append(move.move)
        if state.to_move is not None:
            out.append((state, moves, rng.choice(GAME.legal(state, state.to_move)).move))
    return out


def bench_legality() -> None:
    samples = sample_positions(300, random.Random(6))
    boards = [(list(s.board), 1 if s.to_move == 0 else -1, bd.parse_move(m)) for s, _, m in samples]

    def run_is_legal() -> float:
        t = time.perf_counter()
        for board, side, move in boards:
            bd.is_legal(board, side, move)
        return (time.perf_counter() - t) / len(boards) * 1e6

    def run_decide() -> float:
        t = time.perf_counter()
        for state, _, move in samples:
            assert state.to_move is not None
            GAME.decide(state, state.to_move, Move(move), 0)
        return (time.perf_counter() - t) / len(samples) * 1e6

    def run_decide_evolve() -> float:
        t = time.perf_counter()
        for state, _, move in samples:
            assert state.to_move is not None
            for e in GAME.decide(state, state.to_move, Move(move), 0):
                GAME.evolve(state, e)
        return (time.perf_counter() - t) / len(samples) * 1e6

    legal_us = median([run_is_legal() for _ in range(7)])
    decide_us = median([run_decide() for _ in range(7)])
    both_us = median([run_decide_evolve() for _ in range(7)])
    extra = extra_d = ""
    if pyffish is not None:
        fens = [bd.to_fen(s.board, 1 if s.to_move == 0 else -1) for s, _, _ in samples]

        def run_ffish() -> float:
            t = time.perf_counter()
            for fen in fens:
                pyffish.legal_moves("xiangqi", fen, [])
            return (time.perf_counter() - t) / len(fens) * 1e6

        base_us = median([run_ffish() for _ in range(7)])
        print(f"  baseline: pyffish legal_moves(fen) {base_us:.1f} µs per position")
        extra = f"(ratio to pyffish legal_moves: {base_us / legal_us:.1f}x faster)"
        extra_d = f"(ratio to pyffish legal_moves: {base_us / decide_us:.0f}x faster)"
    line("one move's legality (board.is_legal)", legal_us, "µs", "<= 50", legal_us <= 50, extra)
    line("one move through GAME.decide", decide_us, "µs", "<= 50", decide_us <= 50, extra_d)
    line("one move through decide + evolve", both_us, "µs", "(no target)", True,
         "(the state the table keeps after the move)")


def main() -> None:
    print("xiangqi: perft")
    bench_perft()
    print("xiangqi: legality of one move")
    bench_legality()


if __name__ == "__main__":
    main()
