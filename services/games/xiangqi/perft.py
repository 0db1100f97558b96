"""The perft command: ``chieu perft [FEN] [DEPTH] [--divide]`` (the descriptor's tool, found by
the CLI through the registry), or ``python -m chieu.games.xiangqi.perft FEN DEPTH [--divide]``.

Counts the legal move sequences of ``DEPTH`` plies from any FEN; ``--divide`` prints the count
under each first move (ICCS) before the total. This module only prints: the counting is
:func:`chieu.games.xiangqi.board.perft`.
"""

from __future__ import annotations

import argparse
import sys

from chieu.games.xiangqi.board import START_FEN, BadPosition, divide, parse_fen, perft

HELP = "中国象棋: count the leaf nodes of the move tree from a FEN"


def arguments(parser: argparse.ArgumentParser) -> None:
    """The command's arguments (the CLI's subparser and this module's own parser)."""
    parser.add_argument("fen", nargs="?", default=START_FEN,
                        help="a Xiangqi FEN (quote it; default: the start position)")
    parser.add_argument("depth", type=int, nargs="?", default=3, help="plies to count, 1 or more (default 3)")
    parser.add_argument("--divide", action="store_true", help="print the count per first move")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="xiangqi-perft", description=__doc__)
    arguments(parser)
    return parser


def run(args: argparse.Namespace) -> int:
    """Count and print; 0 on success, 2 on a bad FEN or depth."""
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


def main(argv: list[str] | None = None) -> int:
    """Run the command line; 0 on success, 2 on a bad FEN or depth."""
    return run(build_parser().parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
