"""The Ô ăn quan board as an HTML fragment, for the audit's replay page: the ring of twelve
squares (ô), the two quan squares at its ends, and each seat's captured dân and quan."""

from __future__ import annotations

import html
from collections.abc import Sequence

from chieu.games.o_an_quan.model import State


def draw(state: State, players: Sequence[str]) -> str:
    """The ring: north's squares 11..7 across the top between the quan squares 0 and 6, south's
    1..5 below; then each player's store (dân) and captured quan."""
    b, quan = state.board, state.quan

    def cell(i: int) -> str:
        if i in (0, 6):
            q = quan[0 if i == 0 else 1]
            return f'<div class="quan" title="Q{i}">{b[i]}{"◆" if q else ""}</div>'
        return f'<div title="{"S" if i < 6 else "N"}{i}">{b[i]}</div>'

    top = cell(0) + "".join(cell(i) for i in (11, 10, 9, 8, 7)) + cell(6)
    bottom = '<div class="blank"></div>' + "".join(cell(i) for i in range(1, 6)) + '<div class="blank"></div>'
    stores = ", ".join(f"{html.escape(str(players[s] if s < len(players) else s))}: {state.stores[s]} dân"
                       f" + {state.quans_captured[s]} quan" for s in range(len(state.stores)))
    return f'<div class="ring">{top}{bottom}</div><div class="kv">stores — {stores}</div>'
