"""Ladder benchmarks (issue 14).

1. Hand results applied per second through the real consumer (JetStream pull → one transaction:
   the cursor locked, the inbox row, the players' standings locked, their history rows, their
   standings and the leaderboard buckets, the cursor raised → ack), beside raw PostgreSQL
   transactions of the same shape measured in the same run (the same statements issued straight
   from one connection: no NATS, no rules, no checks). Target: ≥ 50% of raw.
2. The seat check (CheckSeat over gRPC, two players, a ladder service as its own process) paced
   at 200 checks/s: p99 ≤ 5 ms.
3. The leaderboard of a game with 1,000,000 players (bulk-loaded with COPY): the top 100 and a
   random player's own rank in one GetLeaderboard call, p99 ≤ 20 ms.
"""

from __future__ import annotations

import asyncio
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from chieu.kit import db
from chieu.kit.settings import Settings
from chieu.ladder import standings as st
from chieu.ladder.consumer import LadderConsumer
from chieu.ladder.schema import MIGRATIONS
from chieu.ladder.standings import Store
from chieu.table.v1 import log_pb2
from chieu_tools import localnats, localpg
from tests.benchmarks.common import credential, line, median, pct

HANDS = 2000
PLAYERS = 1_000_000


def record(table_id: str, hand: int, players: list[str], winner: int) -> bytes:
    rec = log_pb2.Record(table_id=table_id, version=hand, command_id=uuid.uuid4().hex, game="xiangqi",
                         server_time_ms=1_760_000_000_000)
    h = rec.events.add().hand_ended
    h.hand_no, h.ladder_level = hand, 1
    h.players.extend(players)
    h.outcome.winner = winner
    h.outcome.scores.extend([1, -1] if winner == 0 else [-1, 1])
    h.outcome.reason = "resignation"
    return rec.SerializeToString()


async def raw_baseline(pool: object, n: int) -> float:
    """Raw transactions of the consumer's shape, sequential on one connection."""
    async with pool.acquire() as c:  # type: ignore[attr-defined]
        await c.execute("INSERT INTO ladder_cursor (stream, seq) VALUES ('RAW', 0) ON CONFLICT DO NOTHING")
        players = [f"raw-{i}" for i in range(64)]
        rng = random.Random(4)
        t0 = time.perf_counter()
        for h in range(1, n + 1):
            two = sorted(rng.sample(players, 2))
            async with c.transaction():
                await c.fetchval(st._INBOX, "RAW")
                await c.execute("INSERT INTO ladder_inbox (stream, seq, outcome, applied_by) VALUES ('RAW', $1,"
                                " 'applied', '') ON CONFLICT DO NOTHING", h)
                await c.fetch("SELECT player_id, level, best, lp, reached FROM ladder_standings WHERE game = $1"
                              " AND player_id = ANY($2) ORDER BY player_id FOR UPDATE", "raw", two)
                rows = await c.fetch(st._HISTORY, "raw", "result", "raw-t", h, 1, h, 1_760_000_000_000, "2025-10",
                                     two, ["W", "L"], [1, 1], [1, 1], [0, 0], [1, 1], [1, 1], [1, -1], [0, 0])
                await c.execute(st._STANDINGS, "raw", two, [1, 1], [1, 1], [1, -1], [r["id"] for r in rows])
                await c.execute(st._BUCKETS, "raw", [1, 1, 1, 1], [1, 1, 1, 1], [0, 0, 1, -1], [-1, -1, 1, 1])
                await c.execute("UPDATE ladder_cursor SET seq = $2 WHERE stream = $1", "RAW", h)
        return n / (time.perf_counter() - t0)


async def bench_consumer(url: str, pool: object) -> None:
    import nats
    from nats.js import api

    nc = await nats.connect(url)
    js = nc.jetstream()
    await js.add_stream(api.StreamConfig(name="BENCH_LADDER", subjects=["benchl.table.>"],
                                         storage=api.StorageType.FILE))
    players = [f"bp{i}" for i in range(64)]
    rng = random.Random(5)
    for h in range(1, HANDS + 1):
        table = f"bt{h % 50}"
        await js.publish(f"benchl.table.{table}", record(table, h, rng.sample(players, 2), rng.randrange(2)))
    raw = await raw_baseline(pool, HANDS)
    consumer = LadderConsumer(Store(pool), js, durable="bench", stream="BENCH_LADDER",  # type: ignore[arg-type]
                              subjects="benchl.table.>", batch=256)
    t0 = time.perf_counter()
    await consumer.start()
    while consumer.applied < HANDS:  # noqa: ASYNC110 - polling a counter is the measurement
        await asyncio.sleep(0.01)
    rate = HANDS / (time.perf_counter() - t0)
    await consumer.stop()
    await nc.close()
    print(f"hand results through the consumer: {HANDS} two-player hands at a level-1 table (JetStream file storage)")
    line("raw PostgreSQL transactions, same shape", raw, "tx/s", "", True)
    line("hand results applied/s through the consumer", rate, "hands/s", ">= 50% of raw", rate >= 0.5 * raw,
         f"(ratio to raw: {rate / raw:.0%})")


async def bulk_load(pool: object) -> None:
    """1,000,000 players of Đô Mi Nô: levels roughly geometric (most at 1), lp spread, best ≥ level."""
    rng = random.Random(11)
    rows = []
    for i in range(PLAYERS):
        level = min(1 + int(rng.expovariate(0.7)), 30)
        best = level + (rng.random() < 0.3) * rng.randint(0, 2)
        lp = rng.randint(-10 if level == 1 else -5, 5)
        rows.append(("dominoes", f"p{i}", level, best, lp, rng.randint(1, 200), i + 1))
    async with pool.acquire() as c:  # type: ignore[attr-defined]
        await c.copy_records_to_table("ladder_standings", records=rows,
                                      columns=["game", "player_id", "level", "best", "lp", "games", "reached"])
        await c.execute("INSERT INTO ladder_buckets (game, best, level, lp, players) SELECT game, best, level, lp,"
                        " count(*) FROM ladder_standings WHERE game = 'dominoes' GROUP BY 1, 2, 3, 4")
        await c.execute("VACUUM ANALYZE ladder_standings")
        await c.execute("ANALYZE ladder_buckets")


def start_ladder(url: str, dburl: str) -> tuple[subprocess.Popen[bytes], str]:
    port = localnats.free_port()
    env = {**os.environ, "NATS_URL": url, "DATABASE_URL": dburl, "CHIEU_LADDER_ADDR": f"127.0.0.1:{port}",
           "CHIEU_LOG_LEVEL": "warning", "CHIEU_LEDGER_ADDR": ""}
    proc = subprocess.Popen([sys.executable, "-m", "chieu.ladder"], env=env)
    localnats.wait_for_port(port, 60, proc)
    return proc, f"127.0.0.1:{port}"


async def bench_api(addr: str, settings: Settings) -> None:
    import grpc

    from chieu.ladder.v1 import ladder_service_pb2 as pb
    from chieu.ladder.v1 import ladder_service_pb2_grpc as pb_grpc

    ch = grpc.aio.insecure_channel(addr)
    stub = pb_grpc.LadderServiceStub(ch)
    md = (("authorization", f"Bearer {credential('table')}"),)  # the table's seat check
    rng = random.Random(3)
    for _ in range(200):  # warm-up
        await stub.CheckSeat(pb.CheckSeatRequest(game="dominoes", table_level=2, player_ids=["p1", "p2"]),
                             metadata=md)
    lat: list[float] = []

    async def check(i: int) -> None:
        req = pb.CheckSeatRequest(game="dominoes", table_level=rng.randint(1, 3),
                                  player_ids=[f"p{rng.randrange(PLAYERS)}", f"p{rng.randrange(PLAYERS)}"])
        t = time.perf_counter()
        await stub.CheckSeat(req, metadata=md)
        lat.append(time.perf_counter() - t)

    tasks = []
    start = time.perf_counter()
    for i in range(2000):  # 200 checks/s for 10 s, each at its own time
        delay = start + i / 200 - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        tasks.append(asyncio.create_task(check(i)))
    await asyncio.gather(*tasks)
    p99 = pct(lat, 0.99)
    line("seat check p50 (gRPC CheckSeat, 200/s)", median(lat) * 1e3, "ms", "", True)
    line("seat check p99", p99 * 1e3, "ms", "<= 5", p99 <= 0.005, f"(ratio to target: {p99 / 0.005:.2f})")

    board: list[float] = []
    for i in range(1100):
        req = pb.GetLeaderboardRequest(game="dominoes", top=100, player_id=f"p{rng.randrange(PLAYERS)}")
        t = time.perf_counter()
        r = await stub.GetLeaderboard(req, metadata=md)
        if i >= 100:
            board.append(time.perf_counter() - t)
        assert len(r.top) == 100 and r.you.rank >= 1
    await ch.close()
    p99 = pct(board, 0.99)
    line("leaderboard p50 (top 100 + own rank, 1M)", median(board) * 1e3, "ms", "", True)
    line("leaderboard p99", p99 * 1e3, "ms", "<= 20", p99 <= 0.020, f"(ratio to target: {p99 / 0.020:.2f})")


async def run(data: Path) -> None:
    proc, url = localnats.start(data / "nats", quiet=True)
    pg, dburl = localpg.start(data / "pg")
    ladder = None
    try:
        pool = await db.create_pool(dburl, max_size=8)
        async with pool.acquire() as c:
            await db.migrate(c, "ladder", MIGRATIONS)
        await bench_consumer(url, pool)
        t0 = time.perf_counter()
        await bulk_load(pool)
        print(f"leaderboard: {PLAYERS} players loaded in {time.perf_counter() - t0:.1f} s by COPY")
        await pool.close()
        ladder, addr = start_ladder(url, dburl)
        await bench_api(addr, Settings())
    finally:
        if ladder is not None:
            ladder.send_signal(signal.SIGTERM)
            ladder.wait(20)
        localnats.stop(proc)
        localpg.stop(pg)


def main() -> None:
    data = Path(tempfile.mkdtemp(prefix="chieu-bench-ladder-"))
    try:
        asyncio.run(run(data))
    finally:
        shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    main()
