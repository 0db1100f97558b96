"""连连看 (Lianliankan), the tile matching race for 2–6 players: every player clears his own copy
of one layout, removing pairs of like tiles joined by a path of at most two turns, and the first
to clear it wins; rules ``shared/rules/lianliankan.md`` §4."""

from chieu.games.lianliankan.descriptor import DESCRIPTOR
from chieu.games.lianliankan.game import GAME

__all__ = ["DESCRIPTOR", "GAME"]
