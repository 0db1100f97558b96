"""The command pipeline: one command decided on the cached table, appended to its log as one
record, folded, and its watchers, clock and snapshot told (:meth:`Pipeline.execute`).

Every accepted command is one record on ``chieu.table.<table_id>``, appended with the
expected last subject sequence (two processes never fork a log: the loser reloads and
decides again) and ``Nats-Msg-Id`` = ``<table_id>:<actor>/<command_id>``. A command id the
actor used before returns the table as it is (the command acted once).
"""

from __future__ import annotations

import hashlib
import time
import uuid
from collections.abc import Callable
from typing import Any

import grpc
from google.protobuf.message import Message

from chieu.kit import logs, metrics
from chieu.kit.errors import ServiceError, precondition
from chieu.kit.eventstore import Conflict
from chieu.table import decide
from chieu.table.background import Background
from chieu.table.cache import Cache, Live
from chieu.table.clocks import now_ms
from chieu.table.commands import Decider
from chieu.table.refusals import Refused
from chieu.table.statuses import check_command_id, refuse
from chieu.table.v1 import log_pb2
from chieu.tablelog import sealing
from chieu.tablelog.fold import Table

log = logs.get("chieu.table")

CONFLICT_DEADLINE_S = 10.0
"""How long a command keeps retrying against racing writers before it is ABORTED."""


class Pipeline:
    def __init__(self, cache: Cache, applied: Callable[[Live], None], background: Background) -> None:
        self.cache = cache
        self.store = cache.store
        self.applied = applied
        """Called after a record was folded into its cached table (its watchers, clock, snapshot)."""
        self.background = background

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
        live = await self.cache.get(table_id, must_exist=not create)
        if create and not live.table.exists:
            # not cached until it exists: serialise creators of the same id on a fresh lock
            live = self.cache.live.setdefault(table_id, live)
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
                    await self.cache.catch_up(table)
                    if table.version != version:
                        self.applied(live)
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
                    sealed = sealing.seal_record(record, table, live.hand_key)
                    appended = await self.store.append(
                        table_id, sealed.SerializeToString(), expected_seq=table.last_seq,
                        msg_id=f"{table_id}:{actor}/{command_id}",
                    )
                except Conflict:
                    await self.cache.catch_up(table)
                    continue
                if appended.duplicate:
                    await self.cache.catch_up(table)
                    return _same_request(table, key, digest)
                was_playing, was_timed = table.playing, _timed(table)
                table.apply(record, appended.seq)
                if all(e.WhichOneof("kind") == "game_event" for e in record.events):
                    live.views.advance(table)  # only the version changed of what every viewer shares
                self.applied(live)
                timed = _timed(table)
                if timed != was_timed:
                    self.background.spawn(self._mark_active(table_id, timed), mark=True)
                if was_playing and not table.playing:
                    metrics.HANDS.labels(record.game).inc()
                return table
        raise ServiceError(grpc.StatusCode.ABORTED, "busy", "the table is too busy; try again")

    async def _mark_active(self, table_id: str, active: bool) -> None:
        """Mark the table active (a hand on the clock, or someone seated) or not, so a restart resumes it; a mark
        that fails is logged (the table then resumes only when a player asks for it)."""
        try:
            await self.store.mark_active(table_id, active)
        except Exception as exc:
            log.warning("active mark not written", table_id=table_id, active=active, error=str(exc))


def _timed(table: Table) -> bool:
    """A hand on the clock, or someone seated (between hands their idle stand runs, or starts
    when a process that starts finds no stream of theirs): a restart must load the table."""
    return table.playing or bool(table.lost) or any(table.seats)


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
