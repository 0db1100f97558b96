"""A dropped table stream in headless Chromium, for real (web/test/scenes/reconnect.ts): one
player's page reaches the stack through an Envoy of this test's own, which the test stops
mid-hand of Ô ăn quan — the open Watch stream and every connection through it are gone — and
starts again on the same port after the other player (on the usual gateway) has moved. The page
must show it is reconnecting in its player's language (Vietnamese) meanwhile, then resume with
Watch(from_version = the version it had), show the move it missed, draw the same board as the
other player's page, say it is connected again, and take the next move by clicks. Screenshots:
reconnect-1-lost-vi-desktop.png (the banner), reconnect-2-back-vi-desktop.png."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

import pytest

from chieu.gateway import envoy
from chieu.kit.settings import Settings
from chieu_tools import localnats
from chieu_tools.gateway import envoyproc, static

from .harness import check_scene, scene

pytestmark = [pytest.mark.integration, pytest.mark.e2e]


@pytest.mark.timeout(180)
async def test_the_page_reconnects_after_its_gateway_restarts_mid_hand(
        web_url: str, web_built: Path, settings: Settings, tmp_path: Path) -> None:
    files, static_addr = static.serve(web_built / "dist")
    listen = f"127.0.0.1:{localnats.free_port()}"

    def start() -> subprocess.Popen[bytes]:
        return envoyproc.start(tmp_path / "envoy", listen, envoy.upstreams(settings), static_addr, quiet=True)

    gateway = await asyncio.to_thread(start)
    asked: list[str] = []

    async def on_ask(what: str) -> None:
        nonlocal gateway
        asked.append(what)
        if what == "cut":
            await asyncio.to_thread(envoyproc.stop, gateway)
        elif what == "restore":
            gateway = await asyncio.to_thread(start)

    try:
        r = await scene(web_url, web_built, "reconnect", {"CHIEU_CUT_URL": f"http://{listen}"}, on_ask, limit_s=150)
    finally:
        envoyproc.stop(gateway)
        files.shutdown()
    check_scene(r)
    f = r["facts"]
    assert asked == ["cut", "restore"]
    # while cut: the banner, in Vietnamese, and the page still on the version it had
    assert f["banner"] == f["bannerExpected"] == "Mất kết nối: đang kết nối lại…"
    assert f["bannerStill"] and f["versionWhileCut"] == f["versionBefore"]
    # back: resumed from that version, the missed move shown, the same board as the other page
    assert f["watchesAfterCut"] and set(f["watchesAfterCut"]) == {f["versionBefore"]}, f["watchesAfterCut"]
    assert f["resumedAfterRestore"] and set(f["resumedAfterRestore"]) == {f["versionBefore"]}
    assert int(f["versionAfter"]) > int(f["versionBefore"]) and f["versionAfter"] == f["versionOther"]
    assert f["boardSame"], f["boards"]
    assert f["backExpected"] in f["notes"], "the page said it is connected again"
    # playable again: it is the reconnected player's turn, its move by clicks reached the other page
    assert f["anToMove"] and f["otherSawMove"] and int(f["versionAfterMove"]) > int(f["versionAfter"])
    assert {"reconnect-1-lost-vi-desktop.png", "reconnect-2-back-vi-desktop.png"} <= set(r["screenshots"])
