"""够级's own controls clicked in headless Chromium (web/test/scenes/gouji.ts): 革命 and 不革命,
烧 (捎牌) and 还贡, on two games dealt for them at one table (tests/web/seeds.py). Three players in
pages — An (seat 0, Vietnamese, desktop), Bình (1, Chinese, phone), Chi (2, English, desktop) —
and three guests playing from node; the moves between the clicks are played from node through
each seat's own session.

Game 1 is dealt so that An and Bình hold no 2 and no joker (the 革命 window opens for both), Chi
holds a joker and a single low card, seat 3 or 4 a 2 and a higher plain card. An declines,
Bình declares and sits the game out; An leads everything out (头科); Chi sheds all but the
joker, one rank and the single; the seat holding the 2 beats the single and leads the lone 2, a
够级 set: Chi clicks the joker and 烧 (burns it), and goes out. Game 2: 大落 pays An two cards and
二落 pays Chi one (进贡); An clicks two cards and 还贡, Chi one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from chieu.games.gouji import cards as C
from chieu.kit.settings import Settings

from . import seeds
from .harness import check_scene, scene
from .short_rooms import short_room

pytestmark = [pytest.mark.integration, pytest.mark.e2e]

OPTIONS: dict[str, Any] = {"GE_MING": "on", "TURN_TIMEOUT_S": 30, "TRIBUTE_RETURN_TIMEOUT_S": 60}
TWO, SJ, BJ = C.RANK["2"], C.RANK["SJ"], C.RANK["BJ"]


def hands(seed: bytes) -> list[C.Counts]:
    return C.deal(seeds.material(seed, 6), "deal", 6)[0]


def game_one(seed: bytes) -> bool:
    """革命 for seats 0 and 1 only; seat 2 a joker and a single that seat 3 or 4, holding a 2,
    beats with a plain card (the first leader of game 1 is seat 0, the host)."""
    h = hands(seed)
    if [C.revolution_ok(x) for x in h] != [True, True, False, False, False, False] or h[2][SJ] + h[2][BJ] < 1:
        return False
    return any(h[x][TWO] and any(h[x][r] for r in range(q + 1, TWO))
               for q in range(TWO) if h[2][q] == 1 for x in (3, 4))


def game_two(seed: bytes) -> bool:
    """Nobody may declare 革命 (the tribute follows the deal at once)."""
    return not any(C.revolution_ok(x) for x in hands(seed))


@pytest.mark.timeout(240)
async def test_revolution_burn_and_tribute_are_clicked(
        web_url: str, web_built: Path, settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    seeds.deal_with(monkeypatch, {1: seeds.find("gouji-1", game_one, hint=20496),
                                  2: seeds.find("gouji-2", game_two)})
    await short_room(settings, "gouji", OPTIONS)
    r = await scene(web_url, web_built, "gouji_controls", limit_s=210)
    check_scene(r)
    f = r["facts"]
    # 革命: offered to An and Bình only; An declines, Bình declares and sits out, on every page
    assert f["revolution"] == [0, 1] and f["chiRevButtons"] == 0
    assert f["chiHint"] == "革命 window: waiting for An, Bình." and f["binhHint"].startswith("革命：")
    assert f["anButtonsAfterDecline"] == 0
    assert f["sittingOut"] == 1 and f["phaseAfterRevolution"] == "play"
    assert "革命 (ngồi ngoài)" in f["binhTagOnAn"] and "革命 (sits out)" in f["binhTagOnChi"]
    assert "革命（不打）" in f["binhTagOwn"]
    # 烧: offered with the joker only once it is picked; the burn shows on the others' pages
    J = f["plan"]["J"]
    assert [J] in f["burnOffers"] and f["burnDisabledBeforePick"]
    assert f["burning"] == [2] and f["topAfterBurn"] == [J] and f["topOwnerAfterBurn"] == 2
    assert "烧" in f["burnTagOnAn"] and "烧" in f["burnTagOnBinh"]
    assert f["places1"][0] == 1 and f["places1"][2] == 2 and f["places1"][1] == 4, f["places1"]
    # 还贡: An returns two of its cards to 大落, Chi one to 二落; everyone holds 36 again
    for key, n in (("an", 2), ("chi", 1)):
        t = f[key]
        assert t["phase"] == "tribute" and t["owe"] == n and t["offered"], t
        assert t["handBefore"] == t["heldBefore"] == 36 + n and t["payerBefore"] == 36 - n, t
        assert t["handAfter"] == t["heldAfter"] == 36 and t["oweAfter"] == 0, t
        assert t["payerAfter"] == 36 and t["payerGot"], t
    assert f["an"]["hint"] == "还贡: chọn 2 lá để trả." and f["chi"]["hint"] == "还贡: choose 1 card(s) to give back."
    assert f["phaseAfterReturns"] == "play"
    # above ten cards the view gives no count (报户 at ten or fewer): the page says so, not "many"
    assert f["counts"] and set(f["counts"]) == {"hơn 10 lá"}, f["counts"]
    assert r["timings"]["total"] < 150, r["timings"]
