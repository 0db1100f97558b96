"""Every view carries each seat's presence (issue 34): here; reconnecting until a time (a lost
stream, in a hand's grace or between hands' idle stand); played for them (托管, auto-play after
the grace); left (a player of the hand who stood up). The same for players and spectators."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

import pytest

from chieu.kit.settings import Settings
from chieu.table.client import TableClient
from chieu.table.v1 import table_service_pb2 as pb
from chieu_tools import localnats
from tests.table.helpers import client

pytestmark = pytest.mark.integration

HERE, RECONNECTING = pb.SEAT_PRESENCE_HERE, pb.SEAT_PRESENCE_RECONNECTING
AUTO, LEFT = pb.SEAT_PRESENCE_AUTO_PLAYED, pb.SEAT_PRESENCE_LEFT


async def _drain(views: Any) -> None:
    async for _ in views:
        pass


def _where(view: pb.TableView, seats: str = "seats") -> dict[str, tuple[int, int]]:
    return {s.player_id: (s.presence, s.until_ms) for s in getattr(view, seats)}


async def _until(pred: Any, within: float = 15.0) -> None:
    deadline = time.monotonic() + within
    while not await pred():
        assert time.monotonic() < deadline, "not in time"
        await asyncio.sleep(0.05)


async def test_each_seat_carries_its_presence(settings: Settings, table_server: str) -> None:
    a, b = client(settings, table_server, "pres-a"), client(settings, table_server, "pres-b")
    fan = client(settings, table_server, "pres-fan")
    clients: list[TableClient] = [a, b, fan]
    try:
        table_id = (await a.create("phom", {"uWindowSeconds": 0, "turnSeconds": 60}, reconnect_grace_s=1)).table_id
        await b.sit(table_id)
        watch_a = asyncio.create_task(_drain(a.watch(table_id)))
        watch_b = asyncio.create_task(_drain(b.watch(table_id)))
        await asyncio.sleep(0.3)
        assert _where(await fan.get(table_id)) == {"pres-a": (HERE, 0), "pres-b": (HERE, 0)}

        # between hands, a closed stream: reconnecting until the idle stand's end
        version = (await a.get(table_id)).version
        watch_b.cancel()
        closed_ms = time.time() * 1000

        async def lost() -> bool:
            return (await fan.get(table_id)).version > version
        await _until(lost)
        where, until = _where(await fan.get(table_id))["pres-b"]
        assert where == RECONNECTING
        assert abs(until - (closed_ms + settings.table_idle_stand_s * 1000)) < 5_000
        assert _where(await a.get(table_id)) == _where(await fan.get(table_id))  # the same for everyone

        # back: here again; then a hand, and in it a lost stream not back within the 1 s grace: 托管
        watch_b = asyncio.create_task(_drain(b.watch(table_id)))

        async def back() -> bool:
            return _where(await fan.get(table_id))["pres-b"] == (HERE, 0)
        await _until(back)
        await a.start(table_id)
        watch_b.cancel()

        async def auto() -> bool:
            return _where(await fan.get(table_id))["pres-b"][0] == AUTO
        await _until(auto)
        view = await fan.get(table_id)
        assert view.status == pb.TABLE_STATUS_PLAYING  # a's turns wait 60 s: the hand goes on
        assert _where(view, "hand_seats")["pres-b"] == (AUTO, 0)
        # the auto-played player stands up: left, in the hand's seats
        await b.stub.StandUp(pb.StandUpRequest(table_id=table_id, command_id="pres-b-up"), metadata=b.metadata)
        hand = _where(await fan.get(table_id), "hand_seats")
        assert hand["pres-b"] == (LEFT, 0) and hand["pres-a"] == (HERE, 0)
        watch_a.cancel()
    finally:
        for c in clients:
            await c.close()


@pytest.fixture
async def idle_addr(settings: Settings, table_server: str) -> AsyncIterator[str]:
    """A table process of its own with a 3 s idle stand."""
    from chieu.table.app import build

    mine = replace(settings, table_addr=f"127.0.0.1:{localnats.free_port()}", table_idle_stand_s=3.0)
    server = await build(mine)
    await server.start()
    try:
        yield mine.table_addr
    finally:
        await server.shutdown()


async def test_a_player_gone_when_the_hand_ends_is_stood_up_after_it(settings: Settings, idle_addr: str) -> None:
    """A player auto-played (托管) when the hand ends, with no stream, gets the idle stand after the
    hand (reconnecting, then stood up; hosting passes on), as if their stream closed then."""
    a, b = client(settings, idle_addr, "gone-a"), client(settings, idle_addr, "gone-b")
    ops = client(settings, idle_addr, "gone-ops", "operator")
    try:
        table_id = (await a.create("phom", {"uWindowSeconds": 0, "turnSeconds": 60}, reconnect_grace_s=1)).table_id
        await b.sit(table_id)
        watch_b = asyncio.create_task(_drain(b.watch(table_id)))
        await a.start(table_id)  # the host never watches: here, by the log, until a stream of theirs closes
        watch_a = asyncio.create_task(_drain(a.watch(table_id)))
        await asyncio.sleep(0.2)
        watch_a.cancel()  # the host goes; not back within the 1 s grace: 托管

        async def auto() -> bool:
            return _where(await b.get(table_id), "hand_seats")["gone-a"][0] == AUTO
        await _until(auto)
        await ops.stub.AbortHand(pb.AbortHandRequest(table_id=table_id, reason="the test's end"),
                                 metadata=ops.metadata)
        ended = time.monotonic()

        async def reconnecting() -> bool:
            return _where(await b.get(table_id)).get("gone-a", (0, 0))[0] == RECONNECTING
        await _until(reconnecting)

        async def stood() -> bool:
            return "gone-a" not in _where(await b.get(table_id))
        await _until(stood)
        assert time.monotonic() - ended >= 2.5
        view = await b.get(table_id)
        assert view.host == "gone-b" and _where(view) == {"gone-b": (HERE, 0)}
        watch_b.cancel()
    finally:
        for c in (a, b, ops):
            await c.close()
