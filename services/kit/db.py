"""PostgreSQL for the services: an asyncpg pool from ``DATABASE_URL`` and a migrations runner.

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


async def create_pool(url: str, *, min_size: int = 1, max_size: int = 10) -> asyncpg.Pool:
    """A connection pool for ``url`` (a ``postgresql://`` URL; ``?host=/dir`` for a Unix socket)."""
    pool = await asyncpg.create_pool(url, min_size=min_size, max_size=max_size)
    assert pool is not None
    return pool


async def migrate(conn: Conn, service: str, scripts: Sequence[str]) -> list[int]:
    """Apply the scripts of ``service`` not applied yet (version = index + 1); returns those applied."""
    applied: list[int] = []
    async with conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock($1)", _LOCK_KEY)
        await conn.execute(_BOOKKEEPING)
        done = {r["version"] for r in await conn.fetch(
            "SELECT version FROM schema_migrations WHERE service = $1", service)}
        for version, script in enumerate(scripts, start=1):
            if version in done:
                continue
            await conn.execute(script)
            await conn.execute("INSERT INTO schema_migrations (service, version) VALUES ($1, $2)", service, version)
            applied.append(version)
    if applied:
        log.info("migrated", service=service, versions=applied)
    return applied
