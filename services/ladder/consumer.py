"""The table log, applied to the ladder exactly once and in stream order.

A durable JetStream pull consumer reads every record of ``chieu.table.>``. A record the ladder
counts — a ``HandEnded`` at a ladder table, a ``ForcedQuit`` or a ``Disconnected`` anywhere (the
penalty at ladder tables, reputation everywhere) — becomes one transaction
(:meth:`chieu.ladder.standings.Store.apply`): the inbox row of its stream sequence, its changes,
and the stream's cursor raised to it; it is acknowledged after the commit. Any other record is
acknowledged at once.

Order: a message is applied only once every earlier message the ladder counts is applied, so
every player's standing changes in stream order whatever the number of consumers (two ladder
processes share the durable) and whatever a dead process left unacknowledged:

- the consumer knows a *floor*, a stream sequence up to which every message is done (its own
  finished messages, and the durable's ack floor, asked when a batch does not follow on);
- a message right above the floor has nothing before it to wait for; otherwise the messages
  between the floor and it are read from the stream by sequence, and the ones the ladder counts
  are applied first (in order; a message already applied finds the cursor past it).

The cursor is locked in each transaction, so two processes applying the same message apply it
once; a redelivery after a crash between commit and ack finds the cursor past it.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
from collections.abc import Awaitable, Callable
from typing import Any

import asyncpg
from nats.js.client import JetStreamContext
from nats.js.errors import NotFoundError

from chieu.kit import logs, metrics, names, tracing
from chieu.kit.durable import Durable
from chieu.kit.durable import seq as _seq
from chieu.ladder import rules
from chieu.ladder.rules import Result
from chieu.ladder.standings import Conduct, Games, Item, Store
from chieu.table.v1 import log_pb2

log = logs.get("chieu.ladder.consumer")

STREAM = names.TABLES.name
SUBJECTS = names.TABLES.subjects
DURABLE = names.LADDER_DURABLE


def counts(record: log_pb2.Record) -> bool:
    """Whether the ladder counts a record (the same test as the table's ``ladder_seq``, plus
    quits and disconnects at any table for reputation)."""
    for e in record.events:
        kind = e.WhichOneof("kind")
        if kind in ("forced_quit", "disconnected") or (kind == "hand_ended" and e.hand_ended.ladder_level > 0):
            return True
    return False


def items_of(record: log_pb2.Record, stream: str, seq: int) -> list[Item]:
    """What one record does to the ladder, in the order of its events."""
    out: list[Item] = []
    for i, e in enumerate(record.events):
        kind = e.WhichOneof("kind")
        if kind in ("forced_quit", "disconnected"):
            ev = e.forced_quit if kind == "forced_quit" else e.disconnected
            out.append(Conduct(ev.player_id, "quit" if kind == "forced_quit" else "disconnect", f"{stream}/{seq}/{i}"))
            if ev.ladder_level > 0:
                result = Result.QUIT if kind == "forced_quit" else Result.DISCONNECT
                out.append(Games(record.game, record.table_id, int(ev.hand_no), int(ev.ladder_level),
                                 ((ev.player_id, result),), "penalty", int(record.server_time_ms)))
        elif kind == "hand_ended" and e.hand_ended.ladder_level > 0:
            h = e.hand_ended
            o = h.outcome
            if o.reason.startswith("aborted") or not h.players:
                continue  # an aborted hand counts for nobody (penalties already written stand)
            results = rules.game_results(len(h.players), o.winner if o.HasField("winner") else None,
                                         list(o.scores), teams=record.game in rules.TEAM_GAMES)
            out.append(Games(record.game, record.table_id, int(h.hand_no), int(h.ladder_level),
                             tuple(zip(h.players, results, strict=True)), "result", int(record.server_time_ms)))
    return out


class LadderConsumer(Durable):
    """The ladder's durable pull consumer of the table log."""

    def __init__(self, store: Store, js: JetStreamContext, *, durable: str = DURABLE, stream: str = STREAM,
                 subjects: str = SUBJECTS, batch: int = 64, ack_wait_s: float = 30.0,
                 after_commit: Callable[[Any], Awaitable[None]] | None = None, applied_by: str = "",
                 metrics_every_s: float = 5.0) -> None:
        super().__init__(js, stream=stream, subjects=subjects, durable=durable, ack_wait_s=ack_wait_s,
                         metrics_every_s=metrics_every_s)
        self.store = store
        self.batch = batch
        self.after_commit = after_commit
        """A test hook between commit and acknowledgement (a crash there is what it simulates)."""
        self.applied_by = applied_by or f"{socket.gethostname()}:{os.getpid()}"
        self.applied = 0
        self.filled = 0
        """Messages read from the stream by sequence and applied (another consumer held them)."""

    async def start(self) -> None:
        # in order: what follows a message that failed waits for it (it comes back by redelivery)
        await self.run(self.consume(self.handle, batch=self.batch, what="table record", in_order=True),
                       name=f"ladder-consumer-{self.durable}")

    async def handle(self, msg: Any) -> str:
        """Apply one delivered message exactly once, after every earlier one the ladder counts;
        acknowledge it after the commit. Returns skip, applied or seen."""
        seq = _seq(msg)
        self.metrics.delivered(msg)
        record = log_pb2.Record.FromString(msg.data)
        if not counts(record):
            outcome = "skip"
        else:
            # the trace of the move that wrote the record goes on here
            with tracing.consuming(msg, "ladder.apply", attributes={"chieu.durable": self.durable}) as span:
                if seq > self.floor + 1:
                    await self._fill(seq)
                    self.floor = max(self.floor, seq - 1)
                outcome = await self._apply(seq, record)
                if span is not None:
                    span.set_attribute("chieu.outcome", outcome)
            if outcome == "seen":
                self.metrics.inbox_hits.inc()
            if outcome == "applied" and self.after_commit is not None:
                await self.after_commit(msg)
        await msg.ack()
        self.done(seq)
        return outcome

    async def _apply(self, seq: int, record: log_pb2.Record) -> str:
        items = items_of(record, self.stream, seq)
        for attempt in range(5):
            try:
                outcome = await self.store.apply(self.stream, seq, items, self.applied_by)
                if outcome == "applied":
                    self.applied += 1
                    metrics.LADDER_CHANGES.inc(sum(len(i.results) if isinstance(i, Games) else 1 for i in items))
                return outcome
            except (asyncpg.DeadlockDetectedError, asyncpg.SerializationError):
                await asyncio.sleep(0.01 * (attempt + 1))
        raise RuntimeError(f"stream sequence {seq}: not applied after retries")

    async def _fill(self, seq: int) -> None:
        """Apply, in order, every message the ladder counts between the floor and ``seq`` (those
        another consumer holds or held); the floor first rises to the durable's ack floor."""
        await self.refresh_floor()
        at = max(self.floor, await self.store.applied(self.stream)) + 1
        while at < seq:
            try:
                found = await self.js.get_msg(self.stream, seq=at, subject=self.subjects, next=True)
            except NotFoundError:
                return
            if found.seq is None or found.seq >= seq:
                return
            if found.data:
                record = log_pb2.Record.FromString(found.data)
                if counts(record) and await self._apply(found.seq, record) == "applied":
                    self.filled += 1
            at = found.seq + 1



class ResetConsumer(Durable):
    """The ladder's durable consumer of the ledger's outbox: each paid 信誉度复位 restores the
    player's reputation exactly once (inbox row per stream sequence, and a change keyed by the
    player and the ledger's request id)."""

    def __init__(self, store: Store, js: JetStreamContext, *, durable: str = names.LADDER_RESETS_DURABLE,
                 stream: str = names.LEDGER.name, subject: str = names.LEDGER.subject("reputation_reset"),
                 ack_wait_s: float = 30.0, metrics_every_s: float = 5.0) -> None:
        super().__init__(js, stream=stream, subjects=subject, durable=durable, ack_wait_s=ack_wait_s,
                         metrics_every_s=metrics_every_s)
        self.store = store
        self.applied = 0

    async def start(self) -> None:
        # the ledger creates its outbox stream
        await self.run(self.consume(self.handle, batch=32, what="reputation reset"), name="ladder-resets")

    async def handle(self, msg: Any) -> str:
        self.metrics.delivered(msg)
        try:
            payload = json.loads(msg.data)
            player_id, request_id = str(payload["player_id"]), str(payload["request_id"])
        except (ValueError, KeyError, TypeError):
            log.error("malformed reputation reset announcement", seq=_seq(msg))
            await msg.ack()
            return "refused"
        outcome = await self.store.reset_reputation(self.stream, _seq(msg), player_id, request_id)
        if outcome == "applied":
            self.applied += 1
            metrics.LADDER_CHANGES.inc()
        elif outcome == "seen":
            self.metrics.inbox_hits.inc()
        await msg.ack()
        return outcome
