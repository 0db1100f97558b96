"""The table process's garbage-collection pauses under moves (issue 37), with and without
``chieu.kit.server.tune_gc``.

A table-service process whose collector is timed by ``gc.callbacks`` (each collection's
generation and wall time, written to a file); Ô ăn quan at BENCH_TABLES tables of 4 Watch streams
(bench_table's ``load``: 2 players and 2 spectators, one move per table every BENCH_PACE_S), after
a warm-up of BENCH_WARMUP_S. Reported for each mode (the service's ``tune_gc`` as it is, then
switched off in the process): the collections per generation in the measured window, their
longest and total pause, and the moves' p99 (Act sent → the four watchers hold the version).

Environment: BENCH_TABLES (250: 1,000 streams), BENCH_SECONDS (30), BENCH_WARMUP_S (15),
BENCH_PACE_S (5).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from chieu_tools import localnats
from tests.benchmarks.bench_table import load
from tests.benchmarks.common import pct

TABLES = int(os.environ.get("BENCH_TABLES", "250"))
SECONDS = float(os.environ.get("BENCH_SECONDS", "30"))
WARMUP_S = float(os.environ.get("BENCH_WARMUP_S", "15"))
PACE_S = float(os.environ.get("BENCH_PACE_S", "5"))

TIMED = """
import gc, os, runpy, sys, time
out = open(os.environ["BENCH_GC_LOG"], "a", buffering=1)
began = [0.0]
def timed(phase, info):
    if phase == "start":
        began[0] = time.perf_counter()
    else:
        out.write(f"{time.time():.3f} {info['generation']} {(time.perf_counter() - began[0]) * 1e3:.3f}\\n")
gc.callbacks.append(timed)
if os.environ.get("BENCH_TUNE_GC") == "0":
    import chieu.kit.server
    chieu.kit.server.tune_gc = lambda: None
sys.argv = ["chieu.table"]
runpy.run_module("chieu.table", run_name="__main__", alter_sys=True)
"""


@contextlib.contextmanager
def timed_table(tune: bool, log: Path) -> Iterator[str]:
    """A nats-server and a table process whose collections are written to ``log``."""
    data = Path(tempfile.mkdtemp(prefix="chieu-bench-gc-"))
    nats_proc, url = localnats.start(data / "nats", quiet=True)
    port = localnats.free_port()
    env = {**os.environ, "NATS_URL": url, "CHIEU_TABLE_ADDR": f"127.0.0.1:{port}", "CHIEU_LOG_LEVEL": "error",
           "CHIEU_RATE_PER_PLAYER": "0", "CHIEU_RATE_PER_ADDRESS": "0", "CHIEU_UNPLAYED_TABLES": "0",
           "BENCH_GC_LOG": str(log), "BENCH_TUNE_GC": "1" if tune else "0"}
    svc = subprocess.Popen([sys.executable, "-c", TIMED], env=env)
    try:
        localnats.wait_for_port(port, 30, svc)
        yield f"127.0.0.1:{port}"
    finally:
        svc.send_signal(signal.SIGTERM)
        svc.wait(20)
        localnats.stop(nats_proc)
        shutil.rmtree(data, ignore_errors=True)


async def one(tune: bool) -> None:
    with tempfile.TemporaryDirectory() as d:
        log = Path(d) / "gc.log"
        with timed_table(tune, log) as addr:
            start = time.time() + WARMUP_S
            _, lat = await load(addr, TABLES, WARMUP_S + SECONDS, pace_s=PACE_S, warmup_s=WARMUP_S)
        end = start + SECONDS
        every = [(float(at), int(g), float(ms)) for at, g, ms in (ln.split() for ln in log.read_text().splitlines())]
        pauses = [(g, ms) for at, g, ms in every if start <= at <= end]
    counts = [sum(1 for g, _ in pauses if g == gen) for gen in range(3)]
    longest = [max((ms for g, ms in pauses if g == gen), default=0.0) for gen in range(3)]
    total = sum(ms for _, ms in pauses)
    p99 = pct(lat, 0.99) * 1e3 if lat else float("nan")
    print(f"  tune_gc {'on ' if tune else 'off'}: {len(lat)} moves, p99 {p99:.1f} ms; collections per generation "
          f"{counts}, longest {[round(x, 1) for x in longest]} ms, {total:.0f} ms paused in {SECONDS:.0f} s "
          f"({len(every)} collections in the process's whole life)")


async def main() -> None:
    print(f"bench_gc_pauses: {TABLES} tables ({TABLES * 4} Watch streams), a move per table every {PACE_S:.0f} s, "
          f"{SECONDS:.0f} s after {WARMUP_S:.0f} s of warm-up")
    for tune in (True, False):
        await one(tune)


if __name__ == "__main__":
    asyncio.run(main())
