"""Phỏm (Tá lả), the Vietnamese rummy for 2–4 players on a 52-card deck, Net Việt rules: eat (ăn),
draw (bốc), lay (hạ phỏm), send (gửi), Ù, báo, chốt and the gà pot; rules
``shared/rules/phom.md`` (PH-R1…PH-R29, §A4 money, §A5 options)."""

from chieu.games.phom.descriptor import DESCRIPTOR
from chieu.games.phom.game import GAME

__all__ = ["DESCRIPTOR", "GAME"]
