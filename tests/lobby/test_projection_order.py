"""The table list stays the fold of the log when a projector dies holding a batch it never
committed: the next projector must not fold newer records of those tables first (a record older
than its line was dropped as "folded already", so a seat, a host or the whole table went missing
from the list — found by the chaos run: a seated table not listed after a NATS node was lost)."""

from __future__ import annotations

import asyncio
from typing import Any

import asyncpg
import pytest

from chieu.kit import db, names
from chieu.kit.settings import Settings
from chieu.lobby import projection
from chieu.lobby.projection import Projection
from chieu.table.client import TableClient
from tests.conftest import nats_connect, token
from tests.lobby.conftest import uid, until
from tests.lobby.test_projection import expected, fresh_database

pytestmark = pytest.mark.integration

ACK_WAIT_S = 2.0


async def test_a_batch_never_committed_is_folded_before_newer_records(
        settings: Settings, table_server: str, database_url: str) -> None:
    url = await fresh_database(database_url)
    durable = uid("lobby-order-")
    nc = await nats_connect(settings.nats_url)
    js = nc.jetstream()
    a, b, c = (TableClient(settings.table_addr, token(settings, uid(p))) for p in "abc")
    pool = await db.create_pool(url, max_size=2)
    first: Projection | None = None
    second: Projection | None = None
    try:
        table_id = (await a.create("phom")).table_id
        await b.sit(table_id)
        # the first projector takes the table's records and dies before it commits them
        subject = names.TABLES.subject(table_id)  # this table's records only
        first = Projection(url, js, durable=durable, subjects=subject, batch=256, ack_wait_s=ACK_WAIT_S,
                           applied_by="first")
        taken: list[int] = []

        async def die(conn: asyncpg.Connection[Any], msgs: list[Any]) -> None:
            taken.extend(int(m.metadata.sequence.stream) for m in msgs)
            raise asyncio.CancelledError  # the process is gone: no commit, no acknowledgement

        first._apply = die  # type: ignore[method-assign]
        await first.start()
        await until(lambda: asyncio.sleep(0, bool(taken)), 30)
        await first.stop()
        await c.sit(table_id)  # a newer record of the same table
        last = (await js.stream_info(names.TABLES.name)).state.last_seq
        second = Projection(url, js, durable=durable, subjects=subject, batch=256, ack_wait_s=ACK_WAIT_S,
                            applied_by="second")
        await second.start()

        async def caught_up() -> bool:
            info = await js.consumer_info(names.TABLES.name, durable)
            return bool(info.num_pending == 0 and info.num_ack_pending == 0 and info.delivered.stream_seq >= last)

        await until(caught_up, 60)
        want, _ = await expected(js, last)
        row = await pool.fetchrow(f"SELECT {projection.COLUMNS} FROM lobby_tables WHERE table_id = $1", table_id)
        assert row is not None, "the table is missing from the list"
        got, line = projection.line_of(row), want[table_id]
        assert (got.seats, got.host, got.status, got.version) == (line.seats, line.host, line.status, line.version)
    finally:
        for p in (first, second):
            if p is not None:
                await p.stop()
        for cl in (a, b, c):
            await cl.close()
        await pool.close()
        await nc.close()
