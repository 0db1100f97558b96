"""An amount split over shares in proportion, in whole coins: the gà pot's payout counted as paid by
its feeders, by the ledger's collusion screen (:mod:`chieu.ledger.holds`) and by the auditor's
(:mod:`chieu.audit.collusion`) alike. Pure."""

from __future__ import annotations

from collections.abc import Mapping


def split(amount: int, shares: Mapping[str, int]) -> dict[str, int]:
    """``amount`` over the positive ``shares`` in proportion, rounded down, the rest one at a time
    to the largest shares (ties: by name); never more than a share."""
    shares = {k: v for k, v in shares.items() if v > 0}
    total = sum(shares.values())
    if total <= 0 or amount <= 0:
        return {}
    amount = min(amount, total)
    out = {k: amount * v // total for k, v in shares.items()}
    left = amount - sum(out.values())
    for k in sorted(shares, key=lambda k: (-shares[k], k)):
        if left == 0:
            break
        if out[k] < shares[k]:
            out[k] += 1
            left -= 1
    return {k: v for k, v in out.items() if v > 0}
