"""连连看 played to its end by clicks only in headless Chromium (tests/web/harness.py; moves in
web/test/moves/lianliankan.ts): two players race on copies of one 14x6 board (the smallest the
rules allow), at 1280×800 in Vietnamese and at 375×667 in Chinese (the board upright), with a
spectator in English; each removal is a tile and then its partner, and the race ends when a
board is cleared."""

from __future__ import annotations

from pathlib import Path

import pytest

from chieu.kit.settings import Settings

from .harness import check, play
from .short_rooms import short_room

pytestmark = [pytest.mark.integration, pytest.mark.e2e]


@pytest.mark.timeout(300)
async def test_a_race_of_lianliankan_is_played_to_the_end_by_clicks(
        web_url: str, web_built: Path, settings: Settings) -> None:
    await short_room(settings, "lianliankan", {"BOARD": "14x6", "TIME_LIMIT": 240})
    r = (await play(web_url, web_built, ["lianliankan"], limit_s=280))["lianliankan"]
    check(r)
    assert r["moves"] >= 42, "one board of 84 tiles was cleared pair by pair"
    assert r["outcome"], "the result says who won, in words"
