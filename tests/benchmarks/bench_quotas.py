"""What the request rates and quotas of issue 27 cost (targets: a limit check ≤ 20 µs per call; a
whole move unchanged within the noise), each beside a baseline measured in the same run.

- **A limit check, in process**: :meth:`chieu.kit.ratelimit.Limits.check` — the guard's per-call
  check of a player's and an address's rate (a verified token found in the cache, the address's
  key remembered per peer, two GCRA counts) — over 1,000 players on 250 addresses, beside a plain
  dict lookup and store of the same keys (the least any keyed count can cost).
- **A limit check through NATS, for comparison** (what a rate shared by every process would
  cost): the same GCRA kept in a KV bucket of the run's nats-server, one read and one
  compare-and-set write per call (over 1,000 keys), beside the in-process check. The shipped
  rates stay in process, each at ``1 / CHIEU_REPLICAS`` of the service's rate
  (:mod:`chieu.kit.ratelimit`); this line is why.
- **A table never played, reserved** (:class:`chieu.table.quotas.Unplayed`, what every
  ``CreateTable`` of a new table pays under ``CHIEU_UNPLAYED_TABLES``): one read and one
  compare-and-set of the player's key; and ``CreateTable`` end to end at the two processes
  below (quota on vs off), alternating, wall time per call.
- **A Watch stream's memory**: the table process's RSS before and after 400 streams (400 players,
  one table), per stream — the cost the per-process ``CHIEU_WATCHES_PER_SESSION`` bounds.
- **A whole move, paired**: two table-service processes on one nats-server, one as it ships
  (rates checked on every call, the table and watch quotas on; its rates set high enough that
  nothing is refused) and one with every limit off (``CHIEU_RATE_PER_*=0``,
  ``CHIEU_UNPLAYED_TABLES=0``, ``CHIEU_WATCHES_PER_SESSION=0``); rounds of Ô ăn quan moves at one
  then the other (the order alternating), each process's CPU time read around its run; the ratio
  limited / unlimited taken round by round, its median reported.

Environment: BENCH_QUOTA_ROUNDS (12), BENCH_QUOTA_MOVES (1500 a run), BENCH_OBS_TABLES (8),
BENCH_QUOTA_SHARED (2000 checks through NATS), BENCH_QUOTA_CREATES (200 a process).
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

import grpc
import nats
from nats.js.errors import KeyNotFoundError

from chieu.kit import auth, ratelimit
from chieu.kit.settings import Settings
from chieu.table import quotas
from chieu.table.client import TableClient
from chieu.table.v1 import table_service_pb2 as pb
from chieu_tools import localnats
from tests.benchmarks.bench_observability import TABLES, Driver, cpu_ns
from tests.benchmarks.common import line, median, token
from tests.table.helpers import NoLog

ROUNDS = int(os.environ.get("BENCH_QUOTA_ROUNDS", "12"))
MOVES = int(os.environ.get("BENCH_QUOTA_MOVES", "1500"))
SHARED = int(os.environ.get("BENCH_QUOTA_SHARED", "2000"))
CREATES = int(os.environ.get("BENCH_QUOTA_CREATES", "200"))
TARGET_US = 20.0


class Call:
    def __init__(self, tok: str, peer: str) -> None:
        self.md = (("authorization", f"Bearer {tok}"),)
        self._peer = peer

    def invocation_metadata(self) -> Any:
        return self.md

    def peer(self) -> str:
        return self._peer


class Nowhere:
    """No table exists yet (a reservation under the limit looks at no table)."""

    store = NoLog()

    async def get(self, table_id: str, *, must_exist: bool = True) -> Any:
        raise AssertionError("under the limit, no table is looked at")

    def played(self, table_id: str) -> bool | None:
        return None


async def through_nats(url: str, in_process_us: float) -> None:
    """A GCRA check kept in a KV bucket (what a shared rate costs), and a table reservation."""
    nc = await nats.connect(url)
    try:
        js = nc.jetstream()
        kv = await js.create_key_value(bucket="BENCH_RATES", history=1, direct=True)
        interval, tolerance = 0.01, 2.0  # 100 a second, 2 s of burst: never refusing here

        async def check(key: str) -> None:
            try:
                entry = await kv.get(key)
                tat, revision = float(entry.value or b"0"), entry.revision
            except KeyNotFoundError:
                tat, revision = 0.0, 0
            now = time.time()
            if tat - tolerance > now:
                return
            value = repr(max(tat, now) + interval).encode()
            if revision:
                await kv.update(key, value, last=revision)
            else:
                await kv.create(key, value)

        for i in range(1000):
            await check(f"p{i}")
        got = []
        for _ in range(3):
            t = time.perf_counter()
            for i in range(SHARED):
                await check(f"p{i % 1000}")
            got.append((time.perf_counter() - t) / SHARED * 1e6)
        us = median(got)
        print(f"  {'a limit check through NATS KV (get + CAS)':<44} {us:>12.3f} µs/call    "
              f"(not shipped: {us / in_process_us:.0f}× the in-process check, {us / TARGET_US:.0f}× its target)")

        count = quotas.Unplayed(await quotas.bucket(js), 3, 900.0)
        got = []
        for r in range(3):
            t = time.perf_counter()
            for i in range(SHARED):  # two tables a player: a read and a CAS write each
                await count.reserve(f"r{r}-{i // 2}", f"t{r}-{i}", Nowhere())
            got.append((time.perf_counter() - t) / SHARED * 1e6)
        us = median(got)
        print(f"  {'a table never played reserved (get + CAS)':<44} {us:>12.3f} µs/create  (once per new table)")
    finally:
        await nc.close()


async def creates(limited: str, unlimited: str) -> None:
    """``CreateTable`` end to end at each process, alternating: the shared quota's added latency."""
    clients: list[TableClient] = []
    try:
        per: dict[str, list[float]] = {"limited": [], "unlimited": []}
        for r in range(4):
            order = [("limited", limited), ("unlimited", unlimited)]
            if r % 2:
                order.reverse()
            for name, addr in order:
                made = [TableClient(addr, token(f"c{name[0]}{r}-{i}")) for i in range(CREATES // 2)]
                clients += made
                t = time.perf_counter()
                for c in made:  # two tables each, under the quota of three
                    await c.create("xiangqi", {})
                    await c.create("xiangqi", {})
                per[name].append((time.perf_counter() - t) / CREATES * 1e3)
        lo, un = median(per["limited"]), median(per["unlimited"])
        print(f"  CreateTable wall time (ms/call): quota shared {lo:.2f}, quota off {un:.2f} (+{lo - un:.2f} ms)")
    finally:
        for c in clients:
            await c.close()


def rss_kib(pid: int) -> int:
    for row in Path(f"/proc/{pid}/status").read_text().splitlines():
        if row.startswith("VmRSS:"):
            return int(row.split()[1])
    return 0


async def watch_memory(pid: int, addr: str) -> None:
    """The table process's RSS before and after 400 Watch streams of 400 players on one table
    (over four connections)."""
    host = TableClient(addr, token("watch-host"))
    table = (await host.create("xiangqi", {})).table_id
    channels = [grpc.aio.insecure_channel(addr) for _ in range(4)]  # streams, not connections, measured
    watchers = [TableClient(addr, token(f"watcher-{i}"), channels[i % 4]) for i in range(400)]
    calls: list[Any] = []
    try:
        await asyncio.sleep(0.5)
        before = rss_kib(pid)
        for w in watchers:
            call = w.stub.Watch(pb.WatchRequest(table_id=table), metadata=w.metadata)
            await call.read()
            calls.append(call)
        await asyncio.sleep(0.5)
        per = (rss_kib(pid) - before) / len(calls)
        print(f"  {'a Watch stream, table process memory':<44} {per:>12.1f} KiB/stream "
              f"({len(calls)} streams; 8 a session: {per * 8 / 1024:.2f} MiB a session a process)")
    finally:
        for call in calls:
            call.cancel()
        await host.close()
        for ch in channels:
            await ch.close()


def per_call() -> float:
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
        return us
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
        us = per_call()
        await through_nats(url, us)
        await creates(a_addr, b_addr)
        await watch_memory(b_proc.pid, b_addr)  # the unlimited one: no watch quota in the way
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
