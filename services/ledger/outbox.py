"""The outbox relay: announcements written with their posting (信誉度复位, 点歌, membership)
are published to JetStream ``chieu.ledger.<topic>`` (stream ``CHIEU_LEDGER``), at least once,
deduplicated by ``Nats-Msg-Id`` = ``ledger-outbox-<id>``; consumers key on that id."""

from __future__ import annotations

import asyncio
import contextlib

import asyncpg
from nats.js import api
from nats.js.client import JetStreamContext
from nats.js.errors import NotFoundError

from chieu.kit import logs, names

log = logs.get("chieu.ledger.outbox")

STREAM = names.LEDGER.name


class OutboxRelay:
    """Publishes pending outbox rows; many relays may run (rows are claimed with SKIP LOCKED)."""

    def __init__(self, pool: asyncpg.Pool, js: JetStreamContext, *, replicas: int = 1, every_s: float = 0.5) -> None:
        self.pool = pool
        self.js = js
        self.replicas = replicas
        self.every_s = every_s
        self._task: asyncio.Task[None] | None = None

    async def ensure(self) -> None:
        try:
            await self.js.stream_info(STREAM)
        except NotFoundError:
            with contextlib.suppress(Exception):
                await self.js.add_stream(api.StreamConfig(
                    name=STREAM, subjects=[names.LEDGER.subjects], storage=api.StorageType.FILE,
                    num_replicas=self.replicas))

    async def start(self) -> None:
        await self.ensure()
        self._task = asyncio.create_task(self._run(), name="ledger-outbox")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
            self._task = None

    async def relay_once(self, limit: int = 100) -> int:
        """Publish up to ``limit`` pending rows; returns how many."""
        async with self.pool.acquire() as conn, conn.transaction():
            rows = await conn.fetch(
                "SELECT id, topic, payload FROM ledger_outbox WHERE published_at IS NULL ORDER BY id"
                " LIMIT $1 FOR UPDATE SKIP LOCKED", limit)
            for r in rows:
                await self.js.publish(names.LEDGER.subject(str(r["topic"])), str(r["payload"]).encode(),
                                      headers={"Nats-Msg-Id": f"ledger-outbox-{r['id']}"})
            if rows:
                await conn.execute("UPDATE ledger_outbox SET published_at = now() WHERE id = ANY($1::bigint[])",
                                   [r["id"] for r in rows])
        return len(rows)

    async def _run(self) -> None:
        while True:
            try:
                if await self.relay_once() == 0:
                    await asyncio.sleep(self.every_s)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("outbox relay failed; retrying")
                await asyncio.sleep(self.every_s)
