"""Table-service benchmarks (issue 4), each beside a floor measured in the same run.

1. Load: 200 concurrent tables with 4 watchers each (Ô ăn quan: the 2 players and 2
   spectators watch), every table playing as fast as its players can. Reported: accepted
   commands/s and the move latency (command sent → all 4 watchers have the new view), p50/p99,
   beside the raw floor at the same concurrency: 200 loops of a bare gRPC round trip plus a
   bare JetStream publish with an expected sequence. Targets: p99 ≤ 10 ms; throughput ≥ 60% of
   the floor's.
2. Recovery of a table with 10,000 events: load from its snapshot + tail (target ≤ 20 ms),
   beside a full replay of the same log without a snapshot.
3. Memory per idle table: tables loaded and followed by one process, tracemalloc bytes per
   table (target ≤ 50 KB), beside the bytes of the table's state alone.

The service runs as its own process; the load generator and nats-server share this machine.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
import tracemalloc
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from chieu.kit import auth
from chieu.kit.eventstore import EventStore
from chieu.kit.settings import DEV_TOKEN_SECRET, Settings
from chieu.table.aggregate import Table
from chieu.table.app import STREAM, SUBJECT_PREFIX
from chieu.table.client import TableClient, game_view
from chieu.table.rules.o_an_quan.game import Sow
from chieu.table.service import Tables
from chieu.table.v1 import log_pb2
from tests.benchmarks.common import line, median, pct, running_table_service

TABLES = int(os.environ.get("BENCH_TABLES", "200"))
SECONDS = float(os.environ.get("BENCH_SECONDS", "15"))


def token(player: str) -> str:
    return auth.sign(DEV_TOKEN_SECRET, player)


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


async def load(addr: str, tables: int, seconds: float) -> tuple[float, list[float]]:
    lat: list[float] = []
    accepted = 0
    stop = time.perf_counter() + seconds
    channels: list[TableClient] = []

    async def one(i: int) -> None:
        nonlocal accepted
        a, b = TableClient(addr, token(f"a{i}")), TableClient(addr, token(f"b{i}"))
        s1, s2 = TableClient(addr, token(f"s{i}")), TableClient(addr, token(f"t{i}"))
        channels.extend([a, b, s1, s2])
        players = {f"a{i}": a, f"b{i}": b}
        while time.perf_counter() < stop:
            t = await a.create("o_an_quan", {"maxMoves": 300})
            await b.sit(t.table_id)
            view = await a.start(t.table_id)
            streams = [c.watch(t.table_id).__aiter__() for c in (a, b, s1, s2)]
            for s in streams:
                await s.__anext__()

            async def until(s, version: int) -> None:  # type: ignore[no-untyped-def]
                while (await s.__anext__()).version < version:
                    pass

            while view.status == 2 and time.perf_counter() < stop:
                gv = game_view(view)
                move = gv.legal[0]
                t0 = time.perf_counter()
                view = await players[view.hand_players[gv.to_move]].act(
                    t.table_id, "o_an_quan", Sow(move.square, move.direction))
                await asyncio.gather(*(until(s, view.version) for s in streams))
                lat.append(time.perf_counter() - t0)
                accepted += 1
            for s in streams:
                await s.aclose()

    t0 = time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(tables)))
    rate = accepted / (time.perf_counter() - t0)
    for c in channels:
        await c.close()
    return rate, lat


async def recovery(url: str) -> None:
    settings = replace(Settings(), nats_url=url, snapshot_every=100)
    store = await EventStore.connect(url, stream=STREAM, prefix=SUBJECT_PREFIX)
    tables = Tables(store, settings)
    table_id = f"recovery-{os.getpid()}"
    events = 0
    hand = 0
    from chieu.table.rules.o_an_quan.game import GAME

    await tables.execute(table_id, "r1", "c0", lambda t, now: t.create("o_an_quan", {}, "r1"), create=True)
    await tables.execute(table_id, "r2", "c1", lambda t, now: t.take_seat("r2", None))
    while events < 10_000:
        hand += 1
        table = await tables.execute(table_id, "r1", f"h{hand}", lambda t, now: t.start_hand("r1", now))
        while table.playing:
            seat = table.game_state.to_move
            move = GAME.legal(table.game_state, seat)[0]
            player = table.hand_players[seat]
            table = await tables.execute(table_id, player, f"m{table.version}",
                                         lambda t, now, p=player, m=move: t.act(p, m, now))
        events = sum(len(log_pb2.Record.FromString(s.data).events) for s in await store.read(table_id))
    await tables.close()
    await asyncio.sleep(0.5)  # the last snapshot write
    fresh = Tables(store, settings)
    with_snap, without = [], []
    for _ in range(7):
        t = time.perf_counter()
        loaded = await fresh._load(table_id)
        with_snap.append(time.perf_counter() - t)
        t = time.perf_counter()
        full = Table(table_id)
        for stored in await store.read(table_id):
            full.apply(log_pb2.Record.FromString(stored.data), stored.seq)
        without.append(time.perf_counter() - t)
        assert full.version == loaded.version and full.game_state == loaded.game_state
    print(f"recovery of one table: {events} events in {loaded.version} records, snapshot every 100")
    ratio = median(with_snap) / median(without)
    line("load from snapshot + tail (median)", median(with_snap) * 1e3, "ms", "<= 20 ms", median(with_snap) <= 0.020,
         f"(full replay without a snapshot: {median(without) * 1e3:.1f} ms; ratio {ratio:.3f})")
    await store.close()


async def memory(url: str, n: int = 300) -> None:
    settings = replace(Settings(), nats_url=url, snapshot_every=1000)
    store = await EventStore.connect(url, stream=STREAM, prefix=SUBJECT_PREFIX)
    writer = Tables(store, settings)
    ids = [f"idle-{os.getpid()}-{i}" for i in range(n)]
    for tid in ids:
        await writer.execute(tid, "m1", "c0", lambda t, now: t.create("o_an_quan", {}, "m1"), create=True)
        await writer.execute(tid, "m2", "c1", lambda t, now: t.take_seat("m2", None))
        await writer.execute(tid, "m1", "c2", lambda t, now: t.start_hand("m1", now))
    await writer.close()
    reader = Tables(store, replace(settings, snapshot_every=10_000))
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

    state_only = len(pickle.dumps(reader._live[ids[1]].table))
    print(f"memory: {n - 1} idle tables (a hand running, no activity), loaded and followed")
    line("bytes per idle table (tracemalloc)", per_table / 1024, "KB", "<= 50 KB", per_table <= 50 * 1024,
         f"(the table's pickled state alone: {state_only / 1024:.1f} KB; ratio {per_table / state_only:.1f}x)")
    await reader.close()
    await store.close()


async def main_async(url: str, addr: str) -> None:
    floor_rate, floor_lat = await floor(url, addr, TABLES, SECONDS / 2)
    rate, lat = await load(addr, TABLES, SECONDS)
    print(f"load: {TABLES} tables x 4 watchers for {SECONDS:.0f} s (service in its own process)")
    line("floor: gRPC + JetStream publish, ops/s", floor_rate, "ops/s", "", True,
         f"(p50 {median(floor_lat) * 1e3:.2f} ms, p99 {pct(floor_lat, 0.99) * 1e3:.2f} ms)")
    line("accepted commands/s", rate, "cmd/s", ">= 60% floor", rate >= 0.6 * floor_rate,
         f"(ratio {rate / floor_rate:.2f} of the floor)")
    line("move latency p50 (all 4 watchers)", median(lat) * 1e3, "ms", "", True)
    line("move latency p99 (all 4 watchers)", pct(lat, 0.99) * 1e3, "ms", "<= 10 ms", pct(lat, 0.99) <= 0.010,
         f"(floor p99 {pct(floor_lat, 0.99) * 1e3:.2f} ms)")
    await recovery(url)
    await memory(url)


def main() -> None:
    with running_table_service() as (url, addr):
        asyncio.run(main_async(url, addr))


if __name__ == "__main__":
    main()
