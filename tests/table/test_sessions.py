"""A session's end is the end of what it may do at a table: a Watch closes with UNAUTHENTICATED
when its token expires, and a session the lobby signed out is refused by the table service (its
open Watch closed too) within the revocation poll."""

from __future__ import annotations

import asyncio
import time
import uuid

import grpc
import pytest

from chieu.kit.settings import Settings
from chieu.lobby.v1 import lobby_service_pb2 as lpb
from chieu.lobby.v1 import lobby_service_pb2_grpc as lpb_grpc
from chieu.table.client import TableClient
from tests.conftest import token
from tests.table.helpers import client, reason_of, refused

pytestmark = pytest.mark.integration


async def _end_of(stream: TableClient, table_id: str) -> tuple[grpc.StatusCode, str, float]:
    """Watch until the stream ends: its status, reason and when (time.monotonic)."""
    with pytest.raises(grpc.aio.AioRpcError) as err:
        async for _ in stream.watch(table_id):
            pass
    return err.value.code(), reason_of(err.value), time.monotonic()


async def test_a_watch_ends_when_its_token_expires(settings: Settings, table_server: str) -> None:
    host = client(settings, table_server, "exp-host")
    t = await host.create("o_an_quan", {})
    short = TableClient(table_server, token(settings, "exp-watcher", ttl_s=2))
    began = time.monotonic()
    status, reason, ended = await asyncio.wait_for(_end_of(short, t.table_id), 10)
    assert (status, reason) == (grpc.StatusCode.UNAUTHENTICATED, "token_expired")
    assert 0.5 < ended - began < 4
    assert await refused(short.get(t.table_id)) == (grpc.StatusCode.UNAUTHENTICATED, "token_expired")
    fresh = TableClient(table_server, token(settings, "exp-watcher"))  # the client watches again
    assert (await fresh.get(t.table_id)).version == t.version
    for c in (host, short, fresh):
        await c.close()


async def test_a_signed_out_session_is_refused_and_its_watch_closed(
        settings: Settings, table_server: str, ledger_server: str, ladder_server: str, lobby_server: str) -> None:
    async with grpc.aio.insecure_channel(lobby_server) as ch:
        lobby = lpb_grpc.LobbyServiceStub(ch)
        session = (await lobby.SignInGuest(lpb.SignInGuestRequest(device_id=f"revoke-test-{uuid.uuid4().hex}"))).session
        player = TableClient(table_server, session.access_token)
        t = await player.create("o_an_quan", {})
        watching = asyncio.create_task(_end_of(player, t.table_id))
        await asyncio.sleep(0.3)
        signed_out = time.monotonic()
        await lobby.SignOut(lpb.SignOutRequest(),
                            metadata=(("authorization", f"Bearer {session.access_token}"),))
        status, reason, ended = await asyncio.wait_for(watching, 10)
    assert (status, reason) == (grpc.StatusCode.UNAUTHENTICATED, "session_revoked")
    assert ended - signed_out < settings.revocation_poll_s + 2  # the poll ends the stream it learns of
    assert await refused(player.get(t.table_id)) == (grpc.StatusCode.UNAUTHENTICATED, "session_revoked")
    await player.close()
