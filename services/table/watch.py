"""Watching a table: each ``Watch`` stream gets the viewer's view of every version (built once per
version and viewer, :class:`~chieu.table.views.Views`), until its token expires or its session is
revoked; the stream is the viewer's presence at the table (:class:`~chieu.table.presence.Connections`)
and its spectators are announced to the lobby (:class:`~chieu.table.presence.Beacon`)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable

import grpc

from chieu.kit import metrics
from chieu.kit.errors import ServiceError
from chieu.table import presence
from chieu.table.cache import Cache, Live
from chieu.table.presence import Connections
from chieu.table.v1 import table_service_pb2
from chieu.table.views import Views
from chieu.tablelog.fold import Table

Subscribe = Callable[[Callable[[], None]], Callable[[], None]]
"""``on_revoked(end)``: call ``end()`` once the stream's session is revoked; returns what unsubscribes."""


def _expired() -> ServiceError:
    return ServiceError(grpc.StatusCode.UNAUTHENTICATED, "token_expired",
                        "the session token expired: watch again with a fresh one, from your version")


def _revoked() -> ServiceError:
    return ServiceError(grpc.StatusCode.UNAUTHENTICATED, "session_revoked",
                        "this session was signed out or revoked: sign in again")


def _stop(timer: asyncio.TimerHandle | None, unsubscribe: Callable[[], None] | None) -> None:
    if timer is not None:
        timer.cancel()
    if unsubscribe is not None:
        unsubscribe()


class Watch:
    def __init__(self, cache: Cache, connections: Connections, publish: presence.Publish, instance: str) -> None:
        self.cache = cache
        self.connections = connections
        self.beacon = presence.Beacon(publish, instance, self.spectators, self.spectated, who=self.spectator_ids,
                                      absent=self.absent, absents=self.absents)
        """Announces this process's spectators per table (for the lobby's table list)."""

    def publish(self, live: Live) -> None:
        """The table changed: every watcher gets its view of the new version."""
        table = live.table
        for who, queue in list(live.watchers):
            queue.put_nowait(live.views.wire(table, who))
        if live.watchers or table.lost or table.table_id in self.beacon.sent_absent:
            # a spectator who sits down is one no more (and one who stands up is); who is absent
            self.beacon.touch(table.table_id)

    def absent(self, table_id: str) -> list[str]:
        """The table's seated players its log says are gone (lost: their stream closed, not back),
        sorted; not those who sat with no stream yet and have not watched (``unseen``: the page of
        a quick seat opens its stream just after, and their idle stand stands a ghost up anyway)."""
        live = self.cache.live.get(table_id)
        if live is None:
            return []
        t = live.table
        return sorted(p for p in t.lost if p in t.seats and p not in t.unseen)

    def absents(self) -> dict[str, list[str]]:
        """Every cached table's absent seated players (tables with none left out)."""
        return {t: a for t in list(self.cache.live) if (a := self.absent(t))}

    def _views(self, table: Table) -> Views:
        live = self.cache.live.get(table.table_id)
        return live.views if live is not None and live.table is table else Views()

    def view(self, table: Table, who: str | None) -> table_service_pb2.TableView:
        """``who``'s view of a table this process serves (built once per version and viewer)."""
        return self._views(table).view(table, who)

    def wire(self, table: Table, who: str | None) -> bytes:
        """``who``'s view of a table this process serves, as a serialized ``WatchResponse``."""
        return self._views(table).wire(table, who)

    def spectators(self, table_id: str) -> int:
        """Viewers of the table through this process who hold no seat at it (旁观)."""
        live = self.cache.live.get(table_id)
        if live is None:
            return 0
        players = {who for who, _ in live.watchers if who is not None and live.table.table_seat_of(who) is None}
        return len(players) + sum(1 for who, _ in live.watchers if who is None)

    def spectator_ids(self, table_id: str) -> list[str]:
        """The signed-in spectators of the table through this process, by player id, sorted."""
        live = self.cache.live.get(table_id)
        if live is None:
            return []
        return sorted({who for who, _ in live.watchers if who is not None and live.table.table_seat_of(who) is None})

    def spectated(self) -> dict[str, int]:
        """Every cached table's spectators through this process (tables with none left out)."""
        counts = {table_id: self.spectators(table_id) for table_id, live in self.cache.live.items() if live.watchers}
        return {t: n for t, n in counts.items() if n}

    async def watch(self, table_id: str, who: str | None, from_version: int = 0, *, until_s: float | None = None,
                    on_revoked: Subscribe | None = None) -> AsyncIterator[bytes]:
        """The caller's views; the stream is the caller's presence at the table.

        The stream ends with its token: ``until_s`` (the token's expiry, unix seconds) ends it
        with UNAUTHENTICATED / ``token_expired`` (one timer, at that time), and
        ``on_revoked(end)`` (subscribing ``end`` to the session's revocation, returning what
        unsubscribes) ends it with ``session_revoked`` when the revocation poll learns it. A
        stream that waits wakes for nothing else. The client watches again with a fresh token,
        from the version it has.
        """
        if until_s is not None and until_s <= time.time():
            raise _expired()
        queue: asyncio.Queue[bytes | None] = asyncio.Queue()
        ended: list[ServiceError] = []

        def end(error: ServiceError) -> None:
            if not ended:
                ended.append(error)
                queue.put_nowait(None)

        timer = None if until_s is None else asyncio.get_running_loop().call_later(
            until_s - time.time(), end, _expired())
        unsubscribe = None if on_revoked is None else on_revoked(lambda: end(_revoked()))
        try:
            live = await self.cache.get(table_id)
        except BaseException:
            _stop(timer, unsubscribe)
            raise
        entry = (who, queue)
        async with live.lock:
            live.watchers.add(entry)
            first, version = live.views.wire(live.table, who), live.table.version
        metrics.WATCHERS.inc()
        self.beacon.touch(table_id)
        if who is not None:
            live.present[who] = live.present.get(who, 0) + 1
            if live.present[who] == 1 and who in live.table.lost:
                self.connections.changed(table_id, who, back=True)
        try:
            if ended:
                raise ended[0]
            if version != from_version:
                yield first
            while True:
                view = await queue.get()
                if ended:
                    raise ended[0]
                if view is None:
                    return
                yield view
        finally:
            _stop(timer, unsubscribe)
            metrics.WATCHERS.dec()
            live.watchers.discard(entry)
            self.beacon.touch(table_id)
            if who is not None:
                live.present[who] -= 1
                if live.present[who] == 0 and not self.connections.closed:
                    del live.present[who]
                    if not self.connections.closing:  # the server's own stop is no lost connection of the player
                        self.connections.changed(table_id, who, back=False)

    def end(self) -> None:
        """The server stops: every open stream ends."""
        for live in self.cache.live.values():
            for _, queue in live.watchers:
                queue.put_nowait(None)
