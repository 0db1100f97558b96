"""Perft (§3.4): the number of legal move sequences, against the published reference counts."""

from __future__ import annotations

import pytest

from chieu.games.xiangqi.board import START_FEN, divide, parse_fen, perft
from chieu.games.xiangqi.perft import main as perft_main


@pytest.mark.parametrize(("depth", "nodes"), [(1, 44), (2, 1_920), (3, 79_666), (4, 3_290_240)])
def test_perft_from_the_start_position(depth: int, nodes: int) -> None:
    board, side = parse_fen(START_FEN)
    assert perft(board, side, depth) == nodes
    assert parse_fen(START_FEN)[0] == board, "perft leaves the board as it found it"


# chessprogramming.org "Chinese Chess Perft Results" positions 2-7 (also checked against
# Fairy-Stockfish's move generator).
CPW = [
    ("r1ba1a3/4kn3/2n1b4/pNp1p1p1p/4c4/6P2/P1P2R2P/1CcC5/9/2BAKAB2 w - - 0 1", (38, 1128, 43929)),
    ("1cbak4/9/n2a5/2p1p3p/5cp2/2n2N3/6PCP/3AB4/2C6/3A1K1N1 w - - 0 1", (7, 281, 8620)),
    ("5a3/3k5/3aR4/9/5r3/5n3/9/3A1A3/5K3/2BC2B2 w - - 0 1", (25, 424, 9850)),
    ("CRN1k1b2/3ca4/4ba3/9/2nr5/9/9/4B4/4A4/4KA3 w - - 0 1", (28, 516, 14808)),
    ("R1N1k1b2/9/3aba3/9/2nr5/2B6/9/4B4/4A4/4KA3 w - - 0 1", (21, 364, 7626)),
    ("C1nNk4/9/9/9/9/9/n1pp5/B3C4/9/3A1K3 w - - 0 1", (28, 222, 6241)),
]


@pytest.mark.parametrize(("fen", "counts"), CPW, ids=[f"cpw{i + 2}" for i in range(len(CPW))])
def test_perft_of_reference_positions(fen: str, counts: tuple[int, ...]) -> None:
    board, side = parse_fen(fen)
    assert tuple(perft(board, side, d) for d in range(1, len(counts) + 1)) == counts


def test_divide_splits_perft_by_first_move() -> None:
    board, side = parse_fen(START_FEN)
    parts = divide(board, side, 2)
    assert len(parts) == 44
    assert sum(n for _, n in parts) == 1_920
    assert dict(parts)["h2e2"] == perft(*_after(START_FEN, "h2e2"), 1)


def _after(fen: str, move: str) -> tuple[list[int], int]:
    from chieu.games.xiangqi.board import make, parse_move

    board, side = parse_fen(fen)
    make(board, parse_move(move))
    return board, -side


def test_cli_prints_divide_and_total(capsys: pytest.CaptureFixture[str]) -> None:
    assert perft_main([START_FEN, "2", "--divide"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "h2e2: " + str(perft(*_after(START_FEN, "h2e2"), 1)) in out
    assert out[-1] == "perft(2) = 1920"


def test_cli_refuses_a_bad_fen(capsys: pytest.CaptureFixture[str]) -> None:
    assert perft_main(["rnbakabnr/9 w", "1"]) == 2
    assert "10 ranks" in capsys.readouterr().err
