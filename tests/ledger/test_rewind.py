"""A ledger database restored to an earlier point catches up with the table log once its durable
is moved back (``chieu rewind``): without it the settlements acknowledged after the backup are
never posted; with it they are posted once, and what the restored books had is not posted again.
Real nats-server and PostgreSQL; the backup is a copy of the database (``CREATE DATABASE …
TEMPLATE``), the restore is the ledger started on that copy."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator

import asyncpg
import pytest

from chieu.games.core import Transfer
from chieu.kit import db, names, rewind
from chieu.ladder.schema import MIGRATIONS as LADDER_MIGRATIONS
from chieu.ledger import books as b
from chieu.ledger.books import Books
from chieu.ledger.schema import MIGRATIONS
from tests.conftest import new_database
from tests.ledger.conftest import Log, settlement, uid, until

pytestmark = pytest.mark.integration


@pytest.fixture
async def live(database_url: str) -> AsyncIterator[tuple[str, str]]:
    """The ledger's database (name, URL), migrated."""
    name = f"rewind_{uuid.uuid4().hex[:10]}"
    url = await new_database(database_url, name)
    conn = await asyncpg.connect(url)
    try:
        await db.migrate(conn, "ledger", MIGRATIONS)
    finally:
        await conn.close()
    yield name, url


async def _balances(url: str, players: list[str]) -> dict[str, int]:
    conn = await asyncpg.connect(url)
    try:
        rows = await conn.fetch("SELECT id, balance FROM ledger_accounts WHERE id = ANY($1::text[])",
                                [b.player(b.points("phom"), p) for p in players])
        return {r["id"]: int(r["balance"]) for r in rows}
    finally:
        await conn.close()


async def _play(tlog: Log, url: str, durable: str, tables: list[str], players: list[str], hands: range) -> None:
    """Settle ``hands`` at each table and let a ledger consumer on ``url`` post them all."""
    pool = await db.create_pool(url, max_size=4)
    consumer = tlog.consumer(Books(pool), durable=durable)
    await consumer.start()
    try:
        for h in hands:
            for t in tables:
                await tlog.publish(t, [settlement("phom", players, [Transfer(2, 0, 1, "u")], stake=10, coins=False,
                                                  hand_no=h)])
        await until(lambda: pool.fetchval("SELECT count(*) = $1 FROM ledger_postings WHERE kind = 'settlement'",
                                          len(tables) * hands.stop - len(tables)))
    finally:
        await consumer.stop()
        await pool.close()


async def test_a_restored_ledger_is_behind_until_its_durable_is_rewound(
        tlog: Log, database_url: str, live: tuple[str, str]) -> None:
    name, url = live
    players, tables, durable = [uid("a-"), uid("b-"), uid("c-")], [uid("t"), uid("t")], uid("d")
    await _play(tlog, url, durable, tables, players, range(1, 4))  # hands 1-3: in the backup
    backup = await new_database(database_url, f"{name}_bak", template=name)
    await _play(tlog, url, durable, tables, players, range(1, 7))  # hands 4-6: after it
    truth = await _balances(url, players)
    assert truth[b.player(b.points("phom"), players[0])] == 6 * 2 * 10  # 6 hands at 2 tables, 1 × stake 10 each

    # the restore: the ledger now runs on the backup, and its durable is past what the backup saw
    pool = await db.create_pool(backup, max_size=4)
    consumer = tlog.consumer(Books(pool), durable=durable)
    await consumer.start()
    await asyncio.sleep(1.5)
    assert await pool.fetchval("SELECT count(*) FROM ledger_postings WHERE kind = 'settlement'") == 3 * 2
    with pytest.raises(rewind.StillRunning):  # the service must be stopped first
        await rewind.apply(tlog.js, [rewind.Step(tlog.stream, durable, 1, "test")], every_s=0.6)
    await consumer.stop()

    conn = await asyncpg.connect(backup)
    try:
        planned = await rewind.plan(conn, "ledger")
    finally:
        await conn.close()
    # the table log's durable keeps table order only, the reward records' none: both at the stream's start
    assert {(s.stream, s.durable): s.start_seq for s in planned} == {
        (names.TABLES.name, names.LEDGER_DURABLE): 1, (names.LADDER.name, names.LEDGER_REWARDS_DURABLE): 1}
    steps = [rewind.Step(tlog.stream, durable, s.start_seq, s.why) for s in planned
             if s.durable == names.LEDGER_DURABLE]
    (done,) = await rewind.apply(tlog.js, steps, every_s=0.6)
    assert done.ack_floor == done.stream_last > 0  # it had acknowledged everything

    consumer = tlog.consumer(Books(pool), durable=durable)
    await consumer.start()
    try:
        await until(lambda: pool.fetchval("SELECT count(*) = 12 FROM ledger_postings WHERE kind = 'settlement'"))
        await asyncio.sleep(0.5)  # and nothing more comes
        assert await pool.fetchval("SELECT count(*) FROM ledger_postings WHERE kind = 'settlement'") == 12
    finally:
        await consumer.stop()
        await pool.close()
    assert await _balances(backup, players) == truth  # caught up, nothing posted twice


async def test_a_service_applying_in_stream_order_starts_after_its_inbox(database_url: str) -> None:
    url = await new_database(database_url, f"rewind_{uuid.uuid4().hex[:10]}")
    conn = await asyncpg.connect(url)
    try:
        await db.migrate(conn, "ladder", LADDER_MIGRATIONS)
        await conn.executemany("INSERT INTO ladder_inbox (stream, seq, outcome) VALUES ($1, $2, 'applied')",
                               [(names.TABLES.name, 5), (names.TABLES.name, 9), (names.LEDGER.name, 3)])
        steps = {(s.stream, s.durable): s.start_seq for s in await rewind.plan(conn, "ladder")}
        assert steps == {(names.TABLES.name, names.LADDER_DURABLE): 10,  # in stream order: after the last
                         (names.LEDGER.name, names.LADDER_RESETS_DURABLE): 1}  # in no order: from the start
        asked = await rewind.plan(conn, "ladder", from_seq=42)
        assert {s.start_seq for s in asked} == {42}
    finally:
        await conn.close()
    with pytest.raises(ValueError):
        rewind.durables("table")  # owns no durable
