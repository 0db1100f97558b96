"""Reservations at coin tables (issue 32), each beside today's path measured in the same run.

1. StartHand at a coin table (Xiangqi, 2 seats, funded players), p50/p99: with the reservation
   (one ``ReserveHand`` round trip to the ledger, all seats in one PostgreSQL transaction) and
   without it (the same servers with the reservation hook switched off: the entry gate's
   ``CheckEligibility`` and the append only, as before), in alternating rounds on the same
   tables. Each hand is ended (a resignation) between two starts, outside the measurement.
   Target: p99 with ≤ 1.3× p99 without.
2. Settlement postings/s through the consumer: coin hands of 4 seats (HandStarted, then one
   record with the Settlement of 4 transfers and the HandEnded), with reservations (each hand's
   reservations open, the start making them the log's — one statement more in the start's
   transaction — and the HandEnded closing them in the inbox statement) and without (the same
   records with no reservations: the statements and round trips of before reservations), two runs
   each, alternating, the better of each; and with reservations and the collusion screen as the
   ledger runs it (``chieu.ledger.holds``), the whole of issue 32's cost. Target: each ≥ 0.9× the
   records as before issue 32 (no reservations, no screen).

Environment: BENCH_STARTS (300 per variant), BENCH_HANDS (1000 per variant); ``--starts-only`` /
``--postings-only``: one of the two.
"""

from __future__ import annotations

import asyncio
import os
import random
import shutil
import sys
import tempfile
import time
import uuid
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import grpc

from chieu.games.xiangqi.model import Resign
from chieu.kit import db
from chieu.kit.settings import Settings
from chieu.ledger.books import Books
from chieu.ledger.consumer import SettlementConsumer
from chieu.ledger.holds import Screen
from chieu.ledger.reservations import Reservations
from chieu.ledger.schema import MIGRATIONS
from chieu.ledger.v1 import ledger_service_pb2 as gpb
from chieu.ledger.v1 import ledger_service_pb2_grpc as gpb_grpc
from chieu.table import reservations as table_reservations
from chieu.table.client import TableClient
from chieu.table.v1 import log_pb2
from chieu_tools import localnats, localpg
from tests.benchmarks.common import PUBLIC_KEYS, credential, line, median, pct, token
from tests.conftest import SEAL_KEYS

STARTS = int(os.environ.get("BENCH_STARTS", "300"))
HANDS = int(os.environ.get("BENCH_HANDS", "1000"))
TABLES = 20


async def bench_start_hand(settings: Settings) -> None:
    from chieu.ledger.app import build as build_ledger
    from chieu.table.app import build as build_table

    ledger = await build_ledger(replace(settings, service_token=credential("ledger")))
    await ledger.start()
    table = await build_table(settings)
    await table.start()
    real = table_reservations.reserve

    async def off(*args: Any) -> None:
        return None

    try:
        async with grpc.aio.insecure_channel(settings.ledger_addr) as ch:
            stub = gpb_grpc.LedgerServiceStub(ch)
            op = (("authorization", f"Bearer {token('bench-op', 'operator')}"),)
            pairs = [(f"ra{i}-{uuid.uuid4().hex[:6]}", f"rb{i}-{uuid.uuid4().hex[:6]}") for i in range(TABLES)]
            for p in (p for pair in pairs for p in pair):
                await stub.Adjust(gpb.AdjustRequest(adjustment_id=uuid.uuid4().hex, player_id=p, currency="coins",
                                                    delta=10**9, reason="bench"), metadata=op)
        clients = {p: TableClient(settings.table_addr, token(p)) for pair in pairs for p in pair}
        tables = []
        for a, b in pairs:
            t = await clients[a].create("xiangqi", {}, stake=10, currency=log_pb2.CURRENCY_COINS)
            await clients[b].sit(t.table_id)
            tables.append(t.table_id)
        lat: dict[bool, list[float]] = {True: [], False: []}
        rounds = STARTS // TABLES
        for r in range(2 * rounds + 2):
            with_reservation = r % 2 == 0
            table_reservations.reserve = real if with_reservation else off  # type: ignore[assignment]

            async def one(i: int, keep: bool, with_reservation: bool = with_reservation) -> None:
                a, b = pairs[i]
                t0 = time.perf_counter()
                await clients[a].start(tables[i])
                if keep:
                    lat[with_reservation].append(time.perf_counter() - t0)
                await clients[b].act(tables[i], "xiangqi", Resign())

            for i in range(TABLES):  # one start at a time: the latency of one, not of a queue
                await one(i, keep=r >= 2)
        table_reservations.reserve = real  # type: ignore[assignment]
        for c in clients.values():
            await c.close()
    finally:
        await table.shutdown()
        await ledger.shutdown()
    on, off_ = lat[True], lat[False]
    print(f"StartHand at a coin table (xiangqi, 2 seats), {len(on)} starts each way, alternating rounds")
    line("StartHand p50 without reservations", median(off_) * 1e3, "ms", "", True)
    line("StartHand p50 with reservations", median(on) * 1e3, "ms", "", True,
         f"(ratio: {median(on) / median(off_):.2f})")
    line("StartHand p99 without reservations", pct(off_, 0.99) * 1e3, "ms", "", True)
    ratio = pct(on, 0.99) / pct(off_, 0.99)
    line("StartHand p99 with reservations", pct(on, 0.99) * 1e3, "ms", "<= 1.3x without", ratio <= 1.3,
         f"(ratio: {ratio:.2f})")


def hand_records(table_id: str, hand: int, players: Sequence[str], reserved: bool) -> tuple[bytes, bytes]:
    """A coin hand of 4 seats: its start, then its settlement (4 transfers) with its end."""
    start = log_pb2.Record(table_id=table_id, version=2 * hand, command_id=uuid.uuid4().hex, game="phom")
    start.events.add().hand_started.CopyFrom(log_pb2.HandStarted(
        hand_no=hand, players=players, game="phom", stake=10, currency=log_pb2.CURRENCY_COINS,
        reserved=[480] * 4 if reserved else []))
    s = log_pb2.Settlement(hand_no=hand, first_leg=0, players=players, stake=10, game="phom",
                           currency=log_pb2.CURRENCY_COINS)
    for i in range(4):
        t = s.transfers.add(amount=i + 1, reason="rank")
        t.from_seat = i
        t.to_seat = (i + 1) % 4
    end = log_pb2.Record(table_id=table_id, version=2 * hand + 1, command_id=uuid.uuid4().hex, game="phom")
    end.events.add().settlement.CopyFrom(s)
    end.events.add().hand_ended.CopyFrom(log_pb2.HandEnded(hand_no=hand, players=players))
    return start.SerializeToString(), end.SerializeToString()


_S = Settings()
SCREEN_DEFAULTS = (_S.screen_payers, _S.screen_min_coins, _S.screen_share, _S.screen_drain, _S.screen_window_days,
                   _S.screen_welcome_payers)
"""The screen's default settings, in the order the ledger passes them (``chieu.ledger.app``)."""


async def postings_per_s(js: Any, books: Books, pool: Any, reserved: bool, run: int) -> float:
    from nats.js import api

    name = f"BENCH_RES_{'ON' if reserved else 'OFF'}_{run}"
    prefix = f"benchres{'on' if reserved else 'off'}{run}"
    await js.add_stream(api.StreamConfig(name=name, subjects=[f"{prefix}.>"], storage=api.StorageType.FILE))
    players = [f"rp{i}" for i in range(64)]
    rng = random.Random(7)
    rows: list[tuple[str, int, str, int]] = []
    for h in range(1, HANDS + 1):
        table, seated = f"rt{prefix}{h % 50}", rng.sample(players, 4)
        first, second = hand_records(table, h, seated, reserved)
        await js.publish(f"{prefix}.{table}", first)
        await js.publish(f"{prefix}.{table}", second)
        if reserved:
            rows += [(table, h, p, 480) for p in seated]
    if rows:  # the hands' reservations, open as ReserveHand leaves them (its cost is StartHand's, above)
        await pool.executemany("INSERT INTO ledger_reservations (table_id, hand_no, player_id, coins)"
                               " VALUES ($1, $2, $3, $4)", rows)
    consumer = SettlementConsumer(books, js, durable=f"bench-{prefix}", stream=name, subjects=f"{prefix}.>",
                                  batch=256)
    t0 = time.perf_counter()
    await consumer.start()
    while consumer.posted < HANDS:  # noqa: ASYNC110 - polling a counter is the measurement
        await asyncio.sleep(0.01)
    rate = HANDS / (time.perf_counter() - t0)
    await consumer.stop()
    if reserved:
        still = await pool.fetchval("SELECT count(*) FROM ledger_reservations WHERE closed_at IS NULL"
                                    " AND table_id LIKE $1", f"rt{prefix}%")
        assert still == 0, f"{still} reservations left open"
    return rate


async def bench_postings(url: str, dburl: str) -> None:
    import nats

    pool = await db.create_pool(dburl, max_size=8)
    books = Books(pool)
    books.holds_back = Reservations(pool, "BENCH_RES").held
    async with pool.acquire() as c:
        for i in range(64):
            await c.execute("INSERT INTO ledger_accounts (id, kind, currency, owner, balance) VALUES"
                            " ($1, 'player', 'coins', $2, 1000000000) ON CONFLICT DO NOTHING", f"player/coins/rp{i}",
                            f"rp{i}")
    nc = await nats.connect(url)
    js = nc.jetstream()
    screened = Books(pool, Screen(*SCREEN_DEFAULTS))  # as the ledger runs: the collusion screen on
    screened.holds_back = books.holds_back
    runs: dict[str, list[float]] = {"before": [], "reserved": [], "screened": []}
    order = ("before", "reserved", "screened") * 2  # alternating: the machine's load drifts
    for i, kind in enumerate(order):
        runs[kind].append(await postings_per_s(js, screened if kind == "screened" else books, pool,
                                               reserved=kind != "before", run=i))
    off, on, all_on = (max(runs[k]) for k in ("before", "reserved", "screened"))
    await nc.close()
    await pool.close()
    print(f"settlement postings through the consumer: {HANDS} coin hands of 4 transfers, two runs each way"
          " alternating, the better of each")
    line("postings/s as before issue 32 (no reservations, no screen)", off, "hands/s", "", True)
    line("postings/s with reservations", on, "hands/s", ">= 0.9x before", on >= 0.9 * off,
         f"(ratio: {on / off:.2f}; runs before {runs['before'][0]:.0f}, {runs['before'][1]:.0f},"
         f" with {runs['reserved'][0]:.0f}, {runs['reserved'][1]:.0f})")
    line("postings/s with reservations and the collusion screen (as the ledger runs)", all_on, "hands/s",
         ">= 0.9x before", all_on >= 0.9 * off,
         f"(ratio: {all_on / off:.2f}; runs {runs['screened'][0]:.0f}, {runs['screened'][1]:.0f})")


async def run(data: Path) -> None:
    proc, url = localnats.start(data / "nats", quiet=True)
    pg, dburl = localpg.start(data / "pg")
    try:
        pool = await db.create_pool(dburl, max_size=2)
        async with pool.acquire() as c:
            await db.migrate(c, "ledger", MIGRATIONS)
        await pool.close()
        settings = replace(Settings(), nats_url=url, database_url=dburl, token_public_keys=str(PUBLIC_KEYS),
                           table_addr=f"127.0.0.1:{localnats.free_port()}",
                           ledger_addr=f"127.0.0.1:{localnats.free_port()}", ladder_addr="", lobby_addr="",
                           service_token=credential("table"), seal_keys=str(SEAL_KEYS), coin_stakes="10",
                           unplayed_tables=0, rate_per_player=0, rate_per_address=0, log_level="warning")
        if "--postings-only" not in sys.argv:
            await bench_start_hand(settings)
        if "--starts-only" not in sys.argv:
            await bench_postings(url, dburl)
    finally:
        localnats.stop(proc)
        localpg.stop(pg)


def main() -> None:
    data = Path(tempfile.mkdtemp(prefix="chieu-bench-reservations-"))
    try:
        asyncio.run(run(data))
    finally:
        shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    main()
