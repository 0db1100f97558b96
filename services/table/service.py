"""The table service: the gRPC API over the table aggregates and their JetStream logs.

Every accepted command is one record on ``chieu.table.<table_id>``, appended with the
expected last subject sequence (two processes never fork a log: the loser reloads and
decides again) and ``Nats-Msg-Id`` = ``<table_id>:<command_id>``. A table's cached state
follows its subject, so records written by another process reach this one's watchers.
Timeouts are scheduled from the game's deadlines and appended like commands.
"""

from __future__ import annotations

import asyncio
import pickle
import time
import uuid
from collections.abc import AsyncIterator, Callable
from importlib import metadata
from typing import Any

import grpc
from google.protobuf import json_format

from chieu.kit import auth, logs
from chieu.kit.errors import ServiceError, not_found
from chieu.kit.eventstore import Conflict, EventStore, Snapshot
from chieu.kit.settings import Settings
from chieu.table import codec
from chieu.table.aggregate import Table, check_command_id, check_table_id
from chieu.table.v1 import log_pb2, table_service_pb2, table_service_pb2_grpc

log = logs.get("chieu.table")

SNAPSHOT_TAG = f"table-v1-{metadata.version('chieu')}"
"""Snapshots of another code version are ignored (a snapshot is a cache of the log)."""
MAX_CONFLICT_RETRIES = 20

Decider = Callable[[Table], list[log_pb2.TableEvent]]


def now_ms() -> int:
    return int(time.time() * 1000)


class _Live:
    """A cached table with its lock, its watchers, its follower and its timer."""

    def __init__(self, table: Table) -> None:
        self.table = table
        self.lock = asyncio.Lock()
        self.watchers: set[tuple[str | None, asyncio.Queue[table_service_pb2.TableView | None]]] = set()
        self.follower: asyncio.Task[None] | None = None
        self.timer: asyncio.TimerHandle | None = None
        self.since_snapshot = 0


class Tables:
    """The tables this process serves: loaded on demand, kept in step with their logs."""

    def __init__(self, store: EventStore, settings: Settings) -> None:
        self.store = store
        self.settings = settings
        self._live: dict[str, _Live] = {}
        self._loading: dict[str, asyncio.Lock] = {}
        self._closed = False

    # ------------------------------------------------------------ loading

    async def get(self, table_id: str, *, must_exist: bool = True) -> _Live:
        live = self._live.get(table_id)
        if live is None:
            lock = self._loading.setdefault(table_id, asyncio.Lock())
            async with lock:
                live = self._live.get(table_id)
                if live is None:
                    live = _Live(await self._load(table_id))
                    if live.table.exists:
                        self._live[table_id] = live
                        live.follower = asyncio.create_task(self._follow(live))
                        self._schedule(live)
        if must_exist and not live.table.exists:
            raise not_found("unknown_table", f"no table {table_id!r}")
        return live

    async def _load(self, table_id: str) -> Table:
        table = Table(table_id)
        snap = await self.store.load_snapshot(table_id)
        if snap is not None and snap.tag == SNAPSHOT_TAG:
            try:
                loaded = pickle.loads(snap.data)
                if isinstance(loaded, Table) and loaded.last_seq == snap.seq:
                    table = loaded
            except Exception:
                log.warning("unreadable snapshot, replaying", table_id=table_id)
        await self._catch_up(table)
        return table

    async def _catch_up(self, table: Table) -> None:
        for stored in await self.store.read(table.table_id, after=table.last_seq):
            table.apply(log_pb2.Record.FromString(stored.data), stored.seq)

    async def _follow(self, live: _Live) -> None:
        """Fold records other processes append; wake this process's watchers."""
        table = live.table
        try:
            async for stored in self.store.follow(table.table_id, after=table.last_seq):
                if stored.seq <= table.last_seq:
                    continue
                async with live.lock:
                    if stored.seq <= table.last_seq:
                        continue
                    record = log_pb2.Record.FromString(stored.data)
                    table.apply(record, stored.seq)
                    self._after_apply(live)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("follower stopped", table_id=table.table_id)
            self._live.pop(table.table_id, None)

    # ------------------------------------------------------------ commands

    async def execute(self, table_id: str, actor: str, command_id: str, decide: Decider,
                      *, create: bool = False) -> Table:
        """Decide and append one command, retrying on a conflicting writer."""
        command_id = check_command_id(command_id) or f"srv-{uuid.uuid4().hex}"
        live = await self.get(table_id, must_exist=not create)
        if create and not live.table.exists:
            # not cached until it exists: serialise creators of the same id on a fresh lock
            live = self._live.setdefault(table_id, live)
        for _ in range(MAX_CONFLICT_RETRIES):
            async with live.lock:
                table = live.table
                if f"{actor}/{command_id}" in table.commands:
                    return table
                events = decide(table)
                record = log_pb2.Record(
                    table_id=table_id, version=table.version + 1, command_id=command_id, actor=actor,
                    server_time_ms=now_ms(), game=table.game_key or _game_of(events), events=events,
                )
                try:
                    appended = await self.store.append(
                        table_id, record.SerializeToString(), expected_seq=table.last_seq,
                        msg_id=f"{table_id}:{actor}/{command_id}",
                    )
                except Conflict:
                    await self._catch_up(table)
                    continue
                if appended.duplicate:
                    await self._catch_up(table)
                    return table
                table.apply(record, appended.seq)
                self._after_apply(live)
                if create and live.follower is None:
                    live.follower = asyncio.create_task(self._follow(live))
                return table
        raise ServiceError(grpc.StatusCode.ABORTED, "busy", "the table is too busy; try again")

    def _after_apply(self, live: _Live) -> None:
        table = live.table
        views: dict[str | None, table_service_pb2.TableView] = {}
        for who, queue in list(live.watchers):
            if who not in views:
                views[who] = table.view(who)
            queue.put_nowait(views[who])
        self._schedule(live)
        live.since_snapshot += 1
        if live.since_snapshot >= self.settings.snapshot_every:
            live.since_snapshot = 0
            data = pickle.dumps(table, protocol=pickle.HIGHEST_PROTOCOL)
            task = asyncio.create_task(self.store.save_snapshot(
                table.table_id, Snapshot(table.last_seq, SNAPSHOT_TAG, data)))
            task.add_done_callback(_log_failure)

    # ------------------------------------------------------------ clocks

    def _schedule(self, live: _Live) -> None:
        if live.timer is not None:
            live.timer.cancel()
            live.timer = None
        table = live.table
        if not table.playing or self._closed:
            return
        deadlines = list(table.game.deadlines(table.game_state))
        if not deadlines:
            return
        first = min(deadlines, key=lambda d: d.at_ms)
        delay = max(0.0, (first.at_ms - now_ms()) / 1000)
        version = table.version
        loop = asyncio.get_running_loop()
        live.timer = loop.call_later(
            delay, lambda: asyncio.create_task(self._fire(table.table_id, first.seat, version))
        )

    async def _fire(self, table_id: str, seat: int, version: int) -> None:
        try:
            await self.execute(
                table_id, "system", f"timeout:{version}:{seat}",
                lambda t: t.time_out(seat, now_ms()),
            )
        except Exception as exc:
            log.info("timeout not applied", table_id=table_id, seat=seat, reason=str(exc))

    # ------------------------------------------------------------ watching

    async def watch(self, table_id: str, who: str | None) -> AsyncIterator[table_service_pb2.TableView]:
        live = await self.get(table_id)
        queue: asyncio.Queue[table_service_pb2.TableView | None] = asyncio.Queue()
        entry = (who, queue)
        async with live.lock:
            live.watchers.add(entry)
            first = live.table.view(who)
        try:
            yield first
            while True:
                view = await queue.get()
                if view is None:
                    return
                yield view
        finally:
            live.watchers.discard(entry)

    async def close(self) -> None:
        self._closed = True
        for live in self._live.values():
            if live.timer is not None:
                live.timer.cancel()
            if live.follower is not None:
                live.follower.cancel()
            for _, queue in live.watchers:
                queue.put_nowait(None)
        await asyncio.gather(*(lv.follower for lv in self._live.values() if lv.follower), return_exceptions=True)
        self._live.clear()


def _game_of(events: list[log_pb2.TableEvent]) -> str:
    for e in events:
        if e.WhichOneof("kind") == "table_created":
            return e.table_created.game
    return ""


def _log_failure(task: asyncio.Task[Any]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.warning("snapshot not saved", error=str(task.exception()))


class TableService(table_service_pb2_grpc.TableServiceServicer):
    """The gRPC servicer of ``chieu.table.v1.TableService``."""

    def __init__(self, tables: Tables, settings: Settings) -> None:
        self.tables = tables
        self.settings = settings

    def _who(self, context: grpc.aio.ServicerContext[Any, Any]) -> auth.Principal:
        return auth.principal(context, self.settings.token_secret)

    async def CreateTable(self, request: table_service_pb2.CreateTableRequest,
                          context: grpc.aio.ServicerContext[Any, Any]) -> table_service_pb2.CreateTableResponse:
        who = self._who(context)
        raw = json_format.MessageToDict(request.options)
        command_id = check_command_id(request.command_id)
        # a repeated create with the same command id names the same table
        seed = f"{who.player_id}/{command_id}"
        table_id = uuid.uuid5(uuid.NAMESPACE_URL, seed).hex if command_id else uuid.uuid4().hex
        table = await self.tables.execute(
            table_id, who.player_id, command_id or f"create-{table_id}",
            lambda t: t.create(request.game, raw, who.player_id, request.stake or 1,
                               request.currency or log_pb2.CURRENCY_POINTS),
            create=True,
        )
        return table_service_pb2.CreateTableResponse(table=table.view(who.player_id))

    async def TakeSeat(self, request: table_service_pb2.TakeSeatRequest,
                       context: grpc.aio.ServicerContext[Any, Any]) -> table_service_pb2.TakeSeatResponse:
        who = self._who(context)
        table_id = check_table_id(request.table_id)
        seat = request.seat if request.HasField("seat") else None
        table = await self.tables.execute(table_id, who.player_id, request.command_id,
                                          lambda t: t.take_seat(who.player_id, seat))
        your = table.table_seat_of(who.player_id)
        return table_service_pb2.TakeSeatResponse(seat=-1 if your is None else your, table=table.view(who.player_id))

    async def StartHand(self, request: table_service_pb2.StartHandRequest,
                        context: grpc.aio.ServicerContext[Any, Any]) -> table_service_pb2.StartHandResponse:
        who = self._who(context)
        table_id = check_table_id(request.table_id)
        table = await self.tables.execute(table_id, who.player_id, request.command_id,
                                          lambda t: t.start_hand(who.player_id, now_ms()))
        return table_service_pb2.StartHandResponse(table=table.view(who.player_id))

    async def Act(self, request: table_service_pb2.ActRequest,
                  context: grpc.aio.ServicerContext[Any, Any]) -> table_service_pb2.ActResponse:
        who = self._who(context)
        table_id = check_table_id(request.table_id)
        live = await self.tables.get(table_id)
        command = codec.unpack(request.command, live.table.game_key, commands_only=True)
        expected = request.expected_version if request.HasField("expected_version") else None

        def decide(t: Table) -> list[log_pb2.TableEvent]:
            if expected is not None and expected != t.version:
                raise ServiceError(grpc.StatusCode.ABORTED, "stale_version",
                                   f"the table is at version {t.version}, not {expected}")
            return t.act(who.player_id, command, now_ms())

        table = await self.tables.execute(table_id, who.player_id, request.command_id, decide)
        return table_service_pb2.ActResponse(table=table.view(who.player_id))

    async def GetTable(self, request: table_service_pb2.GetTableRequest,
                       context: grpc.aio.ServicerContext[Any, Any]) -> table_service_pb2.GetTableResponse:
        who = self._who(context)
        live = await self.tables.get(check_table_id(request.table_id))
        return table_service_pb2.GetTableResponse(table=live.table.view(who.player_id))

    async def Watch(self, request: table_service_pb2.WatchRequest,
                    context: grpc.aio.ServicerContext[Any, Any]) -> AsyncIterator[table_service_pb2.WatchResponse]:
        who = self._who(context)
        async for view in self.tables.watch(check_table_id(request.table_id), who.player_id):
            yield table_service_pb2.WatchResponse(table=view)
