"""What metrics and tracing (tracing off) cost a move (issue 17): target ≤ 3% of a move's CPU.

Two table-service processes on one nats-server, measured in paired, interleaved runs:

* **observed**: the service as it ships, serving its metrics on ``CHIEU_METRICS_ADDR`` (every call
  counted and timed, every append timed, tracing off);
* **bare**: the same service started by this file with the instrumentation taken out (the gRPC
  handlers registered unwrapped, the append histogram and counters replaced by no-ops).

Each round drives the same number of Ô ăn quan moves (``Act``, a few tables in flight, a new hand
started where one ends) at one process and then at the other (the order alternating by round)
and reads each process's CPU time (every thread's, from ``/proc/<pid>/task/*/schedstat``, in ns)
around it; the ratio observed / bare is taken round by round and its median reported. Beside it:
the instrumentation's own per-call cost, in this process, on a no-op handler.

Environment: BENCH_OBS_ROUNDS (12), BENCH_OBS_MOVES (1500 a run), BENCH_OBS_TABLES (8).
"""

from __future__ import annotations

import asyncio
import contextlib
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

from chieu.kit import metrics
from chieu.table.client import TableClient, game_view
from chieu.table.v1 import table_service_pb2 as pb
from chieu_tools import localnats
from tests.table.helpers import sowings

# tests.benchmarks.common (token, line, median) is imported by the measuring process only: importing it
# makes the run's token key, which the bare child, started from this file, must not make again

ROUNDS = int(os.environ.get("BENCH_OBS_ROUNDS", "12"))
MOVES = int(os.environ.get("BENCH_OBS_MOVES", "1500"))
TABLES = int(os.environ.get("BENCH_OBS_TABLES", "8"))


class _Nop:
    """A metric that records nothing."""

    def observe(self, *_: Any) -> None:
        pass

    def inc(self, *_: Any) -> None:
        pass

    def dec(self, *_: Any) -> None:
        pass

    def labels(self, *_: Any) -> _Nop:
        return self

    def set_function(self, *_: Any) -> None:
        pass


class _Bare:
    """Registers the (guarded) handlers as they are: no call is counted, timed or traced."""

    def __init__(self, server: Any) -> None:
        self.server = server

    def add_generic_rpc_handlers(self, handlers: Any) -> None:
        pass

    def add_registered_method_handlers(self, name: str, handlers: dict[str, Any]) -> None:
        import grpc

        self.server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(name, handlers),))
        self.server.add_registered_method_handlers(name, handlers)


def serve_bare() -> None:
    """The table service without its instrumentation (run in a child process)."""
    metrics.Instrumented = _Bare  # type: ignore[misc, assignment]
    for name in ("JS_APPEND", "JS_APPEND_CONFLICTS", "JS_APPEND_ERRORS", "HANDS", "WATCHERS", "TABLES_OPEN"):
        setattr(metrics, name, _Nop())
    from chieu.table.app import main

    main()


def cpu_ns(pid: int) -> int:
    """CPU time of every thread of ``pid`` so far (ns)."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(OSError, ValueError, IndexError):  # a thread that ended meanwhile
            total += int((task / "schedstat").read_text().split()[0])
    return total


class Driver:
    """Ô ăn quan tables at one table service; :meth:`moves` plays ``n`` moves across them."""

    def __init__(self, addr: str, tag: str) -> None:
        self.addr, self.tag = addr, tag
        self.players: list[dict[str, TableClient]] = []
        self.views: list[pb.TableView] = []

    async def setup(self) -> None:
        from tests.benchmarks.common import token

        for i in range(TABLES):
            a = TableClient(self.addr, token(f"{self.tag}a{i}"))
            b = TableClient(self.addr, token(f"{self.tag}b{i}"))
            t = await a.create("o_an_quan", {"maxMoves": 300})
            await b.sit(t.table_id)
            self.players.append({f"{self.tag}a{i}": a, f"{self.tag}b{i}": b})
            self.views.append(await a.start(t.table_id))

    async def moves(self, n: int) -> None:
        left = n

        async def table(i: int) -> None:
            nonlocal left
            while left > 0:
                left -= 1
                view = self.views[i]
                if view.status != pb.TABLE_STATUS_PLAYING:
                    view = await next(iter(self.players[i].values())).start(view.table_id)
                gv = game_view(view)
                move = sowings(gv)[0]
                self.views[i] = await self.players[i][view.hand_players[gv.to_move]].act(
                    view.table_id, "o_an_quan", move)

        await asyncio.gather(*(table(i) for i in range(TABLES)))

    async def close(self) -> None:
        for ps in self.players:
            for c in ps.values():
                await c.close()


def start(url: str, bare: bool) -> tuple[subprocess.Popen[bytes], str]:
    port = localnats.free_port()
    env = {**os.environ, "NATS_URL": url, "CHIEU_TABLE_ADDR": f"127.0.0.1:{port}", "CHIEU_LOG_LEVEL": "error",
           "CHIEU_LOBBY_ADDR": "127.0.0.1:1", "CHIEU_REVOCATION_POLL_S": "3600"}
    if bare:
        args = [sys.executable, __file__, "--bare"]
    else:
        env["CHIEU_METRICS_ADDR"] = f"127.0.0.1:{localnats.free_port()}"
        args = [sys.executable, "-m", "chieu.table"]
    proc = subprocess.Popen(args, env=env)
    localnats.wait_for_port(port, 30, proc)
    return proc, f"127.0.0.1:{port}"


async def paired(observed: tuple[int, Driver], bare: tuple[int, Driver]) -> None:
    from tests.benchmarks.common import line, median

    for _, d in (observed, bare):
        await d.setup()
        await d.moves(MOVES // 2)  # warm-up: caches, first hands, the JIT-less interpreter's own warm-up
    per_move: dict[str, list[float]] = {"observed": [], "bare": []}
    ratios: list[float] = []
    for r in range(ROUNDS):
        order = [("observed", *observed), ("bare", *bare)]
        if r % 2:
            order.reverse()
        got: dict[str, float] = {}
        for name, pid, d in order:
            before = cpu_ns(pid)
            await d.moves(MOVES)
            got[name] = (cpu_ns(pid) - before) / MOVES / 1e3
            per_move[name].append(got[name])
        ratios.append(got["observed"] / got["bare"])
    o, b = median(per_move["observed"]), median(per_move["bare"])
    ratio = median(ratios)
    print(f"  {ROUNDS} rounds of {MOVES} moves each way, {TABLES} tables in flight; server CPU per move (µs):")
    print(f"    observed: median {o:.1f} (min {min(per_move['observed']):.1f}, max {max(per_move['observed']):.1f})")
    print(f"    bare:     median {b:.1f} (min {min(per_move['bare']):.1f}, max {max(per_move['bare']):.1f})")
    print(f"    ratios by round: {' '.join(f'{x:.3f}' for x in ratios)}")
    line("a move's CPU, metrics + tracing off vs bare", ratio, "ratio", "<= 1.03", ratio <= 1.03,
         f"(+{(ratio - 1) * 100:.1f}%; quartiles {statistics.quantiles(ratios, n=4)[0]:.3f}.."
         f"{statistics.quantiles(ratios, n=4)[2]:.3f})")


async def per_call() -> None:
    """The wrapper's own cost per unary call, on a handler that does nothing."""
    import grpc

    from tests.benchmarks.common import median

    async def handler(request: Any, context: Any) -> Any:
        return request

    bare = grpc.unary_unary_rpc_method_handler(handler)
    wrapped = metrics.instrument("chieu.bench.v1.BenchService", "Noop", bare).unary_unary
    n = 200_000

    async def run(fn: Any) -> float:
        t0 = time.perf_counter()
        for _ in range(n):
            await fn(None, None)
        return (time.perf_counter() - t0) / n * 1e6

    plain, counted = [], []
    for _ in range(5):
        plain.append(await run(handler))
        counted.append(await run(wrapped))
    extra = median(counted) - median(plain)
    t0 = time.perf_counter()
    for _ in range(n):
        metrics.JS_APPEND.observe(0.001)
    observe = (time.perf_counter() - t0) / n * 1e6
    print(f"  per call, in process: the RPC wrapper adds {extra:.2f} µs (counter + histogram, tracing off); "
          f"an append's histogram observation {observe:.2f} µs")


async def main_async(url: str) -> None:
    a_proc, a_addr = start(url, bare=False)
    b_proc, b_addr = start(url, bare=True)
    observed, bare = Driver(a_addr, "o"), Driver(b_addr, "b")
    try:
        print("a move's CPU in the table service, with its metrics (tracing off) and without:")
        await paired((a_proc.pid, observed), (b_proc.pid, bare))
        await per_call()
    finally:
        await observed.close()
        await bare.close()
        for p in (a_proc, b_proc):
            p.send_signal(signal.SIGTERM)
            p.wait(20)


def main() -> None:
    import tests.benchmarks.common  # noqa: F401 (the run's token key, in the services' environment)

    data = Path(tempfile.mkdtemp(prefix="chieu-bench-obs-"))
    nats_proc, url = localnats.start(data / "nats", quiet=True)
    try:
        asyncio.run(main_async(url))
    finally:
        localnats.stop(nats_proc)
        shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    if sys.argv[1:] == ["--bare"]:
        serve_bare()
    else:
        main()
