"""Issue 27 at the table service: the chip-dumping script's coin table at stake 1,000,000 is refused
(coin tables at the rooms' stakes only); one player's tables never played and one session's
``Watch`` streams are bounded, refused with RESOURCE_EXHAUSTED, a stable reason and the time to
wait; an empty table idle past its time leaves the process (and no longer counts). Real NATS,
PostgreSQL and services; nothing is appended for a refusal."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

import grpc
import pytest

from chieu.kit.settings import Settings
from chieu.ledger.v1 import ledger_service_pb2 as gpb
from chieu.ledger.v1 import ledger_service_pb2_grpc as gpb_grpc
from chieu.table.v1 import log_pb2
from chieu.table.v1 import table_service_pb2 as pb
from chieu_tools import localnats
from tests.conftest import token
from tests.table.helpers import client, refused

pytestmark = pytest.mark.integration

COINS = log_pb2.CURRENCY_COINS


def uid(prefix: str) -> str:
    return f"{prefix}{uuid.uuid4().hex[:10]}"


def wait_of(err: grpc.aio.AioRpcError) -> int:
    return int(dict(err.trailing_metadata() or ()).get("retry-after-ms", 0))


@pytest.fixture
async def own(settings: Settings) -> AsyncIterator[tuple[Settings, Any]]:
    """A table-service process of the test's own settings (built by the test)."""
    from chieu.table.app import build

    servers: list[Any] = []

    async def start(**changes: Any) -> Settings:
        mine = replace(settings, table_addr=f"127.0.0.1:{localnats.free_port()}", **changes)
        server = await build(mine)
        await server.start()
        servers.append(server)
        return mine

    yield settings, start
    for server in servers:
        await server.shutdown()


async def test_the_dumping_script_is_refused_by_stake_and_a_room_stake_is_not(
        settings: Settings, table_server: str, ledger_server: str) -> None:
    guest, main = uid("guest-"), uid("main-")
    ledger = grpc.aio.insecure_channel(ledger_server)
    ops = (("authorization", f"Bearer {token(settings, 'ops', 'operator')}"),)
    for p in (guest, main):  # the welcome coins
        await gpb_grpc.LedgerServiceStub(ledger).Adjust(gpb.AdjustRequest(
            adjustment_id=uid("w-"), player_id=p, currency="coins", delta=200, reason="welcome"), metadata=ops)
    g = client(settings, table_server, guest)
    try:
        status, reason = await refused(g.create("xiangqi", {}, command_id="dump-1", stake=1_000_000, currency=COINS))
        assert (status, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "stake_not_offered")
        assert await refused(g.create("xiangqi", {}, stake=1000, currency=COINS)) == (
            grpc.StatusCode.INVALID_ARGUMENT, "stake_not_offered")
        # nothing was appended: the same command id creates nothing, the table does not exist
        never = uuid.uuid5(uuid.NAMESPACE_URL, f"{guest}/dump-1").hex
        assert (await refused(g.get(never)))[1] == "unknown_table"
        view = await g.create("xiangqi", {}, stake=100, currency=COINS)  # a room's stake
        assert (view.stake, view.currency) == (100, COINS)
        changed = g.stub.ChangeSettings(pb.ChangeSettingsRequest(table_id=view.table_id, command_id=uid("c"),
                                                                 stake=1_000_000), metadata=g.metadata)
        assert await refused(changed) == (grpc.StatusCode.INVALID_ARGUMENT, "stake_not_offered")
        assert (await g.get(view.table_id)).version == view.version
        points = await g.create("xiangqi", {}, stake=1_000_000)  # a points table plays for no money
        assert points.stake == 1_000_000
    finally:
        await g.close()
        await ledger.close()


async def test_the_fourth_table_never_played_is_refused_until_one_is_played(own: tuple[Settings, Any]) -> None:
    settings, start = own
    mine = await start(unplayed_tables=3)
    host, other = client(settings, mine.table_addr, uid("host-")), client(settings, mine.table_addr, uid("other-"))
    try:
        views = [await host.create("xiangqi", {}, command_id=f"t{i}") for i in range(3)]
        again = await host.create("xiangqi", {}, command_id="t0")  # a repeated create names the same table
        assert again.table_id == views[0].table_id
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await host.create("xiangqi", {})
        assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert dict(err.value.trailing_metadata())["chieu-reason"] == "too_many_unplayed_tables"
        assert wait_of(err.value) > 0
        await other.sit(views[0].table_id)
        await host.start(views[0].table_id)  # a hand played at one of them
        await host.create("xiangqi", {})
    finally:
        await host.close()
        await other.close()


async def test_the_ninth_watch_of_a_session_is_refused_until_one_ends(settings: Settings, table_server: str) -> None:
    me = uid("watcher-")
    c = client(settings, table_server, me)
    sid_token = token(settings, me, sid=uid("sid-"))
    other_session = client(settings, table_server, me)
    other_session.metadata = (("authorization", f"Bearer {token(settings, me, sid=uid('sid-'))}"),)
    c.metadata = (("authorization", f"Bearer {sid_token}"),)
    host = client(settings, table_server, uid("host-"))
    calls: list[Any] = []
    try:
        table = (await host.create("xiangqi", {})).table_id
        for _ in range(8):
            call = c.stub.Watch(pb.WatchRequest(table_id=table), metadata=c.metadata)
            await call.read()  # the first view: the stream is open
            calls.append(call)
        ninth = c.stub.Watch(pb.WatchRequest(table_id=table), metadata=c.metadata)
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await ninth.read()
        assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert dict(err.value.trailing_metadata())["chieu-reason"] == "too_many_watches" and wait_of(err.value) > 0
        other = other_session.stub.Watch(pb.WatchRequest(table_id=table), metadata=other_session.metadata)
        await other.read()  # another session of the same player has its own
        other.cancel()
        calls.pop().cancel()
        for _ in range(50):  # the ended stream is let go
            await asyncio.sleep(0.05)
            again = c.stub.Watch(pb.WatchRequest(table_id=table), metadata=c.metadata)
            try:
                await again.read()
                calls.append(again)
                break
            except grpc.aio.AioRpcError:
                continue
        else:
            raise AssertionError("the session's quota was not given back")
    finally:
        for call in calls:
            call.cancel()
        for x in (c, host, other_session):
            await x.close()


async def test_an_empty_table_expires_after_its_idle_time(own: tuple[Settings, Any]) -> None:
    settings, start = own
    mine = await start(table_idle_expiry_s=1.0, unplayed_tables=1)
    host = client(settings, mine.table_addr, uid("host-"))
    try:
        first = await host.create("xiangqi", {})
        await host.stub.StandUp(pb.StandUpRequest(table_id=first.table_id, command_id=uid("c")),
                                metadata=host.metadata)  # now empty
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await host.create("xiangqi", {})
        assert dict(err.value.trailing_metadata())["chieu-reason"] == "too_many_unplayed_tables"
        assert 0 < wait_of(err.value) <= 1000  # until the empty table's idle time is over
        await asyncio.sleep(1.6)  # idle past its time: the sweep (every 0.25 s) closed it
        await host.create("xiangqi", {})  # the creator sits at this one: it is not empty
        await asyncio.sleep(1.6)
        assert (await refused(host.create("xiangqi", {})))[1] == "too_many_unplayed_tables"  # still there
    finally:
        await host.close()
