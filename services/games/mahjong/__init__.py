"""洪洞王牌麻将 (Hongdong "king-tile" Mahjong, Linfen, Shanxi) for 2–4 players: 136 tiles, wild
tiles (癞子/王) chosen by one of six LAIZI_MODEs, 碰/杠 melds, and self-drawn wins only (自摸 or
杠开) after a ready declaration (报听 or 硬扣); rules ``shared/rules/mahjong.md`` §1 (MJ-1…MJ-31)."""

from chieu.games.mahjong.descriptor import DESCRIPTOR
from chieu.games.mahjong.game import GAME

__all__ = ["DESCRIPTOR", "GAME"]
