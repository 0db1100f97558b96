"""Ledger benchmarks (issue 5).

1. Settled hands per second through the real consumer (JetStream pull → one transaction with the
   inbox row and the posting → ack), beside raw PostgreSQL transactions of the same shape measured
   in the same run (inbox row, posting row, 4 transfers, account upsert, lock, balance update —
   issued straight from one connection, no NATS, no checks). Target: ≥ 50% of raw. Then, for
   information, two consumers (own pools and connections) on one durable over fresh tables: the
   per-table order check makes the second wait when it meets a later hand of a table still in
   flight at the first.
   (``--consumer-only``: stop here.)
2. History of one player through the gRPC API with 1,000,000 transfers in the books (bulk-loaded
   with COPY): p99 ≤ 20 ms.
"""

from __future__ import annotations

import asyncio
import random
import shutil
import sys
import tempfile
import time
import uuid
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from chieu.kit import db
from chieu.kit.settings import Settings
from chieu.ledger import books as b
from chieu.ledger.books import Books
from chieu.ledger.consumer import SettlementConsumer
from chieu.ledger.schema import MIGRATIONS
from chieu.table.v1 import log_pb2
from chieu_tools import localnats, localpg
from tests.benchmarks.common import PUBLIC_KEYS, line, median, pct
from tests.benchmarks.common import token as player_token

HANDS = 2000
TRANSFERS = 1_000_000


def start(table_id: str, hand: int, players: list[str]) -> bytes:
    """The record that starts a hand with its money terms (the ledger keeps them)."""
    rec = log_pb2.Record(table_id=table_id, version=hand, command_id=uuid.uuid4().hex, game="phom")
    rec.events.add().hand_started.CopyFrom(log_pb2.HandStarted(
        hand_no=hand, players=players, game="phom", stake=10, currency=log_pb2.CURRENCY_POINTS))
    return rec.SerializeToString()


def record(table_id: str, hand: int, players: list[str]) -> bytes:
    s = log_pb2.Settlement(hand_no=hand, first_leg=0, players=players, stake=10, game="phom",
                           currency=log_pb2.CURRENCY_POINTS)
    for i in range(4):
        t = s.transfers.add(amount=i + 1, reason="rank")
        t.from_seat = i
        t.to_seat = (i + 1) % 4
    rec = log_pb2.Record(table_id=table_id, version=hand, command_id=uuid.uuid4().hex, game="phom")
    rec.events.add().settlement.CopyFrom(s)
    return rec.SerializeToString()


async def raw_baseline(pool: object, n: int) -> float:
    """Raw transactions of the consumer's shape, sequential on one connection: per hand, the hand's
    start (its inbox row and its terms) and its settlement (the terms looked up, the posting)."""
    assert isinstance(pool, type(pool))
    async with pool.acquire() as c:  # type: ignore[attr-defined]
        t0 = time.perf_counter()
        for h in range(n):
            tid, players = "raw-t", [f"raw-{i}" for i in range(4)]
            accts = sorted(b.player("points:phom", p) for p in players)
            async with c.transaction():
                await c.execute("INSERT INTO ledger_inbox (stream, seq, posting_id, outcome) VALUES ('RAW', $1, $2,"
                                " 'hand') ON CONFLICT DO NOTHING", -h - 1, f"raw/{h}/start")
                await c.execute("INSERT INTO ledger_hands (stream, table_id, hand_no, seq, game, stake, currency,"
                                " players) VALUES ('RAW', $1, $2, $3, 'phom', 10, 1, $4) ON CONFLICT DO NOTHING",
                                tid, h, -h - 1, players)
            async with c.transaction():
                await c.fetchrow("SELECT game, stake, currency, players FROM ledger_hands WHERE stream = 'RAW'"
                                 " AND table_id = $1 AND hand_no = $2", tid, h)
                await c.execute("INSERT INTO ledger_inbox (stream, seq, posting_id, outcome) VALUES ('RAW', $1, $2,"
                                " 'posted') ON CONFLICT DO NOTHING", h, f"raw/{h}")
                await c.execute("INSERT INTO ledger_accounts (id, kind, currency, owner) SELECT a, 'player',"
                                " 'points:phom', a FROM unnest($1::text[]) a ON CONFLICT DO NOTHING", accts)
                await c.fetch("SELECT id, balance FROM ledger_accounts WHERE id = ANY($1::text[]) ORDER BY id"
                              " FOR UPDATE", accts)
                await c.execute("INSERT INTO ledger_postings (id, digest, kind, table_id, hand_no)"
                                " VALUES ($1, '\\x00', 'raw', $2, $3)", f"{tid}/{h}", tid, h)
                await c.execute(
                    "INSERT INTO ledger_transfers (id, posting_id, debit, credit, currency, amount, owed, reason,"
                    " table_id, hand_no) SELECT x.id, $1, x.d, x.c, 'points:phom', x.a, x.a, 'rank', $2, $3"
                    " FROM unnest($4::text[], $5::text[], $6::text[], $7::bigint[]) x(id, d, c, a)",
                    f"{tid}/{h}", tid, h, [f"{tid}/{h}/{i}" for i in range(4)], [accts[i] for i in range(4)],
                    [accts[(i + 1) % 4] for i in range(4)], [10 * (i + 1) for i in range(4)])
                await c.execute("UPDATE ledger_accounts a SET balance = a.balance + d.delta FROM unnest($1::text[],"
                                " $2::bigint[]) d(id, delta) WHERE a.id = d.id", accts, [30, -10, -10, -10])
        return n / (time.perf_counter() - t0)


async def bench_two_consumers(url: str, dburl: str, books: Books, raw: float) -> None:
    """The same load on fresh tables, two consumers on one durable (information, no target)."""
    import nats
    from nats.js import api

    nc, nc2 = await nats.connect(url), await nats.connect(url)
    js = nc.jetstream()
    await js.add_stream(api.StreamConfig(name="BENCH_TABLES2", subjects=["bench2.table.>"],
                                         storage=api.StorageType.FILE))
    players = [f"bq{i}" for i in range(64)]
    rng = random.Random(6)
    for h in range(1, HANDS + 1):
        table, seated = f"bu{h % 50}", rng.sample(players, 4)
        await js.publish(f"bench2.table.{table}", start(table, h, seated))
        await js.publish(f"bench2.table.{table}", record(table, h, seated))
    pool2 = await db.create_pool(dburl, max_size=4)
    two = [SettlementConsumer(books, js, durable="bench2", stream="BENCH_TABLES2", subjects="bench2.table.>",
                              batch=256),
           SettlementConsumer(Books(pool2), nc2.jetstream(), durable="bench2", stream="BENCH_TABLES2",
                              subjects="bench2.table.>", batch=256)]
    t0 = time.perf_counter()
    for c in two:
        await c.start()
    while sum(c.posted for c in two) < HANDS:  # noqa: ASYNC110 - polling a counter is the measurement
        await asyncio.sleep(0.01)
    rate = HANDS / (time.perf_counter() - t0)
    for c in two:
        await c.stop()
    await pool2.close()
    await nc.close()
    await nc2.close()
    line("settled hands/s, two consumers, one durable", rate, "hands/s", "(information)", True,
         f"(ratio to raw: {rate / raw:.0%}; posted {two[0].posted} + {two[1].posted},"
         f" waited {sum(getattr(c, 'waited', 0) for c in two)})")


async def bench_consumer(url: str, pool: object, books: Books) -> float:
    import nats
    from nats.js import api

    nc = await nats.connect(url)
    js = nc.jetstream()
    await js.add_stream(api.StreamConfig(name="BENCH_TABLES", subjects=["bench.table.>"],
                                         storage=api.StorageType.FILE))
    players = [f"bp{i}" for i in range(64)]
    rng = random.Random(5)
    for h in range(1, HANDS + 1):
        table, seated = f"bt{h % 50}", rng.sample(players, 4)
        await js.publish(f"bench.table.{table}", start(table, h, seated))
        await js.publish(f"bench.table.{table}", record(table, h, seated))
    raw = await raw_baseline(pool, HANDS)
    consumer = SettlementConsumer(books, js, durable="bench", stream="BENCH_TABLES", subjects="bench.table.>",
                                  batch=256)
    t0 = time.perf_counter()
    await consumer.start()
    while consumer.posted < HANDS:  # noqa: ASYNC110 - polling a counter is the measurement
        await asyncio.sleep(0.01)
    rate = HANDS / (time.perf_counter() - t0)
    await consumer.stop()
    await nc.close()
    print(f"settlements through the consumer: {HANDS} hands of 4 transfers (JetStream file storage)")
    line("raw PostgreSQL transactions, same shape", raw, "tx/s", "", True)
    line("settled hands/s through the consumer", rate, "hands/s", ">= 50% of raw", rate >= 0.5 * raw,
         f"(ratio to raw: {rate / raw:.0%})")
    return raw


async def bulk_load(pool: object, hero: str) -> None:
    """1,000,000 transfers by COPY: 10,000 players, the hero in 1% of them."""
    rng = random.Random(11)
    players = [f"h{i}" for i in range(10_000)] + [hero]
    cur = "points:phom"
    accounts = [(b.player(cur, p), "player", cur, p, 0) for p in players]
    postings, transfers = [], []
    for n in range(TRANSFERS // 4):
        pid = f"bulk{n % 5000}/{n}/0"
        postings.append((pid, b"\x00", "settlement", f"bulk{n % 5000}", n))
        seats = rng.sample(players[:-1], 4)
        if rng.random() < 0.04:
            seats[0] = hero
        for i in range(4):
            transfers.append((f"bulk{n % 5000}/{n}/{i}", pid, b.player(cur, seats[i]),
                              b.player(cur, seats[(i + 1) % 4]), cur, i + 1, i + 1, "rank", f"bulk{n % 5000}", n))
    async with pool.acquire() as c:  # type: ignore[attr-defined]
        await c.copy_records_to_table("ledger_accounts", records=accounts,
                                      columns=["id", "kind", "currency", "owner", "balance"])
        await c.copy_records_to_table("ledger_postings", records=postings,
                                      columns=["id", "digest", "kind", "table_id", "hand_no"])
        await c.copy_records_to_table("ledger_transfers", records=transfers, columns=[
            "id", "posting_id", "debit", "credit", "currency", "amount", "owed", "reason", "table_id", "hand_no"])
        await c.execute("""UPDATE ledger_accounts a SET balance = m.s FROM (
                             SELECT id, sum(d) AS s FROM (SELECT debit AS id, -amount AS d FROM ledger_transfers
                             UNION ALL SELECT credit, amount FROM ledger_transfers) x GROUP BY id) m
                           WHERE a.id = m.id AND a.kind = 'player'""")
        await c.execute("ANALYZE")


async def bench_history(settings: Settings, pool: object) -> None:
    import grpc

    from chieu.ledger.app import build
    from chieu.ledger.v1 import ledger_service_pb2 as pb
    from chieu.ledger.v1 import ledger_service_pb2_grpc as pb_grpc

    hero = "hero"
    t0 = time.perf_counter()
    await bulk_load(pool, hero)
    total = await pool.fetchval("SELECT count(*) FROM ledger_transfers")  # type: ignore[attr-defined]
    mine = await pool.fetchval("SELECT count(*) FROM ledger_transfers WHERE debit = $1 OR credit = $1",  # type: ignore[attr-defined]
                               b.player("points:phom", hero))
    print(f"history: {total} transfers in the books ({mine} of them the player's), loaded in "
          f"{time.perf_counter() - t0:.1f} s by COPY")
    server = await build(settings)
    await server.start()
    ch = grpc.aio.insecure_channel(settings.ledger_addr)
    stub = pb_grpc.LedgerServiceStub(ch)
    md = (("authorization", f"Bearer {player_token(hero)}"),)
    rng = random.Random(3)
    lat: list[float] = []
    token = ""
    for i in range(1100):
        kind = i % 4
        if kind == 0:
            req = pb.GetHistoryRequest(player_id=hero, page_size=50)
        elif kind == 1:
            req = pb.GetHistoryRequest(player_id=hero, page_size=50, page_token=token)
        elif kind == 2:
            req = pb.GetHistoryRequest(player_id=hero, currency="points:phom", table_id=f"bulk{rng.randrange(5000)}")
        else:
            req = pb.GetHistoryRequest(player_id=hero, page_size=50, reason="rank")
        t = time.perf_counter()
        r = await stub.GetHistory(req, metadata=md)
        if i >= 100:
            lat.append(time.perf_counter() - t)
        if kind == 0 or (kind == 1 and r.next_page_token):
            token = r.next_page_token
    await ch.close()
    await server.shutdown()
    p99 = pct(lat, 0.99)
    line("history p50 (gRPC GetHistory, 50 per page)", median(lat) * 1e3, "ms", "", True)
    line("history p99", p99 * 1e3, "ms", "<= 20", p99 <= 0.020, f"(ratio to target: {p99 / 0.020:.2f})")


async def run(data: Path) -> None:
    proc, url = localnats.start(data / "nats", quiet=True)
    pg, dburl = localpg.start(data / "pg")
    try:
        pool = await db.create_pool(dburl, max_size=8)
        async with pool.acquire() as c:
            await db.migrate(c, "ledger", MIGRATIONS)
        books = Books(pool)
        raw = await bench_consumer(url, pool, books)
        await bench_two_consumers(url, dburl, books, raw)
        if "--consumer-only" in sys.argv:
            await pool.close()
            return
        settings = replace(Settings(), nats_url=url, database_url=dburl, token_public_keys=str(PUBLIC_KEYS),
                           ledger_addr=f"127.0.0.1:{localnats.free_port()}", log_level="warning")
        await bench_history(settings, pool)
        await pool.close()
    finally:
        localnats.stop(proc)
        localpg.stop(pg)


def main() -> None:
    data = Path(tempfile.mkdtemp(prefix="chieu-bench-ledger-"))
    try:
        asyncio.run(run(data))
    finally:
        shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    main()
