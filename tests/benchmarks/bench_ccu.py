"""Open streams and moves one table-service process holds (issue 37), step by step.

One table-service process (its collector timed by ``gc.callbacks``, as in bench_gc_pauses) on a
nats-server; the load in BENCH_WORKERS generator processes of its own (tests/benchmarks/ccu_load.py):
Ô ăn quan tables of 2 players and 2 spectators, a ``Watch`` stream each (a connection per
BENCH_PER_CONNECTION streams), one move per table every BENCH_PACE_S at a phase of its own. A
move's latency: ``Act`` sent → all 4 streams hold its version.

The tables grow in steps (BENCH_STEPS streams: 1,000 / 2,000 / 4,000 / 8,000 / 10,000). At each
step, once every stream is open: BENCH_IDLE_S with no move (the table process's CPU with the
streams idle), then BENCH_WARMUP_S of moves, then BENCH_SECONDS measured: moves/s against the
target (tables / pace), p50 / p99 / max, the table process's CPU (schedstat: every thread, not
wall time) and RSS, its collections (count per generation, longest, total), the generators' CPU,
the load average, and the ratio of each to the step before. From the CPU with no stream, with
the streams idle and with the moves: the CPU per open stream and per move, and the projection
of the process's CPU at 10,000 streams and 500 moves/s (from the largest step that kept up with
its moves: where it fell behind, its CPU per move counts the set-up and the retries too).

Environment: BENCH_STEPS (1000,2000,4000,8000,10000), BENCH_SECONDS (30), BENCH_WARMUP_S (10),
BENCH_IDLE_S (5), BENCH_PACE_S (5), BENCH_WORKERS (2), BENCH_PER_CONNECTION (100); BENCH_PROFILE (a
directory: py-spy, installed beside this interpreter, records the table process in each measured
window there, raw; BENCH_PROFILE_NATIVE=1 with the native frames).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from chieu_tools import localnats
from tests.benchmarks.bench_idle_watch import cpu_s, rss_mb
from tests.benchmarks.common import line, pct, token

STEPS = [int(s) for s in os.environ.get("BENCH_STEPS", "1000,2000,4000,8000,10000").split(",")]
SECONDS = float(os.environ.get("BENCH_SECONDS", "30"))
WARMUP_S = float(os.environ.get("BENCH_WARMUP_S", "10"))
IDLE_S = float(os.environ.get("BENCH_IDLE_S", "5"))
PACE_S = float(os.environ.get("BENCH_PACE_S", "5"))
WORKERS = int(os.environ.get("BENCH_WORKERS", "2"))
PER_CONNECTION = int(os.environ.get("BENCH_PER_CONNECTION", "100"))
PROFILE = os.environ.get("BENCH_PROFILE", "")
PER_TABLE = 4

TIMED = """
import gc, os, runpy, sys, time
out = open(os.environ["BENCH_GC_LOG"], "a", buffering=1)
began = [0.0, 0.0]
def timed(phase, info):
    if phase == "start":
        began[:] = time.perf_counter(), time.thread_time()
    else:
        out.write(f"{time.time():.3f} {info['generation']} {(time.perf_counter() - began[0]) * 1e3:.3f} "
                  f"{(time.thread_time() - began[1]) * 1e3:.3f}\\n")
gc.callbacks.append(timed)
sys.argv = ["chieu.table"]
runpy.run_module("chieu.table", run_name="__main__", alter_sys=True)
"""
"""The table service with each collection's generation, wall time and CPU time (ms) written to
BENCH_GC_LOG: on a busy machine a collection's wall time counts the time the process waited for a core."""
ROOT = Path(__file__).resolve().parents[2]


@contextlib.contextmanager
def table_process(gc_log: Path) -> Iterator[tuple[str, int]]:
    """A nats-server and a table-service process whose collections are written to ``gc_log``:
    yields its address and pid."""
    data = Path(tempfile.mkdtemp(prefix="chieu-bench-ccu-"))
    nats_proc, url = localnats.start(data / "nats", quiet=True)
    port = localnats.free_port()
    env = {**os.environ, "NATS_URL": url, "CHIEU_TABLE_ADDR": f"127.0.0.1:{port}", "CHIEU_LOG_LEVEL": "error",
           "CHIEU_RATE_PER_PLAYER": "0", "CHIEU_RATE_PER_ADDRESS": "0", "CHIEU_UNPLAYED_TABLES": "0",
           "BENCH_GC_LOG": str(gc_log)}
    svc = subprocess.Popen([sys.executable, "-c", TIMED], env=env)
    try:
        localnats.wait_for_port(port, 30, svc)
        yield f"127.0.0.1:{port}", svc.pid
    finally:
        svc.send_signal(signal.SIGTERM)
        svc.wait(20)
        localnats.stop(nats_proc)
        shutil.rmtree(data, ignore_errors=True)


class Worker:
    """A generator process (ccu_load.py), driven one JSON line at a time."""

    def __init__(self, addr: str) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "tests.benchmarks.ccu_load", addr, str(PER_CONNECTION),
                                      str(PACE_S)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT)

    def send(self, **cmd: Any) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(cmd) + "\n")
        self.proc.stdin.flush()

    def answer(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        got = self.proc.stdout.readline()
        if not got:
            raise SystemExit(f"a load generator ended (exit {self.proc.wait()})")
        out: dict[str, Any] = json.loads(got)
        return out

    def stop(self) -> None:
        with contextlib.suppress(Exception):
            self.send(op="stop")
            self.answer()
        self.proc.wait(30)


def all_do(workers: list[Worker], **cmd: Any) -> list[dict[str, Any]]:
    for w in workers:
        w.send(**cmd)
    return [w.answer() for w in workers]


def gc_pauses(log: Path, since: float, until: float) -> tuple[list[int], float, float, float]:
    """Collections per generation between two wall-clock times, the longest and the total (ms of
    wall time), and the total CPU time they took (ms)."""
    rows = [(float(at), int(g), float(ms), float(cpu))
            for at, g, ms, cpu in (ln.split() for ln in log.read_text().splitlines())]
    inside = [(g, ms, cpu) for at, g, ms, cpu in rows if since <= at <= until]
    return ([sum(1 for g, _, _ in inside if g == gen) for gen in range(3)],
            max((ms for _, ms, _ in inside), default=0.0), sum(ms for _, ms, _ in inside),
            sum(cpu for _, _, cpu in inside))


@dataclass
class Step:
    streams: int
    rate: float
    target: float
    p50: float
    p99: float
    top: float
    cpu: float
    """The table process's CPU while moving, cores."""
    idle_cpu: float
    rss: float
    gen_cpu: float
    gcs: list[int]
    gc_longest: float
    gc_total: float
    load: float


def ratio(now: float, before: float | None) -> str:
    return f"×{now / before:.2f}" if before else "–"


def main() -> None:
    tables_at = [s // PER_TABLE for s in STEPS]
    print(f"bench_ccu: steps of {', '.join(f'{s:,}' for s in STEPS)} streams (Ô ăn quan, {PER_TABLE} a table), "
          f"a move per table every {PACE_S:g} s; {WORKERS} generator processes, a connection per {PER_CONNECTION} "
          f"streams; per step {IDLE_S:g} s idle, {WARMUP_S:g} s warm-up, {SECONDS:g} s measured "
          f"({os.cpu_count()} cores; load average {os.getloadavg()[0]:.2f} at start)")
    with tempfile.TemporaryDirectory() as d:
        log = Path(d) / "gc.log"
        with table_process(log) as (addr, pid):
            workers = [Worker(addr) for _ in range(WORKERS)]
            try:
                run(workers, pid, log, tables_at)
            finally:
                for w in workers:
                    w.stop()


def run(workers: list[Worker], pid: int, log: Path, tables_at: list[int]) -> None:
    time.sleep(3)
    c0 = cpu_s(pid)
    time.sleep(IDLE_S)
    base = (cpu_s(pid) - c0) / IDLE_S
    base_rss = rss_mb(pid)
    print(f"  no stream: table process (pid {pid}) {base * 100:.1f}% of a core, RSS {base_rss:.0f} MB")
    print(f"  {'streams':>7} {'moves/s':>15} {'p50':>7} {'p99':>8} {'max':>8} {'table CPU':>10} {'idle':>6} "
          f"{'RSS':>7} {'GC (gen 0/1/2; longest, total; CPU)':>38} {'gen CPU':>8} {'load':>5}")
    have = 0
    steps: list[Step] = []
    for n_tables in tables_at:
        new = range(have, n_tables)
        shares: list[list[dict[str, Any]]] = [[] for _ in workers]
        for i in new:
            players = [f"ccu-a{i}", f"ccu-b{i}", f"ccu-s{i}", f"ccu-t{i}"]
            shares[i % len(workers)].append({"i": i, "tokens": [token(p) for p in players], "players": players[:2]})
        t_setup = time.monotonic()
        all_do(workers, op="move", on=False)
        for w, share in zip(workers, shares, strict=True):
            w.send(op="grow", tables=share)
        grown = [w.answer() for w in workers]
        failed = sum(g["n_failed"] for g in grown)
        if failed:
            print(f"    {failed} tables not set up; the first: {next(f for g in grown for f in g['failed'])}")
        have = n_tables
        streams = n_tables * PER_TABLE
        setup_s = time.monotonic() - t_setup
        time.sleep(2)  # the openings' after-effects (presence, the beacon) settle
        c0 = cpu_s(pid)
        time.sleep(IDLE_S)
        idle_cpu = (cpu_s(pid) - c0) / IDLE_S
        all_do(workers, op="move", on=True)
        time.sleep(WARMUP_S)
        gen0 = sum(w["cpu"] for w in all_do(workers, op="collect", since=0, until=0))
        t0, wall0, c0 = time.monotonic(), time.time(), cpu_s(pid)
        spy = None if not PROFILE else subprocess.Popen(
            [str(Path(sys.executable).parent / "py-spy"), "record",
             *(["--native"] if os.environ.get("BENCH_PROFILE_NATIVE") else ["--nonblocking"]), "-d", str(int(SECONDS)),
             "-p", str(pid), "-f", "raw", "-o", f"{PROFILE}/table-{n_tables * PER_TABLE}.txt"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(SECONDS)
        if spy is not None:
            spy.wait(60)
        t1, wall1, c1 = time.monotonic(), time.time(), cpu_s(pid)
        rss = rss_mb(pid)
        load = os.getloadavg()[0]
        got = all_do(workers, op="collect", since=t0, until=t1)
        lat = [x for g in got for x in g["lat"]]
        errors = sum(g["n_errors"] for g in got)
        gen_cpu = (sum(g["cpu"] for g in got) - gen0) / (t1 - t0)
        open_streams = sum(g["streams"] for g in got)
        ended: dict[str, int] = {}
        for g in got:
            for how, n in g["ended"].items():
                ended[how] = ended.get(how, 0) + n
        gcs, longest, total, gc_cpu = gc_pauses(log, wall0, wall1)
        s = Step(streams, len(lat) / (t1 - t0), n_tables / PACE_S, pct(lat, 0.5) * 1e3 if lat else float("nan"),
                 pct(lat, 0.99) * 1e3 if lat else float("nan"), max(lat, default=float("nan")) * 1e3,
                 (c1 - c0) / (t1 - t0), idle_cpu, rss, gen_cpu, gcs, longest, total, load)
        prev = steps[-1] if steps else None
        print(f"  {streams:>7,} {s.rate:>7.1f}/{s.target:<7.0f} {s.p50:>6.1f}ms {s.p99:>6.1f}ms {s.top:>6.0f}ms "
              f"{s.cpu * 100:>9.1f}% {s.idle_cpu * 100:>5.1f}% {rss:>5.0f}MB "
              f"{'/'.join(map(str, gcs)):>14}; {longest:5.1f}, {total:5.0f}; {gc_cpu:4.0f} ms "
              f"{gen_cpu * 100:>7.1f}% {load:>5.2f}")
        if ended:
            print(f"          streams ended by the server: {ended}")
        print(f"          ({open_streams:,} streams open at the end, {errors} errors"
              f"{': ' + got[0]['errors'][0] if errors and got[0]['errors'] else ''}; set up in {setup_s:.0f} s; "
              f"to the step before: streams {ratio(streams, prev.streams if prev else None)}, "
              f"p99 {ratio(s.p99, prev.p99 if prev else None)}, CPU {ratio(s.cpu, prev.cpu if prev else None)}, "
              f"RSS {ratio(rss, prev.rss if prev else None)}, moves/s {ratio(s.rate, prev.rate if prev else None)})")
        steps.append(s)
        per_stream = (s.idle_cpu - base) / streams
        per_move = (s.cpu - s.idle_cpu) / s.rate if s.rate else float("nan")
        print(f"          CPU per open stream {per_stream * 1e6:.1f} µs/s, per move {per_move * 1e3:.3f} ms "
              f"(all of it: {(s.cpu - base) / s.rate * 1e3 if s.rate else float('nan'):.3f} ms), "
              f"memory {(rss - base_rss) * 1024 / streams:.0f} KB per stream")
    report(steps, base)


def report(steps: list[Step], base: float) -> None:
    at = next((s for s in steps if s.streams == 4000), None)
    if at is not None:
        line("p99 at 4,000 streams", at.p99, "ms", "<= 100 ms", at.p99 <= 100)
        line("table process CPU at 4,000 streams", at.cpu * 100, "% core", "<= 25%", at.cpu <= 0.25)
        per_move = (at.cpu - base) / at.rate if at.rate else float("nan")
        line("CPU per move, all of it (4,000 streams)", per_move * 1e3, "ms", "<= 0.8 ms", per_move <= 0.0008)
    kept_up = [s for s in steps if s.rate >= 0.95 * s.target]  # CPU per move is the work's only where it kept up
    last = kept_up[-1] if kept_up else steps[-1]
    per_stream = (last.idle_cpu - base) / last.streams
    per_move = (last.cpu - last.idle_cpu) / last.rate if last.rate else float("nan")
    projected = base + per_stream * 10_000 + per_move * 10_000 / PER_TABLE / PACE_S
    print(f"  projection to 10,000 streams and {10_000 / PER_TABLE / PACE_S:.0f} moves/s "
          f"from the {last.streams:,} step{'' if kept_up else ' (no step kept up with its moves)'}: "
          f"{base * 100:.1f}% + {per_stream * 1e6:.1f} µs/s × 10,000 + {per_move * 1e3:.3f} ms × "
          f"{10_000 / PER_TABLE / PACE_S:.0f}/s = {projected * 100:.0f}% of a core")


if __name__ == "__main__":
    main()
