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

An operator retries parked records after a fix (``chieu ledger-parked retry``, :func:`chieu.ledger.consumer.retry`):
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
from chieu.ledger import books as b

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
    n = await b.parked_open(pool)
    metrics.LEDGER_PARKED_OPEN.set(n)
    return n


async def park(pool: Any, *, stream: str, seq: int, subject: str, table_id: str, posting_id: str | None,
               data: bytes, error: BaseException, deliveries: int, applied_by: str,
               ended: Sequence[int] = ()) -> None:
    """Park one message: its parked row and its inbox row (``parked:<error>``, the table's mark
    raised) in one transaction, then counted and logged once. Raises if the books cannot be
    written (the message then waits like any other)."""
    name, text = describe(error)
    await b.park(pool, stream, seq, subject, table_id, posting_id, data, name, text, deliveries, applied_by, ended)
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
    rows = await b.parked_rows(pool, all_rows=all_rows, limit=limit)
    return [Parked(**dict(r)) for r in rows]


@dataclass(frozen=True, slots=True)
class Retried:
    """What a retry did with one parked record: ``posted``, ``seen`` (posted before) or
    ``parked`` (it failed again: ``error``)."""

    stream: str
    seq: int
    outcome: str
    error: str = ""
