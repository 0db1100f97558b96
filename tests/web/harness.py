"""The browser harness for every game's board, for the tests of each game: ``play(...)`` runs
web/test/play.ts (headless Chromium, playwright-core) for the games given, each with its
"one move by clicks" function in web/test/moves/<key>.ts, and ``check(...)`` asserts what every
game's hand must show: it ended by clicks only, no page overflowed at 1280 or 375 px, a phone's
first screen (upright 375×667 and sideways 667×375) held all one plays with, no seat lay on the
dock, the centre or another seat and nothing covered a text of the dock (at every size), axe-core
found no serious or critical violation, no page error, CSP refusal, 404 or refusal toast, the
spectator followed to the end, and the screenshots are kept under build/artifacts/web/."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import signal
import subprocess
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from .conftest import ARTIFACTS, run_node


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        pytest.fail("chromium is not installed (scripts/check installs Debian's package)")
    return found


async def play(web_url: str, web_built: Path, games: list[str], limit_s: float = 300) -> dict[str, dict[str, Any]]:
    """One hand of each game in the browser; its result by game key (see web/test/harness.ts)."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    code, out = await run_node(web_built, ["build/test/play.mjs", *games], {
        "CHIEU_WEB_URL": web_url, "CHIEU_ARTIFACTS": str(ARTIFACTS), "CHIEU_CHROMIUM": chromium()}, limit_s=limit_s)
    (ARTIFACTS / f"play-{'-'.join(games)}.log").write_text(out)
    results = {}
    for line in out.splitlines():
        if line.startswith("{"):
            r = json.loads(line)
            results[r["game"]] = r
    assert set(results) == set(games), f"exit {code}: " + out[-4000:]
    return results


#: The boards that say why a click is refused and animate a move's result (issue 35); 象棋 and
#: 连连看 have their own (tests/web/test_xiangqi_browser.py, test_lianliankan_browser.py).
FEEDBACK = {"o_an_quan", "phom", "dominoes", "mahjong", "gouji"}
HAN = re.compile(r"[\u3400-\u9fff]")
CODE = re.compile(r"\b[a-z]+_[a-z_]+\b|\b[a-z]+\.[a-z]+\b")


def check_feedback(r: dict[str, Any]) -> None:
    """A refused click said why, in words of the page's language and no code, on every page that
    tried one; every page (a spectator's too) animated some move's result, and none where the
    page asks for reduced motion; every drawing the game inspects was right (stones drawn ==
    the count)."""
    assert r["drawn"] == [], f"the board drawn wrong: {r['drawn']}"
    assert r["whyMissing"] == [], f"a refused click showed no why: {r['whyMissing']} (skipped: {r['whySkipped']})"
    tried = len(r["whys"]) + len(r["whyMissing"]) + sum(r["whySkipped"].values())
    # a hand in which no page was ever off its turn when looked at tries none (seen once in
    # Ô ăn quan); one tried and never answered is a failure
    assert r["whys"] or not tried, f"no refused click said why (skipped: {r['whySkipped']})"
    for w in r["whys"]:
        text, lang = w["text"].strip(), w["lang"]
        assert text and not CODE.search(text), w
        if lang == "zh":
            assert HAN.search(text), w
        elif lang == "vi":
            assert not HAN.search(text) and any(ord(c) > 127 for c in text), w
        else:
            assert text.isascii(), w
    for name, fx in r["fx"].items():
        assert fx["n"] > 0, f"{name} saw no move animated: {r['fx']}"
        assert fx["animated"] == (0 if fx["reduced"] else fx["n"]), f"{name}: {fx}"


def check(r: dict[str, Any]) -> None:
    """What every game's hand in the browser must show."""
    assert r["ok"], r.get("error")
    assert r["moves"] > 0, "the hand was played by clicks"
    assert r["overflow"] == [], f"screens wider than the window: {r['overflow']}"
    assert r["folds"] > 0 and r["fold"] == [], f"at 375×667 or 667×375, needed for play but off screen: {r['fold']}"
    assert r["clashes"] > 0 and r["clash"] == [], f"seat on dock or centre, dock text covered: {r['clash']}"
    assert r["hanzi"] == [], f"hanzi on a vi/en page outside the native terms (i18n/native.ts): {r['hanzi']}"
    assert r["axe"] == [], f"axe-core serious/critical: {r['axe']}"
    assert r["errors"] == [], r["errors"]
    assert r["spectatorSaw"] == r["finalVersion"], "the spectator followed to the end"
    langs = {(s["lang"], s["phone"]) for s in r["sessions"]}
    assert {lang for lang, _ in langs} == {"vi", "zh", "en"} and {phone for _, phone in langs} == {True, False}
    for name in r["screenshots"]:
        assert (ARTIFACTS / name).stat().st_size > 2000, name
    assert any("-1-mid-" in s for s in r["screenshots"]) and any("-2-end-" in s for s in r["screenshots"])
    if r["game"] in FEEDBACK:
        check_feedback(r)


async def scene(web_url: str, web_built: Path, name: str, env: dict[str, str] | None = None,
                on_ask: Callable[[str], Awaitable[None]] | None = None, limit_s: float = 150) -> dict[str, Any]:
    """Runs one browser scene (web/test/scenes/<name>.ts through build/test/scenes.mjs) and returns
    its result (``facts``: what it saw). A scene that prints "@what" waits until ``on_ask(what)``
    has done it (e.g. stopped a gateway), then goes on. The output is kept in
    build/artifacts/web/scene-<name>.log."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    proc = await asyncio.create_subprocess_exec(
        "node", "build/test/scenes.mjs", name, cwd=web_built, start_new_session=True,
        env={**os.environ, "CHIEU_WEB_URL": web_url, "CHIEU_ARTIFACTS": str(ARTIFACTS), "CHIEU_CHROMIUM": chromium(),
             **(env or {})},
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, limit=1 << 22)
    assert proc.stdin is not None and proc.stdout is not None
    out: list[str] = []
    result: dict[str, Any] | None = None

    async def read() -> None:
        nonlocal result
        assert proc.stdin is not None and proc.stdout is not None
        async for raw in proc.stdout:
            line = raw.decode(errors="replace").rstrip("\n")
            out.append(line)
            if line.startswith("@"):
                if on_ask is not None:
                    await on_ask(line[1:])
                proc.stdin.write(b"ok\n")
                await proc.stdin.drain()
            elif line.startswith("{"):
                result = json.loads(line)
        await proc.wait()

    try:
        await asyncio.wait_for(read(), limit_s)
    except TimeoutError:
        os.killpg(proc.pid, signal.SIGKILL)
        await proc.wait()
        out.append(f"(timed out after {limit_s}s)")
    finally:
        (ARTIFACTS / f"scene-{name}.log").write_text("\n".join(out) + "\n")
    assert result is not None, f"scene {name}: no result, exit {proc.returncode}: " + "\n".join(out)[-4000:]
    return result


def check_scene(r: dict[str, Any]) -> None:
    """What every scene must show: it ran to its end, no page error or refusal toast, no page wider
    than its window, no serious axe finding, its screenshots kept."""
    assert r["ok"], r.get("error")
    assert r["errors"] == [], r["errors"]
    assert r["overflow"] == [], f"screens wider than the window: {r['overflow']}"
    assert r["axe"] == [], f"axe-core serious/critical: {r['axe']}"
    for name in r["screenshots"]:
        assert (ARTIFACTS / name).stat().st_size > 2000, name
