"""中国象棋 played to its end by clicks only in headless Chromium (the harness of
tests/web/harness.py, moves in web/test/moves/xiangqi.ts): Red at 1280×800 in Vietnamese, Black
at 375×667 in Chinese (the board flipped), a spectator in English; pieces picked, destinations
clicked, the last move and a check on the board, and the side to move resigning (认输 with its
confirmation) after 24 plies. A short-clock room (1 min per 20 moves)."""

from __future__ import annotations

from pathlib import Path

import pytest

from chieu.kit.settings import Settings

from .harness import check, play
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
