"""Settlements from the table log, posted exactly once.

A durable JetStream pull consumer reads every record of ``chieu.table.>``. A record with
``Settlement`` events becomes one posting per settlement (in stake units × the table's stake,
in its currency: 金币 at coin tables, the game's points elsewhere). The postings and an inbox
row for the message's stream sequence are written in one transaction; the message is
acknowledged only after it commits. A redelivery finds the inbox row and changes nothing; the
same settlement published again under a new sequence (after the duplicate window) finds its
posting id and is not paid twice. Many ledger processes may consume the same durable at once.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any

import asyncpg
from nats.errors import TimeoutError as NatsTimeoutError
from nats.js import api
from nats.js.client import JetStreamContext
from nats.js.errors import FetchTimeoutError

from chieu.kit import logs
from chieu.kit.errors import ServiceError, invalid
from chieu.ledger import books as b
from chieu.ledger.books import Books, Leg, Posting
from chieu.table.v1 import log_pb2

log = logs.get("chieu.ledger.consumer")

STREAM = "CHIEU_TABLES"
SUBJECTS = "chieu.table.>"
DURABLE = "ledger"


def currency_of(s: log_pb2.Settlement) -> str:
    """金币 at coin tables; the game's score points elsewhere."""
    return b.COINS if s.currency == log_pb2.CURRENCY_COINS else b.points(s.game)


def settlement_posting(table_id: str, s: log_pb2.Settlement) -> Posting | None:
    """The posting of one Settlement (``None`` when it moves nothing).

    Ids: the posting ``<table_id>/<hand_no>/<first_leg>``, each transfer
    ``<table_id>/<hand_no>/<first_leg + index>``; an absent seat is the table's gà pot.
    """
    currency = currency_of(s)
    seats = tuple(b.player(currency, p) for p in s.players)
    the_pot = b.pot(currency, table_id)

    def party(has: bool, seat: int) -> str:
        if not has:
            return the_pot
        if not 0 <= seat < len(seats):
            raise invalid("bad_settlement", f"seat {seat} has no player")
        return seats[seat]

    legs = []
    for i, t in enumerate(s.transfers):
        leg_id = f"{table_id}/{s.hand_no}/{s.first_leg + i}"
        debit = party(t.HasField("from_seat"), t.from_seat)
        credit = party(t.HasField("to_seat"), t.to_seat)
        legs.append(Leg(leg_id, debit, credit, t.amount * s.stake, t.reason))
    if not legs:
        return None
    return Posting(
        id=f"{table_id}/{s.hand_no}/{s.first_leg}", kind="settlement", legs=tuple(legs), table_id=table_id,
        hand_no=s.hand_no, memo=s.game, cap=currency == b.COINS, seats=seats,
    )


class SettlementConsumer:
    """The ledger's durable pull consumer of the table log."""

    def __init__(self, books: Books, js: JetStreamContext, *, durable: str = DURABLE, stream: str = STREAM,
                 subjects: str = SUBJECTS, batch: int = 64, ack_wait_s: float = 30.0,
                 after_commit: Callable[[Any], Awaitable[None]] | None = None) -> None:
        self.books = books
        self.js = js
        self.durable = durable
        self.stream = stream
        self.subjects = subjects
        self.batch = batch
        self.ack_wait_s = ack_wait_s
        self.after_commit = after_commit
        """A test hook between commit and acknowledgement (a crash there is what it simulates)."""
        self.posted = 0
        self._task: asyncio.Task[None] | None = None
        self._stopping = False

    async def start(self) -> None:
        sub = await self.js.pull_subscribe(
            self.subjects, durable=self.durable, stream=self.stream,
            config=api.ConsumerConfig(ack_policy=api.AckPolicy.EXPLICIT, ack_wait=self.ack_wait_s,
                                      max_ack_pending=4096, deliver_policy=api.DeliverPolicy.ALL),
        )
        self._task = asyncio.create_task(self._run(sub), name=f"ledger-consumer-{self.durable}")

    async def stop(self) -> None:
        """Idempotent: stop fetching; a message in flight is either committed or redelivered."""
        self._stopping = True
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
            self._task = None

    async def _run(self, sub: Any) -> None:
        while not self._stopping:
            try:
                msgs = await sub.fetch(self.batch, timeout=1.0)
            except (FetchTimeoutError, NatsTimeoutError, TimeoutError):
                continue
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("fetch failed; retrying")
                await asyncio.sleep(0.5)
                continue
            for msg in msgs:
                try:
                    await self.handle(msg)
                except asyncio.CancelledError:
                    raise
                except Exception:
                    log.exception("settlement not applied; it will be redelivered")

    async def handle(self, msg: Any) -> str:
        """Apply one message exactly once; returns what happened (skip, posted, seen, refused, later)."""
        record = log_pb2.Record.FromString(msg.data)
        settlements = [e.settlement for e in record.events if e.WhichOneof("kind") == "settlement"]
        if not settlements:
            await msg.ack()
            return "skip"
        seq = int(msg.metadata.sequence.stream)
        try:
            postings = [p for p in (settlement_posting(record.table_id, s) for s in settlements) if p is not None]
            for p in postings:
                b.validate(p)
        except ServiceError as e:
            return await self._refuse(msg, record.table_id, seq, f"{record.table_id}/{settlements[0].hand_no}"
                                      f"/{settlements[0].first_leg}", e)
        if not postings:
            await msg.ack()
            return "skip"
        for attempt in range(5):
            try:
                outcome = await self._apply(seq, postings)
                break
            except asyncpg.UniqueViolationError:
                # a concurrent process posted the same settlement: the next try finds it
                await asyncio.sleep(0.01 * (attempt + 1))
            except asyncpg.DeadlockDetectedError:
                await asyncio.sleep(0.01 * (attempt + 1))
            except ServiceError as e:
                if e.reason == "pot_short":
                    await msg.nak(delay=0.5)
                    return "later"
                return await self._refuse(msg, record.table_id, seq, postings[0].id, e)
        else:
            raise RuntimeError(f"stream sequence {seq}: could not post after retries")
        if self.after_commit is not None:
            await self.after_commit(msg)
        await msg.ack()
        return outcome

    async def _apply(self, seq: int, postings: list[Posting]) -> str:
        async with self.books.pool.acquire() as conn, conn.transaction():
            fresh = await conn.fetchval(
                "INSERT INTO ledger_inbox (stream, seq, posting_id, outcome) VALUES ($1, $2, $3, 'posted')"
                " ON CONFLICT DO NOTHING RETURNING seq", self.stream, seq, postings[0].id)
            if fresh is None:
                return "seen"
            for p in postings:
                await self.books.post(p, conn=conn)
        self.posted += 1
        return "posted"

    async def _refuse(self, msg: Any, table_id: str, seq: int, posting_id: str, e: ServiceError) -> str:
        """A settlement the books refuse (a bug upstream): recorded in the inbox, logged, acknowledged."""
        log.error("settlement refused", table_id=table_id, seq=seq, reason=e.reason, message=e.message)
        await self.books.pool.execute(
            "INSERT INTO ledger_inbox (stream, seq, posting_id, outcome) VALUES ($1, $2, $3, $4)"
            " ON CONFLICT DO NOTHING", self.stream, seq, posting_id, f"refused:{e.reason}")
        await msg.ack()
        return "refused"
