"""A coin settlement capped within the hand's reservations (pure; docs/ledger.md, "Reservations").

Before a coin table's hand starts, the ledger reserves each seat's largest possible loss
(``HandStarted.reserved``). A settlement in which some seat would lose more, over the hand, than
its reservation is capped as coins.md §6.5 caps a loss larger than a balance, with what is left
of the reservation in place of the balance: every party netted; each losing seat pays
``min(owed, left)`` (the gà pot ``min(owed, what it holds)``: the rules count the pot in stake
units, and a feed capped earlier left it holding less than that count, so its payout is cut to
what the log put in it, and the books, which hold exactly that, are never asked for more); the coins
collected are shared among the winners in proportion to what they are owed, rounded down, the
leftover coins one at a time to the winners owed most (ties: the lower seat, the pot last). The
table writes the capped nets in the log (``Settlement.capped``) and the ledger posts exactly them,
so the log and the books agree to the coin whatever the races between a player's tables.
"""

from __future__ import annotations

from collections.abc import Sequence

POT = -1
"""The gà pot's place among the parties."""

Leg = tuple[int | None, int | None, int]
"""One payment in 金币: from seat (``None``: the pot), to seat (``None``: the pot), amount."""


def nets(legs: Sequence[Leg], seats: int) -> tuple[list[int], int]:
    """Each seat's net in 金币 over ``legs`` (negative: pays), and the pot's."""
    out, pot = [0] * seats, 0
    for debit, credit, amount in legs:
        if debit is None:
            pot -= amount
        else:
            out[debit] -= amount
        if credit is None:
            pot += amount
        else:
            out[credit] += amount
    return out, pot


def within(legs: Sequence[Leg], left: Sequence[int], pot_left: int | None = None) -> tuple[list[int], int] | None:
    """The capped nets (per seat, the pot's) when some seat owes more than ``left[seat]`` (what is
    left of its reservation in the hand) or the pot more than ``pot_left`` (the 金币 it holds, as
    the log says; ``None``: whatever it owes); ``None`` when every party can pay what it owes."""
    seats = len(left)
    net, pot = nets(legs, seats)
    pot_short = pot_left is not None and pot < 0 and -pot > max(pot_left, 0)
    if not pot_short and not any(n < 0 and -n > max(left[i], 0) for i, n in enumerate(net)):
        return None
    parties = {i: n for i, n in enumerate(net) if n} | ({POT: pot} if pot else {})

    def rank(p: int) -> int:
        return seats if p == POT else p

    def can(p: int) -> int:
        if p == POT:
            return -parties[p] if pot_left is None else min(-parties[p], max(pot_left, 0))
        return min(-parties[p], max(left[p], 0))

    paid = {p: can(p) for p, n in parties.items() if n < 0}
    winners = sorted((p for p, n in parties.items() if n > 0), key=rank)
    collected, owed = sum(paid.values()), sum(parties[w] for w in winners)
    share = {w: collected * parties[w] // owed for w in winners} if owed else {}
    rest = collected - sum(share.values())
    for w in sorted(winners, key=lambda w: (-parties[w], rank(w))):
        if rest == 0:
            break
        share[w] += 1
        rest -= 1
    capped = [0] * seats
    capped_pot = 0
    for p, amount in [*((p, -a) for p, a in paid.items()), *share.items()]:
        if p == POT:
            capped_pot += amount
        else:
            capped[p] += amount
    return capped, capped_pot
