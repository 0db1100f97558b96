"""够级 benchmarks (issue 8).

1. All legal plays for a 36-card hand against a top set: median ≤ 1 ms, over 200 dealt hands,
   each against a random set of 1–6 cards that seat 0 led from his own hand (``GAME.legal``: every
   Play plus Pass, as commands). Baseline in the same run: the brute-force generator (every set
   the hand can form, kept when ``beats`` says so) on the same hands and tops.
2. A whole random game (six seats, every decide + evolve, random legal choices including 捎牌):
   median ≤ 200 ms over 30 seeds. Baseline in the same run: replaying the same games' event logs
   (evolve only), i.e. the share of the time that is pure bookkeeping.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from chieu.games import fair
from chieu.games.core import Setup, replay
from chieu.games.gouji import cards as C
from chieu.games.gouji.game import GAME
from chieu.games.gouji.model import Play, State
from tests.benchmarks.common import line, median
from tests.rules.gouji.randgame import random_game


def _positions(n: int) -> list[tuple[State, C.Counts]]:
    """Dealt games where seat 0 led a random set of 1–6 of his cards; seat 1 (36 cards) answers."""
    opts = GAME.parse_options({"TRIBUTE": "none"})
    out: list[tuple[State, C.Counts]] = []
    i = 0
    while len(out) < n:
        i += 1
        seed = i.to_bytes(4, "big")
        s = replay(GAME, GAME.initial(opts, 6), GAME.start(Setup(opts, 6, seed, 0, first=0)))
        sets = [c for c in C.all_sets(s.hands[0]) if 1 <= sum(c) <= 6]
        top = sets[fair.Stream(seed, "bench").below(len(sets))]
        s = replay(GAME, s, GAME.decide(s, 0, Play(C.names(C.from_counts(top))), 0))
        if s.to_act == 1:
            out.append((s, top))
    return out


def _brute(hand: C.Counts, top: C.Counts) -> list[C.Counts]:
    return [c for c in set(C.all_sets(hand)) if C.beats(c, top)]


def bench_legal() -> None:
    cases = _positions(200)
    fast: list[float] = []
    slow: list[float] = []
    for s, top in cases:
        t0 = time.perf_counter()
        moves = GAME.legal(s, 1)
        t1 = time.perf_counter()
        ref = _brute(s.hands[1], top)
        t2 = time.perf_counter()
        assert len(moves) == len(ref) + 1  # + Pass
        fast.append((t1 - t0) * 1000)
        slow.append((t2 - t1) * 1000)
    m, b = median(fast), median(slow)
    line("legal plays, 36 cards vs a top set (median)", m, "ms", "≤ 1 ms", m <= 1.0,
         f"baseline brute force {b:.3f} ms, ratio {m / b:.3f}")


def bench_game() -> None:
    games: list[float] = []
    replays: list[float] = []
    lengths: list[int] = []
    for i in range(30):
        seed = b"bench-game-" + i.to_bytes(2, "big")
        t0 = time.perf_counter()
        state, log = random_game(seed)
        t1 = time.perf_counter()
        again = replay(GAME, GAME.initial(state.options, 6), log)
        t2 = time.perf_counter()
        assert again == state and state.phase == "over"
        games.append((t1 - t0) * 1000)
        replays.append((t2 - t1) * 1000)
        lengths.append(len(log))
    m, b = median(games), median(replays)
    line("whole random game, decide + evolve (median)", m, "ms", "≤ 200 ms", m <= 200.0,
         f"baseline evolve-only replay {b:.3f} ms, ratio {m / b:.1f}; "
         f"median {int(median([float(x) for x in lengths]))} events")


def main() -> None:
    print("够级 (gouji) benchmarks")
    bench_legal()
    bench_game()


if __name__ == "__main__":
    main()
