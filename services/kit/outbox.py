"""The transactional outbox relay every service with announcements uses.

A service writes an announcement as a row of its ``<service>_outbox`` table (``id``, ``topic``,
``payload``, ``published_at``) in the same transaction as the change it announces. The relay
publishes pending rows to the service's own stream, ``<prefix>.<topic>``, at least once and
deduplicated by ``Nats-Msg-Id`` = ``<service>-outbox-<id>`` (consumers key on that id), then marks
them published. Many relays may run at once: rows are claimed with ``FOR UPDATE SKIP LOCKED``.
"""

from __future__ import annotations

import asyncio
import contextlib

import asyncpg
from nats.js import api
from nats.js.client import JetStreamContext
from nats.js.errors import NotFoundError

from chieu.kit import logs, tasks
from chieu.kit.names import Stream

log = logs.get("chieu.outbox")


class OutboxRelay:
    """Publishes the pending rows of ``<service>_outbox`` to ``stream``."""

    def __init__(self, pool: asyncpg.Pool, js: JetStreamContext, *, service: str, stream: Stream,
                 replicas: int = 1, every_s: float = 0.5) -> None:
        self.pool = pool
        self.js = js
        self.service = service
        self.stream = stream
        self.replicas = replicas
        self.every_s = every_s
        self._select = (f"SELECT id, topic, payload FROM {service}_outbox WHERE published_at IS NULL ORDER BY id"
                        " LIMIT $1 FOR UPDATE SKIP LOCKED")
        self._mark = f"UPDATE {service}_outbox SET published_at = now() WHERE id = ANY($1::bigint[])"
        self._task: asyncio.Task[None] | None = None

    async def ensure(self) -> None:
        """Create the service's stream if missing (it owns it)."""
        try:
            await self.js.stream_info(self.stream.name)
        except NotFoundError:
            with contextlib.suppress(Exception):  # created by a racing relay
                await self.js.add_stream(api.StreamConfig(
                    name=self.stream.name, subjects=[self.stream.subjects], storage=api.StorageType.FILE,
                    num_replicas=self.replicas))

    async def start(self) -> None:
        await self.ensure()
        self._task = asyncio.create_task(self._run(), name=f"{self.service}-outbox")

    async def stop(self) -> None:
        await tasks.cancel(self._task)
        self._task = None

    async def relay_once(self, limit: int = 100) -> int:
        """Publish up to ``limit`` pending rows; returns how many."""
        async with self.pool.acquire() as conn, conn.transaction():
            rows = await conn.fetch(self._select, limit)
            for r in rows:
                await self.js.publish(self.stream.subject(str(r["topic"])), str(r["payload"]).encode(),
                                      headers={"Nats-Msg-Id": f"{self.service}-outbox-{r['id']}"})
            if rows:
                await conn.execute(self._mark, [r["id"] for r in rows])
        return len(rows)

    async def _run(self) -> None:
        while True:
            try:
                if await self.relay_once() == 0:
                    await asyncio.sleep(self.every_s)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("outbox relay failed; retrying", service=self.service)
                await asyncio.sleep(self.every_s)
