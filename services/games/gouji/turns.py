"""Who may act on the top set in 够级: §2.4–2.5 of shared/rules/gouji.md.

A round (一轮) starts with a lead (发牌); the top set T and its owner O are answered in turn;
够级牌 (high sets) may be answered only by O's 对门 (a 够级 duel), by 捎牌 (burn) declarers and
by the 无头 player; when nobody else will answer, O's 对门 has the 扣牌 (closing) decision.
Once 头科 and 二科 are out (四人乱缠) no set is 够级 any more.
"""

from __future__ import annotations

from chieu.games.gouji.model import SEATS, State, opposite


def active(s: State, seat: int) -> bool:
    """Still playing: no place yet and cards in hand."""
    return s.places[seat] == 0 and sum(s.hands[seat]) > 0


def four_way(s: State) -> bool:
    """四人乱缠: 头科 and 二科 both exist, no set counts as 够级 any more (§2.4.9)."""
    return 1 in s.places and 2 in s.places


def wutou(s: State, seat: int) -> bool:
    """无头: the seat's 对门 is 头科, or left as a failed burner, or sits out (革命) (§2.5)."""
    o = opposite(seat)
    return s.places[o] == 1 or s.failed[o] or s.sitting == o


def may_respond(s: State, p: int) -> bool:
    """Whether ``p`` may answer the top set in the normal turn order (not counting 扣牌)."""
    o = s.owner
    if p == o or not active(s, p) or s.passed[p]:
        return False
    if s.sealed:  # the answer to a 够死级: only 捎牌 declarations, offered in turn order
        return p != opposite(o) and s.burning[p] < 0
    if not s.top_gouji:
        return True
    if not active(s, o) and s.places[o] in (1, 2):
        return p == opposite(o)  # 够死级: only the finisher's 对门
    if wutou(s, o):
        return True  # a set of the 无头 player: anyone, in turn order
    return p == opposite(o) or wutou(s, p)


def next_after(s: State, actor: int) -> tuple[int, bool] | None:
    """Who acts next on the top set after ``actor``: (seat, 扣牌 decision) or ``None``
    when the round is over."""
    o = s.owner
    for i in range(1, SEATS):
        p = (actor + i) % SEATS
        if p == o:
            break
        if may_respond(s, p):
            return p, False
    k = opposite(o)
    if active(s, k) and not s.sealed and s.last_pass != k:
        return k, True
    return None


def next_active(s: State, seat: int, include: bool) -> int:
    """The first active seat counter-clockwise from ``seat`` (``include``: ``seat`` itself
    counts), ``seat`` if nobody is active."""
    for i in range(0 if include else 1, SEATS + 1):
        p = (seat + i) % SEATS
        if active(s, p):
            return p
    return seat


def may_burn(s: State, p: int) -> bool:
    """Whether ``p`` may declare 捎牌 on the top set now (before its owner's 对门 acts)."""
    return (
        s.phase == "play" and s.top is not None and (s.top_gouji or s.sealed)
        and not s.duimen_acted and active(s, p) and p != s.owner and p != opposite(s.owner)
        and not s.passed[p] and s.burning[p] < 0
    )


def free_places(s: State) -> list[int]:
    """The places (1 头科 … 6 大落) nobody holds yet, best first."""
    taken = set(s.places)
    return [p for p in range(1, SEATS + 1) if p not in taken]

