"""The ladder's reputation (信誉度) and rewards reconciled, on a whole period: a fresh database of
its own (the ladder's and the ledger's tables), filled by the services' own code — the ladder's
store applying the table records as its consumer does, the ledger's gRPC servicer taking a paid
reset and its reward consumer paying the ladder's reward records, the month decided by the
ladder — so the audit runs on the complete log (every row must have its source) and each injected fault is found.

The table records are built (a ladder table's results and a quit, a quit at an ordinary table, a
disconnect), not played: the logs' own checks are the other tests'; these are the books'.
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from types import SimpleNamespace
from typing import Any

import asyncpg
import grpc
import pytest
from nats.js.errors import NotFoundError

from chieu.audit import levels, money, reputation, rewards
from chieu.audit.logs import Logs
from chieu.audit.report import Report
from chieu.kit import db, names
from chieu.kit.settings import Settings
from chieu.ladder.consumer import items_of
from chieu.ladder.rewards import decide_month
from chieu.ladder.rules import Params
from chieu.ladder.schema import MIGRATIONS as LADDER
from chieu.ladder.standings import Store
from chieu.ladder.terms import Terms
from chieu.ledger.books import Books
from chieu.ledger.rewards import RewardConsumer
from chieu.ledger.schema import MIGRATIONS as LEDGER
from chieu.ledger.service import LedgerService
from chieu.ledger.v1 import ledger_service_pb2 as gpb
from chieu.ledger.v1 import ledger_service_pb2_grpc as gpb_grpc
from chieu.table.v1 import log_pb2
from chieu_tools import localnats
from tests.conftest import database_url_of, token
from tests.ladder.conftest import hand_ended, penalty

pytestmark = pytest.mark.integration
STREAM = names.TABLES.name
JANUARY = int(dt.datetime(2024, 1, 15, tzinfo=dt.UTC).timestamp() * 1000)
TERMS = Terms(Params(), reputation_start=100, reputation_quit=10, reputation_disconnect=5, reward_best_coins=10,
              reward_monthly=(30, 20))


@dataclass
class Books_:
    """The period: its logs, the database, who played."""

    logs: Logs
    url: str
    a: str
    b: str
    c: str


async def audit(p: Books_) -> Report:
    report = Report()
    conn = await asyncpg.connect(p.url)
    try:
        await money.reconcile(conn, p.logs, report)
        await levels.reconcile(conn, p.logs, report, TERMS.params)
        await reputation.reconcile(conn, p.logs, report, TERMS)
        await rewards.reconcile(conn, p.logs, report, TERMS)
    finally:
        await conn.close()
    return report


@pytest.fixture(scope="module")
async def period(settings: Settings, database_url: str) -> AsyncIterator[Books_]:
    name = f"audit_{uuid.uuid4().hex[:12]}"
    admin = await asyncpg.connect(database_url)
    await admin.execute(f'CREATE DATABASE "{name}"')
    url = database_url_of(database_url, name)
    pool = await db.create_pool(url, max_size=4)
    server = grpc.aio.server()
    try:
        async with pool.acquire() as conn:
            await db.migrate(conn, "ladder", LADDER)
            await db.migrate(conn, "ledger", LEDGER)
        addr = f"127.0.0.1:{localnats.free_port()}"

        async def resettable(player_id: str) -> bool:  # the ladder's answer, from its table in this database
            score = await pool.fetchval("SELECT score FROM ladder_reputation WHERE player_id = $1", player_id)
            return score is not None and score < settings.ladder_reputation_start

        gpb_grpc.add_LedgerServiceServicer_to_server(
            LedgerService(Books(pool), replace(settings, ledger_addr=addr), resettable=resettable), server)
        server.add_insecure_port(addr)
        await server.start()
        yield await _play(settings, pool, addr, url)
    finally:
        await server.stop(0)
        await pool.close()
        await admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
        await admin.close()


async def _play(settings: Settings, pool: asyncpg.Pool, ledger_addr: str, url: str) -> Books_:
    a, b, c = (f"lb-{x}-{uuid.uuid4().hex[:6]}" for x in "abc")
    store = Store(pool, TERMS)  # the ladder applies the very terms the audit holds it to
    logs = Logs(complete=True)
    seq = 0

    async def log(rec: log_pb2.Record) -> None:
        nonlocal seq
        seq += 1
        logs.tables.setdefault(rec.table_id, []).append((seq, rec))
        assert await store.apply(STREAM, seq, items_of(rec, STREAM, seq)) == "applied"

    for hand in range(1, 7):  # a wins six: a new best of 2 (a reward of 20)
        await log(hand_ended("lt-1", hand, [a, b], 0, level=1, at_ms=JANUARY + hand))
    # a quits at the ladder table (a penalty, and reputation), then at an ordinary table (reputation only)
    await log(hand_ended("lt-1", 7, [a, b], 1, level=1, at_ms=JANUARY + 7, before=[penalty("Q", a, 7, 0, 1)]))
    plain = log_pb2.Record(table_id="pt-1", version=1, actor="system", game="xiangqi", server_time_ms=JANUARY + 8)
    plain.events.append(penalty("Q", a, 1, 0, 0))
    await log(plain)
    # c disconnects at another ladder table
    await log(hand_ended("lt-2", 1, [c, b], 1, level=1, at_ms=JANUARY + 9, before=[penalty("X", c, 1, 0, 1)]))

    # a pays for a reset through the ledger; the ladder applies the ledger's announcement once
    channel = grpc.aio.insecure_channel(ledger_addr)
    stub = gpb_grpc.LedgerServiceStub(channel)
    ops = (("authorization", f"Bearer {token(settings, 'ops', 'operator')}"),)
    mine = (("authorization", f"Bearer {token(settings, a)}"),)
    await stub.Adjust(gpb.AdjustRequest(adjustment_id=f"seed-{a}", player_id=a, currency="coins", delta=500,
                                        reason="test: coins to pay with"), metadata=ops)
    await stub.ResetReputation(gpb.ResetReputationRequest(request_id="r1", player_id=a), metadata=mine)
    await channel.close()
    announced = await pool.fetchrow("SELECT id, payload FROM ledger_outbox WHERE topic = 'reputation_reset'")
    assert announced is not None
    import json

    payload = json.loads(announced["payload"])
    assert await store.reset_reputation(names.LEDGER.name, int(announced["id"]), payload["player_id"],
                                        payload["request_id"]) == "applied"

    # January's rewards decided; the best levels paid by the ledger from the ladder's records, each
    # proven from the log, the month's places by the operator's CreditReward (PayMonthlyRewards)
    month = await decide_month(store, "xiangqi", "2024-01", TERMS.reward_monthly)
    assert len(month) == 2
    payer = RewardConsumer(Books(pool), LogReader(logs), daily_cap=0,  # type: ignore[arg-type]  # fed by hand
                           best_coins=TERMS.reward_best_coins)
    for r in await pool.fetch("SELECT id, payload FROM ladder_outbox WHERE topic = 'reward' ORDER BY id"):
        assert await payer.handle(Record(int(r["id"]), str(r["payload"]).encode())) == "paid"
    assert payer.paid == 1
    channel = grpc.aio.insecure_channel(ledger_addr)
    for r in await pool.fetch("SELECT reward_id, player_id, coins, reason FROM ladder_rewards WHERE kind = 'monthly'"):
        await gpb_grpc.LedgerServiceStub(channel).CreditReward(gpb.CreditRewardRequest(
            reward_id=r["reward_id"], player_id=r["player_id"], coins=r["coins"], reason=r["reason"]), metadata=ops)
    await channel.close()
    return Books_(logs, url, a, b, c)


class LogReader:
    """The table log as the ledger reads it (``get_msg`` by sequence, or the next one from a
    sequence on: a reward's source, the ladder folded up to it): ``logs``."""

    def __init__(self, logs: Logs) -> None:
        self.by_seq = {seq: rec for recs in logs.tables.values() for seq, rec in recs}

    async def get_msg(self, stream: str, seq: int, subject: str = "", next: bool = False) -> Any:
        if next:
            seq = min((s for s in self.by_seq if s >= seq), default=0)
        if seq not in self.by_seq:
            raise NotFoundError
        rec = self.by_seq[seq]
        return SimpleNamespace(seq=seq, subject=names.TABLES.subject(rec.table_id), data=rec.SerializeToString())


class Record:
    """A reward record as the ledger's consumer receives it from NATS (its stream sequence, its body)."""

    def __init__(self, seq: int, data: bytes) -> None:
        self.data = data
        self.metadata = SimpleNamespace(sequence=SimpleNamespace(stream=seq), num_delivered=1)

    async def ack(self) -> None:
        pass


Change = Callable[[asyncpg.Connection], Awaitable[Any]]


@asynccontextmanager
async def altered(p: Books_, do: Change, undo: Change) -> AsyncIterator[None]:
    """A change made behind the services' backs (the immutability triggers off), undone afterwards."""
    conn = await asyncpg.connect(p.url)
    await conn.execute("SET session_replication_role = replica")
    try:
        async with conn.transaction():
            await do(conn)
        yield
    finally:
        async with conn.transaction():
            await undo(conn)
        await conn.close()


def sql(query: str, *args: Any) -> Change:
    async def run(conn: asyncpg.Connection) -> None:
        await conn.execute(query, *args)

    return run


async def _row(p: Books_, query: str, *args: Any) -> asyncpg.Record:
    conn = await asyncpg.connect(p.url)
    try:
        row = await conn.fetchrow(query, *args)
    finally:
        await conn.close()
    assert row is not None, query
    return row


def put_back(table: str, *rows: asyncpg.Record) -> Change:
    """Insert ``rows`` again (what a deletion took)."""
    async def run(conn: asyncpg.Connection) -> None:
        for row in rows:
            cols = list(row.keys())
            await conn.execute(f"INSERT INTO {table} ({', '.join(cols)}) VALUES "
                               f"({', '.join(f'${i + 1}' for i in range(len(cols)))})", *row.values())

    return run


def found(report: Report) -> list[tuple[str, str]]:
    return sorted((f.code, f.subject) for f in report.findings)


async def test_the_whole_period_reconciles(period: Books_) -> None:
    report = await audit(period)
    assert report.ok, report.findings
    c = report.counts
    assert c["reputation_changes"] == 4 and c["reputation_quits_and_disconnects"] == 3
    assert c["reputation_resets_paid"] == 1 and c["reputations"] == 2
    assert c["ladder_rewards"] == 3 and c["ladder_rewards_posted"] == 3 and c["ladder_months_decided"] == 1
    conn = await asyncpg.connect(period.url)
    try:
        rows = await conn.fetch("SELECT player_id, score, quits, disconnects FROM ladder_reputation")
        rewarded = await conn.fetch("SELECT reward_id, coins FROM ladder_rewards ORDER BY reward_id")
    finally:
        await conn.close()
    # what the audit proved: a quit twice then paid a reset, c disconnected once; a's best of 2, the month's places
    assert {r["player_id"]: (r["score"], r["quits"], r["disconnects"]) for r in rows} == {
        period.a: (100, 2, 0), period.c: (95, 0, 1)}
    assert [(r["reward_id"], r["coins"]) for r in rewarded] == [
        (f"ladder/best/xiangqi/{period.a}/2", 20),
        (f"ladder/monthly/xiangqi/2024-01/{period.a}", 30),
        (f"ladder/monthly/xiangqi/2024-01/{period.c}", 20)]  # c (1,1,−1) ranks above b (1,1,−4)


def only(p: Books_, *tables: str) -> Books_:
    """The period of ``tables`` alone (the other tables' results are in the books, not in the logs)."""
    return replace(p, logs=Logs({t: p.logs.tables[t] for t in tables}, complete=False))


async def test_a_period_is_checked_without_the_tables_before_it(period: Books_) -> None:
    lt2 = only(period, "lt-2")  # b comes to lt-2 at (1,1,−5) from lt-1, which is not in the period
    report = await audit(lt2)
    assert report.ok, report.findings
    assert report.counts["ladder_players_in_period"] == 2 and report.counts["reputations"] == 1  # c's
    row = await _row(period, "SELECT id FROM ladder_history WHERE table_id = 'lt-1' AND hand_no = 7 AND player_id"
                     " = $1", period.b)
    # a row of b's before the period edited: b's history no longer follows on into it
    async with altered(period, sql("UPDATE ladder_history SET lp_after = lp_after - 1 WHERE id = $1", row["id"]),
                       sql("UPDATE ladder_history SET lp_after = lp_after + 1 WHERE id = $1", row["id"])):
        report = await audit(lt2)
        assert found(report) == [("ladder_history_mismatch", f"xiangqi/{period.b}")], report.findings
        assert f"row {row['id']} ended at" in report.findings[0].detail
    # the period's own row edited: the rules applied to its before say otherwise
    async with altered(period, sql("UPDATE ladder_history SET result = 'L' WHERE table_id = 'lt-2' AND player_id"
                                   " = $1", period.b),
                       sql("UPDATE ladder_history SET result = 'W' WHERE table_id = 'lt-2' AND player_id = $1",
                           period.b)):
        report = await audit(lt2)
        assert found(report) == [("ladder_history_mismatch", f"xiangqi/{period.b} at lt-2 hand 1")], report.findings
    assert (await audit(lt2)).ok


# -- reputation ----------------------------------------------------------------------------------


async def test_an_edited_reputation_row_is_found(period: Books_) -> None:
    async with altered(period, sql("UPDATE ladder_reputation SET score = score - 7 WHERE player_id = $1", period.c),
                       sql("UPDATE ladder_reputation SET score = score + 7 WHERE player_id = $1", period.c)):
        assert found(await audit(period)) == [("reputation_mismatch", period.c)]
    assert (await audit(period)).ok


async def test_an_edited_reputation_change_is_found(period: Books_) -> None:
    change = sql("UPDATE ladder_reputation_changes SET after = after + $2 WHERE player_id = $1", period.c, 5)
    back = sql("UPDATE ladder_reputation_changes SET after = after + $2 WHERE player_id = $1", period.c, -5)
    async with altered(period, change, back):
        report = await audit(period)
        # the change breaks the rule, and the reputation is no longer what the changes give
        assert [f.code for f in report.findings] == ["reputation_change_mismatch", "reputation_mismatch"], \
            report.findings
    assert (await audit(period)).ok


async def test_a_disconnect_without_its_change_is_found(period: Books_) -> None:
    row = await _row(period, "SELECT * FROM ladder_reputation_changes WHERE player_id = $1", period.c)
    async with altered(period, sql("DELETE FROM ladder_reputation_changes WHERE id = $1", row["id"]),
                       put_back("ladder_reputation_changes", row)):
        report = await audit(period)
        assert found(report) == [("reputation_change_missing", f"{period.c} at lt-2"),
                                 ("reputation_mismatch", period.c)], report.findings
    assert (await audit(period)).ok


async def test_a_reset_without_a_paid_posting_is_found(period: Books_) -> None:
    key = f"reset/{period.c}/free"
    async with altered(period, sql("INSERT INTO ladder_reputation_changes (player_id, cause, cause_key, before, after)"
                                   " VALUES ($1, 'reset', $2, 95, 100)", period.c, key),
                       sql("DELETE FROM ladder_reputation_changes WHERE cause_key = $1", key)):
        report = await audit(period)
        assert [f.code for f in report.findings] == ["reputation_change_without_source", "reputation_mismatch"], \
            report.findings
        assert key in report.findings[0].detail
    assert (await audit(period)).ok


async def test_a_paid_reset_without_its_change_is_found(period: Books_) -> None:
    row = await _row(period, "SELECT * FROM ladder_reputation_changes WHERE cause = 'reset'")
    async with altered(period, sql("DELETE FROM ladder_reputation_changes WHERE id = $1", row["id"]),
                       put_back("ladder_reputation_changes", row)):
        report = await audit(period)
        assert found(report) == [("reputation_change_missing", period.a), ("reputation_mismatch", period.a)], \
            report.findings
        assert f"reputation_reset/{period.a}/r1" in report.findings[0].detail
    assert (await audit(period)).ok


# -- rewards ------------------------------------------------------------------------------------


async def test_a_reward_posting_without_a_ladder_record_is_found(period: Books_) -> None:
    pid = f"reward/ladder/best/xiangqi/{period.c}/5"
    account = f"player/coins/{period.c}"  # (c's, opened by the month's reward)

    async def pay(conn: asyncpg.Connection) -> None:
        await conn.execute("INSERT INTO ledger_postings (id, digest, kind, actor, memo) VALUES"
                           " ($1, '\\x00', 'reward', 'service:ladder', 'a best level never reached')", pid)
        await conn.execute("INSERT INTO ledger_transfers (id, posting_id, debit, credit, currency, amount, owed,"
                           " reason) VALUES ($1, $1, 'system/coins/rewards', $2, 'coins', 50, 50, 'x')", pid, account)
        await conn.execute("UPDATE ledger_accounts SET balance = balance - 50 WHERE id = 'system/coins/rewards'")
        await conn.execute("UPDATE ledger_accounts SET balance = balance + 50 WHERE id = $1", account)

    async def unpay(conn: asyncpg.Connection) -> None:
        await conn.execute("DELETE FROM ledger_transfers WHERE id = $1", pid)
        await conn.execute("DELETE FROM ledger_postings WHERE id = $1", pid)
        await conn.execute("UPDATE ledger_accounts SET balance = balance + 50 WHERE id = 'system/coins/rewards'")
        await conn.execute("UPDATE ledger_accounts SET balance = balance - 50 WHERE id = $1", account)

    async with altered(period, pay, unpay):
        assert found(await audit(period)) == [("reward_without_source", pid)]
    assert (await audit(period)).ok


async def test_a_reward_record_removed_is_found(period: Books_) -> None:
    rid = f"ladder/best/xiangqi/{period.a}/2"
    row = await _row(period, "SELECT * FROM ladder_rewards WHERE reward_id = $1", rid)
    async with altered(period, sql("DELETE FROM ladder_rewards WHERE reward_id = $1", rid),
                       put_back("ladder_rewards", row)):
        # the rules give it, and the ledger paid a ladder reward the ladder no longer records
        assert found(await audit(period)) == [("reward_missing", rid), ("reward_without_source", f"reward/{rid}")]
    assert (await audit(period)).ok


async def test_a_reward_amount_edited_is_found(period: Books_) -> None:
    rid = f"ladder/monthly/xiangqi/2024-01/{period.c}"
    async with altered(period, sql("UPDATE ladder_rewards SET coins = coins + 100 WHERE reward_id = $1", rid),
                       sql("UPDATE ladder_rewards SET coins = coins - 100 WHERE reward_id = $1", rid)):
        report = await audit(period)
        # against the rules (2nd place: 20) and against the ledger's posting (20)
        assert found(report) == [("reward_altered", rid), ("reward_altered", rid)], report.findings
        assert "coins 120 (rules: 20)" in report.findings[0].detail
    assert (await audit(period)).ok


async def test_a_reward_marked_paid_without_a_posting_is_found(period: Books_) -> None:
    rid = f"ladder/monthly/xiangqi/2024-01/{period.c}"
    pid = f"reward/{rid}"
    posting = await _row(period, "SELECT * FROM ledger_postings WHERE id = $1", pid)
    leg = await _row(period, "SELECT * FROM ledger_transfers WHERE posting_id = $1", pid)

    async def unpost(conn: asyncpg.Connection) -> None:
        await conn.execute("DELETE FROM ledger_transfers WHERE posting_id = $1", pid)
        await conn.execute("DELETE FROM ledger_postings WHERE id = $1", pid)
        await conn.execute("UPDATE ledger_accounts SET balance = balance + $2 WHERE id = $1", leg["debit"],
                           leg["amount"])
        await conn.execute("UPDATE ledger_accounts SET balance = balance - $2 WHERE id = $1", leg["credit"],
                           leg["amount"])

    async def repost(conn: asyncpg.Connection) -> None:
        await put_back("ledger_postings", posting)(conn)
        await put_back("ledger_transfers", leg)(conn)
        await conn.execute("UPDATE ledger_accounts SET balance = balance - $2 WHERE id = $1", leg["debit"],
                           leg["amount"])
        await conn.execute("UPDATE ledger_accounts SET balance = balance + $2 WHERE id = $1", leg["credit"],
                           leg["amount"])

    async with altered(period, unpost, repost):
        report = await audit(period)
        assert found(report) == [("reward_unpaid", rid)], report.findings
        assert "PayMonthlyRewards" in report.findings[0].detail  # a month's place: the operator pays it
    assert (await audit(period)).ok


async def test_monthly_rewards_of_an_undecided_month_are_found(period: Books_) -> None:
    row = await _row(period, "SELECT * FROM ladder_months")
    async with altered(period, sql("DELETE FROM ladder_months"), put_back("ladder_months", row)):
        assert found(await audit(period)) == [
            ("reward_without_source", f"ladder/monthly/xiangqi/2024-01/{p}") for p in sorted((period.a, period.c))]
    assert (await audit(period)).ok
