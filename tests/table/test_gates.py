"""The entry gates, enforced by the table service whoever calls it, at every seat and before
every hand: a coin table needs more than 3 金币 (GC-1), a table may need a reputation (信誉度);
a player who no longer passes is stood up before the next hand, saying why; a gate that cannot
be asked refuses (UNAVAILABLE), and nothing is appended."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from dataclasses import replace

import grpc
import pytest

from chieu.kit.settings import Settings
from chieu.ladder.v1 import ladder_service_pb2 as lpb
from chieu.ladder.v1 import ladder_service_pb2_grpc as lpb_grpc
from chieu.ledger.v1 import ledger_service_pb2 as gpb
from chieu.ledger.v1 import ledger_service_pb2_grpc as gpb_grpc
from chieu.table.client import TableClient
from chieu.table.v1 import log_pb2
from chieu.table.v1 import table_service_pb2 as pb
from chieu_tools import localnats
from tests.conftest import token
from tests.table.helpers import client, refused

pytestmark = pytest.mark.integration
COINS = log_pb2.CURRENCY_COINS


def uid(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


async def fund(settings: Settings, ledger: str, player: str, delta: int) -> None:
    async with grpc.aio.insecure_channel(ledger) as ch:
        await gpb_grpc.LedgerServiceStub(ch).Adjust(
            gpb.AdjustRequest(adjustment_id=uid("fund"), player_id=player, currency="coins", delta=delta,
                              reason="gate test"),
            metadata=(("authorization", f"Bearer {token(settings, 'op', 'operator')}"),))


async def reasons_left(settings: Settings, table: str, table_id: str) -> dict[str, str]:
    """Who the table stood up and why, from its log (an auditor's view)."""
    auditor = client(settings, table, "aud", "auditor")
    out: dict[str, str] = {}
    async for r in auditor.stub.AuditLog(pb.AuditLogRequest(table_id=table_id), metadata=auditor.metadata):
        for e in r.record.events:
            if e.WhichOneof("kind") == "player_left" and e.player_left.reason:
                out[e.player_left.player_id] = e.player_left.reason
    await auditor.close()
    return out


@pytest.fixture
async def players(settings: Settings, table_server: str) -> AsyncIterator[dict[str, TableClient]]:
    made: dict[str, TableClient] = {}

    class Players(dict[str, TableClient]):
        def __missing__(self, name: str) -> TableClient:
            made[name] = self[name] = client(settings, table_server, name)
            return made[name]

    yield Players()
    for c in made.values():
        await c.close()


async def test_gc1_three_coins_refused_four_allowed_and_dropping_to_three_stands_up(
        settings: Settings, table_server: str, ledger_server: str, players: dict[str, TableClient]) -> None:
    host, three, four = uid("host"), uid("three"), uid("four")
    for p, coins in ((host, 100), (three, 3), (four, 4)):
        await fund(settings, ledger_server, p, coins)
    t = await players[host].create("o_an_quan", {}, currency=COINS)
    assert await refused(players[three].sit(t.table_id)) == (grpc.StatusCode.FAILED_PRECONDITION, "not_enough_coins")
    assert (await players[three].get(t.table_id)).version == t.version  # nothing appended; watching is allowed
    await players[four].sit(t.table_id)
    await fund(settings, ledger_server, four, -1)  # down to 3 between hands
    assert await refused(players[host].start(t.table_id)) == (grpc.StatusCode.FAILED_PRECONDITION,
                                                              "not_enough_players")
    view = await players[host].get(t.table_id)
    assert [s.player_id for s in view.seats] == [host]
    assert await reasons_left(settings, table_server, t.table_id) == {four: "not_enough_coins"}
    nobody = uid("nobody")  # no account at all: 0 金币
    assert await refused(players[nobody].create("o_an_quan", {}, currency=COINS)) == (
        grpc.StatusCode.FAILED_PRECONDITION, "not_enough_coins")


async def test_a_gate_that_cannot_be_asked_refuses_and_appends_nothing(settings: Settings) -> None:
    from chieu.table.app import build

    nowhere = f"127.0.0.1:{localnats.free_port()}"
    alone = replace(settings, table_addr=f"127.0.0.1:{localnats.free_port()}", ledger_addr=nowhere,
                    ladder_addr=nowhere, ladder_check_timeout_s=0.5)
    server = await build(alone)
    await server.start()
    host = client(alone, alone.table_addr, uid("host"))
    try:
        assert await refused(host.create("o_an_quan", {}, currency=COINS, command_id="c1")) == (
            grpc.StatusCode.UNAVAILABLE, "ledger_unavailable")
        assert await refused(host.create("o_an_quan", {}, min_reputation=50, command_id="c2")) == (
            grpc.StatusCode.UNAVAILABLE, "ladder_unavailable")
        points = await host.create("o_an_quan", {})  # a table without gates needs nobody
        assert points.version == 1
    finally:
        await host.close()
        await server.shutdown()


async def test_a_minimum_reputation_refuses_a_quitter(settings: Settings, table_server: str, ladder_server: str,
                                                       players: dict[str, TableClient]) -> None:
    host, quitter, fresh = uid("host"), uid("quitter"), uid("fresh")
    t = await players[host].create("o_an_quan", {})
    await players[quitter].sit(t.table_id)
    await players[host].start(t.table_id)
    q = players[quitter]
    await q.stub.StandUp(pb.StandUpRequest(table_id=t.table_id, command_id="quit"), metadata=q.metadata)  # 强退
    async with grpc.aio.insecure_channel(ladder_server) as ch:
        stub, md = lpb_grpc.LadderServiceStub(ch), (("authorization", f"Bearer {token(settings, quitter)}"),)
        with_quit = lpb.GetReputationResponse()
        for _ in range(200):  # the ladder counts the quit from the table log
            try:
                with_quit = await stub.GetReputation(lpb.GetReputationRequest(player_id=quitter), metadata=md)
            except grpc.aio.AioRpcError as e:
                assert e.code() == grpc.StatusCode.NOT_FOUND  # not counted yet
            if with_quit.quits:
                break
            await asyncio.sleep(0.05)
    assert with_quit.reputation < settings.ladder_reputation_start
    gated = await players[host].create("o_an_quan", {}, min_reputation=settings.ladder_reputation_start)
    assert gated.min_reputation == settings.ladder_reputation_start
    assert await refused(players[quitter].sit(gated.table_id)) == (grpc.StatusCode.FAILED_PRECONDITION,
                                                                   "reputation_too_low")
    await players[fresh].sit(gated.table_id)  # never counted by the ladder: the starting reputation
    assert await refused(players[host].create("o_an_quan", {}, min_reputation=-1)) == (
        grpc.StatusCode.INVALID_ARGUMENT, "bad_min_reputation")
