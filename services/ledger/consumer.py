"""Settlements from the table log, posted exactly once.

A durable JetStream pull consumer reads every record of ``chieu.table.>``. A record with
``Settlement`` events becomes one posting per settlement (in stake units × the table's stake,
in its currency: 金币 at coin tables, the game's points elsewhere). The postings and an inbox
row for the message's stream sequence are written in one transaction; the message is
acknowledged only after it commits. A redelivery finds the inbox row and changes nothing; the
same settlement published again under a new sequence (after the duplicate window) finds its
posting id and is not paid twice. Many ledger processes may consume the same durable at once.

Order per table: the settlements of one table are posted in stream order whatever the number of
consumers, so a 金币 cap sees exactly the balances one consumer reading the stream in order would
see, and a gà pot is always fed before it pays. A message is posted only when every earlier
settlement record of its table is posted (or refused):

- fast path: the consumer knows a *floor*, a stream sequence up to which every message is done
  (its own finished messages, and the durable's ack floor, asked when its batch does not follow
  on): a message right above the floor has nothing before it to wait for;
- otherwise it reads the table's *mark* (``ledger_table_marks``: the last stream sequence posted
  for the table) and looks in the stream, on the table's subject, for a settlement record between
  the mark (or the floor) and itself; if there is one, the message is ``nak``ed with a short
  delay and comes back later.

The posting transaction raises the mark (and locks its row) with the inbox row, in the same
statement.

Accounting for every settlement (defence in depth behind NATS's authorization, which lets only
the table service publish table subjects): a settlement is posted only for a hand the log
started before it — a ``HandStarted`` of that table and hand, earlier in the stream, whose money
terms (game, stake, currency, the players in their seats) the settlement repeats. The hands are
kept in ``ledger_hands``, written in stream order like the postings (a ``HandStarted`` is an
ordered record too). A settlement of a table or hand the log never started (``unknown_hand``),
or with other terms (``hand_mismatch``), is refused: recorded in the inbox, logged as an error,
never posted. A record forged onto a table subject would have to forge the hand's start as
well; what the ledger can check without trusting the publisher, it checks.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import asyncpg
from nats.js.client import JetStreamContext
from nats.js.errors import NotFoundError

from chieu.kit import logs, metrics, names, tracing
from chieu.kit.durable import Durable
from chieu.kit.durable import seq as _seq
from chieu.kit.errors import ServiceError, invalid, precondition
from chieu.ledger import books as b
from chieu.ledger import parked, reservations
from chieu.ledger.books import Books, Leg, Posting
from chieu.table.v1 import log_pb2

log = logs.get("chieu.ledger.consumer")

STREAM = names.TABLES.name
SUBJECTS = names.TABLES.subjects
DURABLE = names.LEDGER_DURABLE


def ordered(record: log_pb2.Record) -> bool:
    """Whether the ledger applies a record in its table's stream order: it moves money (a
    Settlement with a transfer), starts a hand (the terms its settlements must match) or ends
    one (its reservations are released once every settlement of it is posted)."""
    for e in record.events:
        kind = e.WhichOneof("kind")
        if kind in ("hand_started", "hand_ended") or (kind == "settlement" and len(e.settlement.transfers) > 0):
            return True
    return False


def terms(hand: log_pb2.HandStarted | log_pb2.Settlement) -> tuple[str, int, int, tuple[str, ...]]:
    """A hand's money terms: game, stake, currency and the players in their seats."""
    return hand.game, int(hand.stake), int(hand.currency), tuple(hand.players)


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
    if s.capped:
        legs = capped_legs(s, legs, seats, the_pot)
    return Posting(
        id=f"{table_id}/{s.hand_no}/{s.first_leg}", kind="settlement", legs=tuple(legs), table_id=table_id,
        hand_no=s.hand_no, memo=s.game, cap=currency == b.COINS, seats=seats,
    )


def capped_legs(s: log_pb2.Settlement, legs: list[Leg], seats: tuple[str, ...], the_pot: str) -> list[Leg]:
    """The legs of a settlement the table capped within the hand's reservations: exactly the log's
    capped nets (``Settlement.capped``, ``capped_pot``), through the clearing account as the books'
    own cap writes them (``<posting>/pay/<account>``, ``<posting>/get/<account>``, reason
    ``capped``, ``owed`` what the rules said). ``bad_settlement`` for nets that do not add up."""
    if len(s.capped) != len(seats):
        raise invalid("bad_settlement", f"{len(s.capped)} capped nets for {len(seats)} seats")
    owed: dict[str, int] = {}
    for leg in legs:
        owed[leg.debit] = owed.get(leg.debit, 0) - leg.amount
        owed[leg.credit] = owed.get(leg.credit, 0) + leg.amount
    paid = dict(zip(seats, (int(n) for n in s.capped), strict=True))
    paid[the_pot] = paid.get(the_pot, 0) + int(s.capped_pot)
    if sum(paid.values()) != 0:
        raise invalid("bad_settlement", "the capped nets do not sum to 0")
    for a, n in paid.items():
        o = owed.get(a, 0)
        if (n < 0 and not o <= n) or (n > 0 and not 0 < n <= o):
            raise invalid("bad_settlement", f"{a} nets {n} capped, but is owed {o}")
    base, clearing = legs[0].id, b.system(legs[0].currency, "clearing")
    out = [Leg(f"{base}/pay/{a}", a, clearing, -paid.get(a, 0), "capped", -o)
           for a, o in owed.items() if o < 0 and paid.get(a, 0) < 0]
    out += [Leg(f"{base}/get/{a}", clearing, a, paid.get(a, 0), "capped", o)
            for a, o in owed.items() if o > 0 and paid.get(a, 0) > 0]
    return out


class SettlementConsumer(Durable):
    """The ledger's durable pull consumer of the table log."""

    def __init__(self, books: Books, js: JetStreamContext, *, durable: str = DURABLE, stream: str = STREAM,
                 subjects: str = SUBJECTS, batch: int = 64, ack_wait_s: float = 30.0,
                 after_commit: Callable[[Any], Awaitable[None]] | None = None,
                 before_apply: Callable[[Any], Awaitable[None]] | None = None, applied_by: str = "",
                 metrics_every_s: float = 5.0) -> None:
        super().__init__(js, stream=stream, subjects=subjects, durable=durable, ack_wait_s=ack_wait_s,
                         metrics_every_s=metrics_every_s)
        self.books = books
        self.batch = batch
        self.after_commit = after_commit
        """A test hook between commit and acknowledgement (a crash there is what it simulates)."""
        self.before_apply = before_apply
        """A test hook once a message may be posted, before its transaction (a slow process)."""
        self.applied_by = applied_by or f"{socket.gethostname()}:{os.getpid()}"
        """Written in the inbox row of every message this consumer applies."""
        self.posted = 0
        self.waited = 0
        """Messages ``nak``ed because an earlier settlement of their table was not posted yet."""

    async def start(self) -> None:
        """Start consuming in the background, once the table stream exists."""
        await self.run(self._consume(), name=f"ledger-consumer-{self.durable}")

    async def _consume(self) -> None:
        sub = await self.subscribe()
        while not self.stopping:
            msgs = await self.fetch(sub, self.batch)
            if msgs and _seq(msgs[0]) > self.floor + 1:
                await self.refresh_floor()
            await self._batch(msgs)

    async def _batch(self, msgs: list[Any]) -> None:
        """Handle a batch in stream order. A message that must wait for an earlier settlement of its
        table is kept and tried again after the rest (the other consumer is usually about to post
        it), for a short while; what still waits then is ``nak``ed with a delay."""
        pending = msgs
        waited_s, budget_s = 0.0, min(1.0, self.ack_wait_s / 4)
        while pending:
            later: list[Any] = []
            waiting: set[str] = set()
            for msg in pending:
                try:
                    if await self.handle(msg, waiting, keep=True) == "later":
                        later.append(msg)
                except asyncio.CancelledError:
                    raise
                except Exception as e:  # parked, or left to wait: never lost, never a loop
                    await self.failed(msg, e)
            pending = later
            if not pending:
                return
            if waited_s >= budget_s or self.stopping:
                break
            pause = min(0.025 * 2 ** int(waited_s / 0.025).bit_length(), budget_s - waited_s, 0.2)
            await asyncio.sleep(pause)
            waited_s += pause
            await self.refresh_floor()  # what the other consumers finished meanwhile
        for msg in pending:
            delivered = int(getattr(msg.metadata, "num_delivered", 1) or 1)
            with contextlib.suppress(Exception):
                await msg.nak(delay=0.05 * min(delivered, 20))

    async def failed(self, msg: Any, e: Exception) -> None:
        """A message whose posting raised: parked when the record can never be posted (or an
        unexpected error outlasts ``parked.MAX_DELIVERIES``), else left unacknowledged to come
        back after the ack wait (the books are away: the stream waits). One log line, no traceback."""
        delivered = int(getattr(msg.metadata, "num_delivered", 1) or 1)
        name, text = parked.describe(e)
        seq = _seq(msg)
        if parked.transient(e) or not (parked.poison(e) or delivered >= parked.MAX_DELIVERIES):
            log.warning("settlement not posted yet; it will be redelivered", seq=seq, error=name, message=text,
                        deliveries=delivered, transient=parked.transient(e))
            return
        table_id = msg.subject.rsplit(".", 1)[-1]
        try:
            await parked.park(self.books.pool, stream=self.stream, seq=seq, subject=msg.subject, table_id=table_id,
                              posting_id=None, data=bytes(msg.data), error=e, deliveries=delivered,
                              applied_by=self.applied_by, ended=_ended(msg.data))
        except Exception as again:  # the books are away: the message comes back
            log.warning("settlement not parked yet; it will be redelivered", seq=seq, error=name,
                        park_error=parked.describe(again)[0])
            return
        with contextlib.suppress(Exception):
            await msg.ack()
        self.done(seq)

    async def handle(self, msg: Any, waiting: set[str] | None = None, *, keep: bool = False) -> str:
        """Apply one message exactly once, in its table's order; returns what happened
        (skip, posted, seen, refused, later). ``later``: an earlier settlement of the table is not
        posted yet; the message is ``nak``ed with a short delay (``keep``: left to the caller)."""
        seq = _seq(msg)
        self.metrics.delivered(msg)
        # the trace of the move that wrote the record goes on here (only for what the ledger applies)
        traced = tracing.on() and ordered(log_pb2.Record.FromString(msg.data))
        with tracing.consuming(msg, "ledger.post", active=traced, attributes={"chieu.durable": self.durable}) as span:
            outcome = await self._handle(msg, seq, set() if waiting is None else waiting, keep)
            if span is not None:
                span.set_attribute("chieu.outcome", outcome)
        if outcome == "seen":
            self.metrics.inbox_hits.inc()
        if outcome != "later":
            self.done(seq)
        return outcome

    async def _handle(self, msg: Any, seq: int, waiting: set[str], keep: bool) -> str:
        record = log_pb2.Record.FromString(msg.data)
        settlements = [e.settlement for e in record.events if e.WhichOneof("kind") == "settlement"]
        hands = [e.hand_started for e in record.events if e.WhichOneof("kind") == "hand_started"]
        ended = [int(e.hand_ended.hand_no) for e in record.events if e.WhichOneof("kind") == "hand_ended"]
        if not ordered(record):
            await msg.ack()
            return "skip"
        if record.table_id in waiting or (seq > self.floor + 1 and await self._earlier(msg.subject, record.table_id,
                                                                                       seq)):
            # an earlier settlement of this table is not posted yet: come back once it is
            waiting.add(record.table_id)
            self.waited += 1
            if not keep:
                delivered = int(getattr(msg.metadata, "num_delivered", 1) or 1)
                await msg.nak(delay=0.05 * min(delivered, 20))
            return "later"
        try:
            postings = [p for p in (settlement_posting(record.table_id, s) for s in settlements) if p is not None]
            for p in postings:
                b.validate(p)
            await self._account(record.table_id, [s for s in settlements if s.transfers], hands)
        except ServiceError as e:
            s0 = settlements[0] if settlements else None
            first = f"{s0.hand_no}/{s0.first_leg}" if s0 is not None else (
                f"{hands[0].hand_no}/start" if hands else f"{ended[0]}/end")
            return await self._refuse(msg, record.table_id, seq, f"{record.table_id}/{first}", e)
        if self.before_apply is not None:
            await self.before_apply(msg)
        for attempt in range(5):
            try:
                outcome = await self._apply(seq, record.table_id, postings, hands, ended)
                break
            except asyncpg.UniqueViolationError:
                # a concurrent process posted the same settlement: the next try finds it
                await asyncio.sleep(0.01 * (attempt + 1))
            except asyncpg.DeadlockDetectedError:
                await asyncio.sleep(0.01 * (attempt + 1))
            except ServiceError as e:
                # in stream order a pot short of what it pays (pot_short) is a bug upstream, not a race
                return await self._refuse(msg, record.table_id, seq, postings[0].id, e)
        else:
            raise RuntimeError(f"stream sequence {seq}: could not post after retries")
        if self.after_commit is not None:
            await self.after_commit(msg)
        await msg.ack()
        return outcome

    async def _earlier(self, subject: str, table_id: str, seq: int) -> bool:
        """Whether a settlement record of the table comes before ``seq`` in the stream and above its mark
        (so it may not be posted yet)."""
        mark = await b.table_mark(self.books.pool, self.stream, table_id)
        at = max(mark, self.floor) + 1
        while at < seq:
            try:
                found = await self.js.get_msg(self.stream, seq=at, subject=subject, next=True)
            except NotFoundError:
                return False
            if found.seq is None or found.seq >= seq:
                return False
            if found.data and ordered(log_pb2.Record.FromString(found.data)):
                return True
            at = found.seq + 1
        return False

    async def _account(self, table_id: str, settlements: list[log_pb2.Settlement],
                       hands: list[log_pb2.HandStarted]) -> None:
        await account(self.books.pool, self.stream, table_id, settlements, hands)

    async def _apply(self, seq: int, table_id: str, postings: list[Posting], hands: list[log_pb2.HandStarted],
                     ended: Sequence[int] = ()) -> str:
        key = postings[0].id if postings else (
            f"{table_id}/{hands[0].hand_no}/start" if hands else f"{table_id}/{ended[0]}/end")
        async with self.books.pool.acquire() as conn, conn.transaction():
            # the inbox row closes the reservations of the hands the record ends: what the hand took
            # is posted in this transaction, the rest is reserved no more
            if not await b.inbox_and_mark(conn, self.stream, seq, key, "posted" if postings else "hand", table_id,
                                          self.applied_by, ended):
                return "seen"
            for h in hands:
                await remember_hand(conn, self.stream, table_id, seq, h)
            replayed = [(await self.books.post(p, conn=conn)).replayed for p in postings]
        if not postings:
            return "hand"
        self.posted += 1
        for p, again in zip(postings, replayed, strict=True):  # committed: counted now
            if again:
                self.metrics.inbox_hits.inc()
            else:
                metrics.LEDGER_POSTINGS.labels(p.kind).inc()
        return "posted"

    async def _refuse(self, msg: Any, table_id: str, seq: int, posting_id: str, e: ServiceError) -> str:
        """A settlement the books refuse (a bug upstream): recorded in the inbox, logged, acknowledged."""
        log.error("settlement refused", table_id=table_id, seq=seq, reason=e.reason, message=e.message)
        ended = [int(ev.hand_ended.hand_no) for ev in log_pb2.Record.FromString(msg.data).events
                 if ev.WhichOneof("kind") == "hand_ended"]  # the log ended the hand: its reservations too
        await b.inbox_and_mark(self.books.pool, self.stream, seq, posting_id, f"refused:{e.reason}", table_id,
                               self.applied_by, ended)
        await msg.ack()
        return "refused"


async def account(q: Any, stream: str, table_id: str, settlements: list[log_pb2.Settlement],
                  hands: list[log_pb2.HandStarted]) -> None:
    """Refuse a settlement the log does not account for: its hand started in this record or
    earlier in the stream (``ledger_hands``), with the same money terms. ``q``: a pool or a
    connection."""
    here = {int(h.hand_no): terms(h) for h in hands}
    for s in settlements:
        started = here.get(int(s.hand_no))
        if started is None:
            started = await b.hand_terms(q, stream, table_id, int(s.hand_no))
            if started is None:
                raise precondition("unknown_hand", f"the log started no hand {s.hand_no} of table {table_id} "
                                   "before this settlement")
        if terms(s) != started:
            raise precondition("hand_mismatch", f"the settlement of hand {s.hand_no} of table {table_id} does "
                               "not repeat the game, stake, currency and players its hand started with")


async def remember_hand(q: Any, stream: str, table_id: str, seq: int, h: log_pb2.HandStarted) -> None:
    """Keep a started hand's money terms (``ledger_hands``), once, and a coin hand's reservations
    made the log's."""
    await b.record_hand(q, stream, table_id, int(h.hand_no), seq, terms(h))
    if h.reserved:
        await reservations.started(q, table_id, h)


async def retry(books: Books, *, seqs: Sequence[int] = (), stream: str = "",
                actor: str = "operator") -> list[parked.Retried]:
    """Post the parked records again (``seqs``: only those; empty: every open one), each in its own
    transaction: the postings, the hand starts the record carries, the inbox row turned to
    ``posted`` and the parked row closed by ``actor``. One that fails again stays parked (its
    tries counted, its error replaced); one posted already is not posted twice
    (:mod:`chieu.ledger.parked`)."""
    stream = stream or STREAM
    wanted = list(seqs) or [r.seq for r in await parked.listed(books.pool) if r.stream == stream]
    done: list[parked.Retried] = []
    for seq in wanted:
        try:
            async with books.pool.acquire() as conn, conn.transaction():
                row = await b.parked_for_update(conn, stream, seq)
                if row is None:
                    done.append(parked.Retried(stream, seq, "seen"))
                    continue
                table_id, data = row
                record = log_pb2.Record.FromString(data)
                settlements = [e.settlement for e in record.events if e.WhichOneof("kind") == "settlement"]
                hands = [e.hand_started for e in record.events if e.WhichOneof("kind") == "hand_started"]
                postings = [p for p in (settlement_posting(table_id, s) for s in settlements) if p is not None]
                for p in postings:
                    b.validate(p)
                await account(conn, stream, table_id, [s for s in settlements if s.transfers], hands)
                for h in hands:
                    await remember_hand(conn, stream, table_id, seq, h)
                for p in postings:
                    await books.post(p, conn=conn)
                await b.resolve_parked(conn, stream, seq, "posted" if postings else "hand", actor)
            done.append(parked.Retried(stream, seq, "posted"))
            log.info("parked settlement posted", stream=stream, seq=seq, by=actor)
        except Exception as e:  # every failure is reported, and the record stays parked
            name, text = parked.describe(e)
            await b.parked_failed_again(books.pool, stream, seq, name, text)
            done.append(parked.Retried(stream, seq, "parked", f"{name}: {text}"))
            log.error("parked settlement failed again", stream=stream, seq=seq, error=name, message=text)
    await parked.count_open(books.pool)
    return done


def _ended(data: bytes) -> list[int]:
    """The hands a record ends (their reservations close with it, posted or parked); none when it
    does not parse."""
    try:
        record = log_pb2.Record.FromString(data)
    except Exception:  # a record that does not parse ends nothing the books know of
        return []
    return [int(ev.hand_ended.hand_no) for ev in record.events if ev.WhichOneof("kind") == "hand_ended"]
