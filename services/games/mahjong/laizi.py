"""The laizi modes of §1.3: who holds which wild tile (癞子/王), which copies are locked, and the
对王大将报 suit lock.

普通/色牌 share the indicator's successor; 一支王 gives each seat one faceless 王; 小手王 exposes
one random tile of each hand; 大将王黑风报 re-picks the dragon a seat holds most on every draw;
对王大将报 lets each seat choose a pair it holds (the ``ChoosePair`` command).
"""

from __future__ import annotations

from collections.abc import Sequence

from chieu.games import fair
from chieu.games.mahjong import tiles as T
from chieu.games.mahjong.model import PlayerState, State
from chieu.games.mahjong.options import Mode, Options


def djw_candidates(hand: Sequence[int], previous: int) -> list[int]:
    """大将王黑风报: the dragon kinds held most; the previous laizi alone if it is among them."""
    c = [sum(1 for k in hand if k == d) for d in T.DRAGONS]
    top = max(c)
    tied = [d for d, n in zip(T.DRAGONS, c, strict=True) if n == top]
    return [previous] if previous in tied else tied


def dealt(mode: Mode, hands: Sequence[Sequence[int]], wall: Sequence[int], seed: bytes,
          given: Sequence[int] | None = None) -> tuple[int, list[int], list[int]]:
    """The indicator (-1 if none), each seat's laizi kind (-1 if none) and locked copies after
    the deal; 对王大将报 seats have none until they choose a pair. ``given``: a scenario's
    per-seat laizi (小手王's exposed tile, 对王's chosen pair)."""
    n = len(hands)
    indicator = -1
    lz = [-1] * n
    locked = [0] * n
    if mode in (Mode.PUTONG, Mode.SEPAI):
        indicator = wall[-1]
        lz = [T.successor(indicator)] * n
    elif mode is Mode.YIZHIWANG:
        lz = [T.WANG] * n
        locked = [1] * n
    elif mode is Mode.XIAOSHOUWANG:
        for i in range(n):
            lz[i] = fair.choice(seed, tuple(sorted(hands[i])), f"xiaoshouwang:{i}")
            locked[i] = 1
    elif mode is Mode.DAJIANGWANG:
        for i in range(n):
            cand = djw_candidates(hands[i], -1)
            lz[i] = cand[0] if len(cand) == 1 else fair.choice(seed, tuple(cand), f"djw:{i}:0")
    if given is not None:
        lz = list(given)
        exposed = {Mode.XIAOSHOUWANG: 1, Mode.DUIWANG: 2}.get(mode)
        if exposed is not None:
            locked = [exposed if k >= 0 else 0 for k in lz]
    return indicator, lz, locked


def after_draw(s: State, seat: int, hand: tuple[int, ...]) -> int:
    """The seat's laizi once it holds ``hand`` after a draw (大将王黑风报 re-picks it)."""
    p = s.seats[seat]
    if s.options.laizi_mode is not Mode.DAJIANGWANG:
        return p.laizi
    cand = djw_candidates(hand, p.laizi)
    if len(cand) == 1:
        return cand[0]
    return fair.choice(bytes.fromhex(s.seed), tuple(cand), f"djw:{seat}:{s.draws + 1}")


def pairs(p: PlayerState) -> list[int]:
    """对王大将报: the kinds the seat could choose as its laizi pair (a pung may supply it)."""
    c = T.counts(p.hand)
    return [k for k in range(34) if c[k] >= 2]


def may_discard(p: PlayerState, hand: tuple[int, ...], k: int) -> bool:
    """Whether ``k`` may leave ``hand``: never 王, never an exposed (locked) laizi copy."""
    if k not in hand or k == T.WANG:
        return False
    return not (k == p.laizi and hand.count(k) <= p.locked)


def locks_suit(o: Options) -> bool:
    """Whether a seat's first suited 碰/杠 locks it to that suit (对王大将报, or 色牌 and
    大将王黑风报 with SUIT_LOCK_ALL_TWO_SUIT_MODES)."""
    return o.laizi_mode is Mode.DUIWANG or (
        o.suit_lock_all_two_suit_modes and o.laizi_mode in (Mode.SEPAI, Mode.DAJIANGWANG))


def after_meld(o: Options, p: PlayerState, k: int, hand: tuple[int, ...]) -> tuple[int, int]:
    """The seat's (locked suit, locked laizi copies) once a meld of ``k`` leaves it ``hand``."""
    lock = p.locked_suit
    if locks_suit(o) and lock < 0 and T.suit(k) >= 0:
        lock = T.suit(k)
    locked = min(p.locked, hand.count(k)) if k == p.laizi else p.locked
    return lock, locked
