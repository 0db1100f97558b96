"""What the request rates and quotas of issue 27 cost (targets: a limit check ≤ 20 µs per call; a
whole move unchanged within the noise), each beside a baseline measured in the same run.

- **A limit check, in process**: :meth:`chieu.kit.ratelimit.Limits.check` — the guard's per-call
  check of a player's and an address's rate (a verified token found in the cache, the address's
  key remembered per peer, two GCRA counts) — over 1,000 players on 250 addresses, beside a plain
  dict lookup and store of the same keys (the least any keyed count can cost).
- **A whole move, paired**: two table-service processes on one nats-server, one as it ships
  (rates checked on every call, the table and watch quotas on; its rates set high enough that
  nothing is refused) and one with every limit off (``CHIEU_RATE_PER_*=0``,
  ``CHIEU_UNPLAYED_TABLES=0``, ``CHIEU_WATCHES_PER_SESSION=0``); rounds of Ô ăn quan moves at one
  then the other (the order alternating), each process's CPU time read around its run; the ratio
  limited / unlimited taken round by round, its median reported.

Environment: BENCH_QUOTA_ROUNDS (12), BENCH_QUOTA_MOVES (1500 a run), BENCH_OBS_TABLES (8).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from chieu.kit import auth, ratelimit
from chieu.kit.settings import Settings
from chieu_tools import localnats
from tests.benchmarks.bench_observability import TABLES, Driver, cpu_ns
from tests.benchmarks.common import line, median

ROUNDS = int(os.environ.get("BENCH_QUOTA_ROUNDS", "12"))
MOVES = int(os.environ.get("BENCH_QUOTA_MOVES", "1500"))
TARGET_US = 20.0


class Call:
    def __init__(self, tok: str, peer: str) -> None:
        self.md = (("authorization", f"Bearer {tok}"),)
        self._peer = peer

    def invocation_metadata(self) -> Any:
        return self.md

    def peer(self) -> str:
        return self._peer


def per_call() -> None:
    signer = auth.Signer.generate()
    folder = Path(tempfile.mkdtemp(prefix="chieu-bench-quota-"))
    keys = folder / "jwks.json"
    keys.write_text(json.dumps(signer.keyset().to_jwks()))
    try:
        lim = ratelimit.Limits(Settings(token_public_keys=str(keys), rate_per_player=1e9, rate_per_address=1e9))
        calls = [Call(signer.sign(f"p{i}"), f"ipv4:198.51.100.{i % 250}:{40000 + i}") for i in range(1000)]
        for c in calls:
            lim.check(c)  # each token verified once, as its first call's servicer does
        seen: dict[str, float] = {}
        keys_of = [(f"p{i}", f"198.51.100.{i % 250}") for i in range(1000)]
        n = 200_000

        def checks() -> float:
            t = time.perf_counter()
            for i in range(n):
                lim.check(calls[i % 1000])
            return (time.perf_counter() - t) / n * 1e6

        def baseline() -> float:
            t = time.perf_counter()
            for i in range(n):
                player, addr = keys_of[i % 1000]
                seen[player] = seen.get(player, 0.0) + 1.0
                seen[addr] = seen.get(addr, 0.0) + 1.0
            return (time.perf_counter() - t) / n * 1e6

        got, base = [], []
        for _ in range(5):
            base.append(baseline())
            got.append(checks())
        us, b = median(got), median(base)
        line("a limit check (player + address), in process", us, "µs/call", f"<= {TARGET_US:g}", us <= TARGET_US,
             f"(baseline dict count {b:.2f} µs: {us / b:.1f}×)")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def start(url: str, limited: bool) -> tuple[subprocess.Popen[bytes], str]:
    port = localnats.free_port()
    env = {**os.environ, "NATS_URL": url, "CHIEU_TABLE_ADDR": f"127.0.0.1:{port}", "CHIEU_LOG_LEVEL": "error",
           "CHIEU_LOBBY_ADDR": "127.0.0.1:1", "CHIEU_REVOCATION_POLL_S": "3600"}
    if limited:  # checked on every call, never refusing
        env.update({"CHIEU_RATE_PER_PLAYER": "1000000", "CHIEU_RATE_PER_ADDRESS": "1000000"})
    else:
        env.update({"CHIEU_RATE_PER_PLAYER": "0", "CHIEU_RATE_PER_ADDRESS": "0", "CHIEU_UNPLAYED_TABLES": "0",
                    "CHIEU_WATCHES_PER_SESSION": "0"})
    proc = subprocess.Popen([sys.executable, "-m", "chieu.table"], env=env)
    localnats.wait_for_port(port, 30, proc)
    return proc, f"127.0.0.1:{port}"


async def paired(limited: tuple[int, Driver], unlimited: tuple[int, Driver]) -> None:
    for _, d in (limited, unlimited):
        await d.setup()
        await d.moves(MOVES // 2)  # warm-up
    per_move: dict[str, list[float]] = {"limited": [], "unlimited": []}
    ratios: list[float] = []
    for r in range(ROUNDS):
        order = [("limited", *limited), ("unlimited", *unlimited)]
        if r % 2:
            order.reverse()
        got: dict[str, float] = {}
        for name, pid, d in order:
            before = cpu_ns(pid)
            await d.moves(MOVES)
            got[name] = (cpu_ns(pid) - before) / MOVES / 1e3
            per_move[name].append(got[name])
        ratios.append(got["limited"] / got["unlimited"])
    lo, un = median(per_move["limited"]), median(per_move["unlimited"])
    ratio = median(ratios)
    q = statistics.quantiles(ratios, n=4)
    print(f"  {ROUNDS} rounds of {MOVES} moves each way, {TABLES} tables in flight; server CPU per move (µs):")
    print(f"    limited:   median {lo:.1f} (min {min(per_move['limited']):.1f}, max {max(per_move['limited']):.1f})")
    print(f"    unlimited: median {un:.1f} (min {min(per_move['unlimited']):.1f}, "
          f"max {max(per_move['unlimited']):.1f})")
    print(f"    ratios by round: {' '.join(f'{x:.3f}' for x in ratios)}")
    line("a move's CPU, limits on vs off", ratio, "ratio", "within noise", q[0] <= 1.0 or ratio <= 1.03,
         f"(+{(ratio - 1) * 100:.1f}%; quartiles {q[0]:.3f}..{q[2]:.3f})")


async def main_async(url: str) -> None:
    a_proc, a_addr = start(url, limited=True)
    b_proc, b_addr = start(url, limited=False)
    limited, unlimited = Driver(a_addr, "l"), Driver(b_addr, "u")
    try:
        print("the limits of issue 27: a check in process, and a move's CPU in the table service with and without:")
        per_call()
        await paired((a_proc.pid, limited), (b_proc.pid, unlimited))
    finally:
        await limited.close()
        await unlimited.close()
        for p in (a_proc, b_proc):
            p.send_signal(signal.SIGTERM)
            p.wait(20)


def main() -> None:
    data = Path(tempfile.mkdtemp(prefix="chieu-bench-quota-"))
    nats_proc, url = localnats.start(data / "nats", quiet=True)
    try:
        asyncio.run(main_async(url))
    finally:
        localnats.stop(nats_proc)
        shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    main()
