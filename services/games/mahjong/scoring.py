"""What a seat's hand is worth under the room's rules: its waits (听), the score of its win
(§1.6–1.7) and the settlement (牌型分 + 杠分, §1.7).

:mod:`~chieu.games.mahjong.hand` judges count vectors; this module feeds it a seat's
concealed tiles, melds and laizi with the mode's :class:`~chieu.games.mahjong.hand.HandRules`.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from chieu.games.core import Transfer
from chieu.games.mahjong import hand as H
from chieu.games.mahjong import tiles as T
from chieu.games.mahjong.laizi import djw_candidates
from chieu.games.mahjong.model import (
    Declare,
    MeldType,
    Phase,
    PlayerState,
    ScoreItem,
    State,
    Won,
    meld_sizes,
)
from chieu.games.mahjong.options import Mode, Options


def hand_rules(o: Options, ying_kou: bool = False) -> H.HandRules:
    """The hand-evaluation rules of the room's mode and options."""
    mode = o.laizi_mode
    return H.HandRules(
        lack_max=2 if mode in (Mode.PUTONG, Mode.YIZHIWANG) else 1,
        qidui=mode is not Mode.YIZHIWANG and not ying_kou,
        quads=o.qidui_quad_as_two_pairs,
        pinghu_only_if_no_pattern=o.pinghu_only_if_no_pattern,
        flush_exclusive=o.flush_exclusive,
        loushanglou_replace=o.loushanglou_style == "replace",
    )


def _meld_suits(p: PlayerState, laizi: int | None = None) -> int:
    """The suits of the seat's melds (a meld of its laizi aside); ``laizi`` in place of its own."""
    lz = p.laizi if laizi is None else laizi
    mask = 0
    for _, k, _ in p.melds:
        if k != lz and T.suit(k) >= 0:
            mask |= 1 << T.suit(k)
    return mask


def _wins(o: Options, p: PlayerState, hand: Sequence[int], ying_kou: bool, laizis: Sequence[int],
          win_tile: int = -1, rules: H.HandRules | None = None) -> bool:
    """Whether ``hand`` (concealed, winning tile included) wins for one of ``laizis``."""
    rules = rules or hand_rules(o, ying_kou)
    for lz in laizis:
        if ying_kou:
            kinds = [k for _, k, _ in p.melds]
            if H.score(hand, kinds, lz, win_tile, rules, True, meld_sizes(p)) is not None:
                return True
        elif H.is_win(T.counts(hand), lz, _meld_suits(p, lz), rules, len(p.melds)):
            return True
    return False


_GROUP = tuple(k // 9 if k < 27 else 3 if k < 31 else 4 for k in range(34))
"""A kind's group for the size test: 万, 条, 筒, winds, dragons."""


_NEAR = tuple(tuple(j for j in range(max(k - k % 9, k - 2), min(k - k % 9 + 9, k + 3)) if j != k)
              for k in range(27))
"""The kinds of the same suit within two of a suit kind (the tiles a run with it needs)."""


def _mod_fits(c: Sequence[int]) -> tuple[bool, ...]:
    """For each group: whether a tile added to it leaves the group sizes of a winning hand
    without wilds (all 0 mod 3 but one, 2 mod 3) — :func:`hand.is_win`'s first test."""
    sizes = [sum(c[0:9]), sum(c[9:18]), sum(c[18:27]), sum(c[27:31]), sum(c[31:34])]
    out = []
    for g in range(5):
        m = [(n + (g == i)) % 3 for i, n in enumerate(sizes)]
        out.append(m.count(0) == 4 and 2 in m)
    return tuple(out)


WAITS = 1024
"""The answers :func:`waits_of` keeps, least recently used out: about 560 bytes each with the player
states they hold, 0.6 MiB at the cap (4,096 were 2.2 MiB); a turn asks a few, then again."""


@lru_cache(maxsize=WAITS)
def waits_of(o: Options, p: PlayerState, hand: tuple[int, ...], ying_kou: bool) -> tuple[int, ...]:
    """The kinds that would complete ``hand`` (13 − 3·melds tiles) for this seat.

    Pure and cached: a seat's offered 报听 discards (its view's legal list) and the discard
    that declares one ask the same question."""
    out = []
    c = T.counts(hand)
    rules = hand_rules(o, ying_kou)
    if not ying_kou and o.laizi_mode is not Mode.DAJIANGWANG:  # the common case, inline
        lz, suits, melds = p.laizi, _meld_suits(p), len(p.melds)
        tame = not (0 <= lz < 34 and c[lz]) and not c[T.WANG]
        fits = _mod_fits(c) if tame else ()
        pairs = tame and rules.qidui and not melds and sum(n & 1 for n in c) == 1  # 七对 one tile off
        if tame and not pairs and not any(fits) and not 0 <= lz < 34:
            return ()  # no tile makes the group sizes of a win
        for k in range(34):
            if c[k] >= 4:
                continue
            if tame and k != lz:
                if not fits[_GROUP[k]] and not (pairs and c[k] & 1):
                    continue  # is_win's own first test refuses it (no wild; seven pairs want pairs)
                if k < 27 and not c[k] and not any(c[j] for j in _NEAR[k]):
                    continue  # a lone suit tile: no pair, no set, no run can hold it
            c[k] += 1
            if H.is_win(c, lz, suits, rules, melds):
                out.append(k)
            c[k] -= 1
        return tuple(out)
    djw = o.laizi_mode is Mode.DAJIANGWANG
    for k in range(34):
        if c[k] >= 4 or (ying_kou and k not in T.DRAGONS):
            continue
        h = (*hand, k)
        laizis = djw_candidates(h, p.laizi) if djw else [p.laizi]
        if _wins(o, p, h, ying_kou, laizis, k, rules):
            out.append(k)
    return tuple(out)


def ting_candidates(o: Options, p: PlayerState, kinds: Sequence[int]) -> set[int]:
    """Of ``kinds`` (tiles of the seat's hand), those whose discard might leave it ready: for a
    kind left out ``waits_of(o, p, rest, False)`` is empty (:func:`hand.may_be_ready_after`,
    for each laizi 大将王黑风报 could pick), so a seat's offered 报听 discards need no search of
    the waits after the others."""
    c = T.counts(p.hand)
    rules = hand_rules(o)
    laizis = {p.laizi, *T.DRAGONS} if o.laizi_mode is Mode.DAJIANGWANG else (p.laizi,)
    out: set[int] = set()
    for lz in laizis:
        out.update(H.may_be_ready_after(c, lz, rules, len(p.melds), kinds))
    return out


def seat_score(s: State, seat: int) -> H.Scored | None:
    """The best score of ``seat`` winning on the tile it just drew, ``None`` if it does not win."""
    p = s.seats[seat]
    ying = p.declared is Declare.YING_KOU
    return H.score(
        p.hand, [k for _, k, _ in p.melds], p.laizi, s.drawn, hand_rules(s.options, ying), ying,
        meld_sizes(p),
    )


def can_win(s: State, seat: int) -> bool:
    """Whether ``seat`` may declare 自摸 now (just drew, after 报听/硬扣)."""
    p = s.seats[seat]
    if s.phase is not Phase.TURN or s.turn != seat or s.drawn < 0 or p.declared is Declare.NONE:
        return False
    return seat_score(s, seat) is not None


def gang_transfers(s: State) -> list[Transfer]:
    """杠分 in gang order: 1 from each other seat for a 明杠/补杠, 2 for an 暗杠."""
    out = []
    for ganger, t in s.gang_log:
        amount = 2 if t is MeldType.AN_GANG else 1
        for i in range(1, s.players):
            out.append(Transfer((ganger + i) % s.players, ganger, amount, f"gang_{t.value}"))
    return out


def won(s: State, seat: int, sc: H.Scored) -> Won:
    """The ``Won`` event: the gang points, then H from each other seat (+ DEALER_BONUS)."""
    o = s.options
    n = s.players
    transfers = gang_transfers(s)
    for i in range(1, n):
        payer = (seat + i) % n
        bonus = o.dealer_bonus if s.dealer in (seat, payer) else 0
        transfers.append(Transfer(payer, seat, sc.total + bonus, "win"))
    p = s.seats[seat]
    return Won(
        seat, T.name(s.drawn), T.names(p.hand), T.maybe_name(p.laizi),
        tuple(ScoreItem(c, v) for c, v in sc.items), sc.total, sc.qidui, tuple(transfers),
    )
