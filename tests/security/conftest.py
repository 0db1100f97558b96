"""The whole system in process (table, ledger, ladder, lobby on a real nats-server and PostgreSQL)
and one channel to each service, by its short name."""

from __future__ import annotations

from collections.abc import AsyncIterator

import grpc
import pytest


@pytest.fixture(scope="session")
async def channels(table_server: str, ledger_server: str, ladder_server: str,
                   lobby_server: str) -> AsyncIterator[dict[str, grpc.aio.Channel]]:
    addrs = {"table": table_server, "ledger": ledger_server, "ladder": ladder_server, "lobby": lobby_server}
    chans = {name: grpc.aio.insecure_channel(addr) for name, addr in addrs.items()}
    try:
        yield chans
    finally:
        for ch in chans.values():
            await ch.close()
