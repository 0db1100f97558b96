"""够级 Gouji: six seats, four decks, two teams (shared/rules/gouji.md §2)."""

from chieu.table.rules.gouji.game import GAME

__all__ = ["GAME"]
