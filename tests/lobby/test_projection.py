"""The table-list projection as its own OS process, SIGKILLed mid-projection (between a commit and
its acknowledgement, batch after batch): a second projector on the same durable catches up, and
every table's line equals the fold of the whole table log, none missing, none twice."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
from typing import Any

import pytest

from chieu.kit import db, names
from chieu.kit.settings import Settings
from chieu.lobby import projection
from chieu.lobby.projection import Line, Projection
from chieu.lobby.rooms import Rooms
from chieu.lobby.schema import MIGRATIONS
from chieu.table.client import TableClient
from chieu.table.v1 import log_pb2
from chieu.table.v1 import table_service_pb2 as tpb
from tests.conftest import nats_connect, nats_creds, new_database, token
from tests.lobby.conftest import uid, until

pytestmark = pytest.mark.integration

CHILD = textwrap.dedent("""
    import asyncio, sys
    from chieu.kit import natsauth
    from chieu.lobby.projection import Projection

    async def main():
        nc = await natsauth.connect_url(sys.argv[1], "child", creds=sys.argv[4])
        async def slow(msgs):
            await asyncio.sleep(0.05)  # a kill here: committed, not acknowledged
        p = Projection(sys.argv[2], nc.jetstream(), durable=sys.argv[3], batch=4, ack_wait_s=1.0, after_commit=slow,
                       applied_by="child")
        await p.start()
        await asyncio.Event().wait()

    asyncio.run(main())
""")


def start_child(nats_url: str, url: str, durable: str) -> subprocess.Popen[bytes]:
    """The projection alone in its own OS process (as the test-only admin: its durable is not the lobby's)."""
    return subprocess.Popen([sys.executable, "-c", CHILD, nats_url, url, durable, nats_creds("admin")],
                            env={**os.environ, "CHIEU_LOG_LEVEL": "warning"})


async def fresh_database(database_url: str) -> str:
    url = await new_database(database_url, uid("lobby_kill_"))
    pool = await db.create_pool(url, max_size=2)
    async with pool.acquire() as c:
        await db.migrate(c, "lobby", MIGRATIONS)
    await Rooms(pool).load_defaults()
    await pool.close()
    return url


async def activity(settings: Settings, n: int) -> None:
    """``n`` tables: created, seated, some emptied again."""
    clients = [TableClient(settings.table_addr, token(settings, uid("k"))) for _ in range(3)]
    try:
        for i in range(n):
            t = (await clients[0].create("phom")).table_id
            await clients[1].sit(t)
            if i % 3 == 0:
                await clients[2].sit(t)
            if i % 4 == 0:
                for c in clients[:2]:
                    await c.stub.StandUp(tpb.StandUpRequest(table_id=t, command_id=uid()), metadata=c.metadata)
    finally:
        for c in clients:
            await c.close()


async def expected(js: Any, last: int) -> tuple[dict[str, Line], int]:
    """The fold of the whole table log up to ``last``, and how many records change the list."""
    lines: dict[str, Line] = {}
    relevant = 0
    sub = await js.subscribe(names.TABLES.subjects, ordered_consumer=True)
    try:
        while True:
            msg = await sub.next_msg(timeout=5)
            rec = log_pb2.Record.FromString(msg.data)
            if projection.relevant(rec):
                relevant += 1
                line = projection.fold(lines.get(rec.table_id), rec, lambda _l: "")
                if line is not None:
                    lines[rec.table_id] = line
            if msg.metadata.sequence.stream >= last:
                return lines, relevant
    finally:
        await sub.unsubscribe()


async def test_a_projector_killed_midway_leaves_nothing_missing_or_twice(
        settings: Settings, table_server: str, database_url: str) -> None:
    url = await fresh_database(database_url)
    durable = uid("lobby-kill-")
    nc = await nats_connect(settings.nats_url)
    js = nc.jetstream()
    await activity(settings, 24)
    child = start_child(settings.nats_url, url, durable)
    pool = await db.create_pool(url, max_size=4)
    second: Projection | None = None
    try:
        more = asyncio.create_task(activity(settings, 12))
        await until(lambda: pool.fetchval("SELECT count(*) > 8 FROM lobby_inbox WHERE applied_by = 'child'"), 60)
        child.send_signal(signal.SIGKILL)
        child.wait(10)
        await more
        killed_at = await pool.fetchval("SELECT count(*) FROM lobby_inbox")
        last = (await js.stream_info(names.TABLES.name)).state.last_seq
        second = Projection(url, js, durable=durable, batch=64, ack_wait_s=1.0, applied_by="second")
        await second.start()

        async def caught_up() -> bool:
            info = await js.consumer_info(names.TABLES.name, durable)
            return bool(info.num_pending == 0 and info.num_ack_pending == 0 and info.delivered.stream_seq >= last)

        await until(caught_up, 60)
        want, relevant = await expected(js, last)
        rows = {r["table_id"]: projection.line_of(r) for r in await pool.fetch(
            f"SELECT {projection.COLUMNS} FROM lobby_tables")}
        assert set(rows) == set(want)
        for table_id, line in want.items():
            got = rows[table_id]
            assert (got.seats, got.host, got.status, got.hand_no, got.version, got.stake) == \
                   (line.seats, line.host, line.status, line.hand_no, line.version, line.stake), table_id
        inbox = await pool.fetchval("SELECT count(*) FROM lobby_inbox WHERE seq <= $1", last)
        assert inbox == relevant  # every change once (the inbox's key is the stream sequence)
        assert 8 < killed_at < relevant
        by = {r["applied_by"]: r["n"] for r in await pool.fetch(
            "SELECT applied_by, count(*) AS n FROM lobby_inbox GROUP BY applied_by")}
        assert by.get("child", 0) > 0 and by.get("second", 0) > 0
    finally:
        if child.poll() is None:
            child.kill()
        if second is not None:
            await second.stop()
        await pool.close()
        await nc.close()
