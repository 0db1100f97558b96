"""``waits_of``'s shortcut (kinds skipped when ``is_win``'s own size test would refuse them) gives
the waits of the plain check — every kind tried with ``_wins`` — on near-winning hands of every
shape (sets and a pair, seven pairs, with melds, with and without a laizi in hand)."""

from __future__ import annotations

import random

from chieu.games.mahjong import scoring as S
from chieu.games.mahjong import tiles as T
from chieu.games.mahjong.model import MeldType, PlayerState
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
