"""Phỏm money (§A4): the eat payments, the ends that pay (Ù, báo, ù láo, the scored end) and
each seat's balance. Every payment is a :class:`Transfer` in stake units (cược); ``None`` as a
party is the gà pot."""

from __future__ import annotations

from chieu.games.core import Transfer
from chieu.games.phom import cards as C
from chieu.games.phom.model import BaoCaught, Scored, State, ULao, WinKind, WonU, replace
from chieu.games.phom.options import Options

U_REASON = {WinKind.THUONG: "u", WinKind.TRON: "u_tron", WinKind.KHAN: "u_khan"}
"""The transfer reason (and the end) of each kind of Ù."""


def _paid(transfers: tuple[Transfer, ...] | list[Transfer]) -> tuple[Transfer, ...]:
    """The payments that move something: an amount set to 0 pays nothing (the ledger posts no
    empty transfer, and refuses a settlement holding one)."""
    return tuple(t for t in transfers if t.amount > 0)


def u_amount(o: Options, kind: WinKind) -> int:
    """What each other player pays for an Ù of ``kind``."""
    a = o.amounts
    return {WinKind.THUONG: a.u_thuong, WinKind.TRON: a.u_tron, WinKind.KHAN: a.u_khan}[kind]


def eat_payment(o: Options, victim: int, seat: int, eats: int, chot: bool) -> tuple[Transfer, ...]:
    """PH-R15: a chốt pays the eater; a first or second eat (ăn) pays the eater, or the gà pot
    when gà is on; the third pays nothing here (the Ù settles it)."""
    a = o.amounts
    if chot:
        return _paid((Transfer(victim, seat, a.chot, "chot"),))
    if eats <= 2:
        amt = a.eat1 if eats == 1 else a.eat2
        return _paid((Transfer(victim, None if o.ga else seat, amt, f"eat_{eats}"),))
    return ()


def wrong_accusation(o: Options, accuser: int, target: int) -> tuple[Transfer, ...]:
    """PH-R26: a wrong bắt báo pays the accused, or the gà pot when gà is on."""
    return _paid((Transfer(accuser, None if o.ga else target, o.amounts.wrong_accusation, "wrong_accusation"),))


def won(s: State, seat: int, kind: WinKind, victim: int) -> WonU:
    """``seat`` wins by Ù of ``kind``: every other player pays, or ``victim`` pays for all
    (ù đền); the Ù takes the gà pot, except an ù khan."""
    o, n = s.options, s.players
    amount = u_amount(o, kind)
    out: list[Transfer] = []
    if victim >= 0:
        out.append(Transfer(victim, seat, (n - 1) * amount, "u_den"))
    else:
        out.extend(Transfer((seat + i) % n, seat, amount, U_REASON[kind]) for i in range(1, n))
    if o.ga and kind is not WinKind.KHAN and s.pot > 0:
        out.append(Transfer(None, seat, s.pot, "ga_win"))
    return WonU(seat, kind, victim, C.names(s.hands[seat]), _paid(out))


def u_lao(s: State, seat: int) -> ULao:
    """Ù láo (§A4.3): the false claimer pays everybody."""
    n, amt = s.players, s.options.amounts.u_lao
    out = _paid([Transfer(seat, (seat + i) % n, amt, "u_lao") for i in range(1, n)])
    return ULao(seat, C.names(s.hands[seat]), out)


def caught(s: State, seat: int, accuser: int) -> BaoCaught:
    """Báo caught (§A4.2), by ``accuser`` or automatically (-1): ``seat`` pays everybody."""
    n, amt = s.players, s.options.amounts.bao
    out = _paid([Transfer(seat, (seat + i) % n, amt, "bao") for i in range(1, n)])
    return BaoCaught(seat, accuser, C.names(s.hands[seat]), out)


def scored(s: State) -> Scored:
    """§A4.4: points, ranking (non-móm by points then lay-down index, then móm), payments."""
    n, a = s.players, s.options.amounts
    pts = tuple(C.points(h) for h in s.hands)

    def lay_key(p: int) -> tuple[int, int]:
        i = s.laid_down[p]
        return (i if i >= 0 else n, (p - s.dealer) % n)

    mom = tuple(s.own_melds[p] == 0 for p in range(n))
    ranked = sorted((p for p in range(n) if not mom[p]), key=lambda p: (pts[p], *lay_key(p)))
    ranked += sorted((p for p in range(n) if mom[p]), key=lay_key)
    first = ranked[0]
    out: list[Transfer] = []
    for r, p in enumerate(ranked[1:], 1):
        if mom[p]:
            if a.mom:
                out.append(Transfer(p, first, a.mom, "mom"))
        else:
            amt = a.rank[min(r, len(a.rank)) - 1] if a.rank else r
            if amt:
                out.append(Transfer(p, first, amt, "rank"))
    return Scored(pts, tuple(ranked), mom, tuple(out))


def settle(s: State, transfers: tuple[Transfer, ...]) -> State:
    """``s`` after the payments ``transfers``: the gà pot moved, the hand's transfers kept."""
    pot = s.pot
    for t in transfers:
        if t.to_seat is None:
            pot += t.amount
        if t.from_seat is None:
            pot -= t.amount
    return replace(s, pot=pot, transfers=s.transfers + transfers)


def balances(state: State) -> tuple[int, ...]:
    """Each seat's net money over this hand's transfers so far."""
    out = [0] * state.players
    for t in state.transfers:
        if t.from_seat is not None:
            out[t.from_seat] -= t.amount
        if t.to_seat is not None:
            out[t.to_seat] += t.amount
    return tuple(out)
