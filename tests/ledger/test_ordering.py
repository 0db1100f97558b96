"""One table's settlements are posted in stream order whatever the number of consumers.

Two consumers on one durable, one of them slow (it holds each message before its transaction):
without the order check the fast one would post a table's later hands first — a capped loser
would pay from the wrong balance, a gà pot would pay before it was fed. The scripts (see
script.py) make every hand depend on the ones before; the result must be exactly the
single-consumer result: the in-order model's balances and transfers, and what a real single
consumer posts for the same script. A control run with the order check switched off must differ
(so the scenario really races).
"""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest

from chieu.kit import db
from chieu.ledger import books as b
from chieu.ledger.books import Books
from chieu.ledger.consumer import SettlementConsumer
from tests.conftest import nats_connect

from .conftest import Log, settlement, uid, until
from .script import Script, fund_postings, table_script

pytestmark = pytest.mark.integration

TABLES = 4
HANDS = 3  # 3 settlements per hand: 9 order-dependent records per table


async def publish(tlog: Log, group: str, scripts: list[Script]) -> list[int]:
    """Every script's records, the tables interleaved (as many tables playing at once)."""
    seqs = []
    for i in range(max(len(s.settlements) for s in scripts)):
        for s in scripts:
            if i < len(s.settlements):
                seqs.append(await tlog.publish(s.table_id, [s.settlements[i]], version=i + 1,
                                               subject=f"{group}.{s.table_id}"))
    return seqs


async def books_state(books: Books, scripts: list[Script]) -> list[tuple[dict[str, int], dict[str, Any]]]:
    out = []
    for s in scripts:
        balances = {a: await books.balance(a) or 0 for a in s.accounts()}
        rows = await books.pool.fetch("SELECT id, debit, credit, amount, owed FROM ledger_transfers"
                                      " WHERE table_id = $1", s.table_id)
        out.append((balances, {r["id"]: (r["debit"], r["credit"], r["amount"], r["owed"]) for r in rows}))
    return out


def expected(scripts: list[Script]) -> list[tuple[dict[str, int], dict[str, Any]]]:
    return [({a: s.model.balances.get(a, 0) for a in s.accounts()}, s.model.transfers) for s in scripts]


async def run(books: Books, tlog: Log, database_url: str, nats_url: str, *, consumers: int, seed: int,
              ordered: bool = True) -> tuple[list[Script], list[tuple[dict[str, int], dict[str, Any]]], int, list[int]]:
    rng = random.Random(seed)
    scripts = [table_script(rng, coins=True, hands=HANDS, prefix="ord") for _ in range(TABLES)]
    for p in fund_postings(scripts):
        await books.post(p)
    group = uid("g")
    seqs = await publish(tlog, group, scripts)
    durable = uid("d")
    nc2 = await nats_connect(nats_url)  # admin: the test's own stream and durable
    pool2 = await db.create_pool(database_url, max_size=2)

    async def slow(msg: Any) -> None:
        await asyncio.sleep(0.15)

    made = [tlog.consumer(books, durable, batch=1, subjects=f"{tlog.prefix}.{group}.>", before_apply=slow)]
    if consumers == 2:
        made.append(SettlementConsumer(Books(pool2), nc2.jetstream(), durable=durable, stream=tlog.stream,
                                       subjects=f"{tlog.prefix}.{group}.>", batch=1, ack_wait_s=5.0))
    if not ordered:  # the control: every message looks as if all before it were done
        for c in made:
            c.floor = 1 << 60
    try:
        for c in made:
            await c.start()

        async def all_seen() -> bool:
            n = await books.pool.fetchval("SELECT count(*) FROM ledger_inbox WHERE stream = $1 AND seq = ANY($2)",
                                          tlog.stream, seqs)
            return bool(n == len(seqs))

        await until(all_seen, 60)
    finally:
        for c in made:
            await c.stop()
        await pool2.close()
        await nc2.close()
    return scripts, await books_state(books, scripts), sum(c.waited for c in made), seqs


async def test_two_consumers_give_the_single_consumer_result(books: Books, tlog: Log, database_url: str,
                                                             nats_url: str) -> None:
    single, got_single, _, _ = await run(books, tlog, database_url, nats_url, consumers=1, seed=7)
    two, got_two, waited, seqs = await run(books, tlog, database_url, nats_url, consumers=2, seed=7)
    # the same script (same seed): the model is the same up to names, and both runs reach it exactly
    assert [list(s.model.balances.values()) for s in single] == [list(s.model.balances.values()) for s in two]
    assert got_single == expected(single)
    assert got_two == expected(two)
    assert waited > 0  # the fast consumer did meet later hands of a table before earlier ones
    capped = sum(1 for s in two for t in s.model.transfers if "/pay/" in t)
    ga_wins = sum(1 for s in two for st in s.settlements for t in st.transfers if t.reason == "ga_win")
    assert capped > 0 and ga_wins > 0  # the scripts do depend on order
    assert await books.pool.fetchval(
        "SELECT count(*) FROM ledger_inbox WHERE stream = $1 AND seq = ANY($2) AND outcome = 'posted'",
        tlog.stream, seqs) == len(seqs)
    _, _, problems = await books.audit()
    assert problems == []


async def test_without_the_order_check_the_result_differs(books: Books, tlog: Log, database_url: str,
                                                          nats_url: str) -> None:
    """The control: the same race with the order check off posts hands out of order (so the test
    above can fail)."""
    scripts, got, _, _ = await run(books, tlog, database_url, nats_url, consumers=2, seed=7, ordered=False)
    assert got != expected(scripts)


async def test_a_pot_paying_before_it_is_fed_is_refused(books: Books, tlog: Log) -> None:
    """In stream order a gà pot short of what it pays is a bug upstream: refused, recorded, acknowledged."""
    from chieu.games.core import Transfer

    t, p = uid("pot"), uid("p")
    seq = await tlog.publish(t, [settlement("phom", [p, uid()], [Transfer(None, 0, 3, "ga_win")], stake=10,
                                            coins=True)])
    consumer = tlog.consumer(books)
    await consumer.start()
    try:
        async def recorded() -> bool:
            return bool(await books.pool.fetchval("SELECT outcome FROM ledger_inbox WHERE stream = $1 AND seq = $2",
                                                  tlog.stream, seq))

        await until(recorded)
    finally:
        await consumer.stop()
    assert await books.pool.fetchval("SELECT outcome FROM ledger_inbox WHERE stream = $1 AND seq = $2",
                                     tlog.stream, seq) == "refused:pot_short"
    assert await books.balance(b.player(b.COINS, p)) is None
