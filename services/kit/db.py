"""PostgreSQL for the services: an asyncpg pool from ``DATABASE_URL`` and a migrations runner.

The pool fails fast: a call waits at most :data:`ACQUIRE_TIMEOUT_S` for a connection and each
statement at most :data:`STATEMENT_TIMEOUT_S` (PostgreSQL's ``statement_timeout``, and the same
bound on the client for a server that does not answer at all), so a database that is down or
frozen costs a call 2–2.5 s (at worst about 4.5), and the guard answers ``UNAVAILABLE``
(``database_unavailable``, :mod:`chieu.kit.outages`), never a hang.

Migrations are an ordered list of SQL scripts per service. ``migrate`` applies the missing ones
in one transaction under a transaction-level advisory lock, so running it twice, or from two
processes at once, applies each script exactly once.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

import asyncpg

from chieu.kit import logs

log = logs.get("chieu.db")

if TYPE_CHECKING:
    from asyncpg.connection import LoggedQuery
    from asyncpg.pool import PoolConnectionProxy

    Conn = asyncpg.Connection[asyncpg.Record] | PoolConnectionProxy[asyncpg.Record]
    """A connection, from a pool or not."""
else:
    Conn = asyncpg.Connection

_LOCK_KEY = 0x43_48_49_45_55  # "CHIEU": one advisory lock for every service's migrations

_BOOKKEEPING = """
CREATE TABLE IF NOT EXISTS schema_migrations (
    service    text        NOT NULL,
    version    integer     NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (service, version)
)
"""


ACQUIRE_TIMEOUT_S = 2.0
"""The longest a call waits for a pooled connection while the database answers nothing (no
statement of the pool's finished meanwhile; a new connection's set-up included)."""
BUSY_WAIT_S = 10.0
"""The longest a call waits for a pooled connection while the database does answer: a burst's queue
for the pool (50 postings at once on 20 connections outwaited 2 s on a loaded machine) is not an
outage."""
STATEMENT_TIMEOUT_S = 2.0
"""The longest one statement may run: ``statement_timeout`` on the server, and on the client."""
CONNECT_TIMEOUT_S = 2.0
"""The longest a new connection takes to open (a call's wait for one is still :data:`ACQUIRE_TIMEOUT_S`)."""
RELEASE_TIMEOUT_S = 0.5
"""The longest a connection's return to the pool waits (a timed-out one is dropped instead)."""
MIGRATION_TIMEOUT_S = 600.0
"""Migrations are not calls: a script may run (or wait for another process's lock) this long."""
SCAN_TIMEOUT_S = 300.0
"""A statement that reads whole tables on purpose (the ledger's self-audit) may run this long: it
says so itself (:func:`allow_scan`)."""


async def allow_scan(conn: Conn) -> None:
    """Let the statements of ``conn``'s current transaction run :data:`SCAN_TIMEOUT_S` on the server
    (pass ``timeout=SCAN_TIMEOUT_S`` to each for the client's side)."""
    await conn.execute(f"SET LOCAL statement_timeout = {int(SCAN_TIMEOUT_S * 1000)}")


if TYPE_CHECKING:
    _PoolBase = asyncpg.Pool[asyncpg.Record]
else:
    _PoolBase = asyncpg.Pool


class Pool(_PoolBase):
    """asyncpg's pool with bounded waits by default: for a connection, :data:`ACQUIRE_TIMEOUT_S`
    when no statement finished meanwhile (the database does not answer), up to :data:`BUSY_WAIT_S`
    while statements do finish (the pool is only busy); :data:`RELEASE_TIMEOUT_S` to give it back."""

    __slots__ = ("answered_at",)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, init=self._listen, **kwargs)
        self.answered_at = time.monotonic()
        """When a statement of this pool last finished without error."""

    async def _listen(self, conn: asyncpg.Connection[asyncpg.Record]) -> None:
        conn.add_query_logger(self._answered)

    def _answered(self, record: LoggedQuery) -> None:
        if record.exception is None:
            self.answered_at = time.monotonic()

    async def _acquire(self, timeout: float | None) -> PoolConnectionProxy[asyncpg.Record]:  # noqa: ASYNC109
        if timeout is not None:
            return await super()._acquire(timeout)  # type: ignore[misc, no-any-return]
        started = time.monotonic()
        while True:
            try:
                return await super()._acquire(ACQUIRE_TIMEOUT_S)  # type: ignore[misc, no-any-return]
            except TimeoutError:
                now = time.monotonic()
                if now - self.answered_at >= ACQUIRE_TIMEOUT_S or now - started >= BUSY_WAIT_S:
                    raise

    async def release(self, connection: PoolConnectionProxy[asyncpg.Record], *,
                      timeout: float | None = None) -> None:  # noqa: ASYNC109 (asyncpg's signature)
        await super().release(connection, timeout=RELEASE_TIMEOUT_S if timeout is None else timeout)


async def create_pool(url: str, *, min_size: int = 1, max_size: int = 10) -> Pool:
    """A connection pool for ``url`` (a ``postgresql://`` URL; ``?host=/dir`` for a Unix socket)
    whose calls fail fast (see the module's note)."""
    pool = Pool(
        url, min_size=min_size, max_size=max_size, max_queries=50_000,
        max_inactive_connection_lifetime=300.0, loop=None, connection_class=asyncpg.Connection,
        record_class=asyncpg.Record, timeout=CONNECT_TIMEOUT_S, command_timeout=STATEMENT_TIMEOUT_S,
        server_settings={"statement_timeout": str(int(STATEMENT_TIMEOUT_S * 1000))},
    )
    await pool
    return pool


async def migrate(conn: Conn, service: str, scripts: Sequence[str]) -> list[int]:
    """Apply the scripts of ``service`` not applied yet (version = index + 1); returns those applied."""
    applied: list[int] = []
    long = MIGRATION_TIMEOUT_S
    async with conn.transaction():
        await conn.execute("SET LOCAL statement_timeout = 0", timeout=long)
        await conn.execute("SELECT pg_advisory_xact_lock($1)", _LOCK_KEY, timeout=long)
        await conn.execute(_BOOKKEEPING, timeout=long)
        done = {r["version"] for r in await conn.fetch(
            "SELECT version FROM schema_migrations WHERE service = $1", service, timeout=long)}
        for version, script in enumerate(scripts, start=1):
            if version in done:
                continue
            await conn.execute(script, timeout=long)
            await conn.execute("INSERT INTO schema_migrations (service, version) VALUES ($1, $2)",
                               service, version, timeout=long)
            applied.append(version)
    if applied:
        log.info("migrated", service=service, versions=applied)
    return applied


READY_TIMEOUT_S = 2.0
"""How long the readiness waits for PostgreSQL's answer (:mod:`chieu.kit.server`'s rounds)."""


def database_check(url: str) -> Callable[[], Awaitable[None]]:
    """A readiness check (:class:`chieu.kit.server.Readiness`): PostgreSQL at ``url`` answers a
    ``SELECT 1``, on a connection of the check's own: not one of the service's pool, which a frozen
    server's unanswered checks would hold while the calls wait for it. A connection that did not
    answer is dropped at once (no goodbye to a frozen server) and made again at the next round."""
    held: list[asyncpg.Connection] = []

    async def check() -> None:
        try:
            if not held or held[0].is_closed():
                held[:] = [await asyncpg.connect(url, timeout=READY_TIMEOUT_S)]
            await held[0].fetchval("SELECT 1", timeout=READY_TIMEOUT_S)
        except BaseException:
            if held:
                held.pop().terminate()
            raise
    return check
