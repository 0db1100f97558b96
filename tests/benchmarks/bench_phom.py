"""Phỏm benchmarks (issue 3).

1. A whole random 4-player game (start + every decide + evolve, random legal choices with a few
   timeouts): median ≤ 2 ms over 200 seeds, the Ù/cover cache cleared before each game.
   Baseline in the same run: replaying the same games' event logs (evolve only).
2. ``legal()`` for a seat holding 10 cards (lay-down and tái turns after the take, with lays and
   sends): median ≤ 200 µs. Baseline in the same run: a naive generator (every subset of the
   hand tested with ``is_phom``, every card against every laid phỏm).
3. The báo cover test and the Ù test on 10-card hands with 1–3 eaten cards: median ≤ 100 µs
   (the Ù test with its cache cleared before every call). Baseline in the same run: a brute-force
   search over every phỏm subset of the hand.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from chieu.games import fair
from chieu.games.core import Setup
from chieu.games.phom import cards as C
from chieu.games.phom.game import GAME
from chieu.games.phom.model import Phase, State, TurnKind
from tests.benchmarks.common import line, median, pct
from tests.rules.phom.randgame import random_game

GAMES = 200


def play(seed: bytes, played: list[tuple[int, Any]]) -> State:
    opts = GAME.parse_options({})
    s = GAME.initial(opts, 4)
    for e in GAME.start(Setup(opts, 4, seed, 0)):
        s = GAME.evolve(s, e)
    now = 0
    for seat, cmd in played:
        now += 100
        events = GAME.on_timeout(s, seat, now) if cmd is None else GAME.decide(s, seat, cmd, now)
        for e in events:
            s = GAME.evolve(s, e)
    return s


def bench_game() -> list[State]:
    opts = GAME.parse_options({})
    games = [random_game(i.to_bytes(4, "big"), 4, opts, timeout_rate=20) for i in range(GAMES)]
    live: list[float] = []
    base: list[float] = []
    for i, (final, log, played) in enumerate(games):
        C._partition.cache_clear()
        t0 = time.perf_counter()
        s = play(i.to_bytes(4, "big"), played)
        live.append(time.perf_counter() - t0)
        assert s == final
        t0 = time.perf_counter()
        r = GAME.initial(opts, 4)
        for e in log:
            r = GAME.evolve(r, e)
        base.append(time.perf_counter() - t0)
    m, b = median(live) * 1e3, median(base) * 1e3
    commands = median([float(len(p)) for _, _, p in games])
    print(f"1. whole random 4-player game ({GAMES} games, median {commands:.0f} commands)")
    line("game: start + decide + evolve, median", m, "ms", "≤ 2 ms", m <= 2.0,
         f"p90 {pct(live, 0.9) * 1e3:.3f} ms")
    line("baseline: evolve-only replay, median", b, "ms", "-", True, f"ratio {m / b:.2f}×")
    full = [t for t, (final, _, _) in zip(live, games, strict=True) if final.end == "scored"]
    mf = median(full) * 1e3
    line(f"games played to the scored end ({len(full)}), median", mf, "ms", "≤ 2 ms", mf <= 2.0)
    # states for the legal() benchmark: seats holding 10 cards after the take
    states: list[State] = []
    for i, (_, _, played) in enumerate(games):
        s = GAME.initial(opts, 4)
        for e in GAME.start(Setup(opts, 4, i.to_bytes(4, "big"), 0)):
            s = GAME.evolve(s, e)
        for seat, cmd in played:
            if s.phase is Phase.PLAY and s.taken and s.hands[s.turn].bit_count() == 10:
                states.append(s)
            events = GAME.on_timeout(s, seat, 0) if cmd is None else GAME.decide(s, seat, cmd, 0)
            for e in events:
                s = GAME.evolve(s, e)
    return states


def naive_legal(s: State) -> int:
    hand, eaten = s.hands[s.turn], s.eaten[s.turn]
    cs = C.cards_of(hand)
    n = 0
    if s.turn_kind in (TurnKind.LAYDOWN, TurnKind.TAI):
        for bits in range(1, 1 << len(cs)):
            sub = C.mask_of(c for i, c in enumerate(cs) if bits >> i & 1)
            if sub.bit_count() >= 3 and C.is_phom_mask(sub) and (sub & eaten).bit_count() <= 1:
                n += 1
        for _, m, _ in s.melds:
            n += sum(1 for c in cs if not eaten >> c & 1 and C.is_phom_mask(m | 1 << c))
    return n + len(cs)


def bench_legal(states: list[State]) -> None:
    acting = [s for s in states if s.turn_kind in (TurnKind.LAYDOWN, TurnKind.TAI)]
    live, base = [], []
    for s in acting:
        t0 = time.perf_counter()
        GAME.legal(s, s.turn)
        live.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        naive_legal(s)
        base.append(time.perf_counter() - t0)
    m, b = median(live) * 1e6, median(base) * 1e6
    print(f"2. legal() on 10-card hands in lay-down / tái turns ({len(acting)} positions)")
    line("legal(), median", m, "µs", "≤ 200 µs", m <= 200, f"p90 {pct(live, 0.9) * 1e6:.1f} µs")
    line("baseline: naive subset generator, median", b, "µs", "-", True, f"ratio {m / b:.3f}×")


def hands_with_eaten(count: int) -> list[tuple[int, int]]:
    out = []
    rnd = fair.Stream(b"bench-cover", "hands")
    while len(out) < count:
        k = 1 + rnd.below(3)
        hand = eaten = 0
        for _ in range(k):
            e = rnd.below(52)
            tri = C.TRIPLES[e][rnd.below(len(C.TRIPLES[e]))]
            if (hand | eaten) & ((1 << e) | tri):
                continue
            hand |= (1 << e) | tri
            eaten |= 1 << e
        while hand.bit_count() < 10:
            hand |= 1 << rnd.below(52)
        if rnd.below(3) == 0:  # spoil a partner: some hands are báo
            partners = [c for c in C.cards_of(hand & ~eaten)]
            hand &= ~(1 << partners[rnd.below(len(partners))])
            while hand.bit_count() < 10:
                c = rnd.below(52)
                if not eaten >> c & 1:
                    hand |= 1 << c
        out.append((hand, eaten))
    return out


def brute_cover(hand: int, eaten: int) -> bool:
    cs = C.cards_of(hand)
    cands = []
    for bits in range(1, 1 << len(cs)):
        sub = C.mask_of(c for i, c in enumerate(cs) if bits >> i & 1)
        if sub.bit_count() >= 3 and C.is_phom_mask(sub) and (sub & eaten).bit_count() == 1:
            cands.append(sub)

    def packs(avail: int, need: int) -> bool:
        if not need:
            return True
        low = need & -need
        return any(p & low and p & avail == p and packs(avail & ~p, need & ~p) for p in cands)

    return packs(hand, eaten)


def bench_cover() -> None:
    hands = hands_with_eaten(2000)
    cover, u, base = [], [], []
    bao = 0
    for hand, eaten in hands:
        t0 = time.perf_counter()
        r = C.has_cover(hand, eaten)
        cover.append(time.perf_counter() - t0)
        C._partition.cache_clear()
        t0 = time.perf_counter()
        C.u_kind(hand, eaten)
        u.append(time.perf_counter() - t0)
        bao += not r
    for hand, eaten in hands[:300]:
        t0 = time.perf_counter()
        assert brute_cover(hand, eaten) == C.has_cover(hand, eaten)
        base.append(time.perf_counter() - t0)
    mc, mu, b = median(cover) * 1e6, median(u) * 1e6, median(base) * 1e6
    print(f"3. báo cover test and Ù test ({len(hands)} 10-card hands, {bao} of them báo)")
    line("cover test (báo), median", mc, "µs", "≤ 100 µs", mc <= 100, f"p99 {pct(cover, 0.99) * 1e6:.1f} µs")
    line("Ù test (cold cache), median", mu, "µs", "≤ 100 µs", mu <= 100, f"p99 {pct(u, 0.99) * 1e6:.1f} µs")
    line("baseline: brute-force cover search, median", b, "µs", "-", True,
         f"ratio cover {mc / b:.4f}×, Ù {mu / b:.4f}×")


def main() -> None:
    print("Phỏm rules core benchmarks")
    states = bench_game()
    bench_legal(states)
    bench_cover()


if __name__ == "__main__":
    main()
