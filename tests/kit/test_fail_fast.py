"""Fail fast: a call that needs a dependency which does not answer ends within a bound, with
``UNAVAILABLE`` and the dependency's reason (``database_unavailable``, ``log_unavailable``) — never
a hang, never ``INTERNAL`` (issue 28).

Each test freezes or stops a PostgreSQL or a nats-server of its own (SIGSTOP of the postmaster and
every backend; SIGKILL of nats-server), never the session's, and lets it go again afterwards.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import grpc
import pytest

from chieu.kit import natsauth
from chieu.kit.settings import Settings
from chieu.ledger.v1 import ledger_service_pb2 as lpb
from chieu.ledger.v1 import ledger_service_pb2_grpc as lpb_grpc
from chieu.lobby.v1 import lobby_service_pb2 as pb
from chieu.lobby.v1 import lobby_service_pb2_grpc as pb_grpc
from chieu.table.client import TableClient
from chieu_tools import localnats, localpg
from tests.conftest import NATS_CREDS, PRIVATE_KEY, credential, nats_creds, token

pytestmark = pytest.mark.integration

BOUND_S = 4.0
"""The longest a call may take to fail: the pool's 2 s wait for a connection, or its 2 s statement
and 0.5 s to give the connection back; the 2 s JetStream request — with room for a loaded machine."""


def _processes(postmaster: int) -> list[int]:
    """The postmaster and its children (the backends and the auxiliary processes)."""
    out = subprocess.run(["pgrep", "-P", str(postmaster)], capture_output=True, text=True, check=False)
    return [postmaster, *(int(p) for p in out.stdout.split())]


@contextlib.contextmanager
def frozen(postmaster: int) -> Iterator[None]:
    """PostgreSQL stopped dead (SIGSTOP to every one of its processes), then let go (SIGCONT)."""
    pids = _processes(postmaster)
    for pid in pids:
        os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)


async def unavailable(call: Awaitable[Any], reason: str) -> float:
    """The seconds ``call`` took to be refused with UNAVAILABLE and ``reason``."""
    started = time.monotonic()
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await call
    took = time.monotonic() - started
    assert err.value.code() == grpc.StatusCode.UNAVAILABLE, (err.value.code(), err.value.details())
    metadata = dict(err.value.trailing_metadata() or ())
    assert metadata.get("chieu-reason") == reason, err.value.details()
    assert metadata.get("retry-after-ms"), metadata
    assert took <= BOUND_S, f"refused after {took:.2f} s"
    return took


@pytest.fixture
async def own_postgres() -> AsyncIterator[tuple[str, int]]:
    """A PostgreSQL of this test's own: its URL and its postmaster's pid."""
    base = Path(tempfile.mkdtemp(prefix="chieu-pg-frozen-"))
    server, url = localpg.start(base / "data")
    try:
        yield url, server.get_postmaster_info().process.pid
    finally:
        localpg.stop(server)
        shutil.rmtree(base, ignore_errors=True)


async def test_frozen_postgres_fails_calls_fast(settings: Settings, table_server: str, ladder_server: str,
                                                own_postgres: tuple[str, int]) -> None:
    from chieu.ledger.app import build as build_ledger
    from chieu.lobby.app import build as build_lobby

    url, postmaster = own_postgres
    ledger_settings = replace(settings, database_url=url, service_token=credential("ledger"),
                              nats_creds=nats_creds("ledger"), ledger_addr=f"127.0.0.1:{localnats.free_port()}")
    lobby_settings = replace(ledger_settings, lobby_addr=f"127.0.0.1:{localnats.free_port()}",
                             token_private_key=str(PRIVATE_KEY), service_token=credential("lobby"),
                             nats_creds=nats_creds("lobby"), lobby_ack_wait_s=2.0)
    ledger = await build_ledger(ledger_settings)
    await ledger.start()
    lobby = await build_lobby(lobby_settings)
    await lobby.start()
    lobby_channel = grpc.aio.insecure_channel(lobby_settings.lobby_addr)
    ledger_channel = grpc.aio.insecure_channel(ledger_settings.ledger_addr)
    try:
        stub = pb_grpc.LobbyServiceStub(lobby_channel)
        books = lpb_grpc.LedgerServiceStub(ledger_channel)
        session = (await stub.SignInGuest(pb.SignInGuestRequest(device_id="frozen-1"))).session
        md = (("authorization", f"Bearer {session.access_token}"),)
        await stub.GetHome(pb.GetHomeRequest(), metadata=md)
        player = (("authorization", f"Bearer {token(settings, 'p-frozen')}"),)
        await books.GetBalances(lpb.GetBalancesRequest(player_id="p-frozen"), metadata=player)
        with frozen(postmaster):
            took = [
                await unavailable(stub.SignInGuest(pb.SignInGuestRequest(device_id="frozen-2"), timeout=30),
                                  "database_unavailable"),
                await unavailable(stub.GetHome(pb.GetHomeRequest(), metadata=md, timeout=30),
                                  "database_unavailable"),
                await unavailable(stub.QuickSeat(pb.QuickSeatRequest(room_id="phom.points"), metadata=md, timeout=30),
                                  "database_unavailable"),
                await unavailable(books.GetBalances(lpb.GetBalancesRequest(player_id="p-frozen"), metadata=player,
                                                    timeout=30), "database_unavailable"),
            ]
            # calls at once, more than the pools hold: each still bounded
            many = await asyncio.gather(*(unavailable(
                books.GetBalances(lpb.GetBalancesRequest(player_id="p-frozen"), metadata=player, timeout=30),
                "database_unavailable") for _ in range(15)))
        print("refused after", [round(t, 2) for t in took], "max of 15 at once", round(max(many), 2))
        # let go: the same calls answer again, with no restart of anything
        deadline = time.monotonic() + 15
        while True:
            try:
                await books.GetBalances(lpb.GetBalancesRequest(player_id="p-frozen"), metadata=player, timeout=5)
                await stub.GetHome(pb.GetHomeRequest(), metadata=md, timeout=5)
                break
            except grpc.aio.AioRpcError:
                if time.monotonic() > deadline:
                    raise
                await asyncio.sleep(0.2)
    finally:
        await lobby_channel.close()
        await ledger_channel.close()
        await lobby.shutdown()
        await ledger.shutdown()


async def test_nats_down_fails_table_calls_fast(settings: Settings, tmp_path: Path) -> None:
    """With nats-server killed, CreateTable is refused with UNAVAILABLE (it was INTERNAL after 5.6 s);
    with it frozen too; and once NATS is back the same call succeeds."""
    from chieu.table.app import build

    port = localnats.free_port()
    extra = natsauth.server_block(NATS_CREDS.folder)
    proc, url = localnats.start(tmp_path / "nats", port, quiet=True, extra=extra)
    table_settings = replace(settings, nats_url=url, table_addr=f"127.0.0.1:{localnats.free_port()}")
    server = await build(table_settings)
    await server.start()
    client = TableClient(table_settings.table_addr, token(settings, "p-nats-down"))
    try:
        await client.create("o_an_quan")
        proc.send_signal(signal.SIGSTOP)
        try:
            await unavailable(client.create("o_an_quan"), "log_unavailable")
        finally:
            proc.send_signal(signal.SIGCONT)
        proc.kill()
        proc.wait()
        took = await unavailable(client.create("o_an_quan"), "log_unavailable")
        print(f"NATS down: refused after {took:.2f} s")
        proc, _ = localnats.start(tmp_path / "nats", port, quiet=True, extra=extra)
        deadline = time.monotonic() + 20
        while True:
            try:
                await client.create("o_an_quan")
                break
            except grpc.aio.AioRpcError as e:
                assert e.code() == grpc.StatusCode.UNAVAILABLE, e.details()
                if time.monotonic() > deadline:
                    raise
                await asyncio.sleep(0.2)
    finally:
        await client.close()
        await server.shutdown()
        localnats.stop(proc)


async def test_a_busy_pool_is_waited_for_not_refused(own_postgres: tuple[str, int]) -> None:
    """A pool whose connections are all in use while the database answers is a queue, not an
    outage: a call waits for a connection beyond the 2 s an unanswering database gets (the ledger's
    50 postings at once on 20 connections did, on a loaded machine)."""
    from chieu.kit import db

    url, _ = own_postgres
    pool = await db.create_pool(url, max_size=1)
    try:
        async def busy() -> None:
            async with pool.acquire() as conn:
                for _ in range(6):
                    await conn.execute("SELECT pg_sleep(0.5)")  # answering, one statement at a time

        holder = asyncio.create_task(busy())
        await asyncio.sleep(0.2)
        started = time.monotonic()
        async with pool.acquire() as conn:
            assert await conn.fetchval("SELECT 1") == 1
        assert time.monotonic() - started > db.ACQUIRE_TIMEOUT_S
        await holder
    finally:
        await pool.close()
