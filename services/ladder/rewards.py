"""Rewards in 金币 and the ladder's announcements.

- ``ladder_outbox`` rows (``best_level_up``, and ``reward``: each reward recorded, written in the
  same transaction by :func:`chieu.ladder.standings.record_reward`) are published to JetStream
  ``chieu.ladder.<topic>`` (stream ``CHIEU_LADDER``) by the kit's relay (``chieu.kit.outbox``),
  at least once, deduplicated by ``Nats-Msg-Id`` = ``ladder-outbox-<id>``.
- The ledger pays each ``reward`` record once (its durable ``ledger-rewards``, posting
  ``reward/<reward id>``, the id derived from (game, player, new best) or (game, month, player)):
  a reward is paid only when the ladder has recorded it, and the ladder holds no credential that
  mints money (only its NATS user may publish ``chieu.ladder.reward``).
- :func:`decide_month` fixes a finished month's rewards once: the ranking's places get the
  configured amounts, written with the month's row; a second call returns the same rewards.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from chieu.kit.errors import precondition
from chieu.ladder.standings import Store, monthly_reward_id, record_reward


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
            for place, (r, coins) in enumerate(zip(ranking, amounts, strict=False), 1):
                await record_reward(conn, monthly_reward_id(game, month, r["player_id"]), r["player_id"], game,
                                    "monthly", coins, f"过关斩将 {game} {month}: place {place}")
        return list(await conn.fetch(
            "SELECT reward_id, player_id, coins, reason, paid_at IS NOT NULL AS paid FROM ladder_rewards"
            " WHERE kind = 'monthly' AND game = $1 AND reward_id LIKE $2 ORDER BY coins DESC, reward_id",
            game, f"ladder/monthly/{game}/{month}/%"))
