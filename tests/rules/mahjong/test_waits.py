"""``waits_of``'s shortcut (kinds skipped when ``is_win``'s own size test would refuse them) gives
the waits of the plain check — every kind tried with ``_wins`` — on near-winning hands of every
shape (sets and a pair, seven pairs, with melds, with and without a laizi in hand). The views'
报听 choices search the waits only after the discards a bound lets through (``ting_candidates``):
it lets through every discard that leaves a ready hand, and the turn's legal list offers the
declarations the search of every discard finds."""

from __future__ import annotations

import random

from chieu.games.mahjong import laizi as L
from chieu.games.mahjong import scoring as S
from chieu.games.mahjong import tiles as T
from chieu.games.mahjong.game import GAME
from chieu.games.mahjong.model import Declare, Discard, MeldType, Phase, PlayerState, State
from chieu.games.mahjong.options import Mode, Options

MODES = [Options(laizi_mode=m) for m in (Mode.PUTONG, Mode.SEPAI, Mode.YIZHIWANG, Mode.XIAOSHOUWANG, Mode.DUIWANG)]


def _near_win(rng: random.Random, melds: int) -> list[int]:
    if melds == 0 and rng.random() < 0.2:
        tiles = [k for k in rng.sample(range(34), 7) for _ in range(2)]
    else:
        tiles = [rng.randrange(34)] * 2
        for _ in range(4 - melds):
            if rng.random() < 0.5:
                tiles += [rng.randrange(34)] * 3
            else:
                s, r = rng.randrange(3), rng.randrange(7)
                tiles += [s * 9 + r, s * 9 + r + 1, s * 9 + r + 2]
    tiles.remove(rng.choice(tiles))
    if rng.random() < 0.3:
        tiles[rng.randrange(len(tiles))] = rng.randrange(34)
    return tiles


def test_waits_agree_with_the_plain_check() -> None:
    rng = random.Random(7)
    ready = checked = 0
    while checked < 3000:
        melds = rng.choice([0, 0, 1, 2])
        tiles = _near_win(rng, melds)
        if max(tiles.count(k) for k in tiles) > 4:
            continue
        hand = tuple(sorted(tiles))
        laizi = rng.choice([-1, -1, rng.randrange(34), rng.choice(hand)])
        p = PlayerState(hand=hand, melds=tuple((MeldType.PENG, rng.randrange(27), 1) for _ in range(melds)),
                        laizi=laizi)
        o = rng.choice(MODES)
        S.waits_of.cache_clear()
        plain = tuple(k for k in range(34)
                      if T.counts(hand)[k] < 4 and S._wins(o, p, (*hand, k), False, [laizi], k))
        assert S.waits_of(o, p, hand, False) == plain, (hand, laizi, o.laizi_mode)
        ready += bool(plain)
        checked += 1
    assert ready > 300  # the check is not vacuous


MODES_ALL = [Options(laizi_mode=m, qidui_quad_as_two_pairs=q) for m in Mode for q in (True, False)]


def _laizi_of(rng: random.Random, o: Options, hand: tuple[int, ...]) -> int:
    if o.laizi_mode is Mode.YIZHIWANG:
        return T.WANG
    if o.laizi_mode is Mode.DAJIANGWANG:
        return rng.choice(T.DRAGONS)
    return rng.choice([-1, rng.randrange(34), rng.choice(hand), rng.choice(hand)])


def test_the_ready_discards_bound_keeps_every_discard_that_leaves_a_ready_hand() -> None:
    """``ting_candidates`` (the views' 报听 choices search the waits only after those discards)
    leaves out only discards after which ``waits_of`` finds no wait: 14-tile hands one to three
    tiles off a win or seven pairs, and random ones, with melds, a laizi in hand or not, every
    mode (一支王's 王 among them)."""
    rng = random.Random(11)
    ready = cut = checked = 0
    while checked < 4000:
        melds = rng.choice([0, 0, 0, 1, 2, 3])
        if rng.random() < 0.8:
            tiles = _near_win(rng, melds)
            tiles.append(rng.randrange(34))
            for _ in range(rng.choice([0, 0, 1, 2])):
                tiles[rng.randrange(len(tiles))] = rng.randrange(35 if rng.random() < 0.1 else 34)
        else:
            tiles = [rng.randrange(34) for _ in range(14 - 3 * melds)]
        if max(tiles.count(k) for k in tiles) > 4:
            continue
        hand = tuple(sorted(tiles))
        o = rng.choice(MODES_ALL)
        p = PlayerState(hand=hand, melds=tuple((MeldType.PENG, rng.randrange(34), 1) for _ in range(melds)),
                        laizi=_laizi_of(rng, o, hand))
        kinds = sorted(set(hand))
        candidates = S.ting_candidates(o, p, kinds)
        for k in kinds:
            if S.waits_of.__wrapped__(o, p, T.remove(hand, k), False):
                assert k in candidates, (hand, k, p.laizi, o.laizi_mode, p.melds)
                ready += 1
            else:
                cut += k not in candidates
        checked += 1
    assert ready > 800 and cut > 20000  # neither side vacuous


def test_the_offered_declarations_are_those_the_plain_search_finds() -> None:
    """The turn's legal list offers 报听 (and 硬扣) after exactly the discards whose rest is ready,
    as the search of every discardable tile's waits finds them."""
    rng = random.Random(5)
    offered = 0
    for _ in range(1500):
        melds = rng.choice([0, 0, 1, 2])
        tiles = [*_near_win(rng, melds), rng.randrange(34)]
        if max(tiles.count(k) for k in tiles) > 4:
            continue
        hand = tuple(sorted(tiles))
        o = rng.choice(MODES_ALL)
        p = PlayerState(hand=hand, melds=tuple((MeldType.PENG, rng.randrange(27), 1) for _ in range(melds)),
                        laizi=_laizi_of(rng, o, hand))
        s = State(options=o, players=2, phase=Phase.TURN, turn=0, drawn=hand[-1], wall=tuple(range(40)),
                  seats=(p, PlayerState()))
        plain = []
        for k in sorted(set(hand)):
            if not L.may_discard(p, hand, k) or (o.laizi_mode is Mode.DAJIANGWANG and k not in T.WINDS) or (
                    o.laizi_mode is Mode.DUIWANG and k not in T.DRAGONS):
                continue
            rest = T.remove(hand, k)
            w = S.waits_of(o, p, rest, False)
            if w:
                plain.append(Discard(T.name(k), Declare.TING))
                if any(d in w for d in T.DRAGONS) and S.waits_of(o, p, rest, True):
                    plain.append(Discard(T.name(k), Declare.YING_KOU))
        declared = [c for c in GAME.legal(s, 0) if isinstance(c, Discard) and c.declare is not Declare.NONE]
        assert declared == plain, (hand, p.laizi, o.laizi_mode)
        offered += len(plain)
    assert offered > 400
