"""Mạt chược Hồng Động (洪洞王牌麻将) as the rest of the system sees it: see :mod:`chieu.games.descriptor`."""

from chieu.games.descriptor import Descriptor, Exercise, Titles

DESCRIPTOR = Descriptor(
    key="mahjong",
    titles=Titles(vi="Mạt chược Hồng Động", zh="洪洞王牌麻将", en="Hongtong Mahjong"),
    min_seats=2,
    max_seats=4,
    sort=1,
    team_results=False,
    short_clock={"turnSeconds": 3, "claimSeconds": 2, "pairSeconds": 3},
    exercise=Exercise(players=3, full_players=4, short_room="points", full_rooms=("points", "coins")),
    rules_file="mahjong.md",
)
