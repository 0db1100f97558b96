"""The perft command line: ``python -m chieu.games.xiangqi.perft FEN DEPTH [--divide]``.

Counts the legal move sequences of ``DEPTH`` plies from any FEN; ``--divide`` prints the count
under each first move (ICCS) before the total. This module only prints: the counting is
:func:`chieu.games.xiangqi.board.perft`.
"""

from __future__ import annotations

import argparse
import sys

from chieu.games.xiangqi.board import BadPosition, divide, parse_fen, perft


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="xiangqi-perft", description=__doc__)
    parser.add_argument("fen", help="a Xiangqi FEN (quote it), e.g. the start position")
    parser.add_argument("depth", type=int, help="plies to count, 1 or more")
    parser.add_argument("--divide", action="store_true", help="print the count per first move")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command; 0 on success, 2 on a bad FEN or depth."""
    args = build_parser().parse_args(argv)
    try:
        board, side = parse_fen(args.fen)
    except BadPosition as e:
        print(f"xiangqi-perft: {e}", file=sys.stderr)
        return 2
    if args.depth < 1:
        print("xiangqi-perft: depth must be 1 or more", file=sys.stderr)
        return 2
    if args.divide:
        parts = divide(board, side, args.depth)
        for move, nodes in parts:
            print(f"{move}: {nodes}")
        total = sum(n for _, n in parts)
        print(f"moves: {len(parts)}")
    else:
        total = perft(board, side, args.depth)
    print(f"perft({args.depth}) = {total}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
