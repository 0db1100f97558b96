"""A server fault costs players nothing (issue 28): the table service's own stop writes no
``ConnectionLost`` for the players it was serving, and the time no process served a table is not
counted against a lost player's reconnect grace — so a stack restart mid-hand writes no
``Disconnected`` (auto-play, and a reputation penalty at the ladder) for anyone.

Each test runs its own table server, stops it mid-hand as ``./chieu up`` does (SIGTERM's graceful
shutdown), waits longer than the table's grace and starts it again — on a NATS of this module's
own: a restarted server resumes every table marked active on its NATS, and on the session's those
are the thousands of tables other tests left mid-hand (their loading and their writes are no part
of these tests).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from chieu.kit import names, natsauth
from chieu.kit.eventstore import EventStore
from chieu.kit.server import Server
from chieu.kit.settings import Settings
from chieu.table.client import TableClient
from chieu.table.v1 import log_pb2
from chieu.table.v1 import table_service_pb2 as pb
from chieu_tools import localnats
from tests.conftest import NATS_AUTH, NATS_CREDS, nats_connect, token

pytestmark = pytest.mark.integration

GRACE_S = 2


async def events(url: str, table_id: str) -> list[str]:
    """The kinds of every event in the table's log from the hand's start, in order (before it, the
    players' seats, taken with no stream open, started their idle stands: not this file's subject)."""
    nc = await nats_connect(url)
    try:
        store = EventStore(nc, stream=names.TABLES)
        kinds = [e.WhichOneof("kind") or "" for stored in await store.read(table_id)
                 for e in log_pb2.Record.FromString(stored.data).events]
        return kinds[kinds.index("hand_started"):] if "hand_started" in kinds else kinds
    finally:
        await nc.close()


async def until(check: Any, within: float = 10.0) -> None:
    deadline = time.monotonic() + within
    while not await check():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.05)


@contextlib.asynccontextmanager
async def watching(client: TableClient, table_id: str) -> AsyncIterator[list[int]]:
    """A watch stream held open in the background: the player is present; the versions it saw."""
    seen: list[int] = []

    async def run() -> None:
        with contextlib.suppress(Exception):
            async for view in client.watch(table_id):
                seen.append(view.version)

    task = asyncio.create_task(run())
    try:
        yield seen
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


async def started(settings: Settings) -> Server:
    from chieu.table.app import build

    server = await build(settings)
    await server.start()
    return server


async def a_hand(settings: Settings) -> tuple[Server, TableClient, TableClient, str]:
    """A table server, and an Ô ăn quan hand under way between two players (grace 2 s)."""
    server = await started(settings)
    tag = uuid.uuid4().hex[:8]
    a = TableClient(settings.table_addr, token(settings, f"fault-a-{tag}"))
    b = TableClient(settings.table_addr, token(settings, f"fault-b-{tag}"))
    table_id = (await a.create("o_an_quan", reconnect_grace_s=GRACE_S)).table_id  # its creator sits
    await b.sit(table_id)
    await a.start(table_id)
    return server, a, b, table_id


@pytest.fixture(scope="module")
def module_nats(nats_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A nats-server of this module's own (the session's when that one is given from outside)."""
    if not NATS_AUTH:
        yield nats_url
        return
    proc, url = localnats.start(Path(tmp_path_factory.mktemp("fault-nats")), quiet=True,
                                extra=natsauth.server_block(NATS_CREDS.folder))
    try:
        yield url
    finally:
        localnats.stop(proc)


@pytest.fixture
def own(settings: Settings, module_nats: str) -> Settings:
    """The session's settings with this module's NATS and a table address of this test's own."""
    return replace(settings, nats_url=module_nats, table_addr=f"127.0.0.1:{localnats.free_port()}")


async def test_a_restart_mid_hand_disconnects_nobody(own: Settings) -> None:
    server, a, b, table_id = await a_hand(own)
    try:
        async with watching(a, table_id) as seen_a, watching(b, table_id) as seen_b:
            await until(lambda: asyncio.sleep(0, bool(seen_a and seen_b)))
            await server.shutdown()  # the streams close under the players: the server's doing
        assert "connection_lost" not in await events(own.nats_url, table_id)
        await asyncio.sleep(GRACE_S + 1.5)  # down for longer than the grace
        server = await started(own)
        async with watching(a, table_id) as seen_a, watching(b, table_id) as seen_b:
            await until(lambda: asyncio.sleep(0, bool(seen_a and seen_b)))
            await asyncio.sleep(GRACE_S + 0.5)  # a grace that was running would run out now
            view = await a.get(table_id)
            kinds = await events(own.nats_url, table_id)  # (read while both still watch)
        assert "disconnected" not in kinds and "connection_lost" not in kinds, kinds
        assert view.status == pb.TABLE_STATUS_PLAYING
    finally:
        await server.shutdown()
        await a.close()
        await b.close()


async def test_a_loss_during_an_outage_is_not_held_against_the_player(own: Settings) -> None:
    """The stack stops gateway first (``./chieu up``'s order): the players' streams close before the
    table service stops, so their losses are written (grace 2 s); the stack stays down longer than
    the grace. The restarted table service moves the graces later by its absence, and the players,
    back within them, are Reconnected, not Disconnected (it was Disconnected, auto-play and a
    reputation penalty at the ladder, in issue 28)."""
    server, a, b, table_id = await a_hand(own)
    try:
        async with watching(a, table_id) as seen_a, watching(b, table_id) as seen_b:
            await until(lambda: asyncio.sleep(0, bool(seen_a and seen_b)))
        await until(lambda: _count(own.nats_url, table_id, "connection_lost", 2))  # the gateway went first
        await server.shutdown()
        await asyncio.sleep(GRACE_S + 1.5)  # the graces ran out while no server ran
        server = await started(own)
        async with watching(a, table_id) as seen_a, watching(b, table_id) as seen_b:
            await until(lambda: asyncio.sleep(0, bool(seen_a and seen_b)))
            await until(lambda: _count(own.nats_url, table_id, "reconnected", 2))
            kinds = await events(own.nats_url, table_id)  # (read while both still watch)
        assert "disconnected" not in kinds, kinds
        assert kinds.count("connection_lost") == 4, kinds  # the two losses, then their graces moved later
    finally:
        await server.shutdown()
        await a.close()
        await b.close()


async def _count(url: str, table_id: str, kind: str, n: int) -> bool:
    return (await events(url, table_id)).count(kind) >= n
