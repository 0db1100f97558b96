"""A dropped opponent shown on the seat, in words, in headless Chromium (issue 34; the scene is
web/test/scenes/presence.ts): four players sit at a Phỏm table through a gateway of this test's
own whose table process stands a seat up after a short idle time; one closes the page. The other
three pages (vi desktop, zh phone, en desktop) show on that player's own seat that the connection
is lost, with the seconds left, in their language; then the seat is free. Screenshots:
presence-1-lost-{vi-desktop,zh-phone,en-desktop}.png, presence-2-stood-vi-desktop.png."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

import pytest

from chieu.gateway import envoy
from chieu.kit import words
from chieu.kit.settings import Settings
from chieu_tools import localnats
from chieu_tools.gateway import envoyproc, static

from .harness import check_scene, scene

pytestmark = [pytest.mark.integration, pytest.mark.e2e]

IDLE_S = 8.0


@pytest.mark.timeout(150)
async def test_a_dropped_opponent_is_shown_on_the_seat_in_every_language(
        web_url: str, web_built: Path, settings: Settings, tmp_path: Path) -> None:
    from chieu.table.app import build

    mine = replace(settings, table_addr=f"127.0.0.1:{localnats.free_port()}", table_idle_stand_s=IDLE_S)
    server = await build(mine)
    await server.start()
    files, static_addr = static.serve(web_built / "dist")
    listen = f"127.0.0.1:{localnats.free_port()}"
    gateway = await asyncio.to_thread(envoyproc.start, tmp_path / "envoy", listen, envoy.upstreams(mine),
                                      static_addr, quiet=True)
    try:
        r = await scene(f"http://{listen}", web_built, "presence", limit_s=120)
    finally:
        envoyproc.stop(gateway)
        files.shutdown()
        await server.shutdown()
    check_scene(r)
    f = r["facts"]
    for lang in ("vi", "zh", "en"):
        seen = f["lost"][lang]
        assert seen["kind"] == "away" and seen["expected"] == words.text("reconnecting", lang, "presence")
        assert seen["expected"] in seen["words"] and "Dũng" in seen["chip"], seen
        assert 0 < int("".join(c for c in seen["clock"] if c.isdigit())) <= IDLE_S, seen
    # stood up after the idle time (not before it), and the three others still seated
    assert IDLE_S * 1000 - 1500 <= f["stoodMs"] <= IDLE_S * 1000 + 20_000, f["stoodMs"]
    assert f["seatsAfter"] == 3
    assert {"presence-1-lost-vi-desktop.png", "presence-1-lost-zh-phone.png", "presence-1-lost-en-desktop.png",
            "presence-2-stood-vi-desktop.png"} <= set(r["screenshots"])
