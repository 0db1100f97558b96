"""中国象棋 played to its end by clicks only in headless Chromium (the harness of
tests/web/harness.py, moves in web/test/moves/xiangqi.ts): Red at 1280×800 in Vietnamese, Black
at 375×667 in Chinese (the board flipped), a spectator in English; pieces picked, destinations
clicked, the last move and a check on the board, and the side to move resigning (认输 with its
confirmation) after 24 plies. A short-clock room (1 min per 20 moves)."""

from __future__ import annotations

from pathlib import Path

import pytest

from chieu.kit.settings import Settings

from .harness import check, check_scene, play, scene
from .short_rooms import short_room

pytestmark = [pytest.mark.integration, pytest.mark.e2e]


@pytest.mark.timeout(300)
async def test_a_game_of_xiangqi_is_played_to_the_end_by_clicks(
        web_url: str, web_built: Path, settings: Settings) -> None:
    await short_room(settings, "xiangqi")
    r = (await play(web_url, web_built, ["xiangqi"], limit_s=280))["xiangqi"]
    check(r)
    assert r["moves"] >= 24, "the pieces were moved by clicks before the resignation"
    assert r["outcome"], "the result says who won, in words"


@pytest.mark.timeout(180)
async def test_a_draw_is_offered_declined_offered_again_and_accepted_by_clicks(
        web_url: str, web_built: Path, settings: Settings) -> None:
    """提和 by clicks (web/test/scenes/xiangqi.ts), after two clicks the rules refuse (Red on a
    Black piece, Black before its turn), each told why beside the point in the page's language.
    Red (Vietnamese, desktop) offers on its move;
    Black (Chinese, phone) sees who offers with both answers and declines; the offer is gone and
    Red may not offer again that turn; after a move each Red offers again and Black accepts: the
    hand ends without a winner, by agreement, on both pages."""
    await short_room(settings, "xiangqi")
    r = await scene(web_url, web_built, "xiangqi_draw", limit_s=150)
    check_scene(r)
    f = r["facts"]
    assert f["whyRed"] == "Không phải quân của bạn" and f["whyBlack"] == "还没轮到你", "a refused click says why"
    assert f["redSeat"] == "0" and f["offerEnabledAtStart"]
    assert f["offerText"] == "An提和。" and f["declineShown"], f["offerText"]
    assert not f["redOfferAgainEnabled"] and not f["redSeesAnswers"], "one offer per turn; the answers are Black's"
    assert f["offerGoneForBlack"] and f["stillPlaying"]
    assert not f["redOfferAfterDecline"], "a declined offer is not made again in the same turn"
    assert f["offerEnabledNextTurn"]
    assert f["verdictRed"] == "Không ai thắng — Hòa theo thỏa thuận.", f["verdictRed"]
    assert f["verdictBlack"].endswith("双方议和。") and f["winnerChips"] == 0, f["verdictBlack"]
