"""The 中国象棋 (Xiangqi) board: move generation, legality, perft, FEN and ICCS coordinates.

Rules XQ §3.1–§3.2 of shared/rules/xiangqi.md. Squares are ``rank * 9 + file``: files a–i
(0–8) from Red's left, ranks 0–9 from Red's back rank (ICCS coordinates, ``h2e2``). Pieces
are small ints, positive for Red (红) and negative for Black (黑): 帅/将 king ``K``, 仕/士
advisor ``A``, 相/象 elephant ``B``, 马 horse ``N``, 车 chariot ``R``, 炮 cannon ``C``,
兵/卒 soldier ``P``. A side is ``+1`` (Red) or ``-1`` (Black).

Speed matters here (perft, legality in ``decide``): every piece's targets are precomputed
per square, and a move is tried on the board only when it can possibly expose its own king.
"""

from __future__ import annotations

K, A, B, N, R, C, P = 1, 2, 3, 4, 5, 6, 7
RED, BLACK = 1, -1
FILES = "abcdefghi"
START_FEN = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1"

_LETTERS = {K: "k", A: "a", B: "b", N: "n", R: "r", C: "c", P: "p"}
_FROM_LETTER = {"k": K, "a": A, "b": B, "e": B, "n": N, "h": N, "r": R, "c": C, "p": P}

Board = list[int]


class BadPosition(ValueError):
    """A FEN or a move string that cannot be read."""


# ---------------------------------------------------------------- precomputed geometry


def _sq(f: int, r: int) -> int:
    return r * 9 + f


def _on(f: int, r: int) -> bool:
    return 0 <= f < 9 and 0 <= r < 10


def _in_palace(f: int, r: int, side: int) -> bool:
    return 3 <= f <= 5 and (0 <= r <= 2 if side == RED else 7 <= r <= 9)


def _own_half(r: int, side: int) -> bool:
    return r <= 4 if side == RED else r >= 5


_ORTH = ((0, 1), (0, -1), (1, 0), (-1, 0))
_DIAG = ((1, 1), (1, -1), (-1, 1), (-1, -1))

RAYS: list[tuple[tuple[int, ...], ...]] = []
"""Per square, the squares in each orthogonal direction, nearest first."""
HORSE: list[tuple[tuple[int, int], ...]] = []
"""Per square, ``(target, leg)`` of the horse's moves (马腿, the blocking point)."""
HORSE_ATTACKERS: list[tuple[tuple[int, int], ...]] = []
"""Per square, ``(horse square, leg)`` from which a horse attacks it."""
DIAGONAL: list[tuple[int, ...]] = []
KING_STEPS: dict[int, list[tuple[int, ...]]] = {RED: [], BLACK: []}
ADVISOR_STEPS: dict[int, list[tuple[int, ...]]] = {RED: [], BLACK: []}
ELEPHANT: dict[int, list[tuple[tuple[int, int], ...]]] = {RED: [], BLACK: []}
"""Per side and square, ``(target, eye)`` (象眼, the blocking point); never across the river."""
PAWN_STEPS: dict[int, list[tuple[int, ...]]] = {RED: [], BLACK: []}
PAWN_ATTACKERS: dict[int, list[tuple[int, ...]]] = {RED: [], BLACK: []}
"""Per side and square, the squares from which a soldier of that side attacks it."""


def _build() -> None:
    for sq in range(90):
        f, r = sq % 9, sq // 9
        rays = []
        for df, dr in _ORTH:
            ray = []
            g, s = f + df, r + dr
            while _on(g, s):
                ray.append(_sq(g, s))
                g, s = g + df, s + dr
            rays.append(tuple(ray))
        RAYS.append(tuple(rays))
        horse = []
        for df, dr in _ORTH:
            leg = (f + df, r + dr)
            for sf, sr in ((dr, df), (-dr, -df)):  # the two outward diagonals
                t = (f + 2 * df + sf, r + 2 * dr + sr)
                if _on(*leg) and _on(*t):
                    horse.append((_sq(*t), _sq(*leg)))
        HORSE.append(tuple(horse))
        DIAGONAL.append(tuple(_sq(f + a, r + b) for a, b in _DIAG if _on(f + a, r + b)))
        for side in (RED, BLACK):
            KING_STEPS[side].append(tuple(
                _sq(f + a, r + b) for a, b in _ORTH
                if _in_palace(f, r, side) and _in_palace(f + a, r + b, side)))
            ADVISOR_STEPS[side].append(tuple(
                _sq(f + a, r + b) for a, b in _DIAG
                if _in_palace(f, r, side) and _in_palace(f + a, r + b, side)))
            ELEPHANT[side].append(tuple(
                (_sq(f + 2 * a, r + 2 * b), _sq(f + a, r + b)) for a, b in _DIAG
                if _own_half(r, side) and _on(f + 2 * a, r + 2 * b)
                and _own_half(r + 2 * b, side)))
            steps = []
            if _on(f, r + side):
                steps.append(_sq(f, r + side))
            if not _own_half(r, side):
                steps.extend(_sq(f + a, r) for a in (-1, 1) if _on(f + a, r))
            PAWN_STEPS[side].append(tuple(steps))
    for sq in range(90):
        HORSE_ATTACKERS.append(tuple(
            (h, leg) for h in range(90) for t, leg in HORSE[h] if t == sq))
        for side in (RED, BLACK):
            PAWN_ATTACKERS[side].append(tuple(
                h for h in range(90) if sq in PAWN_STEPS[side][h]))


_build()


# ---------------------------------------------------------------- squares and moves


def square_name(sq: int) -> str:
    """``e0`` for square 4."""
    return f"{FILES[sq % 9]}{sq // 9}"


def parse_square(text: str) -> int:
    """Square ``e0`` → 4."""
    if len(text) != 2 or text[0] not in FILES or not text[1].isdigit():
        raise BadPosition(f"not a square: {text!r}")
    return int(text[1]) * 9 + FILES.index(text[0])


def move_name(move: int) -> str:
    """ICCS text of a move int (``from << 7 | to``): ``h2e2``."""
    return square_name(move >> 7) + square_name(move & 127)


_ICCS = {square_name(f) + square_name(t): f << 7 | t for f in range(90) for t in range(90)}
"""Every canonical ICCS text (``h2e2``) → its move int: the fast path of :func:`parse_move`."""


def parse_move(text: str) -> int:
    """ICCS ``h2e2`` (also ``H2-E2``) → move int ``from << 7 | to``."""
    move = _ICCS.get(text)
    if move is not None:
        return move
    t = text.strip().lower().replace("-", "")
    if len(t) != 4:
        raise BadPosition(f"not an ICCS move: {text!r}")
    return parse_square(t[:2]) << 7 | parse_square(t[2:])


# ---------------------------------------------------------------- FEN


def parse_fen(fen: str) -> tuple[Board, int]:
    """The board and side to move of a FEN (``w`` Red, ``b`` Black; letters K A B/E N/H R C P)."""
    parts = fen.split()
    if not parts:
        raise BadPosition("empty FEN")
    rows = parts[0].split("/")
    if len(rows) != 10:
        raise BadPosition(f"a FEN has 10 ranks, not {len(rows)}")
    board = [0] * 90
    for i, row in enumerate(rows):
        rank, f = 9 - i, 0
        for ch in row:
            if ch.isdigit():
                f += int(ch)
            elif ch.lower() in _FROM_LETTER and f < 9:
                v = _FROM_LETTER[ch.lower()]
                board[rank * 9 + f] = v if ch.isupper() else -v
                f += 1
            else:
                raise BadPosition(f"bad FEN rank {row!r}")
        if f != 9:
            raise BadPosition(f"FEN rank {row!r} does not have 9 files")
    side = RED
    if len(parts) > 1:
        if parts[1] not in ("w", "r", "b"):
            raise BadPosition(f"side to move must be w or b, not {parts[1]!r}")
        side = BLACK if parts[1] == "b" else RED
    for s in (RED, BLACK):
        if board.count(K * s) != 1:
            raise BadPosition("each side needs exactly one king")
        king = board.index(K * s)
        if not _in_palace(king % 9, king // 9, s):
            raise BadPosition("a king stands outside its palace")
    return board, side


_CHARS = {0: "1", **{v: _LETTERS[v].upper() for v in _LETTERS},
          **{-v: _LETTERS[v] for v in _LETTERS}}
_RUNS = tuple(("1" * n, str(n)) for n in range(9, 1, -1))
_RANK_TEXT: dict[tuple[int, ...], str] = {}
"""Memo of one rank's FEN text by its nine points (pure: the text depends on them only)."""
RANK_TEXTS = 4096
"""The most ranks :data:`_RANK_TEXT` holds before it is emptied: about 200 bytes each, so under a
MiB (100,000 were 21 MiB, filled by some hundred new ranks a game: issue 28). A move changes a rank
or two, so a game refills what it uses at once, a microsecond a rank."""


def rank_text(board: Board | tuple[int, ...], rank: int) -> str:
    """One rank of a FEN placement (runs of empty points become their length)."""
    row = tuple(board[rank * 9 : rank * 9 + 9])
    text = _RANK_TEXT.get(row)
    if text is None:
        text = "".join([_CHARS[v] for v in row])
        for run, digits in _RUNS:
            text = text.replace(run, digits)
        if len(_RANK_TEXT) >= RANK_TEXTS:  # bound the memo; it refills from what is played
            _RANK_TEXT.clear()
        _RANK_TEXT[row] = text
    return text


def placement(board: Board | tuple[int, ...]) -> str:
    """The placement field of a FEN, ranks 9 → 0."""
    return "/".join([rank_text(board, r) for r in range(9, -1, -1)])


def placement_after(before: str, board: Board, move: int) -> str:
    """The placement after ``move`` (already played on ``board``), from the one ``before`` it.

    Only the one or two ranks the move touched are written again.
    """
    rows = before.split("/")
    for sq in (move >> 7, move & 127):
        rank = sq // 9
        rows[9 - rank] = rank_text(board, rank)
    return "/".join(rows)


def to_fen(board: Board | tuple[int, ...], side: int, quiet: int = 0, fullmove: int = 1) -> str:
    """A full FEN: placement, side, ``- -``, plies without capture, move number."""
    return f"{placement(board)} {'w' if side == RED else 'b'} - - {quiet} {fullmove}"


# ---------------------------------------------------------------- attacks and generation


def attacked(board: Board, sq: int, side: int) -> bool:
    """Is ``sq`` (holding or about to hold ``side``'s king) attacked by the other side?

    Covers chariots, cannons (over exactly one screen), horses (leg free), soldiers, and the
    enemy king along an open line (将帅对面, the flying general). Advisors and elephants
    never reach the other side's palace.
    """
    rook, king, cannon = -R * side, -K * side, -C * side
    for ray in RAYS[sq]:
        i = 0
        n = len(ray)
        while i < n:
            q = board[ray[i]]
            i += 1
            if q:
                if q in (rook, king):
                    return True
                while i < n:
                    q = board[ray[i]]
                    i += 1
                    if q:
                        if q == cannon:
                            return True
                        break
                break
    horse = -N * side
    for h, leg in HORSE_ATTACKERS[sq]:
        if board[h] == horse and not board[leg]:
            return True
    pawn = -P * side
    return any(board[h] == pawn for h in PAWN_ATTACKERS[-side][sq])


def pseudo_moves(board: Board, side: int) -> list[int]:
    """Every move of ``side`` by the piece rules, ignoring its own king's safety."""
    out: list[int] = []
    add = out.append
    kings, advisors, elephants, pawns = (
        KING_STEPS[side], ADVISOR_STEPS[side], ELEPHANT[side], PAWN_STEPS[side])
    for sq in range(90):
        p = board[sq] * side
        if p <= 0:
            continue
        base = sq << 7
        if p == R:
            for ray in RAYS[sq]:
                for t in ray:
                    q = board[t]
                    if not q:
                        add(base | t)
                    else:
                        if q * side < 0:
                            add(base | t)
                        break
        elif p == C:
            for ray in RAYS[sq]:
                screen = False
                for t in ray:
                    q = board[t]
                    if not screen:
                        if not q:
                            add(base | t)
                        else:
                            screen = True
                    elif q:
                        if q * side < 0:
                            add(base | t)
                        break
        elif p == N:
            for t, leg in HORSE[sq]:
                if not board[leg] and board[t] * side <= 0:
                    add(base | t)
        elif p == P:
            for t in pawns[sq]:
                if board[t] * side <= 0:
                    add(base | t)
        elif p == B:
            for t, eye in elephants[sq]:
                if not board[eye] and board[t] * side <= 0:
                    add(base | t)
        elif p == A:
            for t in advisors[sq]:
                if board[t] * side <= 0:
                    add(base | t)
        else:
            for t in kings[sq]:
                if board[t] * side <= 0:
                    add(base | t)
    return out


def _sensitive(board: Board, king: int, side: int) -> set[int]:
    """Squares from or to which a non-king move may expose ``side``'s (unchecked) king.

    The king's lines that hold an enemy chariot, cannon or king, and the king's diagonal
    neighbours (the legs of horses that could attack it). Other moves are always safe.
    """
    sens = set(DIAGONAL[king])
    sliders = (-R * side, -C * side, -K * side)
    for ray in RAYS[king]:
        for t in ray:
            if board[t] in sliders:
                sens.update(ray)
                break
    return sens


def king_square(board: Board, side: int) -> int:
    """Where ``side``'s king stands."""
    return board.index(K * side)


def in_check(board: Board, side: int) -> bool:
    """Is ``side``'s king attacked (including by the facing enemy king)?"""
    return attacked(board, board.index(K * side), side)


def legal_moves(board: Board, side: int) -> list[int]:
    """Every legal move of ``side``: its king is neither attacked nor facing the other king."""
    king = board.index(K * side)
    check = attacked(board, king, side)
    sens = None if check else _sensitive(board, king, side)
    out: list[int] = []
    for m in pseudo_moves(board, side):
        f, t = m >> 7, m & 127
        if f == king:
            q = board[t]
            board[t], board[f] = board[f], 0
            ok = not attacked(board, t, side)
            board[f], board[t] = board[t], q
        elif sens is not None and f not in sens and t not in sens:
            ok = True
        else:
            q = board[t]
            board[t], board[f] = board[f], 0
            ok = not attacked(board, king, side)
            board[f], board[t] = board[t], q
        if ok:
            out.append(m)
    return out


def count_legal(board: Board, side: int) -> int:
    """``len(legal_moves(board, side))``, without building the list."""
    king = board.index(K * side)
    check = attacked(board, king, side)
    sens = None if check else _sensitive(board, king, side)
    n = 0
    for m in pseudo_moves(board, side):
        f, t = m >> 7, m & 127
        if f == king:
            q = board[t]
            board[t], board[f] = board[f], 0
            n += not attacked(board, t, side)
            board[f], board[t] = board[t], q
        elif sens is not None and f not in sens and t not in sens:
            n += 1
        else:
            q = board[t]
            board[t], board[f] = board[f], 0
            n += not attacked(board, king, side)
            board[f], board[t] = board[t], q
    return n


_SCAN = {RED: tuple(range(90)), BLACK: tuple(range(89, -1, -1))}
"""Squares in the order :func:`has_legal_move` tries them: each side's own back rank first."""


def has_legal_move(board: Board, side: int, check: bool | None = None) -> bool:
    """Does ``side`` have any legal move? (Stops at the first: the mate/stalemate test.)

    ``check``: whether ``side`` is in check, when the caller already knows.
    """
    king = board.index(K * side)
    if check is None:
        check = attacked(board, king, side)
    sens = None if check else _sensitive(board, king, side)
    for f in _SCAN[side]:
        if board[f] * side <= 0:
            continue
        for t in _targets(board, side, f):
            if f != king and sens is not None and f not in sens and t not in sens:
                return True
            q = board[t]
            board[t], board[f] = board[f], 0
            ok = not attacked(board, t if f == king else king, side)
            board[f], board[t] = board[t], q
            if ok:
                return True
    return False


def _targets(board: Board, side: int, f: int) -> list[int]:
    """Where the piece on ``f`` may go by its movement rule (no king safety)."""
    p = board[f] * side
    out: list[int] = []
    if p in (R, C):
        for ray in RAYS[f]:
            screen = False
            for t in ray:
                q = board[t]
                if not screen:
                    if not q:
                        out.append(t)
                        continue
                    if p == R:
                        if q * side < 0:
                            out.append(t)
                        break
                    screen = True
                elif q:
                    if q * side < 0:
                        out.append(t)
                    break
        return out
    if p == N:
        return [t for t, leg in HORSE[f] if not board[leg] and board[t] * side <= 0]
    if p == B:
        return [t for t, eye in ELEPHANT[side][f] if not board[eye] and board[t] * side <= 0]
    steps = (ADVISOR_STEPS if p == A else KING_STEPS if p == K else PAWN_STEPS)[side][f]
    return [t for t in steps if board[t] * side <= 0]


def is_legal(board: Board, side: int, move: int) -> bool:
    """Is one move legal? Generates only the moving piece's moves, then tries it."""
    f, t = move >> 7, move & 127
    if not (0 <= f < 90 and 0 <= t < 90) or board[f] * side <= 0:
        return False
    if not _piece_reaches(board, side, f, t):
        return False
    q = board[t]
    board[t], board[f] = board[f], 0
    king = t if abs(board[t]) == K else board.index(K * side)
    ok = not attacked(board, king, side)
    board[f], board[t] = board[t], q
    return ok


def _piece_reaches(board: Board, side: int, f: int, t: int) -> bool:
    """Does the piece on ``f`` reach ``t`` by its own movement rule (no king safety)?"""
    if board[t] * side > 0:
        return False
    p = board[f] * side
    if p in (R, C):
        for ray in RAYS[f]:
            if t not in ray:
                continue
            between = sum(1 for s in ray[: ray.index(t)] if board[s])
            if p == R:
                return between == 0
            return between == (1 if board[t] else 0)
        return False
    if p == N:
        return any(x == t and not board[leg] for x, leg in HORSE[f])
    if p == B:
        return any(x == t and not board[eye] for x, eye in ELEPHANT[side][f])
    if p == A:
        return t in ADVISOR_STEPS[side][f]
    if p == K:
        return t in KING_STEPS[side][f]
    return t in PAWN_STEPS[side][f]


def make(board: Board, move: int) -> int:
    """Play ``move`` on ``board`` in place; returns the captured piece (0 if none)."""
    f, t = move >> 7, move & 127
    q = board[t]
    board[t], board[f] = board[f], 0
    return q


def unmake(board: Board, move: int, captured: int) -> None:
    """Undo :func:`make`."""
    f, t = move >> 7, move & 127
    board[f], board[t] = board[t], captured


def perft(board: Board, side: int, depth: int) -> int:
    """Leaf nodes of the legal move tree to ``depth``; the last ply is counted, not played."""
    if depth <= 0:
        return 1
    if depth == 1:
        return count_legal(board, side)
    total = 0
    for m in legal_moves(board, side):
        f, t = m >> 7, m & 127
        q = board[t]
        board[t], board[f] = board[f], 0
        total += perft(board, -side, depth - 1)
        board[f], board[t] = board[t], q
    return total


def divide(board: Board, side: int, depth: int) -> list[tuple[str, int]]:
    """Perft split by first move: ``[(iccs, nodes), ...]`` in ICCS order."""
    out = []
    for m in legal_moves(board, side):
        q = make(board, m)
        out.append((move_name(m), perft(board, -side, depth - 1)))
        unmake(board, m, q)
    return sorted(out)


# ---------------------------------------------------------------- attacks for the chase rule


def attackers_of(board: Board, sq: int, side: int) -> list[int]:
    """Squares of ``side``'s pieces that could capture on ``sq`` by their movement rules."""
    return [f for f in range(90) if board[f] * side > 0 and board[sq] * side <= 0
            and _piece_reaches(board, side, f, sq)]


def targets(board: Board, side: int, f: int) -> list[int]:
    """Where ``side``'s piece on ``f`` may go by its movement rule (no king safety)."""
    return _targets(board, side, f)


def capture_pairs(board: Board, side: int) -> set[tuple[int, int]]:
    """``(from, to)`` of every capture ``side``'s pieces could make by their movement rules."""
    return {(f, t) for f in range(90) if board[f] * side > 0
            for t in _targets(board, side, f) if board[t]}


def legal_capture(board: Board, side: int, f: int, t: int) -> bool:
    """Is capturing on ``t`` from ``f`` a legal move of ``side``?"""
    return board[t] * side < 0 and is_legal(board, side, f << 7 | t)
