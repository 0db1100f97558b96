"""长将 and 长捉 (perpetual check and perpetual chase): the verdict at a threefold repetition
(§3.3.4–5 of shared/rules/xiangqi.md) and, for ``CHASE_RULE = axf``, whether a move starts a
chase. docs/games/xiangqi.md reviews the chase rule against AXF and Fairy-Stockfish.
"""

from __future__ import annotations

from chieu.games.xiangqi import board as bd
from chieu.games.xiangqi.board import RED, Board
from chieu.games.xiangqi.model import Ended, Ply
from chieu.games.xiangqi.options import Options

_STRONGER = {bd.N: (bd.R,), bd.C: (bd.R,), bd.A: (bd.R, bd.N, bd.C), bd.B: (bd.R, bd.N, bd.C)}
"""Per attacker, the pieces it chases even when they are protected (a weaker piece attacking
a stronger one: 马/炮 against 车, 仕/相 against 车/马/炮, as Fairy-Stockfish's ``chased()``)."""


def threats(board: Board, side: int) -> set[tuple[int, int]]:
    """``(attacker square, target square)`` pairs that count as chases (捉) by ``side``.

    The attacker is neither king nor soldier (帅/将 and 兵/卒 may chase freely) and can capture
    legally; the target is neither the king (that is check) nor a soldier still on its own half.
    It counts when the target is stronger than the attacker (:data:`_STRONGER`) or else
    unprotected (its owner could not legally recapture), except that a piece attacking one of
    its own kind that could legally take it back offers an exchange (兑), not a chase.
    """
    out: set[tuple[int, int]] = set()
    for f in range(90):
        p = board[f] * side
        if p <= 0 or p == bd.K or p == bd.P:
            continue
        for t in bd.targets(board, side, f):
            target = -board[t] * side
            if target <= 0 or target == bd.K:
                continue
            if target == bd.P and (t // 9 >= 5 if side == RED else t // 9 <= 4):
                continue  # an uncrossed enemy soldier, still on its own half
            if not bd.is_legal(board, side, f << 7 | t):
                continue
            if target == p and bd.is_legal(board, -side, t << 7 | f):
                continue  # the target could take the attacker back: an exchange offer
            if target in _STRONGER.get(p, ()):
                out.add((f, t))
                continue
            q = bd.make(board, f << 7 | t)
            protected = any(bd.is_legal(board, -side, g << 7 | t)
                            for g in bd.attackers_of(board, t, -side))
            bd.unmake(board, f << 7 | t, q)
            if not protected:
                out.add((f, t))
    return out


def is_chase(before: Board, after: Board, side: int, move: int) -> bool:
    """Does ``move`` start a chase: a threat (:func:`threats`) after it that was no capture
    the same pieces could make before it (the moved piece followed)?

    "Before" is judged by the movement rules alone, not by legality or protection: a side
    that was in check could capture nothing legally, and getting out of check is no chase.
    """
    f, t = move >> 7, move & 127
    old = {(t if a == f else a, b) for a, b in bd.capture_pairs(before, side)}
    return bool(threats(after, side) - old)


def verdict(options: Options, keys: tuple[str, ...], plies: tuple[Ply, ...]) -> Ended | None:
    """§3.3.4–5 at the third occurrence of a position (same placement, same side to move).

    ``keys`` are the positions from the start on, ``plies`` the moves between them. The moves
    since the position's first occurrence decide: a side that checked with every move loses
    (长将), both: draw; then, with ``CHASE_RULE = axf``, the same for check-or-chase (长捉);
    otherwise a draw by repetition.
    """
    key = keys[-1]
    if keys.count(key) < 3:
        return None
    span = plies[keys.index(key) :]
    all_check = [all(p.check for p in span if p.seat == seat) for seat in (0, 1)]
    if all_check[0] != all_check[1]:
        return Ended(1 if all_check[0] else 0, "perpetual_check")
    if all_check[0]:
        return Ended(None, "mutual_perpetual_check")
    if options.chase_rule == "axf":
        chase = [all(p.check or p.chase for p in span if p.seat == seat) for seat in (0, 1)]
        if chase[0] != chase[1]:
            return Ended(1 if chase[0] else 0, "perpetual_chase")
        if chase[0]:
            return Ended(None, "mutual_perpetual_chase")
    return Ended(None, "repetition")
