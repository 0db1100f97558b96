"""够级 Gouji, the Shandong climbing game: six players in two teams (联邦) of three seated
alternately, four decks with jokers (216 cards, 36 each); sets (一套牌) are beaten card by card,
够级牌 are answered by the 对门, 捎牌 burns, 进贡 tribute between games; rules
``shared/rules/gouji.md`` §2 (GJ-1…GJ-17)."""

from chieu.games.gouji.descriptor import DESCRIPTOR
from chieu.games.gouji.game import GAME

__all__ = ["DESCRIPTOR", "GAME"]
