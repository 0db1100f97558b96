"""纵线记谱 (the Chinese file notation) of a 中国象棋 move: ``炮二平五``, ``马８进７``, ``前车进二``.

Moves are read and written in ICCS (``h2e2``) and positions in FEN by :mod:`board`; this is the
notation people read, carried beside ICCS in events and views (docs/games/xiangqi.md says which
source each case follows).
"""

from __future__ import annotations

from chieu.games.xiangqi.board import BLACK, RED, A, B, Board, C, K, N, P, R

_NAMES = {
    RED: {K: "帅", A: "仕", B: "相", N: "马", R: "车", C: "炮", P: "兵"},
    BLACK: {K: "将", A: "士", B: "象", N: "马", R: "车", C: "炮", P: "卒"},
}
_RED_DIGITS = "一二三四五六七八九"
_BLACK_DIGITS = "１２３４５６７８９"


def _file_no(f: int, side: int) -> str:
    """Red counts files 一…九 from its right; Black counts １…９ from its own right."""
    return _RED_DIGITS[8 - f] if side == RED else _BLACK_DIGITS[f]


def _count(n: int, side: int) -> str:
    return _RED_DIGITS[n - 1] if side == RED else _BLACK_DIGITS[n - 1]


def chinese(board: Board | tuple[int, ...], move: int) -> str:
    """纵线记谱 (file notation) of a move on ``board`` before it is played: ``炮二平五``.

    进 advance, 退 retreat, 平 sideways. Like pieces on one file (仕/士 and 相/象 excepted,
    whose direction tells them apart) drop the file number and take a position word instead:
    two 前/后 (front/rear), three 前/中/后, four or five soldiers 一二三四五 from the front.
    When two or more files each hold two or more of the mover's soldiers, every soldier on
    those files is numbered 一二三四五 together, files from the mover's right to left and
    front to rear within a file (``一兵平五``); soldiers alone on a file keep ``兵七``. The
    ordinals are Chinese numerals for both sides (``二卒平４``). Source: 中国象棋电脑应用规范
    (二)：着法表示 (xqbase.com), 四、中文纵线格式; see docs/games/xiangqi.md.
    """
    f, t = move >> 7, move & 127
    v = board[f]
    side = RED if v > 0 else BLACK
    p = abs(v)
    ff, fr, tf, tr = f % 9, f // 9, t % 9, t // 9
    name = _NAMES[side][p]
    head = ""
    if p not in (A, B, K):
        same = [r for r in range(10) if board[r * 9 + ff] == v]
        if len(same) > 1:
            head = (_soldier_head(board, v, f) if p == P else "") or _file_head(same, fr, side)
            head += name
    if not head:
        head = name + _file_no(ff, side)
    forward = (tr - fr) * side
    if forward == 0:
        return head + "平" + _file_no(tf, side)
    action = "进" if forward > 0 else "退"
    if p in (N, A, B):
        return head + action + _file_no(tf, side)
    return head + action + _count(abs(tr - fr), side)


_ORDINALS = "一二三四五"


def _file_head(ranks: list[int], rank: int, side: int) -> str:
    """前/后, 前/中/后, or 一…五 for the piece on ``rank`` among ``ranks`` of one file."""
    order = sorted(ranks, reverse=(side == RED))  # front (nearest the opponent) first
    i = order.index(rank)
    if len(order) == 2:
        return ("前", "后")[i]
    if len(order) == 3:
        return ("前", "中", "后")[i]
    return _ORDINALS[i]


def _soldier_head(board: Board | tuple[int, ...], v: int, f: int) -> str:
    """The ordinal of the soldier on ``f`` (whose file holds two or more) when another file
    also holds two or more; ``""`` otherwise."""
    side = RED if v > 0 else BLACK
    files = range(8, -1, -1) if side == RED else range(9)  # the mover's right to left
    ranks = range(9, -1, -1) if side == RED else range(10)  # front to rear
    doubled: list[int] = []
    files_doubled = 0
    for g in files:
        on = [r * 9 + g for r in ranks if board[r * 9 + g] == v]
        if len(on) > 1:
            doubled.extend(on)
            files_doubled += 1
    return _ORDINALS[doubled.index(f)] if files_doubled > 1 else ""
