"""The chaos checker's look at the books: a reservation of a hand the log ended and still open is
found (``reservation_not_released``), and so is every hold of the collusion screen (``screen_held``:
the bots play honestly); an open reservation of a hand not in the log, a settled flow and no hold
give nothing. A real PostgreSQL with the ledger's schema."""

from __future__ import annotations

import uuid

import asyncpg

from chieu.audit.logs import Logs
from chieu.kit import db
from chieu.ledger.schema import MIGRATIONS
from chieu.table.v1 import log_pb2
from chieu_tools.chaos.checker import _Checker, books
from tests.conftest import new_database

T0 = 1_800_000_000_000


def _ended(table: str, hand_no: int) -> Logs:
    rec = log_pb2.Record(table_id=table, version=1, server_time_ms=T0, events=[
        log_pb2.TableEvent(hand_ended=log_pb2.HandEnded(hand_no=hand_no, players=["ann", "bao"]))])
    return Logs(tables={table: [(1, rec)]})


async def test_open_reservations_of_ended_hands_and_screen_holds_are_found(database_url: str) -> None:
    url = await new_database(database_url, f"chaos_books_{uuid.uuid4().hex[:8]}")
    conn = await asyncpg.connect(url)
    try:
        await db.migrate(conn, "ledger", MIGRATIONS)
        await conn.execute("INSERT INTO ledger_reservations (table_id, hand_no, player_id, coins, closed_at)"
                           " VALUES ('t1', 1, 'ann', 76, now()), ('t1', 2, 'bao', 76, NULL)")
        await conn.execute("INSERT INTO ledger_flows (payer, receiver, day, coins)"
                           " VALUES ('ann', 'bao', current_date, 30)")
        logs = _ended("t1", 1)
        honest = _Checker(logs, [], T0)
        await books(honest, url, logs)  # hand 2 is not in the log: still spoken for, not a violation
        assert honest.result.violations == []
        assert honest.result.counts["reservations_open"] == 1 and honest.result.counts["screen_top_net"] == 30

        await conn.execute("UPDATE ledger_reservations SET closed_at = NULL WHERE hand_no = 1")
        await conn.execute("INSERT INTO ledger_review_holds (player_id, code, detail, coins)"
                           " VALUES ('bao', 'net_dump_target', 'two welcome-only payers', 120)")
        found = _Checker(logs, [], T0)
        await books(found, url, logs)
        assert sorted(v.check for v in found.result.violations) == ["reservation_not_released", "screen_held"]
        assert found.result.counts["screen_holds"] == 1
    finally:
        await conn.close()
