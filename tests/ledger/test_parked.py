"""A record the ledger cannot post is parked, not redelivered for ever (issue 32, attack 1), on a
real nats-server and PostgreSQL: a poison settlement (9e18 stake units at stake 10: past
PostgreSQL's bigint) is parked once — its bytes and error kept, one log line, counted — and the
consumer goes on: the next honest settlement of the same table and of another posts. An operator
retries parked records after a fix (``chieu ledger-parked retry``): posted exactly once, however
often retried; one that still cannot post stays parked. A transient outage (the books
unreachable) is never parked: the message waits and posts once the books are back. ``chieu
audit`` names each parked record (``settlement_parked``)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from typing import Any

import asyncpg
import pytest

from chieu.audit.logs import Logs
from chieu.audit.money import reconcile
from chieu.audit.report import Report
from chieu.games.core import Transfer
from chieu.kit import db, metrics
from chieu.ledger import books as b
from chieu.ledger import parked
from chieu.ledger.books import Books
from chieu.ledger.consumer import retry

from .conftest import Log, settlement, uid, until

pytestmark = pytest.mark.integration

POISON = 9 * 10**18
"""Phỏm's ``amounts.wrongAccusation`` of the attack: it fits the log's int64, not × stake 10."""


async def open_parked(pool: asyncpg.Pool, stream: str) -> list[Any]:
    return list(await pool.fetch("SELECT seq, table_id, error, deliveries, tries, resolved_at FROM ledger_parked"
                                 " WHERE stream = $1 AND resolved_at IS NULL ORDER BY seq", stream))


async def posted(books: Books, pid: str) -> bool:
    return bool(await books.pool.fetchval("SELECT count(*) FROM ledger_postings WHERE id = $1", pid))


def parked_total() -> float:
    return float(metrics.LEDGER_PARKED._value.get())


async def test_a_poison_record_is_parked_once_and_the_consumer_goes_on(books: Books, tlog: Log,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    table, other = uid("poison"), uid("honest")
    a, c = uid("acc"), uid("vic")
    before = parked_total()
    consumer = tlog.consumer(books, ack_wait_s=1.0)
    await consumer.start()
    try:
        bad = await tlog.publish(table, [settlement("phom", [a, c], [Transfer(0, 1, POISON, "wrong_accusation")],
                                                    stake=10, coins=False)])
        await tlog.publish(table, [settlement("phom", [a, c], [Transfer(0, 1, 5, "u")], stake=10, coins=False,
                                              hand_no=2)], version=2)
        await tlog.publish(other, [settlement("phom", [a, c], [Transfer(1, 0, 3, "u")], stake=10, coins=False)])
        await until(lambda: posted(books, f"{table}/2/0"))
        await until(lambda: posted(books, f"{other}/1/0"))
        await asyncio.sleep(3.0)  # three ack waits: a redelivery would show now
    finally:
        await consumer.stop()
    out = capsys.readouterr().out
    assert out.count("settlement parked") == 1 and "Traceback" not in out  # one line, once
    rows = await open_parked(books.pool, tlog.stream)
    assert [(r["seq"], r["table_id"], r["error"], r["deliveries"]) for r in rows] == [(bad, table, "DataError", 1)]
    inbox = await books.pool.fetchval("SELECT outcome FROM ledger_inbox WHERE stream = $1 AND seq = $2",
                                      tlog.stream, bad)
    assert inbox == "parked:DataError"
    assert parked_total() == before + 1
    assert not await posted(books, f"{table}/1/0")
    assert await books.balance(b.player(b.points("phom"), a)) == -50 + 30
    # still parked after the "fix" that fixes nothing: retried, it fails again and stays
    done = await retry(books, seqs=[bad], stream=tlog.stream)
    assert [(d.outcome, d.error.split(":")[0]) for d in done] == [("parked", "DataError")]
    assert [r["tries"] for r in await open_parked(books.pool, tlog.stream)] == [1]


async def test_a_record_parked_by_a_bug_is_posted_exactly_once_after_the_fix(
        books: Books, tlog: Log, monkeypatch: pytest.MonkeyPatch) -> None:
    """A bug in the ledger (here: its posting raising a ValueError for one table) parks the record;
    once fixed, ``retry`` posts it, a second retry posts nothing more."""
    table, w, lo = uid("bug"), uid("w"), uid("l")
    real = Books.post

    async def buggy(self: Books, p: b.Posting, **kw: Any) -> Any:
        if p.table_id == table:
            raise ValueError("a bug: this settlement cannot be posted")
        return await real(self, p, **kw)

    monkeypatch.setattr(Books, "post", buggy)
    consumer = tlog.consumer(books)
    await consumer.start()
    try:
        seq = await tlog.publish(table, [settlement("xiangqi", [w, lo], [Transfer(1, 0, 2, "win")], stake=7,
                                                    coins=False)])

        async def is_parked() -> bool:
            return any(r["seq"] == seq for r in await open_parked(books.pool, tlog.stream))

        await until(is_parked)
    finally:
        await consumer.stop()
    monkeypatch.setattr(Books, "post", real)  # the fix
    first = await retry(books, seqs=[seq], stream=tlog.stream)
    again = await retry(books, seqs=[seq], stream=tlog.stream)
    assert [d.outcome for d in first] == ["posted"] and [d.outcome for d in again] == ["seen"]
    assert await books.balance(b.player(b.points("xiangqi"), w)) == 14
    assert await books.balance(b.player(b.points("xiangqi"), lo)) == -14
    assert await books.pool.fetchval("SELECT outcome FROM ledger_inbox WHERE stream = $1 AND seq = $2",
                                     tlog.stream, seq) == "posted"
    assert not any(r["seq"] == seq for r in await open_parked(books.pool, tlog.stream))


async def test_books_that_cannot_be_reached_park_nothing(database_url: str, books: Books, tlog: Log) -> None:
    """PostgreSQL away (a pool that cannot serve): the message waits, is redelivered, is never
    parked; with the books back it posts once."""
    table, w, lo = uid("away"), uid("w"), uid("l")
    durable = uid("d")
    away = await db.create_pool(database_url, max_size=1)
    await away.close()
    consumer = tlog.consumer(Books(away), durable=durable, ack_wait_s=1.0)
    await consumer.start()
    try:
        seq = await tlog.publish(table, [settlement("xiangqi", [w, lo], [Transfer(1, 0, 2, "win")], stake=3,
                                                    coins=False)])
        await asyncio.sleep(3.5)  # several deliveries
    finally:
        await consumer.stop()
    assert not await books.pool.fetchval("SELECT count(*) FROM ledger_parked WHERE stream = $1 AND seq = $2",
                                         tlog.stream, seq)
    back = tlog.consumer(books, durable=durable, ack_wait_s=1.0)
    await back.start()
    try:
        await until(lambda: posted(books, f"{table}/1/0"))
    finally:
        await back.stop()
    assert await books.balance(b.player(b.points("xiangqi"), w)) == 6


def test_which_errors_wait_and_which_park() -> None:
    import asyncpg.exceptions as E
    from google.protobuf.message import DecodeError

    waits = [OSError("refused"), TimeoutError(), E.CannotConnectNowError("starting"), E.AdminShutdownError("bye"),
             E.ConnectionDoesNotExistError("gone"), E.SerializationError("retry"), E.DeadlockDetectedError("dl"),
             E.TooManyConnectionsError("busy"), asyncpg.InterfaceError("pool is closing")]
    parks = [E.NumericValueOutOfRangeError("bigint out of range"), E.CheckViolationError("amount > 0"),
             E._base.DataError("value out of int64 range"), ValueError("x"), OverflowError(), DecodeError("bad")]
    assert all(parked.transient(e) and not parked.poison(e) for e in waits)
    assert all(parked.poison(e) and not parked.transient(e) for e in parks)
    assert not parked.transient(RuntimeError("unexpected")) and not parked.poison(RuntimeError("unexpected"))


async def test_the_audit_names_a_parked_record_and_the_cli_lists_and_retries_it(
        database_url: str, books: Books, tlog: Log) -> None:
    table, w, lo = uid("cli"), uid("w"), uid("l")
    s = settlement("xiangqi", [w, lo], [Transfer(1, 0, 2, "win")], stake=5, coins=False)
    from chieu.table.v1 import log_pb2

    rec = log_pb2.Record(table_id=table, version=1, command_id=uid("c"), actor="system", game="xiangqi")
    rec.events.add().hand_started.CopyFrom(log_pb2.HandStarted(hand_no=1, players=s.players, game="xiangqi", stake=5,
                                                               currency=s.currency))
    rec.events.add().settlement.CopyFrom(s)
    stream = uid("S")  # a stream of its own, so the audit sees only this record
    await parked.park(books.pool, stream=stream, seq=7, subject=f"x.{table}", table_id=table, posting_id=None,
                      data=rec.SerializeToString(), error=ValueError("a bug"), deliveries=1, applied_by="test")
    report = Report()
    async with books.pool.acquire() as conn:
        await reconcile(conn, Logs(complete=False), report, stream=stream)
    assert [(f.code, f.subject) for f in report.findings if f.code == "settlement_parked"] == [
        ("settlement_parked", f"{table} stream sequence 7")]
    env = {**os.environ, "DATABASE_URL": database_url, "CHIEU_LOCAL_ENV": "/nonexistent"}

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "chieu.cli", "ledger-parked", *args], env=env,
                              capture_output=True, text=True, timeout=60)

    listed = cli("list")
    assert listed.returncode == 0 and f"{stream} 7 table {table}: parked; ValueError: a bug" in listed.stdout
    # the CLI retries the table log's stream (a service's real one); this record's is its own
    done = await retry(books, seqs=[7], stream=stream, actor="op-1")
    assert [d.outcome for d in done] == ["posted"]
    assert await books.balance(b.player(b.points("xiangqi"), w)) == 10
    listed = cli("list", "--all")
    assert f"{stream} 7 table {table}: posted" in listed.stdout and "by op-1" in listed.stdout
    assert cli("retry", "--seq", "999999999").returncode == 0  # nothing parked there: nothing done
