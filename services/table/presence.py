"""Spectators (旁观) announced: each table-service process tells the lobby how many viewers
without a seat watch each table through it.

Watching is not a command and changes nothing of the game, so it is not in the table's log.
A process announces on core NATS, ``chieu.presence.<instance>``, a :class:`Presence` message:
the tables whose count changed (soon after the change, several changes in one message), and
every :data:`INTERVAL_S` all of its counts (``full``), which also says it is alive. A reader
forgets a process it has not heard from for :data:`TTL_S` (killed or cut off: its viewers are
gone with it). A player watching the same table through two processes counts twice.

A seated player's own presence is in the log: the last of their watch streams on a process
closing is a ``ConnectionLost`` (during a hand their reconnect grace starts; between hands their
idle stand, ``CHIEU_TABLE_IDLE_STAND_S``, at whose end the table stands them up), a stream opening
again a ``Reconnected`` (:class:`Connections`). The players the log says are absent (``lost``) are
announced with the spectators (``Presence.absent``), so the lobby's quick seat avoids their tables.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import Awaitable, Callable

from chieu.kit import logs, names, tasks
from chieu.table import decide
from chieu.table.background import Background
from chieu.table.cache import Cache, Live
from chieu.table.commands import Execute
from chieu.table.v1 import presence_pb2

log = logs.get("chieu.table.presence")

INTERVAL_S = 5.0
"""Every this many seconds a process announces all its counts."""
TTL_S = 3 * INTERVAL_S
"""A process not heard from for this long counts for nobody."""
DEBOUNCE_S = 0.05
"""Changes within this time go out in one message."""
MAX_WATCHERS = 20
"""The most spectators' player ids announced per table (the lobby lists them with their names)."""

Publish = Callable[[str, bytes], Awaitable[None]]


def subject(instance: str) -> str:
    """The subject a process announces on (``.`` and wildcards in its name made harmless)."""
    safe = "".join(c if c.isalnum() or c in "-_:" else "_" for c in instance) or "unnamed"
    return f"{names.PRESENCE}.{safe}"


class Beacon:
    """This process's announcements. ``touch(table)`` after anything that may change who watches
    a table or who sits at it; ``count(table)`` says how many spectators it has here now, and
    ``counts()`` every table's with at least one."""

    def __init__(self, publish: Publish, instance: str, count: Callable[[str], int],
                 counts: Callable[[], dict[str, int]], *, interval_s: float = INTERVAL_S,
                 debounce_s: float = DEBOUNCE_S, who: Callable[[str], list[str]] | None = None,
                 absent: Callable[[str], list[str]] | None = None,
                 absents: Callable[[], dict[str, list[str]]] | None = None) -> None:
        self.publish = publish
        self.absent = absent
        """A table's seated players its log says are absent (sorted), sent when they change."""
        self.absents = absents
        """Every table's with someone absent (for the full announcements)."""
        self.sent_absent: dict[str, list[str]] = {}
        """The absent players the readers were last told of, by table (tables with none are absent)."""
        self.who = who
        """The player ids of a table's spectators here (at most ``MAX_WATCHERS``), sent with its count."""
        self.instance = instance
        self.subject = subject(instance)
        self.count = count
        self.counts = counts
        self.interval_s = interval_s
        self.debounce_s = debounce_s
        self.sent: dict[str, int] = {}
        """What the readers were last told, by table (tables with none are absent)."""
        self._dirty: set[str] = set()
        self._flush: asyncio.Task[None] | None = None
        self._task: asyncio.Task[None] | None = None

    def touch(self, table_id: str) -> None:
        self._dirty.add(table_id)
        if self._flush is None and self._task is not None:
            self._flush = asyncio.create_task(self._changes())

    async def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._beat(), name="presence-beacon")

    async def stop(self) -> None:
        """Stop announcing and tell the readers this process has nobody any more."""
        for task in (self._task, self._flush):
            await tasks.cancel(task)
        if self._task is not None:
            self._task = None
            with contextlib.suppress(Exception):
                await self._send({}, full=True, ttl_s=0.0)

    async def _changes(self) -> None:
        try:
            await asyncio.sleep(self.debounce_s)
            dirty, self._dirty = self._dirty, set()
            changed: dict[str, int] = {}
            gone: dict[str, list[str]] = {}
            for table_id in dirty:
                n = self.count(table_id)
                if n != self.sent.get(table_id, 0):
                    changed[table_id] = n
                if self.absent is not None and (a := self.absent(table_id)) != self.sent_absent.get(table_id, []):
                    gone[table_id] = a
            if changed or gone:
                for table_id, n in changed.items():
                    if n:
                        self.sent[table_id] = n
                    else:
                        self.sent.pop(table_id, None)
                for table_id, a in gone.items():
                    if a:
                        self.sent_absent[table_id] = a
                    else:
                        self.sent_absent.pop(table_id, None)
                await self._send(changed, full=False, absent=gone)
        except asyncio.CancelledError:
            raise
        except Exception as e:  # NATS away: the next full announcement corrects it
            log.info("presence not announced", reason=str(e))
        finally:
            self._flush = None
            if self._dirty and self._task is not None:
                self._flush = asyncio.create_task(self._changes())

    async def _beat(self) -> None:
        while True:
            try:
                self.sent = {t: n for t, n in self.counts().items() if n}
                self.sent_absent = {t: a for t, a in (self.absents() if self.absents else {}).items() if a}
                await self._send(self.sent, full=True, absent=self.sent_absent)
            except asyncio.CancelledError:
                raise
            except Exception as e:
                log.info("presence not announced", reason=str(e))
            await asyncio.sleep(self.interval_s)

    async def _send(self, counts: dict[str, int], *, full: bool, ttl_s: float | None = None,
                    absent: dict[str, list[str]] | None = None) -> None:
        ttl = 3 * self.interval_s if ttl_s is None else ttl_s
        msg = presence_pb2.Presence(instance=self.instance, full=full, spectators=counts,
                                    sent_ms=int(time.time() * 1000), ttl_ms=int(ttl * 1000))
        if self.who is not None:
            for table_id, n in counts.items():
                if n and (ids := self.who(table_id)[:MAX_WATCHERS]):
                    msg.watchers[table_id].player_ids.extend(ids)
        for table_id, players in (absent or {}).items():
            msg.absent[table_id].player_ids.extend(players)
        await self.publish(self.subject, msg.SerializeToString())


class Connections:
    """Seated players' connections, as the log records them: ``Reconnected`` when one of their
    watch streams is open here again, ``ConnectionLost`` when the last one here closed — not when
    the server itself stops (:attr:`closing`)."""

    def __init__(self, cache: Cache, execute: Execute, background: Background, idle_stand_s: float = 60.0) -> None:
        self.cache = cache
        self.idle_stand_s = idle_stand_s
        """Between hands, how long a seated player with no stream keeps the seat."""
        self.execute = execute
        self.background = background
        self.closing = False
        """Set once the server begins to stop: a watch stream closed from then on is the server's
        doing, not the player's lost connection."""
        self.closed = False

    def changed(self, table_id: str, who: str, *, back: bool) -> None:
        """In the background: ``who`` is back at the table (``back``), or their last stream here closed."""
        self.background.spawn(self._record(table_id, who, back=back))

    def idle_deadline(self, table_id: str, who: str, now_ms: int) -> int:
        """When a player taking a seat now is stood up unless a stream of theirs opens: 0 when
        one is open here (:func:`chieu.table.decide.take_seat`)."""
        live = self.cache.live.get(table_id)
        if live is not None and live.present.get(who):
            return 0
        return now_ms + int(self.idle_stand_s * 1000)

    def still_here(self, live: Live) -> None:
        """After a record: players it says are lost (on another replica) whose stream is open here
        are still present."""
        for who in [p for p in live.table.lost if live.present.get(p)]:
            self.changed(live.table.table_id, who, back=True)
        if not live.table.playing:  # absent at a hand's start or end, with no stream here: their idle stand
            for who in [p for p in live.table.away if not live.present.get(p) and p not in live.table.lost]:
                self.changed(live.table.table_id, who, back=False)

    async def _record(self, table_id: str, who: str, *, back: bool) -> None:
        if self.closed or self.closing:
            return
        try:
            if back:
                await self.execute(table_id, who, f"back:{uuid.uuid4().hex}", lambda t, now: decide.reconnected(t, who))
            else:
                live = self.cache.live.get(table_id)
                if live is not None and who in live.table.seats:
                    idle_s = self.idle_stand_s
                    await self.execute(
                        table_id, who, f"lost:{uuid.uuid4().hex}",
                        lambda t, now: [] if who in live.present else decide.connection_lost(t, who, now, idle_s))
        except Exception as exc:
            log.info("presence not recorded", table_id=table_id, player=who, reason=str(exc))
