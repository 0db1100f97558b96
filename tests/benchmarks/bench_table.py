"""Table-service benchmarks (issue 4), each beside a floor measured in the same run.

1. Load: 200 tables with 4 watchers each (Ô ăn quan: the 2 players and 2 spectators watch).
   Reported: accepted commands/s and the move latency (command sent → all 4 watchers have the
   new view), p50/p99, beside two floors measured in the same run at the same concurrency:
   the bare floor (a gRPC round trip + a JetStream publish with an expected sequence) and the
   floor of the same shape (floor_server.py: the same unary RPC, the same publish and a push
   to each of the 4 watch streams, without rules or state). Two phases: saturation (every
   table moving as fast as it can: throughput) and paced (each table moving once a second,
   at evenly spread phases: latency at a portal's load). Targets: p99 ≤ 10 ms (paced: a
   saturated closed loop's latency is only tables / throughput); throughput ≥ 60% of the
   floor's (both floors are printed; see the README on which one a fan-out can reach).
2. Recovery of a table with 10,000 events: load from its snapshot + tail (target ≤ 20 ms),
   beside a full replay of the same log without a snapshot.
3. Memory per idle table: tables loaded and followed by one process, tracemalloc bytes per
   table (target ≤ 50 KB), beside the bytes of the table's state alone.

Environment: BENCH_TABLES (200), BENCH_SECONDS (15), BENCH_PACE_S (1.0), BENCH_REPLICAS (2: the
saturated load again on that many table-service processes following the same stream, each table
routed to one of them; 1 skips it).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from chieu.games.o_an_quan.board import Direction
from chieu.games.o_an_quan.model import Sow
from chieu.kit import names
from chieu.kit.eventstore import EventStore
from chieu.kit.server import tune_gc
from chieu.kit.settings import Settings
from chieu.table import decide
from chieu.table.client import TableClient, game_view
from chieu.table.tables import Tables
from chieu.table.v1 import log_pb2
from chieu.table.v1 import table_service_pb2 as pb
from chieu.tablelog import codec, sealing
from chieu.tablelog.fold import Table
from chieu.tablelog.sealing import SealKeys
from chieu_tools import localnats
from tests.benchmarks.common import another_table_service, line, median, pct, running_table_service, token
from tests.table.helpers import sowings

TABLES = int(os.environ.get("BENCH_TABLES", "200"))
SECONDS = float(os.environ.get("BENCH_SECONDS", "15"))
PACE_S = float(os.environ.get("BENCH_PACE_S", "1.0"))
REPLICAS = int(os.environ.get("BENCH_REPLICAS", "2"))


async def floor(url: str, addr: str, loops: int, seconds: float) -> tuple[float, list[float]]:
    import grpc
    import nats
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    channel = grpc.aio.insecure_channel(addr)
    health = health_pb2_grpc.HealthStub(channel)
    nc = await nats.connect(url)
    js = nc.jetstream()
    await js.add_stream(name="BENCH_FLOOR", subjects=["bench.floor.>"], storage="file")
    lat: list[float] = []
    stop = time.perf_counter() + seconds

    async def loop(i: int) -> None:
        seq = 0
        n = 0
        while time.perf_counter() < stop:
            t = time.perf_counter()
            await health.Check(health_pb2.HealthCheckRequest())
            ack = await js.publish(f"bench.floor.{i}", b"x" * 300,
                                   headers={"Nats-Expected-Last-Subject-Sequence": str(seq), "Nats-Msg-Id": f"{i}-{n}"})
            lat.append(time.perf_counter() - t)
            seq, n = ack.seq, n + 1

    t0 = time.perf_counter()
    await asyncio.gather(*(loop(i) for i in range(loops)))
    rate = len(lat) / (time.perf_counter() - t0)
    await nc.close()
    await channel.close()
    return rate, lat


async def load(addr: str, tables: int, seconds: float, pace_s: float = 0.0,
               warmup_s: float = 0.0, replicas: Sequence[str] = ()) -> tuple[float, list[float]]:
    """Ô ăn quan at ``tables`` tables, 4 watchers each, set up during ``warmup_s``; from then on
    table ``i`` moves at ``begin + i * pace_s / tables + k * pace_s`` (paced) or as fast as it can
    (``pace_s`` 0), with the same arrivals as :func:`same_shape_floor`'s. With ``replicas`` (more
    table-service addresses), table ``i`` and its watchers use one of them, by ``i``, as a
    load balancer hashing the table id would route them."""
    lat: list[float] = []
    accepted = 0
    hands = 0
    begin = time.perf_counter() + warmup_s
    stop = time.perf_counter() + seconds
    operator = TableClient(addr, token("bench-operator", "operator"))
    channels: list[TableClient] = [operator]

    async def one(i: int) -> None:
        nonlocal accepted, hands
        at = [addr, *replicas][i % (1 + len(replicas))]
        a, b = TableClient(at, token(f"a{i}")), TableClient(at, token(f"b{i}"))
        s1, s2 = TableClient(at, token(f"s{i}")), TableClient(at, token(f"t{i}"))
        channels.extend([a, b, s1, s2])
        players = {f"a{i}": a, f"b{i}": b}
        tick = _Ticks(begin, i, tables, pace_s)
        while time.perf_counter() < stop:
            t = await a.create("o_an_quan", {"maxMoves": 300})
            await b.sit(t.table_id)
            view = await a.start(t.table_id)
            hands += 1
            streams = [c.watch(t.table_id).__aiter__() for c in (a, b, s1, s2)]
            for s in streams:
                await s.__anext__()
            while view.status == 2 and await tick.wait() < stop:
                gv = game_view(view)
                move = sowings(gv)[0]
                t0 = time.perf_counter()
                view = await players[view.hand_players[gv.to_move]].act(
                    t.table_id, "o_an_quan", move)
                await asyncio.gather(*(_until(s, view.version) for s in streams))
                lat.append(time.perf_counter() - t0)
                accepted += 1
            if view.status == 2:  # left unfinished: end it, so no auto-play runs into the next phase
                await operator.stub.AbortHand(pb.AbortHandRequest(
                    table_id=t.table_id, reason="benchmark phase over", command_id="end"), metadata=operator.metadata)
            for s in streams:
                await s.aclose()

    t0 = time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(tables)))
    rate = accepted / (min(time.perf_counter(), stop) - max(t0, begin))
    for c in channels:
        await c.close()
    print(f"    ({hands} hands were set up: create, sit and start, not counted as commands)")
    return rate, lat


class _Ticks:
    """When table ``i`` of ``n`` moves: paced, at ``begin + i * pace / n + k * pace`` (a tick
    missed is skipped, never made up in a burst); unpaced, as fast as it can from ``begin``."""

    def __init__(self, begin: float, i: int, n: int, pace_s: float) -> None:
        self.next = begin + pace_s * i / max(n, 1)
        self.pace_s = pace_s

    async def wait(self) -> float:
        """Sleep until the next tick; the time it is."""
        now = time.perf_counter()
        if self.pace_s:
            while self.next < now:
                self.next += self.pace_s
        if self.next > now:
            await asyncio.sleep(self.next - now)
        self.next += self.pace_s
        return time.perf_counter()


async def _until(stream: Any, version: int) -> None:
    while (await stream.__anext__()).version < version:
        pass


async def same_shape_floor(addr: str, tables: int, seconds: float, pace_s: float = 0.0,
                           warmup_s: float = 0.0) -> tuple[float, list[float]]:
    """The floor server (floor_server.py): the same RPC, publish and 4-watcher fan-out, no rules;
    the same arrivals as :func:`load`."""
    import uuid

    lat: list[float] = []
    done = 0
    begin = time.perf_counter() + warmup_s
    stop = time.perf_counter() + seconds
    channels: list[TableClient] = []

    async def one(i: int) -> None:
        nonlocal done
        tid = f"f{i}"
        clients = [TableClient(addr, token(f"{who}{i}")) for who in "abst"]  # a connection each, as in load()
        channels.extend(clients)
        streams = [c.watch(tid).__aiter__() for c in clients]
        for s in streams:
            await s.__anext__()
        tick = _Ticks(begin, i, tables, pace_s)
        while await tick.wait() < stop:
            t0 = time.perf_counter()
            r = await clients[0].stub.Act(pb.ActRequest(table_id=tid, command_id=uuid.uuid4().hex,
                                                        command=codec.pack(Sow(1, Direction.CW), "o_an_quan")),
                                          metadata=clients[0].metadata)
            await asyncio.gather(*(_until(s, r.table.version) for s in streams))
            done += 1
            lat.append(time.perf_counter() - t0)
        for s in streams:
            await s.aclose()

    t0 = time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(tables)))
    rate = done / (min(time.perf_counter(), stop) - max(t0, begin))
    for c in channels:
        await c.close()
    return rate, lat


KEYS = SealKeys.generate()
"""The seal keyset of the in-process tables here."""


async def recovery(url: str) -> None:
    settings = replace(Settings(), nats_url=url, snapshot_every=100)
    store = await EventStore.connect(url, stream=names.TABLES)
    tables = Tables(store, settings, KEYS)
    table_id = f"recovery-{os.getpid()}"
    events = 0
    hand = 0
    from chieu.games.o_an_quan.game import GAME

    await tables.execute(table_id, "r1", "c0", lambda t, now: decide.create(
        t, "o_an_quan", {}, "r1", next_seed=KEYS.new_seed(table_id, 1)), create=True)
    await tables.execute(table_id, "r2", "c1", lambda t, now: decide.take_seat(t, "r2", None))
    while events < 10_000:
        hand += 1
        table = await tables.execute(table_id, "r1", f"h{hand}",
                                     lambda t, now: decide.start_hand(t, "r1", now, *tables.seeds_to_deal(t)))
        while table.playing:
            seat = table.game_state.to_move
            move = GAME.legal(table.game_state, seat)[0]
            player = table.hand_players[seat]
            table = await tables.execute(table_id, player, f"m{table.version}",
                                         lambda t, now, p=player, m=move: decide.act(t, p, m, now))
        events = sum(len(log_pb2.Record.FromString(s.data).events) for s in await store.read(table_id))
    await tables.close()
    await asyncio.sleep(0.5)  # the last snapshot write
    fresh = Tables(store, settings, KEYS)
    with_snap, without = [], []
    for _ in range(7):
        t = time.perf_counter()
        loaded = await fresh.cache.load(table_id)
        with_snap.append(time.perf_counter() - t)
        t = time.perf_counter()
        full = Table(table_id)  # the finished hands opened with their revealed seeds, as the audit does
        logged = [(s.seq, log_pb2.Record.FromString(s.data)) for s in await store.read(table_id)]
        for seq, record in sealing.reveal(logged):
            full.apply(record, seq)
        without.append(time.perf_counter() - t)
        assert full.version == loaded.version and full.game_state == loaded.game_state
    print(f"recovery of one table: {events} events in {loaded.version} records, snapshot every 100")
    ratio = median(with_snap) / median(without)
    line("load from snapshot + tail (median)", median(with_snap) * 1e3, "ms", "<= 20 ms", median(with_snap) <= 0.020,
         f"(full replay without a snapshot: {median(without) * 1e3:.1f} ms; ratio {ratio:.3f})")
    await store.close()


async def memory(url: str, n: int = 300) -> None:
    settings = replace(Settings(), nats_url=url, snapshot_every=1000)
    store = await EventStore.connect(url, stream=names.TABLES)
    writer = Tables(store, settings, KEYS)
    ids = [f"idle-{os.getpid()}-{i}" for i in range(n)]
    for tid in ids:
        await writer.execute(tid, "m1", "c0", lambda t, now, tid=tid: decide.create(
            t, "o_an_quan", {}, "m1", next_seed=KEYS.new_seed(tid, 1)), create=True)
        await writer.execute(tid, "m2", "c1", lambda t, now: decide.take_seat(t, "m2", None))
        await writer.execute(tid, "m1", "c2", lambda t, now: decide.start_hand(t, "m1", now, *writer.seeds_to_deal(t)))
    await writer.close()
    reader = Tables(store, replace(settings, snapshot_every=10_000), KEYS)
    await reader.get(ids[0])  # warm imports and caches
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    for tid in ids[1:]:
        await reader.get(tid)
    await asyncio.sleep(0.5)
    after = tracemalloc.take_snapshot()
    total = sum(s.size_diff for s in after.compare_to(before, "filename"))
    tracemalloc.stop()
    per_table = total / (n - 1)
    import pickle

    state_only = len(pickle.dumps(reader.cache.live[ids[1]].table))
    print(f"memory: {n - 1} idle tables (a hand running, no activity), loaded and followed")
    line("bytes per idle table (tracemalloc)", per_table / 1024, "KB", "<= 50 KB", per_table <= 50 * 1024,
         f"(the table's pickled state alone: {state_only / 1024:.1f} KB; ratio {per_table / state_only:.1f}x)")
    await reader.close()
    await store.close()


def report(name: str, rate: float, lat: list[float]) -> None:
    print(f"  {name:<44} {rate:>9.1f} cmd/s   p50 {median(lat) * 1e3:7.2f} ms   p99 {pct(lat, 0.99) * 1e3:7.2f} ms")


async def main_async(url: str, addr: str, floor_addr: str) -> None:
    print(f"load: {TABLES} tables, 4 watchers each, the table service in its own process "
          f"(2 cores shared with nats-server, the floor server and this load generator)")
    warm = 5.0
    print(f"paced ({SECONDS:.0f} s, each table moving once every {PACE_S:.1f} s at its own phase, spread evenly: "
          f"{TABLES / PACE_S:.0f} commands/s; the tables are set up in the {warm:.0f} s before):")
    shape_rate, shape_lat = await same_shape_floor(floor_addr, TABLES, SECONDS + warm, PACE_S, warm)
    rate, lat = await load(addr, TABLES, SECONDS + warm, PACE_S, warm)
    report("floor of the same shape", shape_rate, shape_lat)
    report("table service", rate, lat)
    line("paced p99 (command -> all 4 watchers)", pct(lat, 0.99) * 1e3, "ms", "<= 10 ms", pct(lat, 0.99) <= 0.010,
         f"(same-shape floor p99 {pct(shape_lat, 0.99) * 1e3:.2f} ms)")
    print(f"saturation ({SECONDS:.0f} s, every table moving as fast as it can once all are set up):")
    min_rate, min_lat = await floor(url, addr, TABLES, SECONDS / 2)
    shape_rate, shape_lat = await same_shape_floor(floor_addr, TABLES, SECONDS / 2 + warm, 0, warm)
    rate, lat = await load(addr, TABLES, SECONDS + warm, 0, warm)
    report("floor: gRPC round trip + JetStream publish", min_rate, min_lat)
    report("floor of the same shape (+ 4-watcher fan-out)", shape_rate, shape_lat)
    report("table service (Ô ăn quan, rules and views)", rate, lat)
    line("throughput vs the same-shape floor", rate / shape_rate, "ratio", ">= 0.60", rate >= 0.6 * shape_rate,
         f"(vs the bare RPC + publish floor: {rate / min_rate:.2f}, where the same-shape floor "
         f"itself reaches {shape_rate / min_rate:.2f})")
    print(f"  saturated latency is {TABLES} commands in flight / throughput (Little's law), for the floors too: "
          f"the p99 target is the paced one")
    if REPLICAS > 1:
        with contextlib.ExitStack() as more:
            others = [more.enter_context(another_table_service(url)) for _ in range(REPLICAS - 1)]
            scaled, scaled_lat = await load(addr, TABLES, SECONDS + warm, 0, warm, others)
        report(f"table service, {REPLICAS} replicas (tables spread by id)", scaled, scaled_lat)
        print(f"  {REPLICAS} replicas: {scaled / rate:.2f}x one replica's throughput, {scaled / shape_rate:.2f} of the "
              f"same-shape floor, {scaled / min_rate:.2f} of the bare floor (on this machine's cores)")
    await recovery(url)
    await memory(url)


def main() -> None:
    tune_gc()  # the load generator's own pauses are not the service's latency
    with running_table_service() as (url, addr):
        port = localnats.free_port()
        floor_proc = subprocess.Popen([sys.executable, str(Path(__file__).parent / "floor_server.py"), str(port), url])
        try:
            localnats.wait_for_port(port, 30, floor_proc)
            asyncio.run(main_async(url, addr, f"127.0.0.1:{port}"))
        finally:
            floor_proc.terminate()
            floor_proc.wait(10)


if __name__ == "__main__":
    main()
