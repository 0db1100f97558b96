"""How the boards draw a few things players noticed, checked in headless Chromium and kept as
screenshots (web/test/scenes/dominoes.ts): Đô Mi Nô's double blank, dealt on purpose
(tests/web/seeds.py) to An, who leads it — both blank halves drawn engraved (a tile, not an empty
place), across the line on both pages; a six on a horizontal tile in two rows of three along it;
and every seat badge's letter is its player's initial, the page's own seat included (not the
first letter of "bạn" / "你"). Screenshots: dominoes-blank-0-hand-vi-desktop.png,
dominoes-blank-1-line-{vi-desktop,zh-phone}.png."""

from __future__ import annotations

from pathlib import Path

import pytest

from chieu.games import registry
from chieu.games.core import Setup

from . import seeds
from .harness import check_scene, scene

pytestmark = [pytest.mark.integration, pytest.mark.e2e]


def an_leads_the_double_blank(seed: bytes) -> bool:
    """Seat 0 leads and holds [0|0] and a tile with a six (the room's default options)."""
    g = registry.get("dominoes")
    opts = g.parse_options({})
    dealt = g.start(Setup(options=opts, players=2, seed=seeds.material(seed, 2), now_ms=0))[0]
    hand = {(t.a, t.b) for t in dealt.hands[0].tiles}
    return dealt.leader == 0 and (0, 0) in hand and any(6 in t for t in hand)


@pytest.mark.timeout(120)
async def test_the_double_blank_and_the_seat_letters_are_drawn_right(
        web_url: str, web_built: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seeds.deal_with(monkeypatch, {1: seeds.find("dominoes", an_leads_the_double_blank)})
    r = await scene(web_url, web_built, "dominoes_blank", limit_s=100)
    check_scene(r)
    f = r["facts"]
    blank = next(t for t in f["hand"] if t["tile"] == "0|0")
    assert [h["cls"] for h in blank["halves"]] == ["half blank", "half blank"] and blank["h"] >= 40, blank
    six = next(t for t in f["hand"] if t["tile"].endswith("|6"))
    assert six["halves"][1]["pips"] == [0, 1, 2, 6, 7, 8], "a six lies in two rows of three along a horizontal tile"
    for line in (f["lineAn"], f["lineBinh"]):
        assert [t["tile"] for t in line] == ["0|0"], line
        assert "vertical" in line[0]["cls"] and line[0]["h"] > line[0]["w"], "a double lies across the line"
        assert [h["cls"] for h in line[0]["halves"]] == ["half blank", "half blank"]
    assert {(a["me"], a["letter"], a["name"]) for a in f["avatarsAn"]} == {(True, "A", "bạn"), (False, "B", "Bình")}
    assert {(a["me"], a["letter"], a["name"]) for a in f["avatarsBinh"]} == {(True, "B", "你"), (False, "A", "An")}
