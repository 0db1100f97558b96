"""The tables this process holds in memory: each one loaded on demand (its snapshot, then the
log after it, folded), kept while it is in use, and let go when idle — least recently used
first beyond ``CHIEU_TABLE_CACHE`` tables (no watcher, no hand on the clock), and empty tables
after ``CHIEU_TABLE_IDLE_EXPIRY_S``. A table's snapshot is written every
``CHIEU_SNAPSHOT_EVERY`` records."""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any

from chieu.kit import logs, metrics
from chieu.kit.errors import not_found
from chieu.kit.eventstore import EventStore, Snapshot, Stored
from chieu.kit.settings import Settings
from chieu.table import snapshot
from chieu.table.v1 import log_pb2
from chieu.table.views import Views
from chieu.tablelog import sealing
from chieu.tablelog.fold import Table

log = logs.get("chieu.table")


class Live:
    """A cached table with its lock, its watchers, its presence and its timer."""

    def __init__(self, table: Table) -> None:
        self.table = table
        self.views = Views()
        """The views of the table's current version, encoded once per viewer."""
        self.lock = asyncio.Lock()
        self.watchers: set[tuple[str | None, asyncio.Queue[bytes | None]]] = set()
        """Each watch stream: its viewer and the queue of its serialized ``WatchResponse`` messages."""
        self.present: dict[str, int] = {}
        """Player → open watch streams on this process."""
        self.timer: asyncio.TimerHandle | None = None
        self.touched = time.monotonic()
        """When a command was last applied to the table here, or it was loaded (its idle expiry)."""
        self.since_snapshot = 0
        self.hand_key: dict[tuple[bytes, int], Any] = {}
        """The seal key of the hand in play, kept while the table is (:func:`~chieu.tablelog.sealing.kept_box`)."""
        self.pending: list[Stored] | None = []
        """Records the follower saw while the table was loading (``None`` once loaded)."""


async def _nothing() -> None:
    return None


class Cache:
    """The cached tables, by id, least recently used first."""

    def __init__(self, store: EventStore, settings: Settings, keys: sealing.SealKeys) -> None:
        self.store = store
        self.settings = settings
        self.keys = keys
        self._opener = sealing.Opener(keys)
        self.live: OrderedDict[str, Live] = OrderedDict()
        self._loading: dict[str, asyncio.Lock] = {}
        self.closed = False
        self.following: Callable[[], Awaitable[None]] = _nothing
        """Awaited before a table is loaded: the follower must be following the stream first."""
        self.loaded: Callable[[Live], None] = lambda live: None
        """Called with a table just loaded (its clock is armed)."""
        metrics.TABLES_OPEN.set_function(lambda: len(self.live))

    def played(self, table_id: str) -> bool | None:
        """Whether a hand ever started at ``table_id`` (None: the table is not in memory here)."""
        live = self.live.get(table_id)
        return None if live is None else live.table.hand_no > 0

    def expire_idle(self, idle_s: float, now: float | None = None) -> int:
        """Close the empty tables idle for ``idle_s`` here (nobody seated, no hand, no watcher, no
        command for that long): they leave this process's memory (their logs stay; the lobby lists
        no table nobody sits at). Returns how many."""
        t = time.monotonic() if now is None else now
        gone = 0
        for table_id, live in list(self.live.items()):
            table = live.table
            if (t - live.touched >= idle_s and live.pending is None and not live.watchers and not table.playing
                    and not live.lock.locked() and all(p is None for p in table.seats)):
                if live.timer is not None:
                    live.timer.cancel()
                del self.live[table_id]
                gone += 1
        return gone

    async def expire_idle_tables(self) -> None:
        """Every quarter of ``CHIEU_TABLE_IDLE_EXPIRY_S`` (at most a minute): :meth:`expire_idle`."""
        idle_s = self.settings.table_idle_expiry_s
        while not self.closed:
            await asyncio.sleep(min(60.0, idle_s / 4))
            if n := self.expire_idle(idle_s):
                log.info("empty tables closed after their idle time", tables=n, idle_s=idle_s)

    async def get(self, table_id: str, *, must_exist: bool = True) -> Live:
        live = self.live.get(table_id)
        if live is None or live.pending is not None:
            lock = self._loading.setdefault(table_id, asyncio.Lock())
            try:
                async with lock:
                    live = self.live.get(table_id)
                    if live is None:
                        live = await self._load_live(table_id)
                        self._evict()
            finally:
                if not lock.locked():
                    self._loading.pop(table_id, None)
        else:
            self.live.move_to_end(table_id)
        if must_exist and not live.table.exists:
            raise not_found("unknown_table", f"no table {table_id!r}")
        return live

    async def _load_live(self, table_id: str) -> Live:
        await self.following()
        live = Live(Table(table_id))
        self.live[table_id] = live  # from here on the follower keeps what it sees in live.pending
        try:
            live.table = await self.load(table_id)
        except BaseException:
            self.live.pop(table_id, None)
            raise
        for stored in live.pending or ():
            if stored.seq > live.table.last_seq:
                self.apply(live.table, stored)
        live.pending = None
        if not live.table.exists:
            self.live.pop(table_id, None)
        else:
            self.loaded(live)
        return live

    def _evict(self) -> None:
        """Drop least recently used idle tables (no watcher, no hand on the clock) over the limit."""
        excess = len(self.live) - self.settings.table_cache
        for table_id, live in list(self.live.items()):
            if excess <= 0:
                return
            if (live.pending is None and not live.watchers and not live.table.playing and not live.table.lost
                    and not live.lock.locked()):
                if live.timer is not None:
                    live.timer.cancel()
                del self.live[table_id]
                excess -= 1

    async def load(self, table_id: str) -> Table:
        """``table_id`` as its snapshot and the log after it give it (not cached: :meth:`get` caches)."""
        table = Table(table_id)
        snap = await self.store.load_snapshot(table_id)
        if snap is not None and snap.tag == sealing.SNAPSHOT_TAG + snapshot.TAG:
            try:
                loaded = snapshot.decode(self._open_snapshot(table_id, snap.data))
                if loaded.table_id == table_id and loaded.last_seq == snap.seq:
                    table = loaded
            except snapshot.Unusable as e:  # a snapshot is a cache: replay the log instead
                log.warning("unusable snapshot, replaying", table_id=table_id, reason=str(e))
        await self.catch_up(table)
        return table

    async def catch_up(self, table: Table) -> None:
        """Fold what the log holds after ``table``; its finished hands are opened with the seeds
        their ``HandEnded`` revealed (no seal key needed for them)."""
        records = [(stored.seq, log_pb2.Record.FromString(stored.data))
                   for stored in await self.store.read(table.table_id, after=table.last_seq)]
        revealed = sealing.revealed_seeds(record for _, record in records)
        for seq, record in records:
            table.apply(self._opener.open(record, table, revealed), seq)

    def apply(self, table: Table, stored: Stored) -> None:
        """Fold one stored record into ``table``, its sealed parts opened."""
        self.fold(table, log_pb2.Record.FromString(stored.data), stored.seq)

    def fold(self, table: Table, record: log_pb2.Record, seq: int) -> None:
        """Fold one record read from the log into ``table``, its sealed parts opened."""
        table.apply(self._opener.open(record, table), seq)

    def _open_snapshot(self, table_id: str, data: bytes) -> bytes:
        try:
            return self.keys.open_snapshot(table_id, data)
        except sealing.SealError as e:
            raise snapshot.Unusable(str(e)) from None

    def snapshot_if_due(self, live: Live) -> None:
        """Count one more record of the table; every ``CHIEU_SNAPSHOT_EVERY``, save its snapshot
        (sealed; in the background, a failure logged)."""
        table = live.table
        live.since_snapshot += 1
        if live.since_snapshot >= self.settings.snapshot_every:
            live.since_snapshot = 0
            task = asyncio.create_task(self.store.save_snapshot(
                table.table_id, Snapshot(table.last_seq, sealing.SNAPSHOT_TAG + snapshot.TAG,
                                         self.keys.seal_snapshot(table.table_id, snapshot.encode(table)))))
            task.add_done_callback(_log_failure)


def _log_failure(task: asyncio.Task[Any]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.warning("snapshot not saved", error=str(task.exception()))
