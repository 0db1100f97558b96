"""The issue's chip-dumping script played for real, at a stake the rooms offer (the table service
refuses any other), and found by ``chieu audit``: fresh accounts with their 200 welcome 金币 each
create a 中国象棋 coin table, the main account sits, the fresh account starts the hand and
resigns; the ledger pays the main account, and the audit flags it with the payers, their age and
the hands. Real nats-server, PostgreSQL and services."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Iterator

import grpc
import pytest

from chieu.audit.run import Options, audit
from chieu.games.xiangqi.v1 import xiangqi_pb2
from chieu.kit.settings import Settings
from chieu.ledger.v1 import ledger_service_pb2 as gpb
from chieu.ledger.v1 import ledger_service_pb2_grpc as gpb_grpc
from chieu.table.client import TableClient
from chieu.table.v1 import log_pb2
from tests.conftest import nats_creds, token
from tests.ladder.helpers import act

pytestmark = pytest.mark.integration


@pytest.fixture(autouse=True)
def _as_auditor() -> Iterator[None]:
    """The audit reads NATS as the read-only ``audit`` user (``CHIEU_NATS_CREDS``)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CHIEU_NATS_CREDS", nats_creds("audit"))
        yield


async def test_the_dumping_script_at_a_room_stake_is_flagged_by_the_audit(
        settings: Settings, table_server: str, ledger_server: str, database_url: str) -> None:
    main = f"main-{uuid.uuid4().hex[:8]}"
    guests = [f"guest-{uuid.uuid4().hex[:8]}" for _ in range(4)]
    channel = grpc.aio.insecure_channel(ledger_server)
    ledger = gpb_grpc.LedgerServiceStub(channel)
    ops = (("authorization", f"Bearer {token(settings, 'ops', 'operator')}"),)
    me = TableClient(table_server, token(settings, main))
    tables = []
    try:
        for p in (main, *guests):  # each account's welcome coins
            await ledger.Adjust(gpb.AdjustRequest(adjustment_id=f"w-{p}", player_id=p, currency="coins", delta=200,
                                                  reason="welcome (test)"), metadata=ops)

        async def coins() -> int:
            """The main account's 金币 and what the ledger's screen holds of them (issue 32)."""
            got = await ledger.GetBalances(gpb.GetBalancesRequest(player_id=main), metadata=ops)
            held = await ledger.ListReviewHolds(gpb.ListReviewHoldsRequest(player_id=main), metadata=ops)
            return {b.currency: b.amount for b in got.balances}["coins"] + sum(h.coins for h in held.holds)

        played: list[str] = []
        for k, g in enumerate(guests):
            guest = TableClient(table_server, token(settings, g))
            try:
                view = await guest.create("xiangqi", {}, stake=100, currency=log_pb2.CURRENCY_COINS)
                try:
                    await me.sit(view.table_id)
                except grpc.aio.AioRpcError as e:  # the ledger's screen held the winnings: no more coin tables
                    assert k >= 3 and e.code() == grpc.StatusCode.FAILED_PRECONDITION, e
                    held = await ledger.ListReviewHolds(gpb.ListReviewHoldsRequest(player_id=main), metadata=ops)
                    assert held.holds and held.holds[0].code == "net_dump_target", held
                    break
                await guest.start(view.table_id)
                await act(guest, view.table_id, xiangqi_pb2.Resign())
                tables.append(view.table_id)
                played.append(g)
            finally:
                await guest.close()
            # the main account's 200 金币 were reserved for that hand (its largest loss at stake 100)
            # until the ledger reads the hand's end: the next hand starts once it has
            for _ in range(300):
                if await coins() >= 200 + 200 * (k + 1):
                    break
                await asyncio.sleep(0.1)

        deadline = time.monotonic() + 30
        for _ in range(300):  # the ledger posts the settlements from the log
            if await coins() >= 200 + len(played) * 100 or time.monotonic() > deadline:
                break
            await asyncio.sleep(0.1)
        assert await coins() >= 500  # the dump reached the main account (or the screen's hold of it)
        report = await audit(Options(nats_url=settings.nats_url, database_url=database_url,
                                     tables=frozenset(tables), ladder=False))
        mine = {f.code: f for f in report.flags if f.account == main}
        assert set(mine) == {"dump_target", "short_hand_wins", "net_dump_target"}, report.flags
        assert mine["dump_target"].detail.endswith(f"net from {len(played)} accounts younger than 72 h")
        for g in played:
            assert any(e.startswith(f"{g} (0 min old at its first coin hand) lost")
                       for e in mine["dump_target"].evidence)
        for t in tables:
            assert any(e.startswith(f"{t}/1: +") and "after 1 moves (resignation)" in e
                       for e in mine["short_hand_wins"].evidence), mine["short_hand_wins"].evidence
        assert not [f for f in report.flags if f.account != main]
    finally:
        await me.close()
        await channel.close()
