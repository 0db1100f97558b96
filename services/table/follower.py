"""The follower: one per process, it reads every record appended to the table log (by this
process or another) and folds it into the tables this process has cached, so their watchers see
what any process appended. A record that does not follow on (a gap) has the table catch up from
the store; a follower that stops follows again, and every cached table then catches up."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

from chieu.kit import logs
from chieu.kit.eventstore import Stored
from chieu.table.background import Background
from chieu.table.cache import Cache, Live
from chieu.table.v1 import log_pb2

log = logs.get("chieu.table")


class Follower:
    def __init__(self, cache: Cache, applied: Callable[[Live], None], background: Background) -> None:
        self.cache = cache
        self.applied = applied
        """Called after a record was folded into a cached table (its watchers, clock, snapshot)."""
        self.background = background
        self.task: asyncio.Task[None] | None = None
        self.closed = False

    async def start(self) -> None:
        """Follow the stream from now on (returns once subscribed)."""
        ready = asyncio.Event()
        self.task = asyncio.create_task(self._follow(ready))
        await ready.wait()

    async def stop(self) -> None:
        self.closed = True
        if self.task is not None:
            self.task.cancel()
            await asyncio.gather(self.task, return_exceptions=True)

    async def _follow(self, ready: asyncio.Event) -> None:
        """Fold the records other processes append into the cached tables; wake the watchers."""
        subscribed, restart = ready, False
        while not self.closed:
            if restart:  # what was appended while nobody followed: read it from the store
                self.background.spawn(self._resync(subscribed))
            try:
                async with contextlib.aclosing(self.cache.store.follow_all(subscribed)) as records:
                    async for table_id, stored in records:
                        await self._fold(table_id, stored)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("follower stopped; following again")
                ready.set()
                subscribed, restart = asyncio.Event(), True
                await asyncio.sleep(1)

    async def _resync(self, subscribed: asyncio.Event) -> None:
        """After the follower restarts: every cached table catches up from the store."""
        await subscribed.wait()
        for live in list(self.cache.live.values()):
            if live.pending is None:
                async with live.lock:
                    version = live.table.version
                    await self.cache.catch_up(live.table)
                    if live.table.version != version:
                        self.applied(live)

    async def _fold(self, table_id: str, stored: Stored) -> None:
        live = self.cache.live.get(table_id)
        if live is None:
            return
        if live.pending is not None:
            live.pending.append(stored)
            return
        table = live.table
        if stored.seq <= table.last_seq:
            return
        async with live.lock:
            if stored.seq <= table.last_seq:
                return
            record = log_pb2.Record.FromString(stored.data)
            if record.version != table.version + 1:
                await self.cache.catch_up(table)  # a gap: read what was missed from the store
            else:
                self.cache.fold(table, record, stored.seq)
            self.applied(live)
