"""Rewards in 金币: paid only for what the ladder recorded, once each, within a daily cap.

- **Where a reward comes from.** The ladder writes each new best level it records to its outbox
  in the same transaction, naming the table-log record that raised it, and its relay publishes it
  on ``chieu.ladder.reward`` (stream ``CHIEU_LADDER``), which only the ladder's NATS user may
  publish (:mod:`chieu.kit.natsauth`). :class:`RewardConsumer` reads those records through the
  ledger's own durable (``ledger-rewards``), proves each from the table log
  (:mod:`chieu.ledger.proof`: no service credential alone creates money) and posts it as
  ``reward/<reward id>``. A month's places are paid by the operator's ``CreditReward`` only.
- **Exactly once.** The posting and the inbox row of the record's stream sequence are written in
  one transaction; a redelivery finds the inbox row, a record published again finds the posting.
- **The daily cap** (``CHIEU_REWARD_DAILY_CAP``, 金币 per player per UTC day, 0: none):
  ``ledger_reward_days`` is raised in the posting's transaction only while the day's total stays
  within the cap. A record over it waits for the next day (``nak`` with the delay to UTC
  midnight), and is paid then; one that alone exceeds the cap is refused (inbox
  ``refused:reward_over_cap``, logged as an error) for an operator to pay by hand if it is right.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import socket
from typing import Any

import grpc
from nats.js.client import JetStreamContext

from chieu.kit import db, fields, logs, metrics, names
from chieu.kit.durable import Durable
from chieu.kit.durable import seq as _seq
from chieu.kit.errors import ServiceError, invalid
from chieu.ladder.rules import Params
from chieu.ledger import books as b
from chieu.ledger import proof
from chieu.ledger.books import Books, Leg, Posting
from chieu.ledger.climb import LogClimb
from chieu.ledger.proof import Claim

log = logs.get("chieu.ledger.rewards")

LADDER_ACTOR = "service:ladder"
"""The actor of a ladder reward's posting (what the audit's reward reconciliation looks for)."""


def reward_posting(reward_id: str, player_id: str, coins: int, reason: str, actor: str) -> Posting:
    """The posting of one reward: ``coins`` from ``system/coins/rewards`` to the player."""
    pid = f"reward/{reward_id}"
    return Posting(pid, "reward", (Leg(pid, b.system(b.COINS, "rewards"), b.player(b.COINS, player_id), coins,
                                       reason),), actor=actor, memo=reason)


def seconds_to_midnight(now: dt.datetime | None = None) -> float:
    """Seconds until the next UTC day (when a capped reward may be paid)."""
    now = now or dt.datetime.now(dt.UTC)
    tomorrow = (now + dt.timedelta(days=1)).replace(hour=0, minute=0, second=0, microsecond=0)
    return max(1.0, (tomorrow - now).total_seconds())


class OverCap(ServiceError):
    """A reward beyond the player's daily cap: ``RESOURCE_EXHAUSTED`` with the time to wait."""

    def __init__(self, player_id: str, coins: int, cap: int, so_far: int) -> None:
        wait = seconds_to_midnight()
        super().__init__(grpc.StatusCode.RESOURCE_EXHAUSTED, "reward_daily_cap",
                         f"{player_id} was credited {so_far} of the {cap} 金币 of rewards a day allows; "
                         f"{coins} more waits for the next UTC day, in {int(wait) + 1} s",
                         retry_after_ms=int(wait * 1000) + 1)
        self.retry_after_s = wait
        self.alone = coins > cap
        """The reward alone exceeds the cap: it can never be paid automatically."""


async def charge_day(conn: db.Conn, player_id: str, coins: int, cap: int, today: dt.date | None = None) -> None:
    """Add ``coins`` to the player's rewards of the UTC day, in ``conn``'s transaction, or raise
    :class:`OverCap` (nothing changed) when the day's total would pass ``cap`` (0: no cap)."""
    day = today or dt.datetime.now(dt.UTC).date()
    if cap <= 0:
        return
    if await b.add_reward_day(conn, player_id, day, coins, cap) is None:
        raise OverCap(player_id, coins, cap, await b.reward_day(conn, player_id, day))


def parse_record(data: bytes) -> Claim:
    """A ladder reward record: what it asks to be paid (:class:`chieu.ledger.proof.Claim`);
    ``invalid`` when malformed."""
    try:
        payload = json.loads(data)
        rid, player, coins, reason = (str(payload["reward_id"]), str(payload["player_id"]), payload["coins"],
                                      str(payload["reason"]))
        kind, game = str(payload.get("kind", "")), str(payload.get("game", ""))
    except (ValueError, KeyError, TypeError, AttributeError):
        raise invalid("bad_reward", "the reward record is not the ladder's JSON") from None
    if not isinstance(coins, int) or isinstance(coins, bool) or coins <= 0:
        raise invalid("bad_amount", "a reward's coins must be a positive integer")
    if not rid.startswith("ladder/"):
        raise invalid("bad_reward_id", "a ladder reward's id starts with ladder/")
    return Claim(fields.ident(rid, "reward_id"), fields.ident(player, "player_id"), coins,
                 fields.reason(reason, "a reward"), kind, game, proof.source_of(payload))


class RewardConsumer(Durable):
    """The ledger's durable consumer of the ladder's reward records (``chieu.ladder.reward``)."""

    def __init__(self, books: Books, js: JetStreamContext, *, daily_cap: int, best_coins: int,
                 durable: str = names.LEDGER_REWARDS_DURABLE, stream: str = names.LADDER.name,
                 subject: str = names.LADDER_REWARDS, tables: names.Stream = names.TABLES, ack_wait_s: float = 30.0,
                 metrics_every_s: float = 5.0, params: Params | None = None) -> None:
        super().__init__(js, stream=stream, subjects=subject, durable=durable, ack_wait_s=ack_wait_s,
                         metrics_every_s=metrics_every_s)
        self.books = books
        self.daily_cap = daily_cap
        self.best_coins = best_coins
        """``CHIEU_LADDER_REWARD_BEST_COINS``: what a best level pays per level (the proof checks it)."""
        self.tables = tables
        """The table log the proofs are read from."""
        self.climb = LogClimb(js, params, tables)
        """The ladder's rules folded over the table log (``params``: the ladder's, ``CHIEU_LADDER_*``):
        a best level is paid only at the record where it is reached."""
        self.applied_by = f"{socket.gethostname()}:{os.getpid()}"
        self.paid = 0
        self.deferred = 0
        """Records ``nak``ed until the next UTC day (over the daily cap)."""

    async def start(self) -> None:
        # the ladder creates its outbox stream
        await self.run(self.consume(self.handle, batch=32, what="reward"), name="ledger-rewards")

    async def handle(self, msg: Any) -> str:
        """Pay one record: ``paid``, ``seen`` (inbox), ``deferred`` (over the cap: ``nak``ed until the
        next day) or ``refused`` (malformed, or over the cap alone; acknowledged, logged)."""
        self.metrics.delivered(msg)
        seq = _seq(msg)
        try:
            claim = parse_record(msg.data)
        except ServiceError as e:
            log.error("malformed reward record", seq=seq, reason=e.reason)
            await self._record(seq, None, f"refused:{e.reason}")
            await msg.ack()
            return "refused"
        rid, player, coins, reason = claim.reward_id, claim.player_id, claim.coins, claim.reason
        p = reward_posting(rid, player, coins, reason, LADDER_ACTOR)
        try:
            await proof.prove(self.js, claim, self.best_coins, self.tables, self.climb)
        except ServiceError as e:  # the table log does not prove it: never paid from a record
            log.error("reward refused: the table log does not prove it", reward_id=rid, player_id=player,
                      reason=e.reason, message=e.message)
            await self._record(seq, p.id, f"refused:{e.reason}")
            await msg.ack()
            return "refused"
        try:
            outcome = await self._pay(seq, p, player, coins)
        except OverCap as e:
            if e.alone:
                log.error("reward over the daily cap by itself", reward_id=rid, coins=coins, cap=self.daily_cap)
                await self._record(seq, p.id, "refused:reward_over_cap")
                await msg.ack()
                return "refused"
            self.deferred += 1
            log.warning("reward over the daily cap; paid tomorrow", reward_id=rid, coins=coins)
            with contextlib.suppress(Exception):
                await msg.nak(delay=e.retry_after_s)
            return "deferred"
        except ServiceError as e:  # the books refuse it (id reused with other content)
            log.error("reward refused", reward_id=rid, reason=e.reason, message=e.message)
            await self._record(seq, p.id, f"refused:{e.reason}")
            await msg.ack()
            return "refused"
        if outcome == "seen":
            self.metrics.inbox_hits.inc()
        else:
            self.paid += 1
            metrics.LEDGER_POSTINGS.labels("reward").inc()
        await msg.ack()
        return outcome

    async def _pay(self, seq: int, p: Posting, player: str, coins: int) -> str:
        async with self.books.pool.acquire() as conn, conn.transaction():
            if not await b.inbox(conn, self.stream, seq, p.id, "posted", self.applied_by):
                return "seen"
            if await self.books.replayed(conn, p) is not None:
                return "seen"  # the same record published again (after the duplicate window)
            await charge_day(conn, player, coins, self.daily_cap)
            await self.books.post(p, conn=conn)
        return "paid"

    async def _record(self, seq: int, posting_id: str | None, outcome: str) -> None:
        await b.inbox(self.books.pool, self.stream, seq, posting_id, outcome, self.applied_by)
