"""The web front-end's speed, through the real gateway (Envoy), each number beside a baseline
measured in the same run:

- a move (TableService.Act) through Envoy and gRPC-Web, beside the same move over native gRPC to
  the table service (interleaved, same client library, same players): p50 ≤ 1.5× native;
- a browser's view update after another player's move: from sending Act to the moment the other
  player's page (headless Chromium) has the new version in its DOM: p99 ≤ 50 ms on loopback;
- the page's script (web/dist/app.js) gzipped: ≤ 250 kB (the fonts aside: they load by
  unicode-range, only the pieces a page's text uses);
- the first screen interactive (navigation → the sign-in form drawn and its script run, a fresh
  browser context each time): p50 ≤ 1.5 s on loopback.

The whole system as `chieu up` runs it (nats-server, PostgreSQL, the four services, Envoy and the
built page) on free ports with its data in a temporary folder; the players sign in through the
lobby. The measuring is web/bench/web.ts (node, playwright-core with the system's Chromium).
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from chieu_tools import localnats  # noqa: E402
from chieu_tools.gateway import web  # noqa: E402
from tests.benchmarks.common import line  # noqa: E402


def main() -> int:
    web.ensure_built(ROOT / "web", rebuild=True)
    chromium = shutil.which("chromium") or shutil.which("chromium-browser") or "/usr/bin/chromium"
    data = Path(tempfile.mkdtemp(prefix="chieu-bench-web-"))
    ports = {k: localnats.free_port() for k in ("nats", "table", "ledger", "ladder", "lobby", "web")}
    env = {**os.environ, "CHIEU_LOG_LEVEL": "warning", "CHIEU_LEDGER_ADDR": f"127.0.0.1:{ports['ledger']}",
           "CHIEU_LADDER_ADDR": f"127.0.0.1:{ports['ladder']}", "CHIEU_LOBBY_ADDR": f"127.0.0.1:{ports['lobby']}",
           # every guest signs in from 127.0.0.1: no per-address limits of new players and welcome coins
           "CHIEU_LOBBY_NEW_PLAYERS_PER_ADDRESS": "0", "CHIEU_LOBBY_WELCOME_PER_ADDRESS": "0",
           "CHIEU_LOBBY_WELCOME_PER_DEVICE": "0", "CHIEU_LOBBY_WELCOME_AFTER_HANDS": "0",
           # every client is 127.0.0.1 and plays far faster than a person: no request rates per address
           "CHIEU_WEB_RATE_PER_ADDRESS": "0", "CHIEU_RATE_PER_ADDRESS": "0", "CHIEU_RATE_PER_PLAYER": "0"}
    for k in ("CHIEU_TOKEN_PRIVATE_KEY", "CHIEU_TOKEN_PUBLIC_KEYS", "CHIEU_SERVICE_TOKEN", "DATABASE_URL", "NATS_URL"):
        env.pop(k, None)  # chieu up makes its own
    up = subprocess.Popen([sys.executable, "-m", "chieu_tools.cli", "up", "--data", str(data),
                           "--nats-port", str(ports["nats"]), "--table-port", str(ports["table"]),
                           "--web-port", str(ports["web"])], env=env, stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        localnats.wait_for_port(ports["web"], timeout=120, proc=up)
        time.sleep(1.0)
        out = subprocess.run(["node", "build/bench/web.mjs"], cwd=ROOT / "web", capture_output=True, text=True,
                             timeout=600, env={**os.environ, "CHIEU_WEB_URL": f"http://127.0.0.1:{ports['web']}",
                                               "CHIEU_TABLE_URL": f"http://127.0.0.1:{ports['table']}",
                                               "CHIEU_CHROMIUM": chromium})
        if out.returncode != 0:
            print(out.stdout[-3000:], out.stderr[-3000:])
            return 1
        r = json.loads(out.stdout.strip().splitlines()[-1])
    finally:
        up.send_signal(signal.SIGINT)
        try:
            up.wait(60)
        except subprocess.TimeoutExpired:
            os.killpg(up.pid, signal.SIGKILL)
        shutil.rmtree(data, ignore_errors=True)
    script = len(gzip.compress((ROOT / "web" / "dist" / "app.js").read_bytes(), 9)) / 1000
    ratio = r["web_p50"] / r["native_p50"]
    print(f"web: {r['moves']} moves (Ô ăn quan, interleaved), {r['updates']} browser view updates")
    line("Act over native gRPC p50 (baseline)", r["native_p50"], "ms", "-", True, f"p99 {r['native_p99']:.2f} ms")
    line("Act through Envoy, gRPC-Web p50", r["web_p50"], "ms", "≤ 1.5× native", ratio <= 1.5,
         f"{ratio:.2f}× native; p99 {r['web_p99']:.2f} ms")
    line("browser view update after a move p99", r["view_p99"], "ms", "≤ 50 ms", r["view_p99"] <= 50,
         f"p50 {r['view_p50']:.2f} ms, max {r['view_max']:.2f} ms; the page's own redraw p50 "
         f"{r['draw_p50']:.2f} ms, p99 {r['draw_p99']:.2f} ms")
    line("page script, gzipped", script, "kB", "≤ 250 kB", script <= 250, f"{script / 250:.2f}× the budget")
    line("first screen interactive p50", r["first_p50"], "ms", "≤ 1500 ms", r["first_p50"] <= 1500,
         f"max {r['first_max']:.0f} ms ({r['first_p50'] / 1500:.2f}× the budget)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
