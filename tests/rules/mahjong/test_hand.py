"""The scoring table's items and every scoring option, on single hands (§1.7)."""

from __future__ import annotations

from typing import Any

import pytest

from chieu.games.mahjong.scenario import score

P = {"LAIZI_MODE": "普通"}
LOULOU = "中 发 白 中 发 白 1m 2m 3m 4m 5m 6m 9m 9m"
NINE_GATES = "1m 1m 1m 2m 3m 4m 5m 6m 7m 8m 9m 9m 9m 5m"
QUAD_QIDUI = "1m 1m 1m 1m 2m 2m 5m 5m 7m 7m E E 中 中"


@pytest.mark.parametrize(
    ("options", "hand", "win", "ying_kou", "items"),
    [
        (P, LOULOU, "白", True, {"pinghu": 1, "half_flush": 2, "danyuanhu": 5, "loushanglou": 10,
                                "dragon_runs": 2}),
        ({**P, "LOUSHANGLOU_STYLE": "replace"}, LOULOU, "白", True,
         {"pinghu": 1, "half_flush": 2, "loushanglou": 10}),
        (P, LOULOU, "白", False, {"pinghu": 1, "half_flush": 2, "dragon_runs": 2}),
        (P, NINE_GATES, "5m", False, {"pinghu": 1, "half_flush": 2, "full_flush": 20}),
        ({**P, "FLUSH_EXCLUSIVE": "on"}, NINE_GATES, "5m", False, {"pinghu": 1, "full_flush": 20}),
        (P, "E E E S S S W W W 中 中 中 N N", "N", False, {"pinghu": 1, "ziyise": 30, "wind_runs": 3}),
        ({**P, "PINGHU_ONLY_IF_NO_PATTERN": "on"}, "1m 2m 3m 4m 5m 6m 7m 8m 9m E E E 2p 2p", "2p", False,
         {"yitiaolong": 10}),
        ({**P, "PINGHU_ONLY_IF_NO_PATTERN": "on"}, "1m 2m 3m 4m 5m 6m 7p 7p 7p 中 发 白 9m 9m", "9m",
         False, {"pinghu": 1, "dragon_runs": 1}),
        (P, QUAD_QIDUI, "中", False, {"pinghu": 1, "qidui": 10, "half_flush": 2}),
    ],
)
def test_scoring_items_and_options(
    options: dict[str, Any], hand: str, win: str, ying_kou: bool, items: dict[str, int]
) -> None:
    got = score(options, "5s", hand, win, ying_kou=ying_kou)
    assert got["win"] and got["items"] == items and got["total"] == sum(items.values())


def test_quads_are_not_two_pairs_when_the_option_is_off() -> None:
    assert not score({**P, "QIDUI_QUAD_AS_TWO_PAIRS": "off"}, "5s", QUAD_QIDUI, "中")["win"]


def test_qidui_is_refused_in_yizhiwang_and_after_ying_kou() -> None:
    assert not score({"LAIZI_MODE": "一支王"}, "王", "王 1m 1m 2m 2m 5m 5m 7m 7m E E 中 中 9m", "9m")["win"]
    qidui = "1m 1m 2m 2m 5m 5m 7m 7m E E 中 中 白 白"
    assert score(P, "5s", qidui, "白")["win"]
    assert not score(P, "5s", qidui, "白", ying_kou=True)["win"]


def test_a_meld_of_another_suit_breaks_the_lack_suit_rule() -> None:
    hand = "1m 2m 3m 4m 5m 6m 7m 8m 9m 2p 2p"
    assert score(P, "5s", hand, "2p", melds=["peng E"])["win"]
    assert not score(P, "5s", hand, "2p", melds=["peng 3s"])["win"]
    assert not score({"LAIZI_MODE": "色牌"}, "5s", hand, "2p", melds=["peng E"])["win"]
