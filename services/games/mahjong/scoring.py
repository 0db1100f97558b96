"""What a seat's hand is worth under the room's rules: its waits (听), the score of its win
(§1.6–1.7) and the settlement (牌型分 + 杠分, §1.7).

:mod:`~chieu.games.mahjong.hand` judges count vectors; this module feeds it a seat's
concealed tiles, melds and laizi with the mode's :class:`~chieu.games.mahjong.hand.HandRules`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

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


def _meld_suits(p: PlayerState) -> int:
    mask = 0
    for _, k, _ in p.melds:
        if k != p.laizi and T.suit(k) >= 0:
            mask |= 1 << T.suit(k)
    return mask


def _wins(o: Options, p: PlayerState, hand: Sequence[int], ying_kou: bool, laizis: Sequence[int],
          win_tile: int = -1) -> bool:
    """Whether ``hand`` (concealed, winning tile included) wins for one of ``laizis``."""
    rules = hand_rules(o, ying_kou)
    for lz in laizis:
        if ying_kou:
            kinds = [k for _, k, _ in p.melds]
            if H.score(hand, kinds, lz, win_tile, rules, True, meld_sizes(p)) is not None:
                return True
        elif H.is_win(T.counts(hand), lz, _meld_suits(replace(p, laizi=lz)), rules, len(p.melds)):
            return True
    return False


def waits_of(o: Options, p: PlayerState, hand: Sequence[int], ying_kou: bool) -> tuple[int, ...]:
    """The kinds that would complete ``hand`` (13 − 3·melds tiles) for this seat."""
    out = []
    c = T.counts(hand)
    for k in range(34):
        if c[k] >= 4 or (ying_kou and k not in T.DRAGONS):
            continue
        h = (*hand, k)
        laizis = djw_candidates(h, p.laizi) if o.laizi_mode is Mode.DAJIANGWANG else [p.laizi]
        if _wins(o, p, h, ying_kou, laizis, k):
            out.append(k)
    return tuple(out)


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
