"""Two headless Chromium sessions (Debian's chromium, driven by playwright-core) play a whole
Ô ăn quan hand against each other through Envoy in a 金币 room, a third session spectates;
the payments show and both players' coins change; then a Phỏm hand: each sees only their own
cards, and the dealer's first discard reaches the other's view. Screenshots of the table are kept in
build/artifacts/web/."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from .conftest import ARTIFACTS, run_node

pytestmark = [pytest.mark.integration, pytest.mark.e2e]


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        pytest.fail("chromium is not installed (scripts/check installs Debian's package)")
    return found


async def test_two_browsers_play_a_whole_o_an_quan_hand(web_url: str, web_built: Path) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    code, out = await run_node(web_built, ["build/test/browser.mjs"], {
        "CHIEU_WEB_URL": web_url, "CHIEU_ARTIFACTS": str(ARTIFACTS), "CHIEU_CHROMIUM": chromium(),
        "CHIEU_ROOM": "o_an_quan.coins.1"}, limit_s=240)
    (ARTIFACTS / "browser.log").write_text(out)
    assert code == 0, out[-4000:]
    result = json.loads(out.strip().splitlines()[-1])
    assert result["ok"] and result["moves"] > 0
    assert result["spectatorSaw"] == result["finalVersion"], "the spectator followed to the end"
    assert result["errors"] == [[], [], []], result["errors"]
    if result["payments"]:  # not a draw: the loser paid, and the ledger's balances moved
        assert result["coinsAfter"][0] != result["coinsBefore"][0]
        assert result["coinsAfter"][1] != result["coinsBefore"][1]
        assert sum(map(int, result["coinsAfter"])) == sum(map(int, result["coinsBefore"]))
    assert result["phomHands"] == [10, 9] and result["phomHidden"], "each player sees their own Phỏm hand"
    for name in ("oaq-1-start-An", "oaq-2-midgame-Binh", "oaq-3-end-An", "oaq-3-end-spectator",
                 "phom-1-dealt-An", "phom-2-discarded-other"):
        assert (ARTIFACTS / f"{name}.png").stat().st_size > 1000
