"""Issue 27, the README's known limit "quotas are counted per process": a player's tables never
played are one count for every table process, kept in the KV bucket ``CHIEU_TABLES_unplayed``
with compare-and-set. Two table-service processes on one nats-server, one player creating at
both at once: at most ``CHIEU_UNPLAYED_TABLES`` tables between them (each process allowed its
own three before). A hand started through one process frees a place at the other; an empty table
idle past its time stops counting everywhere; a create refused after it was counted gives its
place back; a reservation whose process died before appending stops counting after
``RESERVED_S``. Only the table service's NATS user may touch the bucket."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import replace
from types import SimpleNamespace
from typing import Any

import grpc
import pytest
from nats.errors import TimeoutError as NatsTimeoutError
from nats.js.errors import KeyNotFoundError

from chieu.kit import names, natsauth
from chieu.kit.errors import ServiceError
from chieu.kit.settings import Settings
from chieu.table import quotas
from chieu.table.quotas import Unplayed
from chieu.table.v1 import table_service_pb2 as pb
from chieu_tools import localnats
from tests.conftest import nats_connect
from tests.kit.test_natsauth import CONSUMERS, as_user, may_publish, needs_auth
from tests.table.helpers import NoLog, client, reason_of, refused


def uid(prefix: str) -> str:
    return f"{prefix}{uuid.uuid4().hex[:10]}"


def wait_of(err: grpc.aio.AioRpcError) -> int:
    return int(dict(err.trailing_metadata() or ()).get("retry-after-ms", 0))


# -- the bucket is the table service's alone ------------------------------------------------------

@pytest.mark.parametrize("subject", [
    f"$KV.{names.UNPLAYED}.cGxheWVy",
    f"$JS.API.STREAM.CREATE.KV_{names.UNPLAYED}",
    f"$JS.API.STREAM.INFO.KV_{names.UNPLAYED}",
    f"$JS.API.DIRECT.GET.KV_{names.UNPLAYED}.$KV.{names.UNPLAYED}.cGxheWVy",
    f"$JS.API.STREAM.MSG.GET.KV_{names.UNPLAYED}",
    f"$JS.API.CONSUMER.CREATE.KV_{names.UNPLAYED}",
])
def test_only_the_table_service_reads_or_writes_the_unplayed_bucket(subject: str) -> None:
    assert {u for u in natsauth.PERMISSIONS if may_publish(u, subject)} == {"table"}
    assert not may_publish("table", f"$JS.API.STREAM.DELETE.KV_{names.UNPLAYED}")
    assert not may_publish("table", f"$JS.API.STREAM.PURGE.KV_{names.UNPLAYED}")


@needs_auth
@pytest.mark.integration
async def test_another_service_cannot_write_the_unplayed_bucket(nats_url: str, table_server: str) -> None:
    subject = f"$KV.{names.UNPLAYED}.{quotas.key_of(uid('victim-'))}"
    for user in CONSUMERS:
        w = await as_user(nats_url, user)
        try:
            assert w.nc is not None
            with pytest.raises(NatsTimeoutError):
                await w.nc.jetstream(timeout=1.0).publish(subject, b"{}")
            assert await w.refused(subject), (user, w.errors)
        finally:
            await w.close()


# -- the count itself, two processes' worth on two connections -----------------------------------

class Nowhere:
    """Tables as a process sees them before any is appended: none exists yet (every reservation
    is a create in flight, so every one counts)."""

    store = NoLog()

    async def get(self, table_id: str, *, must_exist: bool = True) -> Any:
        return SimpleNamespace(table=SimpleNamespace(exists=False))

    def played(self, table_id: str) -> bool | None:
        return None


@pytest.mark.integration
async def test_two_processes_reserving_at_once_hold_at_most_the_limit(nats_url: str) -> None:
    a, b = await nats_connect(nats_url, "table"), await nats_connect(nats_url, "table")
    try:
        one = Unplayed(await quotas.bucket(a.jetstream()), 3, 900.0)
        two = Unplayed(await quotas.bucket(b.jetstream()), 3, 900.0)
        for _ in range(5):  # five players, each racing 2 × 10 creates over the two connections
            player = uid("racer-")
            tries = [(one if i % 2 else two).reserve(player, uuid.uuid4().hex, Nowhere()) for i in range(20)]
            got = await asyncio.gather(*tries, return_exceptions=True)
            kept = [g for g in got if g is None]
            refusals = [g for g in got if isinstance(g, ServiceError)]
            assert len(kept) == 3 and len(refusals) == 17, got
            assert all(r.reason == "too_many_unplayed_tables" for r in refusals), refusals
            assert all(0 < r.retry_after_ms <= quotas.RESERVED_S * 1000 for r in refusals)
            _, held = await one.read(player)
            assert len(held) == 3
    finally:
        await a.close()
        await b.close()


@pytest.mark.integration
async def test_a_reservation_whose_process_died_stops_counting(nats_url: str) -> None:
    nc = await nats_connect(nats_url, "table")
    try:
        kv = await quotas.bucket(nc.jetstream())
        count = Unplayed(kv, 2, 900.0)
        player, now_ms = uid("crashed-"), int(time.time() * 1000)
        stale, fresh = uuid.uuid4().hex, uuid.uuid4().hex
        # a process reserved `stale` long ago and was killed before appending; `fresh` is in flight
        await kv.put(quotas.key_of(player), json.dumps(
            {stale: now_ms - int(quotas.RESERVED_S * 1000) - 5000, fresh: now_ms - 1000}).encode())
        mine = uuid.uuid4().hex
        await count.reserve(player, mine, Nowhere())
        _, held = await count.read(player)
        assert set(held) == {fresh, mine}  # the dead reservation was dropped in the same write
        with pytest.raises(ServiceError) as err:
            await count.reserve(player, uuid.uuid4().hex, Nowhere())
        assert err.value.reason == "too_many_unplayed_tables"
        await count.release(player, mine, Nowhere())  # its create failed: the place is given back
        await count.reserve(player, uuid.uuid4().hex, Nowhere())
    finally:
        await nc.close()


# -- two table-service processes ---------------------------------------------------------------

@pytest.fixture
async def two(settings: Settings) -> AsyncIterator[Any]:
    """Two table-service processes of the test's own settings on the session's nats-server."""
    from chieu.table.app import build

    servers: list[Any] = []

    async def start(**changes: Any) -> tuple[str, str]:
        addrs = []
        for _ in range(2):
            mine = replace(settings, table_addr=f"127.0.0.1:{localnats.free_port()}", **changes)
            server = await build(mine)
            await server.start()
            servers.append(server)
            addrs.append(mine.table_addr)
        return addrs[0], addrs[1]

    yield start
    for server in servers:
        await server.shutdown()


@pytest.mark.integration
async def test_one_player_creating_at_two_processes_at_once_gets_three_tables(settings: Settings, two: Any) -> None:
    a_addr, b_addr = await two(unplayed_tables=3)
    for _ in range(3):
        player = uid("spread-")
        at_a, at_b = client(settings, a_addr, player), client(settings, b_addr, player)
        try:
            got = await asyncio.gather(*(c.create("xiangqi", {}) for c in (at_a, at_b) for _ in range(5)),
                                       return_exceptions=True)
            made = [g for g in got if isinstance(g, pb.TableView)]
            refusals = [g for g in got if not isinstance(g, pb.TableView)]
            assert len(made) == 3, got  # per process, each would have made three: six
            for err in refusals:
                assert isinstance(err, grpc.aio.AioRpcError), err
                assert err.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
                assert reason_of(err) == "too_many_unplayed_tables" and wait_of(err) > 0
        finally:
            await at_a.close()
            await at_b.close()


@pytest.mark.integration
async def test_a_hand_started_at_one_process_frees_a_place_at_the_other(settings: Settings, two: Any) -> None:
    a_addr, b_addr = await two(unplayed_tables=3)
    player = uid("host-")
    at_a, at_b, guest = client(settings, a_addr, player), client(settings, b_addr, player), \
        client(settings, a_addr, uid("guest-"))
    try:
        views = [await at_a.create("xiangqi", {}) for _ in range(3)]
        assert await refused(at_b.create("xiangqi", {})) == (grpc.StatusCode.RESOURCE_EXHAUSTED,
                                                              "too_many_unplayed_tables")
        await guest.sit(views[0].table_id)
        await at_a.start(views[0].table_id)  # a hand at one of them, through process A
        await at_b.create("xiangqi", {})  # B learns it from the log
        assert (await refused(at_b.create("xiangqi", {})))[1] == "too_many_unplayed_tables"
        assert (await refused(at_a.create("xiangqi", {})))[1] == "too_many_unplayed_tables"
    finally:
        for c in (at_a, at_b, guest):
            await c.close()


@pytest.mark.integration
async def test_an_empty_table_idle_at_one_process_stops_counting_at_the_other(settings: Settings, two: Any) -> None:
    a_addr, b_addr = await two(unplayed_tables=1, table_idle_expiry_s=1.0)
    player = uid("idler-")
    at_a, at_b = client(settings, a_addr, player), client(settings, b_addr, player)
    try:
        first = await at_a.create("xiangqi", {})
        await at_a.stub.StandUp(pb.StandUpRequest(table_id=first.table_id, command_id=uid("c")),
                                metadata=at_a.metadata)  # now empty
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await at_b.create("xiangqi", {})
        assert reason_of(err.value) == "too_many_unplayed_tables"
        assert 0 < wait_of(err.value) <= 1000  # until the empty table's idle time is over
        await asyncio.sleep(1.3)
        await at_b.create("xiangqi", {})  # seated at this one: it counts
        assert (await refused(at_a.create("xiangqi", {})))[1] == "too_many_unplayed_tables"
    finally:
        await at_a.close()
        await at_b.close()


@pytest.mark.integration
async def test_a_bad_create_counts_nothing_and_a_failed_one_gives_its_place_back(settings: Settings, two: Any) -> None:
    # the ladder unreachable: a table that needs a reputation fails at its gate, after it was counted
    a_addr, b_addr = await two(unplayed_tables=1, ladder_addr=f"127.0.0.1:{localnats.free_port()}")
    player = uid("unlucky-")
    at_a, at_b = client(settings, a_addr, player), client(settings, b_addr, player)
    nc = await nats_connect(settings.nats_url)
    kv = await nc.jetstream().key_value(names.UNPLAYED)
    try:
        assert await refused(at_a.create("no-such-game", {})) == (grpc.StatusCode.NOT_FOUND, "unknown_game")
        with pytest.raises(KeyNotFoundError):  # refused before it was counted: nothing written
            await kv.get(quotas.key_of(player))
        assert (await refused(at_a.create("xiangqi", {}, min_reputation=50)))[0] == grpc.StatusCode.UNAVAILABLE
        assert json.loads((await kv.get(quotas.key_of(player))).value or b"{}") == {}  # counted, then given back
        await at_b.create("xiangqi", {})  # the place is free at once, not after RESERVED_S
        assert (await refused(at_a.create("xiangqi", {})))[1] == "too_many_unplayed_tables"
    finally:
        await nc.close()
        await at_a.close()
        await at_b.close()
