"""Records the ledger cannot post, parked instead of redelivered for ever (a dead letter).

A message of the table log whose posting fails is either *waiting* or *poison*:

- **waiting** (:func:`transient`): the books cannot be reached or are busy — PostgreSQL down or
  restarting, a connection lost, a serialization failure, a timeout. The message stays
  unacknowledged and comes back after the durable's ack wait, as long as it takes: the stream
  must wait for the books, never skip them. One log line per try, no traceback.
- **poison**: the record itself cannot be posted — an amount past ``bigint``, a value PostgreSQL
  refuses, a record that does not parse (:func:`poison`), or an unexpected error still there after
  :data:`MAX_DELIVERIES` deliveries. It is *parked*: a row of ``ledger_parked`` keeps the record's
  bytes and the error, the inbox row says ``parked:<error>`` and raises the table's mark (so the
  table's later settlements are posted), the message is acknowledged, one line is logged at error,
  ``chieu_ledger_parked_total`` counts it and ``chieu_ledger_parked`` shows how many wait for an
  operator (alert ``ChieuLedgerParkedRecords``). The consumer goes on with the next message.

An operator retries parked records after a fix (``chieu ledger-parked retry``, :func:`retry`):
each is posted in one transaction with its inbox row turned to ``posted`` and its parked row
closed, so a record is posted once however often it is retried; one that fails again stays
parked with its new error. ``chieu audit`` lists parked records as ``settlement_parked``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import asyncpg
from google.protobuf.message import DecodeError

from chieu.kit import logs, metrics
from chieu.kit.errors import ServiceError

log = logs.get("chieu.ledger.parked")

MAX_DELIVERIES = 5
"""Deliveries after which an error that is neither waiting nor poison parks the record."""
TRANSIENT_SQLSTATES = ("08", "40", "53", "57", "58")
"""PostgreSQL error classes that pass: connection (08), transaction rollback — serialization,
deadlock (40), insufficient resources (53), operator intervention — shutdown, starting (57),
system error (58)."""
ERROR_CHARS = 500
"""What a parked row and the log keep of an error's text."""

SCHEMA = """
-- records of the table log the ledger could not post (a dead letter): their bytes and the error,
-- kept for an operator to retry after a fix (chieu ledger-parked); resolved once posted
CREATE TABLE ledger_parked (
    stream      text        NOT NULL,
    seq         bigint      NOT NULL,
    subject     text        NOT NULL,
    table_id    text        NOT NULL,
    data        bytea       NOT NULL,
    error       text        NOT NULL,
    message     text        NOT NULL,
    deliveries  integer     NOT NULL,
    tries       integer     NOT NULL DEFAULT 0,
    parked_at   timestamptz NOT NULL DEFAULT now(),
    resolved_at timestamptz,
    resolved_by text,
    PRIMARY KEY (stream, seq)
);
CREATE INDEX ledger_parked_open ON ledger_parked (stream, seq) WHERE resolved_at IS NULL;
"""


def transient(e: BaseException) -> bool:
    """Whether the books are unreachable or busy (retry as long as it takes), not the record bad."""
    if isinstance(e, ValueError | ArithmeticError | TypeError | DecodeError):
        return False  # asyncpg's client-side DataError (a value past int64) is a ValueError
    if isinstance(e, OSError | TimeoutError | asyncio.TimeoutError | asyncpg.InterfaceError):
        return True
    if isinstance(e, asyncpg.PostgresError):
        return str(getattr(e, "sqlstate", "") or "")[:2] in TRANSIENT_SQLSTATES
    return type(e).__module__.startswith("nats")


def poison(e: BaseException) -> bool:
    """Whether the record itself can never be posted as it is: a data error (PostgreSQL's class
    22 — a value out of range — or 23, a constraint), a value Python or the driver refuses, a
    record that does not parse."""
    if isinstance(e, ValueError | ArithmeticError | TypeError | DecodeError):
        return True
    if isinstance(e, asyncpg.PostgresError):
        return str(getattr(e, "sqlstate", "") or "")[:2] in ("22", "23")
    return False


def describe(e: BaseException) -> tuple[str, str]:
    """The error's stable name and its text, bounded."""
    name = e.reason if isinstance(e, ServiceError) else type(e).__name__
    return name[:64], str(e).replace("\n", " ")[:ERROR_CHARS]


async def count_open(pool: Any) -> int:
    """How many parked records wait (and ``chieu_ledger_parked_open`` set to it)."""
    n = int(await pool.fetchval("SELECT count(*) FROM ledger_parked WHERE resolved_at IS NULL") or 0)
    metrics.LEDGER_PARKED_OPEN.set(n)
    return n


async def park(pool: Any, *, stream: str, seq: int, subject: str, table_id: str, posting_id: str | None,
               data: bytes, error: BaseException, deliveries: int, applied_by: str) -> None:
    """Park one message: its parked row and its inbox row (``parked:<error>``, the table's mark
    raised) in one transaction, then counted and logged once. Raises if the books cannot be
    written (the message then waits like any other)."""
    from chieu.ledger.consumer import INBOX

    name, text = describe(error)
    async with pool.acquire() as conn, conn.transaction():
        await conn.execute(
            "INSERT INTO ledger_parked (stream, seq, subject, table_id, data, error, message, deliveries)"
            " VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT DO NOTHING",
            stream, seq, subject, table_id, data, name, text, deliveries)
        await conn.fetchval(INBOX, stream, seq, posting_id, f"parked:{name}", table_id, applied_by)
    metrics.LEDGER_PARKED.inc()
    log.error("settlement parked: it cannot be posted; chieu ledger-parked retry after a fix",
              stream=stream, seq=seq, table_id=table_id, error=name, message=text, deliveries=deliveries)
    await count_open(pool)


@dataclass(frozen=True, slots=True)
class Parked:
    """One parked record as an operator sees it."""

    stream: str
    seq: int
    table_id: str
    error: str
    message: str
    deliveries: int
    tries: int
    parked_at: datetime
    resolved_at: datetime | None
    resolved_by: str | None


async def listed(pool: Any, *, all_rows: bool = False, limit: int = 1000) -> list[Parked]:
    """The parked records, oldest first (only those not yet posted unless ``all_rows``)."""
    rows = await pool.fetch(
        "SELECT stream, seq, table_id, error, message, deliveries, tries, parked_at, resolved_at, resolved_by"
        " FROM ledger_parked" + ("" if all_rows else " WHERE resolved_at IS NULL") +
        " ORDER BY parked_at, stream, seq LIMIT $1", limit)
    return [Parked(**dict(r)) for r in rows]


@dataclass(frozen=True, slots=True)
class Retried:
    """What a retry did with one parked record: ``posted``, ``seen`` (posted before) or
    ``parked`` (it failed again: ``error``)."""

    stream: str
    seq: int
    outcome: str
    error: str = ""


async def retry(books: Any, *, seqs: Sequence[int] = (), stream: str = "", actor: str = "operator") -> list[Retried]:
    """Post the parked records again (``seqs``: only those; empty: every open one), each in its own
    transaction: the postings, the hand starts the record carries, the inbox row turned to
    ``posted`` and the parked row closed by ``actor``. One that fails again stays parked (its
    tries counted, its error replaced); one posted already is not posted twice."""
    from chieu.ledger import books as b
    from chieu.ledger import consumer as c
    from chieu.table.v1 import log_pb2

    stream = stream or c.STREAM
    wanted = list(seqs) or [r.seq for r in await listed(books.pool) if r.stream == stream]
    done: list[Retried] = []
    for seq in wanted:
        try:
            async with books.pool.acquire() as conn, conn.transaction():
                row = await conn.fetchrow("SELECT table_id, data FROM ledger_parked WHERE stream = $1 AND seq = $2"
                                          " AND resolved_at IS NULL FOR UPDATE", stream, seq)
                if row is None:
                    done.append(Retried(stream, seq, "seen"))
                    continue
                record = log_pb2.Record.FromString(row["data"])
                settlements = [e.settlement for e in record.events if e.WhichOneof("kind") == "settlement"]
                hands = [e.hand_started for e in record.events if e.WhichOneof("kind") == "hand_started"]
                postings = [p for p in (c.settlement_posting(row["table_id"], s) for s in settlements) if p is not None]
                for p in postings:
                    b.validate(p)
                await c.account(conn, stream, row["table_id"], [s for s in settlements if s.transfers], hands)
                for h in hands:
                    await c.remember_hand(conn, stream, row["table_id"], seq, h)
                for p in postings:
                    await books.post(p, conn=conn)
                await conn.execute("UPDATE ledger_inbox SET outcome = $3 WHERE stream = $1 AND seq = $2",
                                   stream, seq, "posted" if postings else "hand")
                await conn.execute("UPDATE ledger_parked SET resolved_at = now(), resolved_by = $3, tries = tries + 1"
                                   " WHERE stream = $1 AND seq = $2", stream, seq, actor)
            done.append(Retried(stream, seq, "posted"))
            log.info("parked settlement posted", stream=stream, seq=seq, by=actor)
        except Exception as e:  # every failure is reported, and the record stays parked
            name, text = describe(e)
            await books.pool.execute("UPDATE ledger_parked SET tries = tries + 1, error = $3, message = $4"
                                     " WHERE stream = $1 AND seq = $2", stream, seq, name, text)
            done.append(Retried(stream, seq, "parked", f"{name}: {text}"))
            log.error("parked settlement failed again", stream=stream, seq=seq, error=name, message=text)
    await count_open(books.pool)
    return done
