"""洪洞王牌麻将 in headless Chromium: a hand played to its end by clicks only (tests/web/harness.py;
moves in web/test/moves/mahjong.ts): two players at 1280×800 in Vietnamese and 375×667 in Chinese
and a spectator in English; tiles picked and discarded, 碰/杠/过 answered in the claim windows,
报听 declared when the legal list offers it, until a win or 荒庄. And 硬扣 and 报听 clicked on a
hand dealt for them (web/test/scenes/mahjong.ts)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from chieu.games import registry
from chieu.games.core import Setup
from chieu.games.mahjong.model import ChoosePair, Declare, Discard, Pass, Phase, Win
from chieu.kit.settings import Settings

from . import seeds
from .harness import check, check_scene, play, scene
from .short_rooms import short_room

pytestmark = [pytest.mark.integration, pytest.mark.e2e]


@pytest.mark.timeout(330)
async def test_a_hand_of_mahjong_is_played_to_the_end_by_clicks(web_url: str, web_built: Path) -> None:
    r = (await play(web_url, web_built, ["mahjong"], limit_s=300))["mahjong"]
    check(r)
    assert r["outcome"], "the result says who won, or 荒庄, in words"
    # the end lays the hands open, for the spectator too (issue 34; the wall's end too, when tiles are left)
    assert r["revealed"]["seats"] and all(n > 0 for n in r["revealed"]["seats"].values()), r["revealed"]


OPTIONS: dict[str, Any] = {"TURN_SECONDS": 30, "CLAIM_SECONDS": 20}
"""The room of the declarations' hand: the rules' defaults, with clocks no page waits out."""


def declarations(seed: bytes) -> tuple[tuple[int, str, int], tuple[int, str, int]] | None:
    """The hand ``seed`` deals at two seats, played as web/test/scenes/mahjong.ts plays it (the
    first seat the rules let act does: pass a claim, the first pair offered, else discard the
    drawn tile, or the first tile offered): where 硬扣 is first offered (seat, tile, step) — taken —
    and then 报听 to the other seat; None when that does not happen before a win or the end."""
    g = registry.get("mahjong")
    opts = g.parse_options(OPTIONS)
    st = g.initial(opts, 2)
    for e in g.start(Setup(options=opts, players=2, seed=seeds.material(seed, 2), now_ms=0)):
        st = g.evolve(st, e)
    yk: tuple[int, str, int] | None = None
    for step in range(1, 200):
        seat, legal = next(((s, x) for s in range(2) if (x := g.legal(st, s))), (-1, []))
        if st.phase is Phase.OVER or seat < 0 or any(isinstance(c, Win) for c in legal):
            return None
        discards = [c for c in legal if isinstance(c, Discard)]
        yks = [c for c in discards if c.declare is Declare.YING_KOU]
        tings = [c for c in discards if c.declare is Declare.TING]
        if st.phase is Phase.CLAIM:
            cmd: Any = Pass()
        elif isinstance(legal[0], ChoosePair):
            cmd = legal[0]
        elif yk is None and yks:
            yk, cmd = (seat, yks[0].tile, step), yks[0]
        elif yk is not None and seat != yk[0] and tings:
            return yk, (seat, tings[0].tile, step)
        else:
            plain = [c for c in discards if c.declare is Declare.NONE]
            drawn = g.view(st, seat).drawn
            cmd = next((c for c in plain if c.tile == drawn), plain[0] if plain else legal[0])
        for e in g.decide(st, seat, cmd, 0):
            st = g.evolve(st, e)
    return None


@pytest.mark.timeout(240)
async def test_ying_kou_and_bao_ting_are_declared_by_clicks(
        web_url: str, web_built: Path, settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    """A hand where An (seat 0, Vietnamese, desktop) is offered 硬扣 and then Bình (seat 1,
    Chinese, phone) 报听; the other moves are played from node, the declarations are clicked: the
    tile, then 硬扣 / 报听. Each shows on both pages as the seat's tag, the declarer's page lists
    its waits (听), and the discard lies in its pond."""
    seed = seeds.find("mahjong", lambda s: declarations(s) is not None, hint=2357)
    want = declarations(seed)
    assert want is not None
    seeds.deal_with(monkeypatch, {1: seed})
    await short_room(settings, "mahjong", OPTIONS)
    r = await scene(web_url, web_built, "mahjong_declare", limit_s=200)
    check_scene(r)
    f = r["facts"]
    assert f["seats"] == [0, 1]
    for key, (seat, tile, _), button, tag in (("yk", want[0], "yingkou", ("硬扣",)),
                                              ("ting", want[1], "ting", ("报听",))):
        d = f[key]
        assert (d["seat"], d["tile"]) == (seat, tile), (key, d, want)
        assert button in f[f"{key}Buttons"], f"the {key} button was offered: {f[f'{key}Buttons']}"
        assert d["declared"] == (3 if key == "yk" else 2), d
        assert d["own"]["tag"] in tag and d["other"]["tag"] in tag, d
        assert d["own"]["pond"][-1:] == [tile] or tile in d["own"]["pond"], d
        assert d["other"]["pond"] == d["own"]["pond"], "the other page shows the same pond"
        assert d["waits"] and d["waits"] == d["viewWaits"], d
    assert f["yk"]["waitsWord"] == "Đang chờ" and f["ting"]["waitsWord"] == "听牌"
