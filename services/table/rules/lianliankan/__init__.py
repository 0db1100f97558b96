"""连连看 (Lianliankan, tile matching race): every player clears his own copy of one layout."""

from chieu.table.rules.lianliankan.game import GAME

__all__ = ["GAME"]
