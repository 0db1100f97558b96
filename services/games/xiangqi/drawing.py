"""The 中国象棋 board as an HTML fragment, for the audit's replay page: pieces in Chinese
characters (red 帥仕相傌俥炮兵, black 將士象馬車砲卒), the river between ranks 5 and 4."""

from __future__ import annotations

from collections.abc import Sequence

from chieu.games.xiangqi.board import placement
from chieu.games.xiangqi.model import State

PIECES = {"K": "帥", "A": "仕", "B": "相", "N": "傌", "R": "俥", "C": "炮", "P": "兵",
          "k": "將", "a": "士", "b": "象", "n": "馬", "r": "車", "c": "砲", "p": "卒"}
"""FEN letters to characters: upper case red, lower case black."""


def draw(state: State, players: Sequence[str]) -> str:
    """The board from red's side, one table row per rank, black at the top."""
    del players  # the sides are red and black, whoever plays them
    rows = []
    for r, rank in enumerate(placement(state.board).split("/")):
        cells = []
        for ch in rank:
            if ch.isdigit():
                cells += ["<td></td>"] * int(ch)
            else:
                cells.append(f'<td class="{"r" if ch.isupper() else "b"}">{PIECES.get(ch, ch)}</td>')
        rows.append(f'<tr{" class=river" if r == 5 else ""}>{"".join(cells)}</tr>')
    return f'<table class="xq">{"".join(rows)}</table>'
