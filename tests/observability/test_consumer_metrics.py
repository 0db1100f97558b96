"""The consumer metrics of the ledger's exactly-once path, on a real stream and PostgreSQL: a
message committed but not acknowledged (a crash) comes back as a redelivery that the inbox
catches; a settlement published again after the duplicate window is caught by its posting id;
the lag gauge reads the durable's pending messages."""

from __future__ import annotations

import asyncio

from prometheus_client import REGISTRY

from chieu.games.core import Transfer
from chieu.ledger import books as b
from chieu.ledger.books import Books
from tests.ledger.conftest import CrashAfterCommit, Log, settlement, uid, until


def sample(name: str, durable: str) -> float:
    return REGISTRY.get_sample_value(name, {"durable": durable}) or 0.0


def postings(kind: str) -> float:
    return REGISTRY.get_sample_value("chieu_ledger_postings_total", {"kind": kind}) or 0.0


async def test_a_redelivery_caught_by_the_inbox_is_counted(books: Books, tlog: Log) -> None:
    a, c, t = uid("a"), uid("c"), uid("crash")
    crash = CrashAfterCommit(t)
    crashes = crash.crashes

    durable = uid("d")
    posted_before = postings("settlement")
    first = tlog.consumer(books, durable, after_commit=crash, metrics_every_s=0.1)
    await first.start()
    await tlog.publish(t, [settlement("phom", [a, c], [Transfer(0, 1, 5, "u")], stake=1, coins=False)])
    await until(lambda: asyncio.sleep(0, bool(crashes)))
    await first.stop()
    # committed, so counted, though never acknowledged (the counter is the process's: other tests'
    # tables settling by their clocks in the background may add to it, never take from it)
    assert postings("settlement") >= posted_before + 1
    assert await books.balance(b.player(b.points("phom"), c)) == 5
    assert sample("chieu_consumer_redeliveries_total", durable) == 0
    hits = sample("chieu_consumer_inbox_hits_total", durable)
    second = tlog.consumer(books, durable, metrics_every_s=0.1)
    await second.start()
    try:
        await until(lambda: asyncio.sleep(0, sample("chieu_consumer_inbox_hits_total", durable) == hits + 1))
        # the lag gauges come from the consumer info: nothing left once the redelivery is acknowledged
        await until(lambda: asyncio.sleep(0, sample("chieu_consumer_ack_pending", durable) == 0
                                          and sample("chieu_consumer_lag", durable) == 0))
    finally:
        await second.stop()
    assert sample("chieu_consumer_redeliveries_total", durable) == 1
    assert await books.balance(b.player(b.points("phom"), c)) == 5  # posted once
    assert await books.balance(b.player(b.points("phom"), a)) == -5


async def test_the_same_settlement_under_a_new_sequence_is_an_inbox_hit(books: Books, tlog: Log) -> None:
    a, c, t = uid("a"), uid("c"), uid("dup")
    s = settlement("phom", [a, c], [Transfer(0, 1, 4, "chot")], stake=2, coins=False)
    durable = uid("d")
    consumer = tlog.consumer(books, durable)
    posted_before = postings("settlement")
    await consumer.start()
    try:
        await tlog.publish(t, [s], msg_id=f"{t}-cmd")
        await until(lambda: asyncio.sleep(0, consumer.posted == 1))
        # (a new durable reads the shared test stream from its start: what earlier tests applied is seen)
        hits = sample("chieu_consumer_inbox_hits_total", durable)
        await asyncio.sleep(1.5)  # past the test stream's duplicate window (1 s): a new sequence
        await tlog.publish(t, [s], msg_id=f"{t}-cmd")
        await until(lambda: asyncio.sleep(0, sample("chieu_consumer_inbox_hits_total", durable) == hits + 1))
    finally:
        await consumer.stop()
    assert postings("settlement") >= posted_before + 1
    assert await books.balance(b.player(b.points("phom"), c)) == 8  # posted once: 4 × stake 2
    assert sample("chieu_consumer_redeliveries_total", durable) == 0


async def test_the_lag_is_the_pending_messages(books: Books, tlog: Log) -> None:
    """Messages published before the durable is read are its lag; the gauge follows them to 0."""
    durable = uid("d")
    consumer = tlog.consumer(books, durable, metrics_every_s=0.1)
    await tlog.js.add_consumer(tlog.stream, durable_name=durable, ack_policy="explicit", deliver_policy="all")
    info = await tlog.js.consumer_info(tlog.stream, durable)
    for _ in range(3):
        await tlog.publish(uid("t"), [settlement("phom", [uid("a"), uid("c")], [Transfer(0, 1, 1, "u")], stake=1,
                                                 coins=False)])
    await consumer.metrics.refresh(tlog.js, tlog.stream)
    assert sample("chieu_consumer_lag", durable) == info.num_pending + 6  # three hands: a start and a settlement each
    await consumer.start()
    try:
        await until(lambda: asyncio.sleep(0, sample("chieu_consumer_lag", durable) == 0))
    finally:
        await consumer.stop()
