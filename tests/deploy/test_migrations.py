"""Migrations run once per rollout with no Job and no race: every pod of a data-owning service
migrates its own database at start (``chieu.kit.db.migrate``) inside one transaction under a
PostgreSQL advisory lock, so when a rollout starts several pods at once, one applies each
missing script and the others find it applied. Here: a fresh database per service (as each
CloudNativePG cluster bootstraps one), a rollout's worth of pods migrating it at the same time."""

from __future__ import annotations

import asyncio
import uuid

import asyncpg
import pytest

from chieu.kit import db
from chieu.ladder.schema import MIGRATIONS as LADDER
from chieu.ledger.schema import MIGRATIONS as LEDGER
from chieu.lobby.schema import MIGRATIONS as LOBBY
from tests.conftest import database_url_of

PODS = 4  # more than prod's replicas of any of them


@pytest.mark.parametrize(("service", "scripts"), [("ledger", LEDGER), ("ladder", LADDER), ("lobby", LOBBY)])
async def test_pods_starting_together_apply_each_migration_once(database_url: str, service: str,
                                                                scripts: tuple[str, ...]) -> None:
    name = f"mig_{service}_{uuid.uuid4().hex[:8]}"
    admin = await asyncpg.connect(database_url)
    await admin.execute(f'CREATE DATABASE "{name}"')
    try:
        conns = [await asyncpg.connect(database_url_of(database_url, name)) for _ in range(PODS)]
        try:
            applied = await asyncio.gather(*(db.migrate(c, service, scripts) for c in conns))
            assert sorted(applied, key=len) == [[]] * (PODS - 1) + [list(range(1, len(scripts) + 1))]
            rows = await conns[0].fetch("SELECT version FROM schema_migrations WHERE service = $1 ORDER BY 1",
                                        service)
            assert [r["version"] for r in rows] == list(range(1, len(scripts) + 1))
            again = await asyncio.gather(*(db.migrate(c, service, scripts) for c in conns))  # the next rollout
            assert again == [[]] * PODS
        finally:
            for c in conns:
                await c.close()
    finally:
        await admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
        await admin.close()
