"""Hypothesis properties of 洪洞王牌麻将: conservation, decompositions, best score, replay, views."""

from __future__ import annotations

import random
from dataclasses import replace
from functools import cache
from itertools import combinations, combinations_with_replacement
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chieu.games.core import Setup
from chieu.games.mahjong import GAME
from chieu.games.mahjong import hand as H
from chieu.games.mahjong import tiles as T
from chieu.games.mahjong.model import Phase, State, Win
from chieu.games.mahjong.options import Mode
from chieu.games.mahjong.scenario import describe
from chieu.games.mahjong.scoring import hand_rules

MODES = [m.value for m in Mode]

# ---------------------------------------------------------------- random play


def _play(mode: str, players: int, seed: bytes, picks: list[int]) -> tuple[State, State, list[Any]]:
    o = GAME.parse_options({"LAIZI_MODE": mode, "PLAYERS": players})
    s0 = GAME.initial(o, players)
    log: list[Any] = list(GAME.start(Setup(o, players, seed, 0)))
    s = s0
    for e in log:
        s = GAME.evolve(s, e)
    now = 0
    for pick in picks:
        if GAME.outcome(s) is not None:
            break
        deadlines = GAME.deadlines(s)
        assert deadlines, "a running hand always has someone on the clock"
        d = deadlines[pick % len(deadlines)]
        moves = GAME.legal(s, d.seat)
        now += 500
        if pick % 7 == 0 or not moves:
            events = list(GAME.on_timeout(s, d.seat, d.at_ms))
        else:
            wins = [m for m in moves if isinstance(m, Win)]
            ready = [m for m in moves if getattr(m, "declare", None) not in (None, "none")]
            move = wins[0] if wins else ready[0] if ready and pick % 2 else moves[pick % len(moves)]
            events = list(GAME.decide(s, d.seat, move, now))
        for e in events:
            s = GAME.evolve(s, e)
        log += events
        assert describe(s)["tiles"] == 136
    return s0, s, log


def _blind(s: State, seat: int) -> State:
    """The same state with every other seat's concealed tiles and the wall order scrambled."""
    seats = tuple(
        p if i == seat else replace(p, hand=tuple(sorted((k + 5) % 34 for k in p.hand)))
        for i, p in enumerate(s.seats)
    )
    return replace(s, seats=seats, wall=tuple(reversed(s.wall)))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    mode=st.sampled_from(MODES),
    players=st.integers(2, 4),
    seed=st.binary(min_size=1, max_size=8),
    picks=st.lists(st.integers(0, 10_000), min_size=40, max_size=160),
)
def test_random_play_conserves_tiles_replays_and_views_hide(
    mode: str, players: int, seed: bytes, picks: list[int]
) -> None:
    s0, s, log = _play(mode, players, seed, picks)
    replayed = s0
    for e in log:
        replayed = GAME.evolve(replayed, e)
    assert replayed == s
    for seat in range(players):
        v = GAME.view(s, seat)
        assert v.hand == T.names(s.seats[seat].hand)
        if s.phase is not Phase.OVER:  # hidden while played (a 荒庄 is over with no result)
            assert GAME.view(_blind(s, seat), seat) == v
        else:  # laid open at the end: every hand and the wall's end
            assert [p.concealed for p in v.players] == [T.names(sorted(p.hand)) for p in s.seats]
            assert v.wall_left == T.names(s.wall[s.pos:])
    out = GAME.outcome(s)
    if out is not None:
        assert sum(out.net(players)) == 0
        if out.winner is None:
            assert out.transfers == ()


# ---------------------------------------------------------------- win check against a brute force


@cache
def _decomp(tiles: tuple[tuple[int, bool], ...], pair: bool) -> frozenset[tuple[int, int, int]]:
    """Every (wind runs, dragon runs, natural-chow mask) of labelled tiles (kind, substituted)."""
    if not tiles:
        return frozenset() if pair else frozenset({(0, 0, 0)})
    first, rest = tiles[0], tiles[1:]
    out: set[tuple[int, int, int]] = set()
    if pair:
        firsts = {t: j for j, t in reversed(list(enumerate(rest))) if t[0] == first[0]}
        for j in firsts.values():
            out |= _decomp(rest[:j] + rest[j + 1 :], False)
    seen = set()
    for a, b in combinations(range(len(rest)), 2):
        key = (rest[a], rest[b])
        if key in seen:
            continue
        seen.add(key)
        trio = sorted([first, rest[a], rest[b]])
        kinds = [t[0] for t in trio]
        natural = not any(t[1] for t in trio)
        feat = None
        if kinds[0] == kinds[1] == kinds[2]:
            feat = (0, 0, 0)
        elif kinds[2] < 27 and kinds[0] // 9 == kinds[2] // 9 and kinds[1] == kinds[0] + 1 \
                and kinds[2] == kinds[0] + 2:
            bit = 1 << (kinds[0] // 9 * 3 + kinds[0] % 9 // 3) if natural and kinds[0] % 3 == 0 else 0
            feat = (0, 0, bit)
        elif natural and all(27 <= k <= 30 for k in kinds) and len(set(kinds)) == 3:
            feat = (1, 0, 0)
        elif natural and kinds == [31, 32, 33]:
            feat = (0, 1, 0)
        if feat is None:
            continue
        left = tuple(t for i, t in enumerate(rest) if i not in (a, b))
        for f in _decomp(left, pair):
            out.add((f[0] + feat[0], f[1] + feat[1], f[2] | feat[2]))
    return frozenset(out)


def _brute_best(hand: list[int], laizi: int, win: int) -> int | None:
    """The best total by the scoring table over every substitution of every laizi tile."""
    nat = [k for k in hand if k != laizi]
    n = len(hand) - len(nat)
    nonlaizi = {T.suit(k) for k in nat if T.suit(k) >= 0}
    face = {T.suit(k) for k in hand if T.suit(k) >= 0}
    honours = [T.is_honour(k) for k in hand]
    best: int | None = None
    diao = 2 if win == laizi else 0
    if len(nonlaizi) <= 2:
        for targets in combinations_with_replacement(range(-1, 34), n):
            labelled = [(k, False) for k in nat]
            labelled += [(laizi, False) if t < 0 else (t, True) for t in targets]
            pure = all(t < 0 for t in targets)
            for wr, dr, mask in _decomp(tuple(sorted(labelled)), True):
                total = 1 + diao + wr + dr
                total += 2 if len(nonlaizi) == 1 else 0
                total += 10 if any(mask >> (3 * s) & 7 == 7 for s in range(3)) else 0
                total += 20 if pure and not any(honours) and len(face) == 1 else 0
                total += 30 if pure and all(honours) else 0
                best = total if best is None else max(best, total)
    c = T.counts(hand)
    if all(x % 2 == 0 for x in c) and len(face) <= 2:
        total = 1 + diao + 10 + (2 if len(face) == 1 else 0)
        total += 20 if not any(honours) and len(face) == 1 else 0
        total += 30 if all(honours) else 0
        best = total if best is None else max(best, total)
    return best


@st.composite
def winning_hands(draw: st.DrawFn) -> tuple[list[int], int, int]:
    """A 4-sets-and-a-pair hand (up to two tiles turned into laizi copies), its laizi, a win tile."""
    rnd = random.Random(draw(st.integers(0, 2**32)))
    while True:
        hand: list[int] = []
        for _ in range(4):
            kind = rnd.randrange(4)
            if kind == 0:
                hand += [rnd.randrange(34)] * 3
            elif kind == 1:
                b = 9 * rnd.randrange(3) + rnd.randrange(7)
                hand += [b, b + 1, b + 2]
            elif kind == 2:
                hand += rnd.sample([27, 28, 29, 30], 3)
            else:
                hand += [31, 32, 33]
        hand += [rnd.randrange(34)] * 2
        if max(hand.count(k) for k in hand) <= 4:
            break
    laizi = rnd.randrange(34)
    for _ in range(rnd.randrange(3)):
        i = rnd.randrange(14)
        if hand.count(laizi) < 2:
            hand[i] = laizi
    if max(hand.count(k) for k in hand) > 4 or hand.count(laizi) > 2:
        laizi = next(k for k in range(34) if k not in hand)
    return hand, laizi, rnd.choice(hand)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(winning_hands())
def test_the_chosen_score_is_the_best_over_every_arrangement(case: tuple[list[int], int, int]) -> None:
    hand, laizi, win = case
    got = H.score(hand, [], laizi, win, H.HandRules())
    want = _brute_best(hand, laizi, win)
    assert (got.total if got else None) == want


@settings(max_examples=150, deadline=None)
@given(
    tiles=st.lists(st.integers(0, 135), min_size=14, max_size=14, unique=True),
    laizi=st.integers(-1, 33),
    lack=st.sampled_from([1, 2]),
)
def test_every_accepted_win_has_a_valid_decomposition(tiles: list[int], laizi: int, lack: int) -> None:
    hand = [t // 4 for t in tiles]
    rules = H.HandRules(lack_max=lack)
    yes = H.is_win(T.counts(hand), laizi, 0, rules)
    scored = H.score(hand, [], laizi, hand[0], rules)
    assert yes == (scored is not None)
    if lack == 2 and hand.count(laizi) <= 2:
        assert yes == (_brute_best(hand, laizi, hand[0]) is not None)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(winning_hands())
def test_constructed_hands_agree_with_the_brute_force_and_their_tiles_are_waits(
    case: tuple[list[int], int, int],
) -> None:
    hand, laizi, _ = case
    rules = hand_rules(GAME.parse_options({"LAIZI_MODE": "普通"}))
    yes = H.is_win(T.counts(hand), laizi, 0, rules)
    assert yes == (_brute_best(hand, laizi, hand[0]) is not None)
    if yes:
        for k in set(hand):
            rest = list(hand)
            rest.remove(k)
            assert k in H.waits(T.counts(rest), laizi, 0, rules)


@settings(max_examples=150, deadline=None)
@given(
    tiles=st.lists(st.integers(0, 135), min_size=13, max_size=13, unique=True),
    laizi=st.integers(-1, 33),
    lack=st.sampled_from([1, 2]),
    fold=st.booleans(),
)
def test_incremental_waits_equal_a_win_check_per_candidate(
    tiles: list[int], laizi: int, lack: int, fold: bool
) -> None:
    hand = [t // 4 for t in tiles]
    if fold:  # two suits at most, so that the lack-suit rule lets the search run
        folded: list[int] = []
        for k in hand:
            folded.append(k - 18 if 18 <= k < 27 and folded.count(k - 18) + hand.count(k - 18) < 4 else k)
        hand = folded
    c = T.counts(hand)
    rules = H.HandRules(lack_max=lack)
    expected = []
    for k in range(34):
        if c[k] < 4:
            c[k] += 1
            if H.is_win(c, laizi, 0, rules):
                expected.append(k)
            c[k] -= 1
    assert H.waits(c, laizi, 0, rules) == expected
