"""The ladder's storage: standings, their immutable history, reputation, rewards and the
outbox, on PostgreSQL through asyncpg.

:meth:`Store.apply` applies one table-log message exactly once: under the stream's cursor row
(locked), an inbox row for its stream sequence, then every change it causes (a game's results,
a penalty, a reputation change), each a history row before → after and the standing it leads
to; the cursor is raised to the message in the same transaction. The caller guarantees that
every earlier message the ladder counts is applied (see ``chieu.ladder.consumer``): messages
are applied in stream order, so each player's changes are too. A redelivered message finds the
cursor at or past it and changes nothing.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import asyncpg
import grpc

from chieu.kit import db
from chieu.kit.errors import ServiceError, precondition
from chieu.ladder import rules
from chieu.ladder.rules import Result, Standing
from chieu.ladder.terms import Terms


@dataclass(frozen=True, slots=True)
class Games:
    """Results at a ladder table: a hand's end (``cause`` result) or a penalty (a quit or a
    disconnect, ``cause`` penalty), in the order of the players' seats."""

    game: str
    table_id: str
    hand_no: int
    table_level: int
    results: tuple[tuple[str, Result], ...]
    cause: str
    at_ms: int


@dataclass(frozen=True, slots=True)
class Conduct:
    """A quit (强退) or a disconnect (断线不重连) at any table, or a paid reset: reputation."""

    player_id: str
    cause: str
    """quit, disconnect or reset."""
    key: str
    """Applied once per key (``<stream>/<seq>/<event index>``, ``reset/<player>/<request>``)."""


Item = Games | Conduct


def month_of(at_ms: int) -> str:
    """``YYYY-MM`` (UTC) of a time in ms since the epoch."""
    return dt.datetime.fromtimestamp(at_ms / 1000, dt.UTC).strftime("%Y-%m")


def best_reward_id(game: str, player_id: str, best: int) -> str:
    return f"ladder/best/{game}/{player_id}/{best}"


def monthly_reward_id(game: str, month: str, player_id: str) -> str:
    return f"ladder/monthly/{game}/{month}/{player_id}"


async def record_reward(conn: db.Conn, reward_id: str, player_id: str, game: str, kind: str, coins: int,
                        reason: str, source: dict[str, Any] | None = None) -> bool:
    """Record a reward once; whether it was new. A new best level (``source``: the table-log
    record that raised it, ``table_id``, ``hand_no``, ``stream_seq``) gets in the same transaction
    its record for the ledger (the outbox's ``reward`` topic, published on ``chieu.ladder.reward``),
    which the ledger pays once it has read that record in the table log (chieu.ledger.proof); a
    month's place is paid by the operator's ``CreditReward`` (``PayMonthlyRewards``), not a record."""
    fresh = await conn.fetchval(
        "INSERT INTO ladder_rewards (reward_id, player_id, game, kind, coins, reason) VALUES ($1, $2, $3, $4, $5, $6)"
        " ON CONFLICT DO NOTHING RETURNING reward_id", reward_id, player_id, game, kind, coins, reason)
    if fresh is not None and source is not None:
        await conn.execute("INSERT INTO ladder_outbox (topic, payload) VALUES ('reward', $1::jsonb)", json.dumps(
            {"reward_id": reward_id, "player_id": player_id, "game": game, "kind": kind, "coins": coins,
             "reason": reason, "source": source}, ensure_ascii=False))
    return fresh is not None


def standing_of(row: Any, prefix: str = "") -> Standing:
    return Standing(int(row[f"level{prefix}"]), int(row[f"best{prefix}"]), int(row[f"lp{prefix}"]))


_HISTORY = """
INSERT INTO ladder_history (player_id, game, cause, result, table_id, hand_no, table_level,
    level_before, best_before, lp_before, level_after, best_after, lp_after, stream_seq, at, month, reached)
SELECT p, $1, $2, r, $3, $4, $5, lb, bb, pb, la, ba, pa, $6, to_timestamp($7::double precision / 1000), $8, rc
FROM unnest($9::text[], $10::text[], $11::int[], $12::int[], $13::int[], $14::int[], $15::int[], $16::int[],
            $17::bigint[]) AS t(p, r, lb, bb, pb, la, ba, pa, rc)
ON CONFLICT (table_id, hand_no, player_id) WHERE cause IN ('result', 'penalty') DO NOTHING
RETURNING id, player_id
"""
"""One row per player's result; a player with a result or penalty for this hand already is skipped."""

_STANDINGS = """
INSERT INTO ladder_standings (game, player_id, level, best, lp, games, reached)
SELECT $1, p, l, b, x, 1, rc FROM unnest($2::text[], $3::int[], $4::int[], $5::int[], $6::bigint[]) AS t(p, l, b, x, rc)
ON CONFLICT (game, player_id) DO UPDATE SET level = excluded.level, best = excluded.best, lp = excluded.lp,
    games = ladder_standings.games + 1, reached = excluded.reached, updated_at = now()
"""

_BUCKETS = """
INSERT INTO ladder_buckets (game, best, level, lp, players)
SELECT $1, b, l, x, sum(d) FROM unnest($2::int[], $3::int[], $4::int[], $5::int[]) AS t(b, l, x, d)
GROUP BY b, l, x ORDER BY b, l, x
ON CONFLICT (game, best, level, lp) DO UPDATE SET players = ladder_buckets.players + excluded.players
"""

_INBOX = """
WITH cursor AS (SELECT seq FROM ladder_cursor WHERE stream = $1 FOR UPDATE)
SELECT coalesce((SELECT seq FROM cursor), -1)
"""


class Store:
    """Standings, history, reputation and rewards on one connection pool."""

    def __init__(self, pool: asyncpg.Pool, config: Terms | None = None) -> None:
        self.pool = pool
        self.config = Terms() if config is None else config

    # -- applying the log ------------------------------------------------------------------

    async def applied(self, stream: str) -> int:
        """The stream sequence of the last message applied (0: none)."""
        seq = await self.pool.fetchval("SELECT seq FROM ladder_cursor WHERE stream = $1", stream)
        return int(seq or 0)

    async def apply(self, stream: str, seq: int, items: Sequence[Item], applied_by: str = "") -> str:
        """Apply one message's items exactly once; ``seen`` if it was applied before, else
        ``applied``. Every earlier message that the ladder counts must be applied already."""
        async with self.pool.acquire() as conn, conn.transaction():
            cursor = await conn.fetchval(_INBOX, stream)
            if cursor < 0:
                await conn.execute("INSERT INTO ladder_cursor (stream, seq) VALUES ($1, 0) ON CONFLICT DO NOTHING",
                                   stream)
                cursor = await conn.fetchval(_INBOX, stream)
            if cursor >= seq:
                return "seen"
            fresh = await conn.fetchval(
                "INSERT INTO ladder_inbox (stream, seq, outcome, applied_by) VALUES ($1, $2, 'applied', $3)"
                " ON CONFLICT DO NOTHING RETURNING seq", stream, seq, applied_by)
            if fresh is None:
                return "seen"
            for item in items:
                if isinstance(item, Games):
                    await self._games(conn, item, seq)
                else:
                    await self._conduct(conn, item)
            await conn.execute("UPDATE ladder_cursor SET seq = $2 WHERE stream = $1", stream, seq)
        return "applied"

    async def _games(self, conn: db.Conn, g: Games, seq: int) -> None:
        players = sorted({p for p, _ in g.results})
        rows = await conn.fetch(
            "SELECT player_id, level, best, lp, reached FROM ladder_standings WHERE game = $1 AND player_id = ANY($2)"
            " ORDER BY player_id FOR UPDATE", g.game, players)
        known = {r["player_id"]: r for r in rows}
        before = {p: standing_of(known[p]) if p in known else Standing() for p in players}
        params = self.config.params
        after: dict[str, rules.Change] = {}
        for p, result in g.results:
            others = [before[q].level for q, _ in g.results if q != p]
            after[p] = rules.record(before[p], result, g.table_level, params, others)
        order = [p for p, _ in g.results]
        changed = {p: p not in known or after[p].standing != before[p] for p in order}
        inserted = await conn.fetch(
            _HISTORY, g.game, g.cause, g.table_id, g.hand_no, g.table_level, seq, g.at_ms, month_of(g.at_ms),
            order, [r.value for _, r in g.results],
            [before[p].level for p in order], [before[p].best for p in order], [before[p].lp for p in order],
            [after[p].standing.level for p in order], [after[p].standing.best for p in order],
            [after[p].standing.lp for p in order],
            [0 if changed[p] else int(known[p]["reached"]) for p in order])
        if not inserted:
            return
        ids = {r["player_id"]: int(r["id"]) for r in inserted}
        done = [p for p in order if p in ids]
        await conn.execute(
            _STANDINGS, g.game, done, [after[p].standing.level for p in done],
            [after[p].standing.best for p in done], [after[p].standing.lp for p in done],
            [ids[p] if changed[p] else int(known[p]["reached"]) for p in done])
        await self._buckets(conn, g.game, [(before[p] if p in known else None, after[p].standing) for p in done])
        for p in done:
            if after[p].best_level_up:
                await self._best_level_up(conn, g, p, after[p].standing.best, seq)

    async def _buckets(self, conn: db.Conn, game: str, moves: Sequence[tuple[Standing | None, Standing]]) -> None:
        deltas: list[tuple[int, int, int, int]] = []
        for old, new in moves:
            if old == new:
                continue
            if old is not None:
                deltas.append((old.best, old.level, old.lp, -1))
            deltas.append((new.best, new.level, new.lp, 1))
        if deltas:
            await conn.execute(_BUCKETS, game, *[list(c) for c in zip(*deltas, strict=True)])

    async def _best_level_up(self, conn: db.Conn, g: Games, player_id: str, best: int, seq: int) -> None:
        payload = {"player_id": player_id, "game": g.game, "best": best, "table_id": g.table_id,
                   "hand_no": g.hand_no, "stream_seq": seq}
        await conn.execute("INSERT INTO ladder_outbox (topic, payload) VALUES ('best_level_up', $1::jsonb)",
                           json.dumps(payload, ensure_ascii=False))
        coins = self.config.reward_best_coins * best
        if coins > 0:
            await record_reward(conn, best_reward_id(g.game, player_id, best), player_id, g.game, "best", coins,
                                f"过关斩将 new best level {best}",
                                source={"table_id": g.table_id, "hand_no": g.hand_no, "stream_seq": seq})

    async def _conduct(self, conn: db.Conn, c: Conduct) -> None:
        start = self.config.reputation_start
        await conn.execute("INSERT INTO ladder_reputation (player_id, score) VALUES ($1, $2) ON CONFLICT DO NOTHING",
                           c.player_id, start)
        score = int(await conn.fetchval("SELECT score FROM ladder_reputation WHERE player_id = $1 FOR UPDATE",
                                        c.player_id))
        new = self.config.reputation_after(score, c.cause)
        fresh = await conn.fetchval(
            "INSERT INTO ladder_reputation_changes (player_id, cause, cause_key, before, after)"
            " VALUES ($1, $2, $3, $4, $5) ON CONFLICT (cause_key) DO NOTHING RETURNING id",
            c.player_id, c.cause, c.key, score, new)
        if fresh is None:
            return
        await conn.execute(
            "UPDATE ladder_reputation SET score = $2, quits = quits + $3, disconnects = disconnects + $4,"
            " updated_at = now() WHERE player_id = $1",
            c.player_id, new, int(c.cause == "quit"), int(c.cause == "disconnect"))

    async def reset_reputation(self, stream: str, seq: int, player_id: str, request_id: str) -> str:
        """A paid 信誉度复位 from the ledger's outbox, once per (player, request) whatever its delivery."""
        async with self.pool.acquire() as conn, conn.transaction():
            fresh = await conn.fetchval(
                "INSERT INTO ladder_inbox (stream, seq, outcome) VALUES ($1, $2, 'reset') ON CONFLICT DO NOTHING"
                " RETURNING seq", stream, seq)
            if fresh is None:
                return "seen"
            await self._conduct(conn, Conduct(player_id, "reset", f"reset/{player_id}/{request_id}"))
        return "applied"

    # -- corrections -----------------------------------------------------------------------

    async def correct(self, correction_id: str, player_id: str, game: str, target: Standing, reason: str,
                      actor: str) -> tuple[Any, bool]:
        """An operator's correction: a new history row (never an update of one) and the standing
        it sets. Returns (the row, replayed). The same id with other content is ``id_reused``."""
        digest = hashlib.sha256(
            f"{player_id}|{game}|{target.level}|{target.best}|{target.lp}|{reason}".encode()).hexdigest()
        for _ in range(5):
            try:
                async with self.pool.acquire() as conn, conn.transaction():
                    first = await conn.fetchrow(_CHANGE + " WHERE correction_id = $1", correction_id)
                    if first is not None:
                        if first["digest"] != digest:
                            raise precondition("id_reused", "this correction id was used with other content")
                        return first, True
                    row = await conn.fetchrow(
                        "SELECT level, best, lp, reached FROM ladder_standings WHERE game = $1 AND player_id = $2"
                        " FOR UPDATE", game, player_id)
                    before = standing_of(row) if row is not None else Standing()
                    now_ms = int(dt.datetime.now(dt.UTC).timestamp() * 1000)
                    changed = row is None or before != target
                    new = await conn.fetchrow(
                        "INSERT INTO ladder_history (player_id, game, cause, level_before, best_before, lp_before,"
                        " level_after, best_after, lp_after, correction_id, digest, actor, reason, at, month, reached)"
                        " VALUES ($1, $2, 'correction', $3, $4, $5, $6, $7, $8, $9, $10, $11, $12,"
                        " to_timestamp($13::double precision / 1000), $14, $15) RETURNING id",
                        player_id, game, before.level, before.best, before.lp, target.level, target.best, target.lp,
                        correction_id, digest, actor, reason, now_ms, month_of(now_ms),
                        0 if changed or row is None else int(row["reached"]))
                    assert new is not None
                    reached = int(new["id"]) if changed or row is None else int(row["reached"])
                    await conn.execute(
                        "INSERT INTO ladder_standings (game, player_id, level, best, lp, games, reached)"
                        " VALUES ($1, $2, $3, $4, $5, 0, $6) ON CONFLICT (game, player_id) DO UPDATE SET"
                        " level = excluded.level, best = excluded.best, lp = excluded.lp, reached = excluded.reached,"
                        " updated_at = now()", game, player_id, target.level, target.best, target.lp, reached)
                    await self._buckets(conn, game, [(before if row is not None else None, target)])
                    out = await conn.fetchrow(_CHANGE + " WHERE id = $1", int(new["id"]))
                    return out, False
            except (asyncpg.UniqueViolationError, asyncpg.DeadlockDetectedError):
                continue
        raise ServiceError(grpc.StatusCode.ABORTED, "busy", "the correction met a concurrent one; try again")

    # -- reads -----------------------------------------------------------------------------

    async def reward_paid(self, reward_id: str) -> None:
        """A reward the ledger paid (an operator's monthly reward, paid through the ledger)."""
        await self.pool.execute("UPDATE ladder_rewards SET paid_at = now() WHERE reward_id = $1", reward_id)

    async def standing(self, game: str, player_id: str) -> tuple[Standing, int] | None:
        row = await self.pool.fetchrow(
            "SELECT level, best, lp, games FROM ladder_standings WHERE game = $1 AND player_id = $2", game, player_id)
        return None if row is None else (standing_of(row), int(row["games"]))

    async def levels(self, game: str, players: Sequence[str]) -> dict[str, int]:
        rows = await self.pool.fetch(
            "SELECT player_id, level FROM ladder_standings WHERE game = $1 AND player_id = ANY($2)",
            game, list(players))
        return {r["player_id"]: int(r["level"]) for r in rows}

    async def reputation(self, player_id: str) -> tuple[int, int, int]:
        row = await self.pool.fetchrow(
            "SELECT score, quits, disconnects FROM ladder_reputation WHERE player_id = $1", player_id)
        if row is None:
            return self.config.reputation_start, 0, 0
        return int(row["score"]), int(row["quits"]), int(row["disconnects"])

    async def history(self, player_id: str, game: str, before: int | None, limit: int) -> list[Any]:
        where, args = ["player_id = $1"], [player_id]  # type: list[str], list[Any]
        if game:
            args.append(game)
            where.append(f"game = ${len(args)}")
        if before is not None:
            args.append(before)
            where.append(f"id < ${len(args)}")
        args.append(limit)
        return list(await self.pool.fetch(
            f"{_CHANGE} WHERE {' AND '.join(where)} ORDER BY id DESC LIMIT ${len(args)}", *args))

    async def top(self, game: str, n: int) -> list[Any]:
        return list(await self.pool.fetch(
            "SELECT player_id, level, best, lp FROM ladder_standings WHERE game = $1"
            " ORDER BY best DESC, level DESC, lp DESC, reached, player_id LIMIT $2", game, n))

    async def players(self, game: str) -> int:
        return int(await self.pool.fetchval(
            "SELECT coalesce(sum(players), 0) FROM ladder_buckets WHERE game = $1", game))

    async def rank(self, game: str, player_id: str) -> tuple[int, Standing] | None:
        """The player's 1-based rank: the players of the buckets ahead, then those of the same
        bucket who reached it first (an index range of one bucket)."""
        async with self.pool.acquire() as conn:
            row = await conn.fetchrow(
                "SELECT level, best, lp, reached FROM ladder_standings WHERE game = $1 AND player_id = $2",
                game, player_id)
            if row is None:
                return None
            s = standing_of(row)
            ahead = await conn.fetchval(
                "SELECT coalesce(sum(players), 0) FROM ladder_buckets WHERE game = $1"
                " AND (best, level, lp) > ($2, $3, $4)", game, s.best, s.level, s.lp)
            same = await conn.fetchval(
                "SELECT count(*) FROM ladder_standings WHERE game = $1 AND best = $2 AND level = $3 AND lp = $4"
                " AND (reached, player_id) < ($5, $6)", game, s.best, s.level, s.lp, int(row["reached"]), player_id)
            return int(ahead) + int(same) + 1, s

    async def monthly(self, game: str, month: str, n: int) -> list[Any]:
        return list(await self.pool.fetch(_MONTHLY, game, month, n))


_CHANGE = """
SELECT id, player_id, game, cause, result, table_id, hand_no, table_level, level_before, best_before, lp_before,
       level_after, best_after, lp_after, stream_seq, actor, reason, digest,
       (extract(epoch FROM at) * 1000)::bigint AS at_ms
FROM ladder_history"""

_MONTHLY = """
SELECT player_id, level_after AS level, best_after AS best, lp_after AS lp FROM (
    SELECT DISTINCT ON (player_id) player_id, level_after, best_after, lp_after,
           CASE WHEN reached = 0 THEN id ELSE reached END AS reached_at
    FROM ladder_history WHERE game = $1 AND month = $2 ORDER BY player_id, id DESC) last
ORDER BY best_after DESC, level_after DESC, lp_after DESC, reached_at, player_id
LIMIT $3
"""
"""Each player's standing after their last change of the month, by best, level, lp, then who reached it first."""
