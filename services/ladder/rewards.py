"""Rewards in 金币 and the ladder's announcements.

- ``ladder_outbox`` rows (``best_level_up``) are published to JetStream ``chieu.ladder.<topic>``
  (stream ``CHIEU_LADDER``) by the kit's relay (``chieu.kit.outbox``), at least once,
  deduplicated by ``Nats-Msg-Id`` = ``ladder-outbox-<id>``.
- :class:`RewardPayer` credits each ``ladder_rewards`` row through the ledger's
  ``CreditReward``, whose id is the reward's: derived from (game, player, new best) or (game,
  month, player), so a retry, a crash after the ledger paid, or two payers at once never pay
  twice (the ledger returns the first posting for a repeated id).
- :func:`decide_month` fixes a finished month's rewards once: the ranking's places get the
  configured amounts, written with the month's row; a second call returns the same rewards.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from typing import Any

import asyncpg
import grpc

from chieu.kit import channels, logs, tasks
from chieu.kit.errors import precondition
from chieu.kit.settings import Settings
from chieu.ladder.standings import Store, monthly_reward_id

log = logs.get("chieu.ladder.rewards")


class RewardPayer:
    """Pays unpaid rewards through the ledger with the ladder's own credential (``service:ladder``,
    ``CHIEU_SERVICE_TOKEN``), marks them paid after it answers; over TLS when ``settings`` say so."""

    def __init__(self, pool: asyncpg.Pool, ledger_addr: str, credential: str, *, every_s: float = 0.5,
                 settings: Settings | None = None) -> None:
        self.pool = pool
        self.settings = settings or Settings()
        self.ledger_addr = ledger_addr
        self.credential = credential
        self.every_s = every_s
        self._channel: grpc.aio.Channel | None = None
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        if self.ledger_addr:
            self._task = asyncio.create_task(self._run(), name="ladder-rewards")

    async def stop(self) -> None:
        await tasks.cancel(self._task)
        self._task = None
        if self._channel is not None:
            await self._channel.close()

    async def pay_once(self, limit: int = 20) -> int:
        """Credit up to ``limit`` unpaid rewards; returns how many the ledger confirmed."""
        from chieu.ledger.v1 import ledger_service_pb2, ledger_service_pb2_grpc

        if self._channel is None:
            self._channel = channels.channel(self.settings, self.ledger_addr)
        stub = ledger_service_pb2_grpc.LedgerServiceStub(self._channel)
        paid = 0
        async with self.pool.acquire() as conn, conn.transaction():
            rows = await conn.fetch(
                "SELECT reward_id, player_id, coins, reason FROM ladder_rewards WHERE paid_at IS NULL"
                " ORDER BY created_at LIMIT $1 FOR UPDATE SKIP LOCKED", limit)
            for r in rows:
                try:
                    await stub.CreditReward(ledger_service_pb2.CreditRewardRequest(
                        reward_id=r["reward_id"], player_id=r["player_id"], coins=r["coins"], reason=r["reason"]),
                        timeout=5, metadata=(("authorization", f"Bearer {self.credential}"),))
                except grpc.aio.AioRpcError as e:
                    await conn.execute("UPDATE ladder_rewards SET attempts = attempts + 1, last_error = $2"
                                       " WHERE reward_id = $1", r["reward_id"], f"{e.code().name}: {e.details()}")
                    continue
                await conn.execute("UPDATE ladder_rewards SET paid_at = now(), attempts = attempts + 1"
                                   " WHERE reward_id = $1", r["reward_id"])
                paid += 1
        return paid

    async def _run(self) -> None:
        while True:
            try:
                if await self.pay_once() == 0:
                    await asyncio.sleep(self.every_s)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("reward payment failed; retrying")
                await asyncio.sleep(self.every_s)


def month_over(month: str, now: dt.datetime | None = None) -> bool:
    """Whether ``YYYY-MM`` (UTC) has ended."""
    now = now or dt.datetime.now(dt.UTC)
    return month < now.strftime("%Y-%m")


async def decide_month(store: Store, game: str, month: str, amounts: tuple[int, ...]) -> list[Any]:
    """The month's rewards, decided once (the ranking's places × the configured amounts)."""
    if not month_over(month):
        raise precondition("month_not_over", f"{month} is not over yet")
    async with store.pool.acquire() as conn, conn.transaction():
        fresh = await conn.fetchval(
            "INSERT INTO ladder_months (game, month) VALUES ($1, $2) ON CONFLICT DO NOTHING RETURNING month",
            game, month)
        if fresh is not None and amounts:
            ranking = await store.monthly(game, month, len(amounts))
            await conn.executemany(
                "INSERT INTO ladder_rewards (reward_id, player_id, game, kind, coins, reason)"
                " VALUES ($1, $2, $3, 'monthly', $4, $5) ON CONFLICT DO NOTHING",
                [(monthly_reward_id(game, month, r["player_id"]), r["player_id"], game, coins,
                  f"过关斩将 {game} {month}: place {place}")
                 for place, (r, coins) in enumerate(zip(ranking, amounts, strict=False), 1)])
        return list(await conn.fetch(
            "SELECT reward_id, player_id, coins, paid_at IS NOT NULL AS paid FROM ladder_rewards"
            " WHERE kind = 'monthly' AND game = $1 AND reward_id LIKE $2 ORDER BY coins DESC, reward_id",
            game, f"ladder/monthly/{game}/{month}/%"))
