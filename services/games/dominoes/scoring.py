"""The payments of a finished Đô Mi Nô hand (§B4): going out (hết bài), triệt buộc (forced
block) and a người triệt (blocker) with or without a gài triệt (assistant)."""

from __future__ import annotations

from collections.abc import Sequence

from chieu.games.core import Transfer
from chieu.games.dominoes.options import Options


def unique_min(pips: Sequence[int], among: Sequence[int]) -> int | None:
    """The one seat of ``among`` with the fewest pips, or ``None`` on a tie."""
    low = min(pips[i] for i in among)
    best = [i for i in among if pips[i] == low]
    return best[0] if len(best) == 1 else None


def settle_out(winner: int, pips: Sequence[int], u: int) -> tuple[Transfer, ...]:
    """Out: every other player pays the winner u·p_i."""
    return tuple(
        Transfer(i, winner, u * p, "out") for i, p in enumerate(pips) if i != winner and p
    )


def forced_block_winner(
    pips: Sequence[int], o: Options, last_mover: int, hands: Sequence[int]
) -> int | None:
    """Triệt buộc: the unique lowest-pip player, else the ``blockTie`` option decides."""
    n = len(pips)
    low = min(pips)
    tied = [i for i in range(n) if pips[i] == low]
    if len(tied) == 1:
        return tied[0]
    if o.block_tie == "fewerTiles":
        fewest = min(hands[i] for i in tied)
        best = [i for i in tied if hands[i] == fewest]
        return best[0] if len(best) == 1 else None
    if o.block_tie == "afterLastMover":
        for k in range(1, n + 1):
            s = (last_mover + k) % n
            if s in tied:
                return s
    return None


def settle_forced_block(winner: int | None, pips: Sequence[int], u: int) -> tuple[Transfer, ...]:
    """Triệt buộc: every other player pays the winner u·p_i; no winner, no payments."""
    if winner is None:
        return ()
    return tuple(
        Transfer(i, winner, u * p, "triet_buoc") for i, p in enumerate(pips) if i != winner and p
    )


def settle_blocker(
    blocker: int, assistant: int | None, pips: Sequence[int], o: Options
) -> tuple[bool, tuple[Transfer, ...]]:
    """The four payment formulas of §B4 for a blocker; returns (blocker wins, transfers)."""
    u = o.pip_stake
    others = [i for i in range(len(pips)) if i != blocker]
    low = min(pips[i] for i in others)
    wins = pips[blocker] < low or (pips[blocker] == low and not o.blocker_tie_counts_as_loss)
    total = sum(pips[i] for i in others)
    if wins and assistant is None:
        return True, tuple(
            Transfer(i, blocker, 2 * u * pips[i], "triet") for i in others if pips[i]
        )
    if wins and assistant is not None:  # nothing is paid when the others hold no pips
        return True, (Transfer(assistant, blocker, 2 * u * total, "gai_triet"),) if total else ()
    if assistant is None:
        return False, tuple(
            Transfer(blocker, i, u * pips[i], "triet_loss") for i in others if pips[i]
        )
    return False, (Transfer(blocker, assistant, u * total, "triet_loss_gai"),) if total else ()
