"""大将王黑风报's "the dragon it holds most" (docs/fairness.md, docs/games/mahjong.md): the seat's
concealed tiles only, the drawn tile with them; dragons in its 碰 or 杠 do not count."""

from __future__ import annotations

from chieu.games.mahjong import laizi as L
from chieu.games.mahjong import tiles as T
from chieu.games.mahjong.model import MeldType, PlayerState, State
from chieu.games.mahjong.options import Mode, Options


def _state(melds: tuple[tuple[MeldType, int, int], ...], laizi: int) -> State:
    seat = PlayerState(hand=(0, 1, 2, T.FA), melds=melds, laizi=laizi)
    return State(Options(laizi_mode=Mode.DAJIANGWANG), 4, seed="00" * 32, seats=(seat, PlayerState(),
                                                                                  PlayerState(), PlayerState()))


def test_dragons_in_a_peng_or_gang_do_not_count() -> None:
    for meld in (MeldType.PENG, MeldType.MING_GANG, MeldType.AN_GANG):
        s = _state(((meld, T.ZHONG, 1),), T.ZHONG)  # three or four 中 melded, one 发 concealed
        assert L.after_draw(s, 0, (0, 1, 2, 3, T.FA)) == T.FA
    assert L.djw_candidates((0, 1, 2, T.FA, T.FA, T.ZHONG), T.ZHONG) == [T.FA]


def test_a_seat_without_a_dragon_has_all_three_tied_and_keeps_its_laizi() -> None:
    assert L.djw_candidates((0, 1, 2), -1) == list(T.DRAGONS)
    assert L.djw_candidates((0, 1, 2), T.BAI) == [T.BAI]
