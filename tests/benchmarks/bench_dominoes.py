"""Đô Mi Nô benchmarks (issue 9 sets no Đô Mi Nô target; these guard the rules core's cost).

1. Replay: events folded per second on one core (target ≥ 100,000/s, as for every rules core),
   beside a baseline measured in the same run: the bare cost of a function call per event.
2. The end of a blocked hand (triệt): the blocker / gài triệt search of DM-R11–R12 with its
   forced continuations, per blocked hand (target ≤ 5 ms, a small part of a 20 s turn), beside
   the plain end check (is the position dead?) of the same hands.
"""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from chieu.games.core import Setup
from chieu.games.dominoes import GAME
from chieu.games.dominoes.model import State
from chieu.games.dominoes.options import Options
from chieu.games.dominoes.tiles import dead, find_assistant, find_blocker
from tests.benchmarks.common import line, median, pct


def random_hands(n: int, rng: random.Random) -> list[tuple[int, list[Any], State]]:
    options = Options()
    out = []
    for i in range(n):
        players = 2 + i % 3
        s = GAME.initial(options, players)
        log: list[Any] = list(GAME.start(Setup(options, players, i.to_bytes(4, "big"), 0)))
        for e in log:
            s = GAME.evolve(s, e)
        while s.ended is None:
            assert s.to_move is not None
            events = GAME.decide(s, s.to_move, rng.choice(list(GAME.legal(s, s.to_move))), 0)
            for e in events:
                s = GAME.evolve(s, e)
            log.extend(events)
        out.append((players, log, s))
    return out


def bench_replay(hands: list[tuple[int, list[Any], State]]) -> None:
    events = sum(len(log) for _, log, _ in hands)
    options = Options()

    def fold() -> float:
        t = time.perf_counter()
        for players, log, _ in hands:
            s = GAME.initial(options, players)
            for e in log:
                s = GAME.evolve(s, e)
        return time.perf_counter() - t

    def baseline() -> float:
        def noop(s: object, e: object) -> object:
            return s

        t = time.perf_counter()
        for _, log, _ in hands:
            s: object = None
            for e in log:
                s = noop(s, e)
        return time.perf_counter() - t

    rate = events / min(fold() for _ in range(5))
    floor = events / min(baseline() for _ in range(5))
    print(f"rules-core replay: {len(hands)} random hands, {events} events")
    line("replay events/s", rate, "ev/s", ">= 100000", rate >= 100_000,
         f"(a bare per-event call is {floor / rate:.1f}x faster; {rate / 100_000:.2f}x target)")


def bench_blocker(hands: list[tuple[int, list[Any], State]]) -> None:
    blocked = [s for _, _, s in hands if s.ended is not None and s.ended.reason != "out"]
    search: list[float] = []
    check: list[float] = []
    for s in blocked:
        t = time.perf_counter()
        idx, blocker = find_blocker(s.turns)
        if idx is not None and blocker is not None:
            find_assistant(s.turns, idx, blocker, False)
        search.append((time.perf_counter() - t) * 1e3)
        t = time.perf_counter()
        dead(s.hands, len(s.boneyard), s.ends)
        check.append((time.perf_counter() - t) * 1e3)
    m, mb = median(search), median(check)
    print(f"triệt analysis: {len(blocked)} blocked hands")
    line("blocker + assistant search median", m, "ms", "<= 5 ms", m <= 5,
         f"(p99 {pct(search, 0.99):.3f} ms; the bare dead-position check: {mb * 1e3:.1f} µs, "
         f"{m / mb:.0f}x)")


def main() -> None:
    hands = random_hands(600, random.Random(3))
    bench_replay(hands)
    bench_blocker(hands)


if __name__ == "__main__":
    main()
