"""碰 (peng) and 杠 (gang): who may make which meld now (§1.4.6–1.4.8).

明杠 and 碰 claim a discard in the claim window; 暗杠 and 补杠 are made on one's own turn. After
报听/硬扣 no 碰, and a gang only if the hand stays ready (no dragon gang after 硬扣); 免碰 forbids
both (MIANPENG_ALLOWS_ANGANG keeps 暗杠); the suit lock (:func:`~.laizi.locks_suit`) keeps a
seat to the suit of its first suited meld; the final live discard may only be ganged.
"""

from __future__ import annotations

from dataclasses import replace

from chieu.games.mahjong import laizi as L
from chieu.games.mahjong import tiles as T
from chieu.games.mahjong.model import Declare, MeldType, Phase, PlayerState, State, remaining
from chieu.games.mahjong.scoring import waits_of


def claim_options(s: State, seat: int) -> tuple[bool, bool]:
    """(may 碰, may 明杠) the discard in the claim window."""
    if seat == s.claim_from or s.claim_tile < 0:
        return False, False
    o = s.options
    p = s.seats[seat]
    k = s.claim_tile
    n = p.hand.count(k)
    if k == T.WANG:
        return False, False
    if p.locked_suit >= 0 and 0 <= T.suit(k) != p.locked_suit:
        return False, False
    ready = p.declared is not Declare.NONE
    peng = (
        n >= 2 and not ready and not o.mianpeng and not s.final_discard
        and _discardable_after(p, T.remove(p.hand, k, 2))
    )
    gang = n >= 3 and not o.mianpeng and remaining(s) > 0
    if gang and ready:
        gang = still_ready(s, p, T.remove(p.hand, k, 3), MeldType.MING_GANG, k) is not None
    return peng, gang


def _discardable_after(p: PlayerState, hand: tuple[int, ...]) -> bool:
    """A 碰 must leave something to discard (the 对王 "pair plus the exposed pair" case)."""
    return any(L.may_discard(p, hand, k) for k in set(hand))


def still_ready(s: State, p: PlayerState, hand: tuple[int, ...], t: MeldType,
                k: int) -> tuple[int, ...] | None:
    """After 报听/硬扣 a gang is allowed only if the hand is still ready (its new waits)."""
    ying = p.declared is Declare.YING_KOU
    if ying and k in T.DRAGONS:
        return None
    after = replace(p, hand=hand, melds=(*p.melds, (t, k, -1)))
    w = waits_of(s.options, after, hand, ying)
    return w or None


def waits_after_gang(s: State, p: PlayerState, hand: tuple[int, ...], t: MeldType,
                     k: int) -> tuple[str, ...]:
    """The ``Ganged`` event's waits: the ready seat's new waits, else none."""
    if p.declared is Declare.NONE:
        return ()
    return T.names(still_ready(s, p, hand, t, k) or ())


def gang_options(s: State, seat: int) -> list[tuple[MeldType, int]]:
    """The 暗杠/补杠 ``seat`` may make now on its own turn."""
    if s.phase is not Phase.TURN or s.turn != seat or remaining(s) <= 0:
        return []
    o = s.options
    if o.mianpeng and not o.mianpeng_allows_angang:
        return []
    p = s.seats[seat]
    c = T.counts(p.hand)
    out: list[tuple[MeldType, int]] = []
    for k in range(34):
        if c[k] == 4:
            out.append((MeldType.AN_GANG, k))
    if not o.mianpeng:
        for t, k, _ in p.melds:
            if t is MeldType.PENG and c[k] >= 1:
                out.append((MeldType.BU_GANG, k))
    if p.declared is not Declare.NONE:
        ok = []
        for t, k in out:
            if t is MeldType.BU_GANG and k != s.drawn:
                continue
            n = 4 if t is MeldType.AN_GANG else 1
            if still_ready(s, p, T.remove(p.hand, k, n), t, k) is not None:
                ok.append((t, k))
        out = ok
    return out

