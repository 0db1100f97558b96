"""Ledger fixtures: a migrated PostgreSQL pool and the books on it (a real PostgreSQL); a test
JetStream stream of table records (a real nats-server) and helpers to publish settlements."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Sequence
from typing import Any

import asyncpg
import pytest
from nats.js import api

from chieu.kit import db
from chieu.ledger.books import Books
from chieu.ledger.consumer import SettlementConsumer
from chieu.ledger.schema import MIGRATIONS
from chieu.table.v1 import log_pb2
from tests.conftest import nats_connect


@pytest.fixture(scope="session")
async def pool(database_url: str) -> AsyncIterator[asyncpg.Pool]:
    p = await db.create_pool(database_url, max_size=20)
    async with p.acquire() as conn:
        await db.migrate(conn, "ledger", MIGRATIONS)
    try:
        yield p
    finally:
        await p.close()


@pytest.fixture(scope="session")
def books(pool: asyncpg.Pool) -> Books:
    return Books(pool)


def uid(prefix: str = "") -> str:
    """A unique name, so tests sharing one database never meet."""
    return f"{prefix}{uuid.uuid4().hex[:10]}"


class Log:
    """A test stream with a 1 s duplicate window, and helpers to publish table records."""

    def __init__(self, js: Any, stream: str, prefix: str) -> None:
        self.js, self.stream, self.prefix = js, stream, prefix
        self.started: set[tuple[str, int]] = set()

    async def publish(self, table_id: str, settlements: Sequence[log_pb2.Settlement], msg_id: str = "",
                      version: int = 1, subject: str = "", start: bool = True) -> int:
        """One table record with these settlements, on ``<prefix>.<table_id>`` (or ``<prefix>.<subject>``),
        after the record that starts their hand, as the table writes it (unless ``start`` is off or
        it was published before): the ledger posts only settlements of hands the log started."""
        for s in settlements:
            if start and (table_id, s.hand_no) not in self.started:
                self.started.add((table_id, s.hand_no))
                await self.js.publish(f"{self.prefix}.{subject or table_id}",
                                      hand_started_record(table_id, s).SerializeToString())
        rec = log_pb2.Record(table_id=table_id, version=version, command_id=msg_id or uid("c"), actor="system",
                             game=settlements[0].game if settlements else "phom")
        for s in settlements:
            rec.events.add().settlement.CopyFrom(s)
        ack = await self.js.publish(f"{self.prefix}.{subject or table_id}", rec.SerializeToString(),
                                    headers={"Nats-Msg-Id": msg_id or rec.command_id})
        return int(ack.seq)

    def consumer(self, books: Books, durable: str = "", **kw: Any) -> SettlementConsumer:
        return SettlementConsumer(books, self.js, durable=durable or uid("d"), stream=self.stream,
                                  subjects=kw.pop("subjects", f"{self.prefix}.>"),
                                  ack_wait_s=kw.pop("ack_wait_s", 2.0), **kw)


@pytest.fixture(scope="module")
async def tlog(nats_url: str) -> AsyncIterator[Log]:
    nc = await nats_connect(nats_url)  # the test-only admin: a stream of its own
    js = nc.jetstream()
    name, prefix = uid("LEDGERTEST_").upper(), uid("lt")
    await js.add_stream(api.StreamConfig(name=name, subjects=[f"{prefix}.>"], storage=api.StorageType.FILE,
                                         duplicate_window=1.0))
    try:
        yield Log(js, name, prefix)
    finally:
        await js.delete_stream(name)
        await nc.close()


class CrashAfterCommit:
    """A consumer's ``after_commit`` hook that fails once, on the first settlement record of table
    ``table``, after its commit and before its ack (the process dying there); ``crashes`` holds
    that record's stream sequence."""

    def __init__(self, table: str) -> None:
        self.table = table
        self.crashes: list[int] = []

    async def __call__(self, msg: Any) -> None:
        settles = any(e.WhichOneof("kind") == "settlement" for e in log_pb2.Record.FromString(msg.data).events)
        if self.table in msg.subject and settles and not self.crashes:
            self.crashes.append(int(msg.metadata.sequence.stream))
            raise RuntimeError("simulated crash after commit, before ack")


def hand_started_record(table_id: str, s: log_pb2.Settlement) -> log_pb2.Record:
    """The record that starts the hand of ``s`` with its money terms, as the table writes it."""
    rec = log_pb2.Record(table_id=table_id, command_id=uid("h"), actor="host", game=s.game)
    rec.events.add().hand_started.CopyFrom(log_pb2.HandStarted(
        hand_no=s.hand_no, players=s.players, game=s.game, stake=s.stake, currency=s.currency))
    return rec


def settlement(game: str, players: Sequence[str], transfers: Sequence[Any], *, stake: int, coins: bool,
               hand_no: int = 1, first_leg: int = 0) -> log_pb2.Settlement:
    s = log_pb2.Settlement(hand_no=hand_no, first_leg=first_leg, players=list(players), stake=stake, game=game,
                           currency=log_pb2.CURRENCY_COINS if coins else log_pb2.CURRENCY_POINTS)
    for t in transfers:
        x = s.transfers.add(amount=t.amount, reason=t.reason)
        if t.from_seat is not None:
            x.from_seat = t.from_seat
        if t.to_seat is not None:
            x.to_seat = t.to_seat
    return s


async def until(pred: Any, within: float = 20.0) -> None:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if await pred():
            return
        await asyncio.sleep(0.05)
    raise AssertionError("timed out")
