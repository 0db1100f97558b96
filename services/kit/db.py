"""PostgreSQL for the services: an asyncpg pool from ``DATABASE_URL`` and a migrations runner.

The pool fails fast: a call waits at most :data:`ACQUIRE_TIMEOUT_S` for a connection and each
statement at most :data:`STATEMENT_TIMEOUT_S` (PostgreSQL's ``statement_timeout``, and the same
bound on the client for a server that does not answer at all), so a database that is down or
frozen costs a call about 3 s at worst, and the guard answers ``UNAVAILABLE``
(``database_unavailable``, :mod:`chieu.kit.outages`), never a hang.

Migrations are an ordered list of SQL scripts per service. ``migrate`` applies the missing ones
in one transaction under a transaction-level advisory lock, so running it twice, or from two
processes at once, applies each script exactly once.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import asyncpg

from chieu.kit import logs

log = logs.get("chieu.db")

if TYPE_CHECKING:
    from asyncpg.pool import PoolAcquireContext, PoolConnectionProxy

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


ACQUIRE_TIMEOUT_S = 1.0
"""The longest a call waits for a pooled connection (a new connection's set-up included)."""
STATEMENT_TIMEOUT_S = 1.5
"""The longest one statement may run: ``statement_timeout`` on the server, and on the client."""
CONNECT_TIMEOUT_S = 2.0
"""The longest a new connection takes to open (a call's wait for one is still :data:`ACQUIRE_TIMEOUT_S`)."""
RELEASE_TIMEOUT_S = 0.5
"""The longest a connection's return to the pool waits (a timed-out one is dropped instead)."""
MIGRATION_TIMEOUT_S = 600.0
"""Migrations are not calls: a script may run (or wait for another process's lock) this long."""


if TYPE_CHECKING:
    _PoolBase = asyncpg.Pool[asyncpg.Record]
else:
    _PoolBase = asyncpg.Pool


class Pool(_PoolBase):
    """asyncpg's pool with a bounded wait by default: :data:`ACQUIRE_TIMEOUT_S` to take a
    connection, :data:`RELEASE_TIMEOUT_S` to give it back."""

    __slots__ = ()

    def acquire(self, *, timeout: float | None = None) -> PoolAcquireContext[asyncpg.Record]:
        return super().acquire(timeout=ACQUIRE_TIMEOUT_S if timeout is None else timeout)

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
