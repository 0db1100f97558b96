"""Ledger fixtures: a migrated PostgreSQL pool and the books on it (a real PostgreSQL)."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import asyncpg
import pytest

from chieu.kit import db
from chieu.ledger.books import Books
from chieu.ledger.schema import MIGRATIONS


@pytest.fixture(scope="session")
async def pool(database_url: str) -> AsyncIterator[asyncpg.Pool]:
    p = await db.create_pool(database_url, max_size=20)
    async with p.acquire() as conn:
        await db.migrate(conn, "ledger", MIGRATIONS)
    try:
        yield p
    finally:
        await p.close()


@pytest.fixture(scope="session")
def books(pool: asyncpg.Pool) -> Books:
    return Books(pool)


def uid(prefix: str = "") -> str:
    """A unique name, so tests sharing one database never meet."""
    return f"{prefix}{uuid.uuid4().hex[:10]}"
