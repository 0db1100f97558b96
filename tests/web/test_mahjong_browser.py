"""洪洞王牌麻将 played to its end by clicks only in headless Chromium (tests/web/harness.py; moves
in web/test/moves/mahjong.ts): two players at 1280×800 in Vietnamese and 375×667 in Chinese and a
spectator in English; tiles picked and discarded, 碰/杠/过 answered in the claim windows, 报听
declared when the legal list offers it, until a win or 荒庄."""

from __future__ import annotations

from pathlib import Path

import pytest

from .harness import check, play

pytestmark = [pytest.mark.integration, pytest.mark.e2e]


@pytest.mark.timeout(330)
async def test_a_hand_of_mahjong_is_played_to_the_end_by_clicks(web_url: str, web_built: Path) -> None:
    r = (await play(web_url, web_built, ["mahjong"], limit_s=300))["mahjong"]
    check(r)
    assert r["outcome"], "the result says who won, or 荒庄, in words"
