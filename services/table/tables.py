"""The tables this process serves (:class:`Tables`), put together from one module per job:

- :mod:`~chieu.table.cache`: the tables in memory, loaded on demand, let go when idle, snapshots;
- :mod:`~chieu.table.follower`: one follower of the whole log, folding what any process appends;
- :mod:`~chieu.table.pipeline`: a command decided, appended, folded (``execute``);
- :mod:`~chieu.table.clocks`: each table's timer (timeouts, reconnect graces) and the resume after
  a restart;
- :mod:`~chieu.table.watch`: the watch streams, the views they get, the spectators announced;
- :mod:`~chieu.table.presence`: the spectators' beacon and the seated players' connections;
- :mod:`~chieu.table.statuses`: where a decider's refusal becomes a gRPC status.

They import in one direction (the servicer, then this module, the pipeline, the jobs, the cache);
what runs back — a timer's or a connection's command through the pipeline, the follower's and the
pipeline's records to the watchers, clocks and snapshots — is handed in here as a callable.
"""

from __future__ import annotations

import os
import socket
import time

from chieu.kit.eventstore import EventStore
from chieu.kit.settings import Settings
from chieu.table import seeds
from chieu.table.background import Background
from chieu.table.cache import Cache, Live
from chieu.table.clocks import Clocks
from chieu.table.commands import Execute
from chieu.table.follower import Follower
from chieu.table.pipeline import Pipeline
from chieu.table.presence import Beacon, Connections
from chieu.table.v1 import log_pb2
from chieu.table.watch import Watch
from chieu.tablelog import sealing
from chieu.tablelog.fold import Table

MARK_WAIT_S = 2.0
"""How long :meth:`Tables.close` waits for active marks still being written."""


class Tables:
    """The tables this process serves: loaded on demand, kept in step with their logs by one
    follower of the whole stream (records other processes append reach this one's watchers)."""

    def __init__(self, store: EventStore, settings: Settings, keys: sealing.SealKeys) -> None:
        self.store = store
        self.settings = settings
        self.keys = keys
        """The seal keyset: what a hand in play hides is sealed in the log (:mod:`~chieu.tablelog.sealing`)."""
        self.background = Background()
        self.cache = Cache(store, settings, keys)
        self.follower = Follower(self.cache, self._applied, self.background)
        self.pipeline = Pipeline(self.cache, self._applied, self.background)
        self.execute: Execute = self.pipeline.execute
        self.clocks = Clocks(self.cache, store, self.execute, self.background, settings.table_idle_stand_s)
        self.connections = Connections(self.cache, self.execute, self.background, settings.table_idle_stand_s)
        instance = settings.instance or f"{socket.gethostname()}:{os.getpid()}"
        self.watching = Watch(self.cache, self.connections, store.nc.publish, instance)
        self.cache.following = self.start
        self.cache.loaded = self.clocks.schedule
        self.get = self.cache.get
        self.played = self.cache.played
        self.expire_idle = self.cache.expire_idle
        self.view = self.watching.view
        self.wire = self.watching.wire
        self.watch = self.watching.watch
        self.spectators = self.watching.spectators
        self.spectator_ids = self.watching.spectator_ids
        self.spectated = self.watching.spectated
        self.resume = self.clocks.resume

    @property
    def beacon(self) -> Beacon:
        """Announces this process's spectators per table (for the lobby's table list)."""
        return self.watching.beacon

    def _applied(self, live: Live) -> None:
        """A record was folded into a cached table: its watchers, the players it says are lost but
        watch here, its clock and its snapshot count."""
        live.touched = time.monotonic()
        self.watching.publish(live)
        self.connections.still_here(live)
        self.clocks.schedule(live)
        self.cache.snapshot_if_due(live)

    async def start(self) -> None:
        """Start following the stream (before any table is loaded)."""
        if self.follower.task is None:
            await self.follower.start()
            await self.beacon.start()
            if self.settings.table_idle_expiry_s > 0:
                self.background.spawn(self.cache.expire_idle_tables())

    def seeds_to_deal(self, table: Table) -> tuple[bytes, log_pb2.NextSeed]:
        """:func:`chieu.table.seeds.seeds_to_deal` with this process's keyset."""
        return seeds.seeds_to_deal(self.keys, table)

    def stopping(self) -> None:
        """The server begins to stop (before it closes the watch streams): from now on a closed
        stream writes no ``ConnectionLost`` — a player is not penalised for the server's stop."""
        self.connections.closing = True

    async def close(self) -> None:
        self.connections.closing = True
        self.connections.closed = self.clocks.closed = self.cache.closed = self.follower.closed = True
        await self.beacon.stop()
        for live in self.cache.live.values():
            if live.timer is not None:
                live.timer.cancel()
        self.watching.end()
        await self.follower.stop()
        await self.background.close(MARK_WAIT_S)
        self.cache.live.clear()
