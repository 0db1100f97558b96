"""Ô ăn quan, Phỏm and Đô Mi Nô played to the end of a hand by clicks only, in headless Chromium
(Debian's chromium, playwright-core) through Envoy: 2–3 players and a spectator, at 1280×800 and
375×667, in Vietnamese, Chinese and English (tests/web/harness.py says what each hand must show);
in the 金币 room of Ô ăn quan the payments show by name and both players' 金币 move by them. And
the portal's own screens (home, every game's rooms, leaderboards, the services) in the three
languages at both sizes."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest

from .harness import check, play

pytestmark = [pytest.mark.integration, pytest.mark.e2e]


@pytest.mark.timeout(420)
@pytest.mark.parametrize("game", ["o_an_quan", "phom", "dominoes"])
async def test_a_hand_is_played_to_the_end_by_clicks(web_url: str, web_built: Path, game: str) -> None:
    r = (await play(web_url, web_built, [game], limit_s=400))[game]
    check(r)
    assert r["outcome"], "the result says who won, in words"
    if game == "o_an_quan":
        assert r["keyboard"], "a move was played by the keyboard alone"
    if game == "phom":  # the end lays every player's remaining cards open, for the spectator too (issue 34)
        assert len(r["revealed"]["seats"]) >= 2 and all(n > 0 for n in r["revealed"]["seats"].values()), r["revealed"]
    # the page shows the hand's fairness: the revealed seed hashes to the commitment it showed
    fair = r["fairness"]
    assert hashlib.sha256(bytes.fromhex(fair["seed"])).hexdigest() == fair["commitment"], fair
    assert len(fair["next"]) == 64 and fair["next"] != fair["commitment"], fair
    if game == "o_an_quan" and r["payments"]:  # a 金币 room, not a draw: the ledger's balances moved
        assert r["coinsAfter"] != r["coinsBefore"]
        assert sum(map(int, r["coinsAfter"])) == sum(map(int, r["coinsBefore"]))
        assert all("xu" in p for p in r["payments"])  # the host reads Vietnamese


@pytest.mark.timeout(300)
async def test_the_portal_screens_fit_a_phone_and_pass_axe(web_url: str, web_built: Path) -> None:
    r = (await play(web_url, web_built, ["portal"], limit_s=280))["portal"]
    assert r["ok"], r.get("error")
    assert r["overflow"] == [] and r["axe"] == [] and r["errors"] == [], (r["overflow"], r["axe"], r["errors"])
    assert r["hanzi"] == [], f"hanzi on a vi/en page outside the native terms: {r['hanzi']}"
    assert r["memberDays"] and r["memberDays"][0] == "1", "the membership day bought shows on the home screen"
    # the prices shown before buying (ListPrices), in the player's words; a day cost what it said
    prices = dict(p.split("=", 1) for p in r["prices"])
    assert set(prices) == {"reset-score", "reset-reputation", "song", "membership"}, prices
    assert all("xu" in v and any(c.isdigit() for c in v) for v in prices.values()), prices
    day = int("".join(c for c in prices["membership"] if c.isdigit()))
    before, after = (int("".join(c for c in r[k] if c.isdigit())) for k in ("coinsBeforeBuy", "coinsAfterBuy"))
    assert before - after == day, (r["coinsBeforeBuy"], r["coinsAfterBuy"], prices["membership"])
    for lang in ("vi", "zh", "en"):
        assert any(s.startswith("portal-rooms-" + lang) for s in r["screenshots"])
    # the leaderboards name every player: a display name, else a neutral word, never an id's piece
    assert not [n for n in r["leaderNames"] if re.fullmatch(r"(Player|Người chơi|玩家) \S{1,6}", n)], r["leaderNames"]
