"""The live table list: a durable JetStream consumer folds the table log into ``lobby_tables``,
exactly once, and every change is announced to the lobby processes' room watchers.

Exactly once, in order:

- One lobby process projects at a time: the one holding a PostgreSQL session advisory lock on
  its own connection, which is also the connection every projection write goes through. A
  process that loses that connection (killed, cut off) loses the lock and can write nothing more;
  another lobby process, waiting on the lock, takes over. So the records of a table are folded in
  stream order by one writer.
- Each fetched batch is applied in one transaction on that connection: an inbox row per stream
  sequence that changes the list (``ON CONFLICT DO NOTHING``: a row already there means the
  message was applied and nothing is done again), the table rows, and a ``pg_notify`` per change.
  The batch is acknowledged only after the commit; a crash before it means a redelivery that
  finds the inbox rows. A table row also keeps the version of the last record folded into it,
  and an older record is never folded again.
- Records that change nothing of the list (game moves, readiness, presence) are acknowledged
  without a write.
- A projector that takes the lead while records are delivered but unacknowledged (the last one
  died, or its batch failed) waits for their redelivery before it fetches, so a table's records
  are never folded newer first.

Every change is a ``NOTIFY lobby_tables`` with the table's summary as JSON (sent at commit by
PostgreSQL to every lobby process): :class:`Feed` listens and hands it to the room's watchers.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
from collections import defaultdict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import asyncpg
from nats.js.client import JetStreamContext

from chieu.kit import db, logs, names, tasks
from chieu.kit.durable import Durable
from chieu.kit.durable import seq as _seq
from chieu.lobby import rooms, welcome
from chieu.lobby.v1 import lobby_service_pb2 as pb
from chieu.table.v1 import log_pb2, table_service_pb2

log = logs.get("chieu.lobby.projection")

STREAM = names.TABLES.name
SUBJECTS = names.TABLES.subjects
DURABLE = names.LOBBY_DURABLE
CHANNEL = "lobby_tables"
LOCK_KEY = 0x4C_4F_42_42_59  # "LOBBY": the one projecting process holds it
STANDBY_S = 0.5
WAITING, PLAYING = table_service_pb2.TABLE_STATUS_WAITING, table_service_pb2.TABLE_STATUS_PLAYING

RELEVANT = frozenset({"table_created", "player_seated", "player_left", "host_changed", "hand_started",
                      "hand_ended", "settings_changed"})
"""The table events that change a table's line in the list."""


@dataclass(slots=True)
class Line:
    """A table's line in the list (a row of ``lobby_tables``)."""

    table_id: str
    game: str
    room_id: str
    ladder_level: int
    stake: int
    currency: int
    host: str
    seats: list[str]
    status: int
    hand_no: int
    version: int
    updated_ms: int
    seated_ms: int = 0
    old_room: str = field(default="")
    presence: bool = False
    """Announced for its spectators only (the line itself as already listed)."""

    @property
    def taken(self) -> int:
        return sum(1 for s in self.seats if s)

    def payload(self) -> str:
        return json.dumps({"t": self.table_id, "g": self.game, "r": self.room_id, "o": self.old_room,
                           "l": self.ladder_level, "k": self.stake, "c": self.currency, "h": self.host,
                           "s": self.seats, "st": self.status, "n": self.hand_no, "v": self.version,
                           "u": self.updated_ms}, separators=(",", ":"))


def line_of(r: asyncpg.Record | dict[str, Any]) -> Line:
    return Line(r["table_id"], r["game"], r["room_id"], r["ladder_level"], r["stake"], r["currency"], r["host"],
                list(r["seats"]), r["status"], r["hand_no"], r["version"], r["updated_ms"], r["seated_ms"])


def summary(line: Line, spectators: int = 0) -> pb.TableSummary:
    taken = line.taken
    return pb.TableSummary(
        table_id=line.table_id, game=line.game, room_id=line.room_id, ladder_level=line.ladder_level,
        stake=line.stake, currency=line.currency, host=line.host, max_seats=len(line.seats),  # type: ignore[arg-type]
        seats_taken=taken, seats_free=len(line.seats) - taken, seats=line.seats, spectators=spectators,
        status=line.status, hand_no=line.hand_no, version=line.version, updated_ms=line.updated_ms)  # type: ignore[arg-type]


def from_payload(text: str) -> Line:
    d = json.loads(text)
    return Line(d["t"], d["g"], d["r"], d["l"], d["k"], d["c"], d["h"], d["s"], d["st"], d["n"], d["v"], d["u"],
                old_room=d["o"])


COLUMNS = "table_id, game, room_id, ladder_level, stake, currency, host, seats, status, hand_no, version, " \
          "updated_ms, seated_ms"


async def write(conn: db.Conn, line: Line) -> None:
    """Upsert a table's line and announce it (at commit) to every lobby process."""
    await conn.execute(
        f"INSERT INTO lobby_tables ({COLUMNS}, taken) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12,"
        " $13, $14) ON CONFLICT (table_id) DO UPDATE SET room_id = $3, stake = $5, host = $7, seats = $8,"
        " status = $9, hand_no = $10, version = $11, updated_ms = $12, seated_ms = $13, taken = $14",
        line.table_id, line.game, line.room_id, line.ladder_level, line.stake, line.currency, line.host, line.seats,
        line.status, line.hand_no, line.version, line.updated_ms, line.seated_ms, line.taken)
    await conn.execute("SELECT pg_notify($1, $2)", CHANNEL, line.payload())


def fold(line: Line | None, record: log_pb2.Record, room_of: Callable[[Line], str]) -> Line | None:
    """A table's line after one record (``None``: the record does not create a table we know)."""
    for e in record.events:
        kind = e.WhichOneof("kind")
        if kind == "table_created":
            c = e.table_created
            line = Line(record.table_id, c.game, "", c.ladder_level, c.stake or 1,
                        c.currency or log_pb2.CURRENCY_POINTS, c.host, [""] * c.seats, WAITING, 0, 0, 0)
            line.room_id = room_of(line)
        elif line is None:
            return None
        elif kind == "player_seated":
            s = e.player_seated
            if 0 <= s.seat < len(line.seats):
                line.seats[s.seat] = s.player_id
            line.seated_ms = record.server_time_ms
        elif kind == "player_left":
            left = e.player_left
            for i, p in enumerate(line.seats):
                if p == left.player_id:
                    line.seats[i] = ""
        elif kind == "host_changed":
            line.host = e.host_changed.host
        elif kind == "hand_started":
            line.status, line.hand_no = PLAYING, e.hand_started.hand_no
        elif kind == "hand_ended":
            line.status = WAITING
        elif kind == "settings_changed" and e.settings_changed.stake:
            line.stake = e.settings_changed.stake
    if line is not None:
        line.version = max(line.version, record.version)
        line.updated_ms = record.server_time_ms
    return line


def relevant(record: log_pb2.Record) -> bool:
    return any(e.WhichOneof("kind") in RELEVANT for e in record.events)


class Projection(Durable):
    """The lobby's durable consumer of the table log (one process projects; the others stand by)."""

    def __init__(self, database_url: str, js: JetStreamContext, *, durable: str = DURABLE, stream: str = STREAM,
                 subjects: str = SUBJECTS, batch: int = 256, ack_wait_s: float = 30.0,
                 after_commit: Callable[[list[Any]], Awaitable[None]] | None = None, applied_by: str = "",
                 metrics_every_s: float = 5.0) -> None:
        super().__init__(js, stream=stream, subjects=subjects, durable=durable, ack_wait_s=ack_wait_s,
                         max_ack_pending=8192, metrics_every_s=metrics_every_s)
        self.database_url = database_url
        self.batch = batch
        self.after_commit = after_commit
        """A test hook between the commit of a batch and its acknowledgement."""
        self.applied_by = applied_by or f"{socket.gethostname()}:{os.getpid()}"
        self.applied = 0
        self.projecting = False
        self._conn: asyncpg.Connection[Any] | None = None

    async def start(self) -> None:
        await self.run(self._run_forever(), name=f"lobby-projection-{self.durable}")

    async def stop(self) -> None:
        await super().stop()
        if self._conn is not None:
            with contextlib.suppress(Exception):
                await self._conn.close()
            self._conn = None

    async def _run_forever(self) -> None:
        while not self.stopping:
            try:
                await self._lead()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("projection stopped; starting again")
            self.projecting = False
            if self._conn is not None:
                with contextlib.suppress(Exception):
                    await self._conn.close()
                self._conn = None
            await asyncio.sleep(STANDBY_S)

    async def _lead(self) -> None:
        """Take the projection lock (waiting while another process holds it), then project."""
        self._conn = conn = await asyncpg.connect(self.database_url)
        said = False
        while not await conn.fetchval("SELECT pg_try_advisory_lock($1)", LOCK_KEY):
            if not said:
                log.info("another lobby process projects the table list; standing by")
                said = True
            await asyncio.sleep(STANDBY_S)
        sub = await self.subscribe()
        await self._after_the_lost_batch()
        self.projecting = True
        log.info("projecting the table list", durable=self.durable)
        try:
            while not self.stopping:
                # a failed fetch ends this lead: the lock and the connection are taken afresh
                msgs = await self.fetch(sub, self.batch, 0.5, retry_failures=False)
                if not msgs:
                    continue
                await self._apply(conn, msgs)
                if self.after_commit is not None:
                    await self.after_commit(msgs)
                for m in msgs:
                    await m.ack()
        finally:
            with contextlib.suppress(Exception):
                await sub.unsubscribe()

    async def _after_the_lost_batch(self) -> None:
        """Before the first fetch of a new lead: if records were delivered to a projector that never
        acknowledged them (it died, or its batch failed before the commit), wait until the durable
        hands them out again (its ack wait), so they come back before any newer record. Folding a
        table's newer record first would drop the older one ("folded already") from its line."""
        info = await self.js.consumer_info(self.stream, self.durable)
        if info.num_ack_pending:
            wait = info.config.ack_wait or self.ack_wait_s
            log.info("records held by a lost projector: waiting for their redelivery", pending=info.num_ack_pending,
                     wait_s=wait)
            await asyncio.sleep(wait + STANDBY_S)

    async def _apply(self, conn: asyncpg.Connection[Any], msgs: list[Any]) -> None:
        """Fold a batch in one transaction (inbox rows, table lines, notifications)."""
        records = []
        for m in msgs:
            self.metrics.delivered(m)
            try:
                rec = log_pb2.Record.FromString(m.data)
            except Exception:
                log.error("undecodable table record; skipped", seq=_seq(m))
                continue
            if relevant(rec):
                records.append((_seq(m), rec))
        if not records:
            return
        lines: dict[str, Line | None] = {}
        seen = 0
        async with conn.transaction():
            for seq, rec in records:
                fresh = await conn.fetchval(
                    "INSERT INTO lobby_inbox (stream, seq, table_id, applied_by) VALUES ($1, $2, $3, $4)"
                    " ON CONFLICT DO NOTHING RETURNING seq", self.stream, seq, rec.table_id, self.applied_by)
                if fresh is None:
                    seen += 1
                    continue
                await welcome.count(conn, rec)  # the hands that earn a new player its welcome 金币
                if rec.table_id not in lines:
                    row = await conn.fetchrow(f"SELECT {COLUMNS} FROM lobby_tables WHERE table_id = $1 FOR UPDATE",
                                              rec.table_id)
                    lines[rec.table_id] = None if row is None else line_of(row)
                before = lines[rec.table_id]
                if before is not None and rec.version <= before.version:
                    continue  # folded already (defensive: the inbox says so first)
                known = await conn.fetchval("SELECT room_id FROM lobby_table_rooms WHERE table_id = $1",
                                            rec.table_id) if before is None else None
                fallback = await _matcher(conn, rec) if before is None and known is None else ""
                room = known if known is not None else fallback
                line = fold(before, rec, _constant(room))
                lines[rec.table_id] = line
                if line is None:
                    log.warning("a record of a table never created here; skipped", table_id=rec.table_id, seq=seq)
                    continue
                await write(conn, line)
                self.applied += 1
        if seen:
            self.metrics.inbox_hits.inc(seen)  # committed


async def _matcher(conn: db.Conn, rec: log_pb2.Record) -> str:
    for e in rec.events:
        if e.WhichOneof("kind") == "table_created":
            c = e.table_created
            return await rooms.match(conn, c.game, c.currency or log_pb2.CURRENCY_POINTS, c.stake or 1, c.ladder_level)
    return ""


def _constant(room: str) -> Callable[[Line], str]:
    return lambda _line: room


Listener = Callable[[Line], None]


class Feed:
    """The changes of the table list as every lobby process hears them (``LISTEN lobby_tables``),
    handed to the watchers of each room."""

    def __init__(self, database_url: str) -> None:
        self.database_url = database_url
        self.rooms: dict[str, set[asyncio.Queue[Line]]] = defaultdict(set)
        self.heard = 0
        self._conn: asyncpg.Connection[Any] | None = None
        self._task: asyncio.Task[None] | None = None
        self._stopping = False

    async def start(self) -> None:
        await self._connect()
        self._task = asyncio.create_task(self._keep(), name="lobby-feed")

    async def _connect(self) -> None:
        self._conn = await asyncpg.connect(self.database_url)
        await self._conn.add_listener(CHANNEL, self._heard)

    async def _keep(self) -> None:
        """Listen again after a lost connection (watchers are told nothing was lost: they reconnect)."""
        while not self._stopping:
            await asyncio.sleep(1.0)
            if self._conn is None or self._conn.is_closed():
                with contextlib.suppress(Exception):
                    await self._connect()
                    for queues in self.rooms.values():
                        for q in queues:
                            q.put_nowait(_LOST)

    async def stop(self) -> None:
        self._stopping = True
        await tasks.cancel(self._task)
        if self._conn is not None:
            with contextlib.suppress(Exception):
                await self._conn.close()

    def _heard(self, _conn: Any, _pid: int, _channel: str, payload: object) -> None:
        assert isinstance(payload, str)
        self.heard += 1
        try:
            line = from_payload(payload)
        except Exception:
            log.error("bad table-list notification", payload=payload[:200])
            return
        self.announce(line)

    def announce(self, line: Line) -> None:
        """Hand a line to the watchers of its room (and of the room it left)."""
        for room in {line.room_id, line.old_room} - {""}:
            for q in self.rooms.get(room, ()):
                q.put_nowait(line)

    def subscribe(self, room_id: str) -> asyncio.Queue[Line]:
        q: asyncio.Queue[Line] = asyncio.Queue()
        self.rooms[room_id].add(q)
        return q

    def unsubscribe(self, room_id: str, q: asyncio.Queue[Line]) -> None:
        self.rooms[room_id].discard(q)
        if not self.rooms[room_id]:
            del self.rooms[room_id]


_LOST = Line("", "", "", 0, 0, 0, "", [], 0, 0, 0, 0)
WAKE = Line("", "", "", 0, 0, 0, "", [], 0, 0, 0, 0)
"""A line that only wakes a feed's reader (a ``WatchRoom`` whose token expired or whose session
was revoked): never a table's, never :func:`lost`."""
"""Put in every watcher's queue when the feed's connection was lost (the stream then ends)."""


def lost(line: Line) -> bool:
    return line is _LOST
