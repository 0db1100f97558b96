"""The tables this process serves: the cache, the follower, the timers, the watch fan-out and
presence (:class:`Tables`), and the edge where a decider's refusal becomes a gRPC status.

Every accepted command is one record on ``chieu.table.<table_id>``, appended with the
expected last subject sequence (two processes never fork a log: the loser reloads and
decides again) and ``Nats-Msg-Id`` = ``<table_id>:<actor>/<command_id>``. One follower per
process folds what other processes append into the cached tables, so their watchers see it.
Timeouts are scheduled from the game's deadlines and appended like commands. Idle tables
(no watcher, no hand on the clock) leave the cache, least recently used first, beyond
``CHIEU_TABLE_CACHE`` tables.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import socket
import time
import uuid
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable
from typing import Any, NoReturn

import grpc
from google.protobuf.message import Message

from chieu.kit import logs, metrics
from chieu.kit.errors import ServiceError, not_found, precondition
from chieu.kit.eventstore import Conflict, EventStore, Snapshot, Stored
from chieu.kit.settings import Settings
from chieu.table import decide, presence, snapshot
from chieu.table.decide import Decision
from chieu.table.refusals import Refused
from chieu.table.v1 import log_pb2, table_service_pb2
from chieu.table.views import Views
from chieu.tablelog import sealing
from chieu.tablelog.fold import Table

log = logs.get("chieu.table")

SESSION_CHECK_S = 1.0
"""How often an open ``Watch`` looks again whether its session was revoked."""
CONFLICT_DEADLINE_S = 10.0
"""How long a command keeps retrying against racing writers before it is ABORTED."""

Decider = Callable[[Table, int], Decision]
"""A table command: the table and the server time (ms) of the command, read once."""


def error(refused: Refused) -> ServiceError:
    """The gRPC status of a decider's refusal: its kind's code, its reason and its message."""
    return ServiceError(grpc.StatusCode[refused.kind.value], refused.reason, refused.message)


def refuse(refused: Refused) -> NoReturn:
    raise error(refused)


def check_table_id(table_id: str) -> str:
    """``table_id`` if well formed; else INVALID_ARGUMENT / ``bad_table_id``."""
    if refused := decide.table_id_refused(table_id):
        refuse(refused)
    return table_id


def check_command_id(command_id: str) -> str:
    """``command_id`` if empty or well formed; else INVALID_ARGUMENT / ``bad_command_id``."""
    if refused := decide.command_id_refused(command_id):
        refuse(refused)
    return command_id


MARK_WAIT_S = 2.0
"""How long :meth:`Tables.close` waits for active marks still being written."""


def now_ms() -> int:
    return int(time.time() * 1000)


class _Live:
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
        self.pending: list[Stored] | None = []
        """Records the follower saw while the table was loading (``None`` once loaded)."""


class Tables:
    """The tables this process serves: loaded on demand, kept in step with their logs by one
    follower of the whole stream (records other processes append reach this one's watchers)."""

    def __init__(self, store: EventStore, settings: Settings, keys: sealing.SealKeys) -> None:
        self.store = store
        self.settings = settings
        self.keys = keys
        """The seal keyset: what a hand in play hides is sealed in the log (:mod:`~chieu.tablelog.sealing`)."""
        self._opener = sealing.Opener(keys)
        self._live: OrderedDict[str, _Live] = OrderedDict()
        self._loading: dict[str, asyncio.Lock] = {}
        self._closed = False
        self._closing = False
        """Set once the server begins to stop: a watch stream closed from then on is the server's
        doing, not the player's lost connection."""
        self._follower: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._marks: set[asyncio.Task[Any]] = set()
        """Background work of this instance (timers' commands, presence, bookkeeping)."""
        instance = settings.instance or f"{socket.gethostname()}:{os.getpid()}"
        self.beacon = presence.Beacon(store.nc.publish, instance, self.spectators, self.spectated,
                                      who=self.spectator_ids)
        """Announces this process's spectators per table (for the lobby's table list)."""
        metrics.TABLES_OPEN.set_function(lambda: len(self._live))

    def _spawn(self, coro: Any, *, mark: bool = False) -> None:
        """Run ``coro`` in the background, keeping a reference until it is done (``mark``: an
        active mark, which :meth:`close` waits for instead of cancelling it)."""
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        if mark:
            self._marks.add(task)
            task.add_done_callback(self._marks.discard)

    async def _mark_active(self, table_id: str, active: bool) -> None:
        """Mark the table active (a hand on the clock) or not, so a restart resumes it; a mark
        that fails is logged (the table then resumes only when a player asks for it)."""
        try:
            await self.store.mark_active(table_id, active)
        except Exception as exc:
            log.warning("active mark not written", table_id=table_id, active=active, error=str(exc))

    async def start(self) -> None:
        """Start following the stream (before any table is loaded)."""
        if self._follower is None:
            ready = asyncio.Event()
            self._follower = asyncio.create_task(self._follow(ready))
            await ready.wait()
            await self.beacon.start()
            if self.settings.table_idle_expiry_s > 0:
                self._spawn(self._expire_idle_tables())

    def played(self, table_id: str) -> bool | None:
        """Whether a hand ever started at ``table_id`` (None: the table is not in memory here)."""
        live = self._live.get(table_id)
        return None if live is None else live.table.hand_no > 0

    def expire_idle(self, idle_s: float, now: float | None = None) -> int:
        """Close the empty tables idle for ``idle_s`` here (nobody seated, no hand, no watcher, no
        command for that long): they leave this process's memory (their logs stay; the lobby lists
        no table nobody sits at). Returns how many."""
        t = time.monotonic() if now is None else now
        gone = 0
        for table_id, live in list(self._live.items()):
            table = live.table
            if (t - live.touched >= idle_s and live.pending is None and not live.watchers and not table.playing
                    and not live.lock.locked() and all(p is None for p in table.seats)):
                if live.timer is not None:
                    live.timer.cancel()
                del self._live[table_id]
                gone += 1
        return gone

    async def _expire_idle_tables(self) -> None:
        """Every quarter of ``CHIEU_TABLE_IDLE_EXPIRY_S`` (at most a minute): :meth:`expire_idle`."""
        idle_s = self.settings.table_idle_expiry_s
        while not self._closed:
            await asyncio.sleep(min(60.0, idle_s / 4))
            if n := self.expire_idle(idle_s):
                log.info("empty tables closed after their idle time", tables=n, idle_s=idle_s)

    def spectators(self, table_id: str) -> int:
        """Viewers of the table through this process who hold no seat at it (旁观)."""
        live = self._live.get(table_id)
        if live is None:
            return 0
        players = {who for who, _ in live.watchers if who is not None and live.table.table_seat_of(who) is None}
        return len(players) + sum(1 for who, _ in live.watchers if who is None)

    def spectator_ids(self, table_id: str) -> list[str]:
        """The signed-in spectators of the table through this process, by player id, sorted."""
        live = self._live.get(table_id)
        if live is None:
            return []
        return sorted({who for who, _ in live.watchers if who is not None and live.table.table_seat_of(who) is None})

    def spectated(self) -> dict[str, int]:
        """Every cached table's spectators through this process (tables with none left out)."""
        counts = {table_id: self.spectators(table_id) for table_id, live in self._live.items() if live.watchers}
        return {t: n for t, n in counts.items() if n}

    # ------------------------------------------------------------ loading

    async def get(self, table_id: str, *, must_exist: bool = True) -> _Live:
        live = self._live.get(table_id)
        if live is None or live.pending is not None:
            lock = self._loading.setdefault(table_id, asyncio.Lock())
            try:
                async with lock:
                    live = self._live.get(table_id)
                    if live is None:
                        live = await self._load_live(table_id)
                        self._evict()
            finally:
                if not lock.locked():
                    self._loading.pop(table_id, None)
        else:
            self._live.move_to_end(table_id)
        if must_exist and not live.table.exists:
            raise not_found("unknown_table", f"no table {table_id!r}")
        return live

    async def _load_live(self, table_id: str) -> _Live:
        await self.start()
        live = _Live(Table(table_id))
        self._live[table_id] = live  # from here on the follower keeps what it sees in live.pending
        try:
            live.table = await self._load(table_id)
        except BaseException:
            self._live.pop(table_id, None)
            raise
        for stored in live.pending or ():
            if stored.seq > live.table.last_seq:
                self._apply(live.table, stored)
        live.pending = None
        if not live.table.exists:
            self._live.pop(table_id, None)
        else:
            self._schedule(live)
        return live

    def _evict(self) -> None:
        """Drop least recently used idle tables (no watcher, no hand on the clock) over the limit."""
        excess = len(self._live) - self.settings.table_cache
        for table_id, live in list(self._live.items()):
            if excess <= 0:
                return
            if live.pending is None and not live.watchers and not live.table.playing and not live.lock.locked():
                if live.timer is not None:
                    live.timer.cancel()
                del self._live[table_id]
                excess -= 1

    async def _load(self, table_id: str) -> Table:
        table = Table(table_id)
        snap = await self.store.load_snapshot(table_id)
        if snap is not None and snap.tag == sealing.SNAPSHOT_TAG + snapshot.TAG:
            try:
                loaded = snapshot.decode(self._open_snapshot(table_id, snap.data))
                if loaded.table_id == table_id and loaded.last_seq == snap.seq:
                    table = loaded
            except snapshot.Unusable as e:  # a snapshot is a cache: replay the log instead
                log.warning("unusable snapshot, replaying", table_id=table_id, reason=str(e))
        await self._catch_up(table)
        return table

    async def _catch_up(self, table: Table) -> None:
        """Fold what the log holds after ``table``; its finished hands are opened with the seeds
        their ``HandEnded`` revealed (no seal key needed for them)."""
        records = [(stored.seq, log_pb2.Record.FromString(stored.data))
                   for stored in await self.store.read(table.table_id, after=table.last_seq)]
        revealed = sealing.revealed_seeds(record for _, record in records)
        for seq, record in records:
            table.apply(self._opener.open(record, table, revealed), seq)

    def _apply(self, table: Table, stored: Stored) -> None:
        """Fold one stored record into ``table``, its sealed parts opened."""
        table.apply(self._opener.open(log_pb2.Record.FromString(stored.data), table), stored.seq)

    def _open_snapshot(self, table_id: str, data: bytes) -> bytes:
        try:
            return self.keys.open_snapshot(table_id, data)
        except sealing.SealError as e:
            raise snapshot.Unusable(str(e)) from None

    def seeds_to_deal(self, table: Table) -> tuple[bytes, log_pb2.NextSeed]:
        """The seed of ``table``'s next hand (committed before: ``table.next_seed``, opened) and
        the hand after's, drawn, committed and sealed now. A table logged before commitments
        were published ahead has none: its hand gets a fresh seed (the audit says so)."""
        committed = table.next_seed
        try:
            if committed is not None and int(committed.hand_no) == table.hand_no + 1:
                seed = self.keys.open_seed(table.table_id, committed)
            else:
                seed = os.urandom(sealing.SEED_BYTES)
        except sealing.SealError as e:
            log.error("the committed seed does not open", table_id=table.table_id, reason=str(e))
            raise precondition("seal_key_missing", "this table's next deal is sealed under a key this "
                               "server does not hold; the operator must put it back in the keyset") from None
        return seed, self.keys.new_seed(table.table_id, table.hand_no + 2)

    async def _follow(self, ready: asyncio.Event) -> None:
        """Fold the records other processes append into the cached tables; wake the watchers."""
        subscribed, restart = ready, False
        while not self._closed:
            if restart:  # what was appended while nobody followed: read it from the store
                self._spawn(self._resync(subscribed))
            try:
                async with contextlib.aclosing(self.store.follow_all(subscribed)) as records:
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
        for live in list(self._live.values()):
            if live.pending is None:
                async with live.lock:
                    version = live.table.version
                    await self._catch_up(live.table)
                    if live.table.version != version:
                        self._after_apply(live)

    async def _fold(self, table_id: str, stored: Stored) -> None:
        live = self._live.get(table_id)
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
                await self._catch_up(table)  # a gap: read what was missed from the store
            else:
                table.apply(self._opener.open(record, table), stored.seq)
            self._after_apply(live)

    # ------------------------------------------------------------ commands

    async def execute(self, table_id: str, actor: str, command_id: str, decider: Decider,
                      *, create: bool = False, game_command: Any = None, timeout_seat: int | None = None,
                      request: Message | None = None) -> Table:
        """Decide and append one command, retrying on a conflicting writer.

        A command id the actor used before returns the table as it is (the command acted once),
        if ``request`` is the same request as then; another request is refused
        (``command_id_reused``), as the ledger refuses a transfer id used with other content.
        """
        command_id = check_command_id(command_id) or f"srv-{uuid.uuid4().hex}"
        digest = request_digest(request) if request is not None else b""
        key = f"{actor}/{command_id}"
        live = await self.get(table_id, must_exist=not create)
        if create and not live.table.exists:
            # not cached until it exists: serialise creators of the same id on a fresh lock
            live = self._live.setdefault(table_id, live)
        give_up = time.monotonic() + CONFLICT_DEADLINE_S
        while time.monotonic() < give_up:
            async with live.lock:
                table = live.table
                if key in table.commands:
                    return _same_request(table, key, digest)
                now = now_ms()
                events = decider(table, now)
                if isinstance(events, Refused):
                    # decided on this process's copy: a copy behind the log (its follower late) is
                    # brought up to date and the command decided again (a retry of a command another
                    # process applied is then found acted, not refused)
                    if await self.store.last_seq(table_id) <= table.last_seq:
                        refuse(events)
                    version = table.version
                    await self._catch_up(table)
                    if table.version != version:
                        self._after_apply(live)
                    continue
                if not events:
                    return table
                record = log_pb2.Record(
                    table_id=table_id, version=table.version + 1, command_id=command_id, actor=actor,
                    server_time_ms=now, game=table.game_key or _game_of(events), events=events,
                    command_digest=digest,
                )
                if game_command is not None:
                    record.game_command.CopyFrom(game_command)
                elif timeout_seat is not None:
                    record.timeout_seat = timeout_seat
                try:
                    appended = await self.store.append(
                        table_id, sealing.seal_record(record, table).SerializeToString(), expected_seq=table.last_seq,
                        msg_id=f"{table_id}:{actor}/{command_id}",
                    )
                except Conflict:
                    await self._catch_up(table)
                    continue
                if appended.duplicate:
                    await self._catch_up(table)
                    return _same_request(table, key, digest)
                was_playing = table.playing
                table.apply(record, appended.seq)
                self._after_apply(live)
                if table.playing != was_playing:
                    self._spawn(self._mark_active(table_id, table.playing), mark=True)
                    if was_playing:
                        metrics.HANDS.labels(record.game).inc()
                return table
        raise ServiceError(grpc.StatusCode.ABORTED, "busy", "the table is too busy; try again")

    def _views(self, table: Table) -> Views:
        live = self._live.get(table.table_id)
        return live.views if live is not None and live.table is table else Views()

    def view(self, table: Table, who: str | None) -> table_service_pb2.TableView:
        """``who``'s view of a table this process serves (built once per version and viewer)."""
        return self._views(table).view(table, who)

    def wire(self, table: Table, who: str | None) -> bytes:
        """``who``'s view of a table this process serves, as a serialized ``WatchResponse``."""
        return self._views(table).wire(table, who)

    def _after_apply(self, live: _Live) -> None:
        table = live.table
        live.touched = time.monotonic()
        for who, queue in list(live.watchers):
            queue.put_nowait(live.views.wire(table, who))
        if live.watchers:  # a spectator who sits down is one no more (and one who stands up is)
            self.beacon.touch(table.table_id)
        for who in [p for p in table.lost if live.present.get(p)]:
            # lost on another replica, but a stream of this player is open here: still present
            self._spawn(self._presence(table.table_id, who, back=True))
        self._schedule(live)
        live.since_snapshot += 1
        if live.since_snapshot >= self.settings.snapshot_every:
            live.since_snapshot = 0
            task = asyncio.create_task(self.store.save_snapshot(
                table.table_id, Snapshot(table.last_seq, sealing.SNAPSHOT_TAG + snapshot.TAG,
                                         self.keys.seal_snapshot(table.table_id, snapshot.encode(table)))))
            task.add_done_callback(_log_failure)

    # ------------------------------------------------------------ clocks

    def _schedule(self, live: _Live) -> None:
        """Arm the table's one timer for its earliest deadline (a game timeout or a reconnect grace)."""
        if live.timer is not None:
            live.timer.cancel()
            live.timer = None
        table = live.table
        due = table.due()
        if not due or self._closed:
            return
        at, action, arg = min(due, key=lambda d: d[0])
        delay = max(0.0, (at - now_ms() + 2) / 1000)
        version = table.version
        loop = asyncio.get_running_loop()
        live.timer = loop.call_later(
            delay, lambda: self._spawn(self._fire(table.table_id, action, arg, version))
        )

    async def _fire(self, table_id: str, action: str, arg: Any, version: int) -> None:
        """Append a timeout (or a disconnect) as a system command; stale ones are refused."""
        try:
            if action == "timeout":
                await self.execute(table_id, "system", f"timeout:{version}:{arg}",
                                   lambda t, now: decide.time_out(t, arg, now), timeout_seat=arg)
            else:
                await self.execute(table_id, "system", f"disconnect:{version}:{arg}",
                                   lambda t, now: decide.disconnect(t, arg, now))
        except Exception as exc:
            log.info("timer not applied", table_id=table_id, action=action, arg=str(arg), reason=str(exc))
            return
        live = self._live.get(table_id)
        if live is not None and live.table.version == version:
            # nothing was due yet (the timer fired a little early): wait for the deadline again
            due = live.table.due()
            if due and min(d[0] for d in due) > now_ms():
                self._schedule(live)

    # ------------------------------------------------------------ watching

    async def watch(self, table_id: str, who: str | None, from_version: int = 0, *, until_s: float | None = None,
                    check: Callable[[], None] | None = None) -> AsyncIterator[bytes]:
        """The caller's views; the stream is the caller's presence at the table.

        The stream ends with its token: ``until_s`` (the token's expiry, unix seconds) ends it
        with UNAUTHENTICATED / ``token_expired``, and ``check`` (raising when the session was
        revoked) is asked at least every :data:`SESSION_CHECK_S` seconds. The client watches
        again with a fresh token, from the version it has.
        """
        live = await self.get(table_id)
        queue: asyncio.Queue[bytes | None] = asyncio.Queue()
        entry = (who, queue)
        async with live.lock:
            live.watchers.add(entry)
            first, version = live.views.wire(live.table, who), live.table.version
        metrics.WATCHERS.inc()
        self.beacon.touch(table_id)
        if who is not None:
            live.present[who] = live.present.get(who, 0) + 1
            if live.present[who] == 1 and who in live.table.lost:
                self._spawn(self._presence(table_id, who, back=True))
        try:
            if version != from_version:
                yield first
            while True:
                wait = None
                if until_s is not None:
                    wait = until_s - time.time()
                    if wait <= 0:
                        raise ServiceError(grpc.StatusCode.UNAUTHENTICATED, "token_expired",
                                           "the session token expired: watch again with a fresh one, from your version")
                if check is not None:
                    check()
                    wait = SESSION_CHECK_S if wait is None else min(wait, SESSION_CHECK_S)
                try:
                    view = await asyncio.wait_for(queue.get(), wait)
                except TimeoutError:
                    continue
                if view is None:
                    return
                yield view
        finally:
            metrics.WATCHERS.dec()
            live.watchers.discard(entry)
            self.beacon.touch(table_id)
            if who is not None:
                live.present[who] -= 1
                if live.present[who] == 0 and not self._closed:
                    del live.present[who]
                    if not self._closing:  # the server's own stop is no lost connection of the player
                        self._spawn(self._presence(table_id, who, back=False))

    async def _presence(self, table_id: str, who: str, *, back: bool) -> None:
        if self._closed or self._closing:
            return
        try:
            if back:
                await self.execute(table_id, who, f"back:{uuid.uuid4().hex}", lambda t, now: decide.reconnected(t, who))
            else:
                live = self._live.get(table_id)
                if live is not None and live.table.seat_of(who) is not None:
                    await self.execute(
                        table_id, who, f"lost:{uuid.uuid4().hex}",
                        lambda t, now: [] if who in live.present else decide.connection_lost(t, who, now))
        except Exception as exc:
            log.info("presence not recorded", table_id=table_id, player=who, reason=str(exc))

    async def resume(self) -> int:
        """Load every table with a hand on the clock, so no deadline is lost across a restart; then
        the players whose connection was lost are not held to the time no process served the table
        (:meth:`_excuse_absence`) — once every table is loaded, so a grace moved later is not spent
        loading the other tables (thousands, maybe) before this process serves anyone."""
        ids = await self.store.active_keys()
        lost: list[_Live] = []
        for table_id in ids:
            try:
                live = await self.get(table_id)
            except Exception:
                log.exception("cannot resume table", table_id=table_id)
                continue
            if live.table.lost:
                if live.timer is not None:  # armed by the load, with no await since: not fired
                    live.timer.cancel()
                    live.timer = None
                lost.append(live)
        for live in lost:
            try:
                await self._excuse_absence(live)
            except Exception:
                log.exception("cannot resume table", table_id=live.table.table_id)
        return len(ids)

    async def _excuse_absence(self, live: _Live) -> None:
        """Move the lost players' reconnect graces later by the time since the table's last record:
        a server that is down writes nothing, and a player cannot come back to a server that is
        not there, so the outage is not counted against the grace (issue 28). The table's timer
        waits until the new deadlines are written (cancelled before the first ``await``)."""
        if live.timer is not None:
            live.timer.cancel()
            live.timer = None
        table_id = live.table.table_id
        try:
            last = await self.store.last(table_id)
            if last is None:
                return
            absent_ms = now_ms() - log_pb2.Record.FromString(last.data).server_time_ms
            if absent_ms > 0:
                version = live.table.version
                await self.execute(table_id, "system", f"resume:{version}",
                                   lambda t, now: decide.extend_graces(t, absent_ms))
                log.info("reconnect graces extended by the time the table was not served", table_id=table_id,
                         players=sorted(live.table.lost), by_s=round(absent_ms / 1000, 1))
        finally:
            self._schedule(live)

    def stopping(self) -> None:
        """The server begins to stop (before it closes the watch streams): from now on a closed
        stream writes no ``ConnectionLost`` — a player is not penalised for the server's stop."""
        self._closing = True

    async def close(self) -> None:
        self._closing = True
        self._closed = True
        await self.beacon.stop()
        for live in self._live.values():
            if live.timer is not None:
                live.timer.cancel()
            for _, queue in live.watchers:
                queue.put_nowait(None)
        if self._follower is not None:
            self._follower.cancel()
            await asyncio.gather(self._follower, return_exceptions=True)
        if self._marks:  # a table's active mark is what a restart resumes by: let it land (briefly)
            await asyncio.wait(list(self._marks), timeout=MARK_WAIT_S)
        # presence and bookkeeping tasks still running would race the connection's drain
        pending = list(self._tasks)
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        self._live.clear()


def request_digest(request: Message) -> bytes:
    """The first 16 bytes of the SHA-256 of ``request`` as sent, its ``command_id`` left out."""
    copy = type(request)()
    copy.CopyFrom(request)
    if "command_id" in copy.DESCRIPTOR.fields_by_name:
        copy.ClearField("command_id")
    return hashlib.sha256(copy.SerializeToString(deterministic=True)).digest()[:16]


def _same_request(table: Table, key: str, digest: bytes) -> Table:
    """``table`` when the remembered command ``key`` had this request; else ``command_id_reused``."""
    _, before = table.commands.get(key, (0, b""))
    if digest and before and digest != before:
        raise precondition("command_id_reused",
                           "that command id was used before with another request; use a new command id")
    return table


def _game_of(events: decide.Events) -> str:
    for e in events:
        if e.WhichOneof("kind") == "table_created":
            return e.table_created.game
    return ""


def _log_failure(task: asyncio.Task[Any]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.warning("snapshot not saved", error=str(task.exception()))

