"""The ledger's leaderboards at scale (issue 34).

One board of a game with ``CHIEU_BENCH_BOARD_PLAYERS`` players (default 100,000, a run well under
a minute; ``CHIEU_BENCH_BOARD_PLAYERS=1000000`` for the issue's million) on the local
PostgreSQL, loaded with ``generate_series`` in one statement (many players tied: scores spread over
20,001 values), beside a second board of the same size (another period) so the index holds more
than the board read. Measured, each as p50 / p99 over a few hundred calls from one connection, of
the very functions the ledger's GetBoard calls (``chieu.ledger.books``):

- the baseline: one row by its primary key (a player's own row), measured in the same run;
- a page of 50 from the top;
- a page of 50 deep down, after the cursor (score, player id) of a random player (half a board
  down on average): the tie range, then the range below;
- a player's own rank, counted up to the bound (10,000): the most a rank costs, however deep.

Targets: a page p99 ≤ 20 ms, and within 10× the primary-key lookup (the page is an index range,
not a scan: its cost does not grow with the board). ``EXPLAIN`` of each query is checked to hold
no sequential scan and no sort.
"""

from __future__ import annotations

import asyncio
import os
import random
import shutil
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from chieu.kit import db
from chieu.ledger import books as b
from chieu.ledger.schema import MIGRATIONS
from chieu_tools import localpg
from tests.benchmarks.common import line, median, pct

PLAYERS = int(os.environ.get("CHIEU_BENCH_BOARD_PLAYERS", "100000"))
"""Players per board: 100,000 by default (a short run); 1,000,000 for the issue's figure."""
SAMPLES = int(os.environ.get("CHIEU_BENCH_BOARD_SAMPLES", "400"))
GAME, BOARD, PERIOD = "phom", "points", "all"


async def load(pool: Any) -> None:
    """Two boards of PLAYERS rows each: the schema's indexes dropped, the rows inserted, the same
    indexes (read back from the catalog before) built again, then VACUUM ANALYZE (a running ledger's
    autovacuum keeps the visibility map that index-only scans use)."""
    async with pool.acquire() as c:
        await c.execute("SET statement_timeout = 0")  # this session only: the load is long statements
        pk = await c.fetchval("SELECT pg_get_constraintdef(oid) FROM pg_constraint"
                              " WHERE conrelid = 'ledger_boards'::regclass AND contype = 'p'")
        rank = await c.fetchval("SELECT indexdef FROM pg_indexes WHERE indexname = 'ledger_boards_rank'")
        await c.execute("ALTER TABLE ledger_boards DROP CONSTRAINT ledger_boards_pkey; DROP INDEX ledger_boards_rank")
        for period in (PERIOD, "m2026-11"):
            await c.execute(
                """INSERT INTO ledger_boards (game, board, period, player_id, score, hands)
                   SELECT $1, $2, $3, 'p' || i, ((i::bigint * 7919) % 20001) - 10000, 1 + i % 50
                   FROM generate_series(1, $4) AS i""", GAME, BOARD, period, PLAYERS, timeout=3600)
        await c.execute(f"ALTER TABLE ledger_boards ADD CONSTRAINT ledger_boards_pkey {pk}", timeout=3600)
        await c.execute(rank, timeout=3600)
        await c.execute("VACUUM ANALYZE ledger_boards", timeout=3600)


async def timed(samples: int, call: Callable[[], Awaitable[Any]]) -> list[float]:
    out = []
    for _ in range(samples):
        t = time.perf_counter()
        await call()
        out.append(time.perf_counter() - t)
    return out


async def plan_ok(c: Any, sql: str, *args: Any) -> str:
    """The query's plan, refused if it holds a sequential scan or a sort."""
    rows = await c.fetch("EXPLAIN " + sql, *args)
    text = "\n".join(r[0] for r in rows)
    assert "Seq Scan" not in text and "Sort" not in text.replace("Sort Key", ""), text
    return text


async def run(data: Path) -> None:
    pg, url = localpg.start(data / "pg")
    try:
        pool = await db.create_pool(url, max_size=2)
        async with pool.acquire() as c:
            await db.migrate(c, "ledger", MIGRATIONS)
        t0 = time.perf_counter()
        await load(pool)
        size = await pool.fetchval("SELECT pg_total_relation_size('ledger_boards')")
        index = await pool.fetchval("SELECT pg_relation_size('ledger_boards_rank')")
        print(f"leaderboard: 2 boards × {PLAYERS:,} players loaded in {time.perf_counter() - t0:.1f} s "
              f"(generate_series); table with indexes {size / 2**20:.0f} MB, the rank index {index / 2**20:.0f} MB")
        rng = random.Random(34)

        def someone() -> str:
            return f"p{rng.randrange(1, PLAYERS + 1)}"

        async with pool.acquire() as c:
            await plan_ok(c, f"SELECT {b._BOARD_COLS} FROM ledger_boards WHERE {b._BOARD_AT}"
                          " ORDER BY score DESC, player_id LIMIT $4", GAME, BOARD, PERIOD, 51)
            await plan_ok(c, f"SELECT {b._BOARD_COLS} FROM ledger_boards WHERE {b._BOARD_AT} AND score < $5"
                          " ORDER BY score DESC, player_id LIMIT $4", GAME, BOARD, PERIOD, 51, 0)
            await plan_ok(c, f"SELECT count(*) FROM (SELECT 1 FROM ledger_boards WHERE {b._BOARD_AT}"
                          " AND score > $4 ORDER BY score DESC, player_id LIMIT $5) AS above",
                          GAME, BOARD, PERIOD, 0, b.RANK_BOUND)
            for p in (someone() for _ in range(50)):  # warm the caches as a running ledger's would be
                await b.board_row(c, GAME, BOARD, PERIOD, p)
            deep: list[tuple[int, str]] = []
            for _ in range(SAMPLES):
                p = someone()
                r = await b.board_row(c, GAME, BOARD, PERIOD, p)
                deep.append((int(r["score"]), p))
            cursors = iter(deep * 2)
            pk = await timed(SAMPLES, lambda: b.board_row(c, GAME, BOARD, PERIOD, someone()))
            top = await timed(SAMPLES, lambda: b.board_page(c, GAME, BOARD, PERIOD, 51))
            low = await timed(SAMPLES, lambda: b.board_page(c, GAME, BOARD, PERIOD, 51, next(cursors)))
            rank = await timed(SAMPLES, lambda: b.board_ahead(c, GAME, BOARD, PERIOD, *next(cursors)))
            page = await b.board_page(c, GAME, BOARD, PERIOD, 51, deep[0])
            s0, p0 = deep[0]
            assert len(page) == 51 and all((-int(r["score"]), r["player_id"]) > (-s0, p0) for r in page)
        await pool.close()
        base = pct(pk, 0.99)
        line("baseline: one row by primary key p50", median(pk) * 1e3, "ms", "", True)
        line("baseline p99", base * 1e3, "ms", "", True)
        for name, s in (("page of 50 from the top", top), ("page of 50 deep (cursor)", low)):
            p99 = pct(s, 0.99)
            line(f"{name} p50", median(s) * 1e3, "ms", "", True)
            line(f"{name} p99", p99 * 1e3, "ms", "<= 20", p99 <= 0.020,
                 f"(ratio to the pk lookup: p99 {p99 / base:.1f}, p50 {median(s) / median(pk):.1f}; target <= 10)")
        r99 = pct(rank, 0.99)
        line("own rank, counted to 10,000, p50", median(rank) * 1e3, "ms", "", True)
        line("own rank p99", r99 * 1e3, "ms", "<= 20", r99 <= 0.020,
             f"(ratio to the pk lookup: p99 {r99 / base:.1f}, p50 {median(rank) / median(pk):.1f})")
    finally:
        localpg.stop(pg)


def main() -> None:
    data = Path(tempfile.mkdtemp(prefix="chieu-bench-board-"))
    try:
        asyncio.run(run(data))
    finally:
        shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    main()
