"""Lobby fixtures: the whole system in process (table, ledger, ladder, lobby on a real
nats-server and PostgreSQL) and a small client that signs in and calls the lobby as a player."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc
import pytest

from chieu.kit.settings import Settings
from chieu.lobby.v1 import lobby_service_pb2 as pb
from chieu.lobby.v1 import lobby_service_pb2_grpc as pb_grpc
from tests.conftest import token


def uid(prefix: str = "") -> str:
    return f"{prefix}{uuid.uuid4().hex[:10]}"


@pytest.fixture(scope="session")
async def system(table_server: str, ledger_server: str, ladder_server: str, lobby_server: str) -> str:
    """Every service up; the lobby's address."""
    return lobby_server


@pytest.fixture(scope="session")
async def channel(system: str) -> AsyncIterator[grpc.aio.Channel]:
    ch = grpc.aio.insecure_channel(system)
    try:
        yield ch
    finally:
        await ch.close()


@pytest.fixture(scope="session")
def stub(channel: grpc.aio.Channel) -> pb_grpc.LobbyServiceAsyncStub:
    return pb_grpc.LobbyServiceStub(channel)


def bearer(access_token: str) -> tuple[tuple[str, str]]:
    return (("authorization", f"Bearer {access_token}"),)


@pytest.fixture(scope="session")
def operator(settings: Settings) -> tuple[tuple[str, str]]:
    return bearer(token(settings, "ops-1", "operator"))


async def guest(stub: pb_grpc.LobbyServiceAsyncStub, device: str = "", name: str = "") -> pb.Session:
    r = await stub.SignInGuest(pb.SignInGuestRequest(device_id=device or uid("device-"), name=name))
    return r.session


async def refused(call: Awaitable[Any], code: grpc.StatusCode, reason: str = "") -> grpc.aio.AioRpcError:
    try:
        await call
    except grpc.aio.AioRpcError as e:
        assert e.code() == code, (e.code(), e.details())
        if reason:
            assert dict(e.trailing_metadata() or ()).get("chieu-reason") == reason, e.details()
        return e
    raise AssertionError(f"expected {code.name} {reason}")


async def until(pred: Callable[[], Awaitable[Any]], within: float = 10.0) -> Any:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        got = await pred()
        if got:
            return got
        await asyncio.sleep(0.02)
    raise AssertionError("timed out")
