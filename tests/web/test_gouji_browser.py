"""够级 played to its end by clicks only in headless Chromium (tests/web/harness.py; moves in
web/test/moves/gouji.ts): six players (1280×800 and 375×667, Vietnamese, Chinese and English)
and a spectator at one table of four decks; sets chosen rank by rank in the hand and played,
answered or passed (不要 / 扣) until the game ends. The room ends the game once a team is out
(END_EARLY_WHEN_ONE_TEAM_LEFT) to keep the run short; turns have 30 s, so a click is never
beaten by the clock while six pages take their turns."""

from __future__ import annotations

from pathlib import Path

import pytest

from chieu.kit.settings import Settings

from .harness import check, play
from .short_rooms import short_room

pytestmark = [pytest.mark.integration, pytest.mark.e2e]


@pytest.mark.timeout(360)
async def test_a_game_of_gouji_is_played_to_the_end_by_clicks(
        web_url: str, web_built: Path, settings: Settings) -> None:
    await short_room(settings, "gouji", {"END_EARLY_WHEN_ONE_TEAM_LEFT": "on", "TURN_TIMEOUT_S": 30})
    r = (await play(web_url, web_built, ["gouji"], limit_s=330))["gouji"]
    check(r)
    assert len(r["sessions"]) == 7, "six players and a spectator"
    assert r["outcome"], "the result says which team won, in words"
