"""What an open ``Watch`` stream costs the table process while nothing happens (issue 37).

One table-service process; its CPU time (Linux's schedstat, every thread: not wall time, so a busy machine
does not count) over BENCH_SECONDS with no stream open (the baseline: the process's own
background), then with BENCH_STREAMS streams open on tables of 4 watchers each and nothing
happening. Reported: the streams' CPU per stream per second, (with − without) / seconds / N,
target ≤ 5 µs (the watch that woke once a second per stream cost about 43), and the ratio of the
process's CPU with the streams to its baseline, and the garbage collections the process ran in each
phase (per generation, from its ``python_gc_collections_total``).

Environment: BENCH_STREAMS (1000), BENCH_SECONDS (5). Run with another checkout's interpreter
(``/path/.venv/bin/python tests/benchmarks/bench_idle_watch.py``) to measure that checkout's table
process (the table process runs on this interpreter). The table process polls a lobby that is not
there for revocations (the same in both phases).
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
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import grpc

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from chieu.table.client import TableClient
from chieu.table.v1 import table_service_pb2 as pb
from chieu_tools import localnats
from tests.benchmarks.common import line, token

STREAMS = int(os.environ.get("BENCH_STREAMS", "1000"))
SECONDS = float(os.environ.get("BENCH_SECONDS", "5"))
PER_TABLE = 4
PER_CHANNEL = 100


@contextlib.contextmanager
def table_process() -> Iterator[tuple[str, int, str]]:
    """A nats-server and a table-service process: yields its address, its pid and its
    metrics' address."""
    data = Path(tempfile.mkdtemp(prefix="chieu-bench-idle-"))
    nats_proc, url = localnats.start(data / "nats", quiet=True)
    port, metrics = localnats.free_port(), f"127.0.0.1:{localnats.free_port()}"
    env = {**os.environ, "CHIEU_METRICS_ADDR": metrics, "NATS_URL": url,
           "CHIEU_TABLE_ADDR": f"127.0.0.1:{port}", "CHIEU_LOG_LEVEL": os.environ.get("BENCH_LOG_LEVEL", "error"),
           "CHIEU_RATE_PER_PLAYER": "0", "CHIEU_RATE_PER_ADDRESS": "0", "CHIEU_UNPLAYED_TABLES": "0"}
    svc = subprocess.Popen([sys.executable, "-m", "chieu.table"], env=env)
    try:
        localnats.wait_for_port(port, 30, svc)
        yield f"127.0.0.1:{port}", svc.pid, metrics
    finally:
        svc.send_signal(signal.SIGTERM)
        svc.wait(20)
        localnats.stop(nats_proc)
        shutil.rmtree(data, ignore_errors=True)


def cpu_s(pid: int) -> float:
    """The process's CPU seconds so far, every thread's (Linux's schedstat, in nanoseconds)."""
    total = 0
    for t in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(FileNotFoundError):  # a thread that ended meanwhile
            total += int((t / "schedstat").read_text().split()[0])
    return total / 1e9


def rss_mb(pid: int) -> float:
    """The process's resident memory, MB (Linux)."""
    for ln in Path(f"/proc/{pid}/status").read_text().splitlines():
        if ln.startswith("VmRSS:"):
            return int(ln.split()[1]) / 1024
    return float("nan")


def collections(metrics: str) -> list[float]:
    """The process's garbage collections so far, per generation (0, 1, 2)."""
    text = urllib.request.urlopen(f"http://{metrics}/metrics", timeout=10).read().decode()
    got = {ln.split('"')[1]: float(ln.split()[-1]) for ln in text.splitlines()
           if ln.startswith("python_gc_collections_total{")}
    return [got[str(g)] for g in range(3)]  # a KeyError: the process no longer exports them


async def cpu_over(proc: int, metrics: str, seconds: float) -> tuple[float, list[int]]:
    """The process's CPU seconds per second over ``seconds``, and its collections per generation."""
    before, gcs = cpu_s(proc), collections(metrics)
    await asyncio.sleep(seconds)
    return (cpu_s(proc) - before) / seconds, [int(b - a) for a, b in zip(gcs, collections(metrics), strict=True)]


async def main() -> None:
    print(f"bench_idle_watch: {STREAMS} idle Watch streams, {SECONDS:.0f} s per phase ({sys.executable})")
    with table_process() as (addr, proc, metrics):
        # a connection of its own per channel (gRPC shares one between channels of the same target)
        clients = [TableClient(addr, token(f"idle-{i}"), grpc.aio.insecure_channel(
            addr, options=[("grpc.use_local_subchannel_pool", 1)])) for i in range(max(1, STREAMS // PER_CHANNEL))]
        tables = [(await clients[i % len(clients)].create("o_an_quan", {})).table_id
                  for i in range((STREAMS + PER_TABLE - 1) // PER_TABLE)]
        await asyncio.sleep(2)  # the creations' after-effects (snapshots, presence) settle
        baseline, gc_before = await cpu_over(proc, metrics, SECONDS)
        opened = 0
        first = asyncio.Event()
        calls = []

        failed: list[str] = []
        closing = False

        async def hold(call: object) -> None:
            nonlocal opened
            seen = False
            try:
                async for _ in call:  # type: ignore[attr-defined]
                    if not seen:
                        seen = True
                        opened += 1
                        if opened == STREAMS:
                            first.set()
            except grpc.aio.AioRpcError as e:
                if not closing:  # a stream ended by the server (CANCELLED too) is said, not waited for
                    failed.append(f"{e.code().name}: {e.details()} ({'after' if seen else 'before'} its first view)")
                    first.set()

        for i in range(STREAMS):
            channel = clients[i % len(clients)].channel
            watch = channel.unary_stream("/chieu.table.v1.TableService/Watch",
                                         request_serializer=pb.WatchRequest.SerializeToString,
                                         response_deserializer=pb.WatchResponse.FromString)
            calls.append(watch(pb.WatchRequest(table_id=tables[i // PER_TABLE]),
                               metadata=(("authorization", f"Bearer {token(f'watcher-{i}')}"),)))
        holders = [asyncio.create_task(hold(c)) for c in calls]
        try:
            await asyncio.wait_for(first.wait(), 120)
        except TimeoutError:
            raise SystemExit(f"{opened} of {STREAMS} streams opened in 120 s") from None
        if failed:
            raise SystemExit(f"{len(failed)} streams ended by the server ({opened} of {STREAMS} had their first view), "
                             f"the first: {failed[0]}")
        await asyncio.sleep(2)  # the opening's after-effects (presence, the beacon) settle
        rss = rss_mb(proc)
        with_streams, gc_with = await cpu_over(proc, metrics, SECONDS)
        per = (with_streams - baseline) / STREAMS * 1e6
        ratio = with_streams / baseline if baseline else float("inf")
        print(f"  table process CPU: {baseline * 1e3:.2f} ms/s without streams, {with_streams * 1e3:.2f} ms/s with "
              f"{STREAMS} (ratio {ratio:.2f}); RSS {rss:.0f} MB")
        print(f"  collections per generation over {SECONDS:.0f} s: {gc_before} without streams, {gc_with} with")
        line(f"CPU per idle stream ({STREAMS} open)", per, "µs/s", "≤ 5", per <= 5.0)
        closing = True
        for c in calls:
            c.cancel()
        await asyncio.gather(*holders, return_exceptions=True)
        for cl in clients:
            await cl.close()


if __name__ == "__main__":
    asyncio.run(main())
