"""Issue 32, attack 3: the entry gate raced the ledger. A guest with 200 金币 started three
stake-100 coin hands at once (all were let in), lost all three, and the log said 600 owed while
the ledger took 200; ``chieu audit`` then listed the short-paid hands as ``settlement_altered``.

With reservations each hand reserves each seat's largest possible loss before it starts, from the
金币 not already reserved: exactly as many hands start as the balance covers (Xiangqi's loser pays
2 cược: at stake 100 one hand, at stake 50 two), the rest are refused ``not_enough_coins``; after
every hand ends the log and the books agree to the coin, the reservations are closed, and the
audit finds nothing. Real table and ledger services, nats-server and PostgreSQL.
"""

from __future__ import annotations

import asyncio
import uuid

import asyncpg
import grpc
import pytest

from chieu.audit import money
from chieu.audit.logs import Logs
from chieu.audit.report import Report
from chieu.games.xiangqi.model import Resign
from chieu.kit.settings import Settings
from chieu.ledger.v1 import ledger_service_pb2 as gpb
from chieu.ledger.v1 import ledger_service_pb2_grpc as gpb_grpc
from chieu.table.client import TableClient
from chieu.table.v1 import log_pb2
from chieu.table.v1 import table_service_pb2 as pb
from tests.conftest import token
from tests.table.helpers import client, reason_of

pytestmark = pytest.mark.integration


def uid(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


async def ledger_call(settings: Settings, ledger: str, method: str, request: object) -> object:
    async with grpc.aio.insecure_channel(ledger) as ch:
        return await getattr(gpb_grpc.LedgerServiceStub(ch), method)(
            request, metadata=(("authorization", f"Bearer {token(settings, 'op', 'operator')}"),))


async def coins(settings: Settings, ledger: str, player: str) -> int:
    r = await ledger_call(settings, ledger, "GetBalances", gpb.GetBalancesRequest(player_id=player))
    return next((b.amount for b in r.balances if b.currency == "coins"), 0)  # type: ignore[attr-defined]


async def logs_of(settings: Settings, table: str, table_ids: list[str]) -> Logs:
    auditor = client(settings, table, "aud", "auditor")
    out = Logs(complete=False)
    for t in table_ids:
        out.tables[t] = [(r.stream_sequence, r.record) async for r in auditor.stub.AuditLog(
            pb.AuditLogRequest(table_id=t), metadata=auditor.metadata)]
    await auditor.close()
    return out


@pytest.mark.parametrize(("stake", "covered"), [(100, 1), (50, 2)])
async def test_three_hands_at_once_on_one_balance(settings: Settings, table_server: str, ledger_server: str,
                                                  database_url: str, stake: int, covered: int) -> None:
    guest = uid("guest")
    hosts = [uid("host") for _ in range(3)]
    await ledger_call(settings, ledger_server, "Adjust", gpb.AdjustRequest(
        adjustment_id=uid("fund"), player_id=guest, currency="coins", delta=200, reason="attack 3"))
    for h in hosts:
        await ledger_call(settings, ledger_server, "Adjust", gpb.AdjustRequest(
            adjustment_id=uid("fund"), player_id=h, currency="coins", delta=10_000, reason="attack 3"))
    players: dict[str, TableClient] = {p: client(settings, table_server, p) for p in (guest, *hosts)}
    try:
        tables = []
        for h in hosts:
            t = await players[h].create("xiangqi", {}, stake=stake, currency=log_pb2.CURRENCY_COINS)
            await players[guest].sit(t.table_id)
            tables.append(t.table_id)

        started = await asyncio.gather(*(players[h].start(t) for h, t in zip(hosts, tables, strict=True)),
                                       return_exceptions=True)
        ok = [t for t, r in zip(tables, started, strict=True) if isinstance(r, pb.TableView)]
        refusals = [(r.code(), reason_of(r)) for r in started if isinstance(r, grpc.aio.AioRpcError)]
        assert len(ok) == covered, started  # today's code: all three start
        assert refusals == [(grpc.StatusCode.FAILED_PRECONDITION, "not_enough_coins")] * (3 - covered)

        for t in ok:  # the guest loses every hand that started
            await players[guest].act(t, "xiangqi", Resign())

        want = 200 - covered * 2 * stake
        for _ in range(200):
            if await coins(settings, ledger_server, guest) == want:
                break
            await asyncio.sleep(0.05)
        assert await coins(settings, ledger_server, guest) == want

        conn = await asyncpg.connect(database_url)
        try:
            for _ in range(100):  # the HandEnded closes the reservations (its record is posted with them)
                still = await conn.fetchval("SELECT count(*) FROM ledger_reservations WHERE table_id = ANY($1)"
                                            " AND closed_at IS NULL", tables)
                if still == 0:
                    break
                await asyncio.sleep(0.05)
            assert still == 0
            report = Report()
            await money.reconcile(conn, await logs_of(settings, table_server, tables), report)
        finally:
            await conn.close()
        mine = [f for f in report.findings if any(t in f.subject or t in f.detail for t in tables)
                or guest in f.subject or guest in f.detail]
        assert mine == []
        assert report.counts.get("settlements") == covered
    finally:
        for c in players.values():
            await c.close()
