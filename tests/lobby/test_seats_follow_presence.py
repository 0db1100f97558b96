"""Seats follow presence (issue 34): at a table with no hand running, a seated player with no open
stream for ``CHIEU_TABLE_IDLE_STAND_S`` is stood up (hosting passes on), a table nobody is left at
leaves the live list, and the lobby's quick seat never seats a player where a seated player is
absent. The quick seat's rule on its own (a property over random presence), then over gRPC with a
table process of the test's own settings (a short idle stand)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from chieu.kit import names
from chieu.kit.settings import Settings
from chieu.lobby.presence import Spectators, seatable
from chieu.lobby.v1 import lobby_service_pb2 as pb
from chieu.table.client import TableClient
from chieu.table.v1 import presence_pb2
from chieu.table.v1 import table_service_pb2 as tpb
from chieu_tools import localnats
from tests.conftest import nats_connect
from tests.lobby.conftest import bearer, guest, until
from tests.lobby.test_tables import Watcher, new_room

PLAYERS = [f"p{i}" for i in range(8)]
TABLES = [f"t{i}" for i in range(6)]


@st.composite
def worlds(draw: st.DrawFn) -> tuple[list[tuple[str, list[str]]], list[presence_pb2.Presence], set[tuple[str, str]]]:
    """Tables with seated players; the table processes' announcements of who is absent (full and
    partial, some processes silent at the end); and which (table, player) is absent by the last
    word of each process still heard."""
    tables = [(t, draw(st.lists(st.sampled_from(PLAYERS), max_size=4, unique=True))) for t in TABLES]
    msgs: list[presence_pb2.Presence] = []
    state: dict[str, dict[str, list[str]]] = {}
    for _ in range(draw(st.integers(0, 12))):
        instance = draw(st.sampled_from(["a", "b", "c"]))
        full = draw(st.booleans())
        p = presence_pb2.Presence(instance=instance, full=full, ttl_ms=15_000)
        by = {} if full else dict(state.get(instance, {}))
        for table_id, seats in tables:
            if draw(st.booleans()):
                gone = sorted(draw(st.sets(st.sampled_from(seats))) if seats else set())
                if gone or not full:
                    p.absent[table_id].player_ids.extend(gone)
                if gone:
                    by[table_id] = gone
                else:
                    by.pop(table_id, None)
        state[instance] = by
        msgs.append(p)
    truth = {(t, p) for by in state.values() for t, ps in by.items() for p in ps}
    return tables, msgs, truth


@hsettings(max_examples=300, deadline=None)
@given(worlds())
def test_quick_seat_never_seats_into_a_table_with_an_absent_player(
        world: tuple[list[tuple[str, list[str]]], list[presence_pb2.Presence], set[tuple[str, str]]]) -> None:
    tables, msgs, truth = world
    heard = Spectators()
    for m in msgs:
        heard.heard(m)
    kept = seatable(tables, lambda t: t[1], heard.absent, lambda t: t[0])
    for table_id, seats in kept:
        assert not any((table_id, p) in truth for p in seats)
    # and nothing else is left out, in the order given (the fullest first stays first)
    assert kept == [(t, s) for t, s in tables if not any((t, p) in truth for p in s)]


def test_a_silent_process_says_nobody_is_absent() -> None:
    now = [0.0]
    heard = Spectators(clock=lambda: now[0])
    p = presence_pb2.Presence(instance="a", full=True, ttl_ms=1_000)
    p.absent["T"].player_ids.append("x")
    heard.heard(p)
    assert heard.absent("T") == {"x"}
    now[0] += 2
    heard.sweep()
    assert heard.absent("T") == frozenset()


IDLE_STAND_S = 6.0
"""Long enough that a loaded machine still quick-seats before the absent host is stood up."""


@pytest.fixture
async def idle_table(settings: Settings, table_server: str) -> AsyncIterator[Settings]:
    """A table process of its own whose idle stand is short (the same log, the same lobby)."""
    from chieu.table.app import build

    mine = replace(settings, table_addr=f"127.0.0.1:{localnats.free_port()}", table_idle_stand_s=IDLE_STAND_S)
    server = await build(mine)
    await server.start()
    try:
        yield mine
    finally:
        await server.shutdown()


async def _drain(views: Any) -> None:
    async for _ in views:
        pass


async def test_a_player_who_closes_their_stream_is_stood_up_and_the_empty_table_leaves_the_list(
        stub: Any, operator: Any, idle_table: Settings) -> None:
    room = await new_room(stub, operator)
    a, b, c = await guest(stub), await guest(stub), await guest(stub)
    ta = TableClient(idle_table.table_addr, a.access_token)
    tb = TableClient(idle_table.table_addr, b.access_token)
    w = Watcher(stub, room.room_id, c.access_token)
    await asyncio.wait_for(w.complete.wait(), 5)
    view = await ta.create("phom", stake=room.stake)
    table_id = view.table_id
    await tb.sit(table_id)
    watch_a = asyncio.create_task(_drain(ta.watch(table_id)))
    watch_b = asyncio.create_task(_drain(tb.watch(table_id)))
    await until(lambda: _taken(w, table_id, 2))
    await until(lambda: _presence(tb, table_id, tpb.SEAT_PRESENCE_HERE))  # both watch: back from the seat's stand
    before = (await tb.get(table_id)).version
    heard = asyncio.Event()

    async def announced(msg: Any) -> None:
        if a.player.player_id in presence_pb2.Presence.FromString(msg.data).absent[table_id].player_ids:
            heard.set()

    listener = await nats_connect(idle_table.nats_url)
    await listener.subscribe(f"{names.PRESENCE}.>", cb=announced)
    watch_a.cancel()  # the host closes the page
    closed = time.monotonic()
    await until(lambda: _version_above(tb, table_id, before))  # the idle stand is written (ConnectionLost)
    await asyncio.wait_for(heard.wait(), 5)  # the table process announces the absent host to the lobby
    await listener.close()
    await asyncio.sleep(0.3)  # the lobby heard the same message (its own subscriber) and applied it

    # the quick seat does not seat a newcomer with the absent host: it makes a table of its own
    seat = await stub.QuickSeat(pb.QuickSeatRequest(room_id=room.room_id), metadata=bearer(c.access_token))
    assert seat.created and seat.table_id != table_id
    assert time.monotonic() - closed < IDLE_STAND_S, "the machine was too slow to see the host absent before the stand"

    # the host is stood up after the idle time; hosting passes to the player still there
    await until(lambda: _taken(w, table_id, 1), within=15)
    stood = await tb.get(table_id)
    assert time.monotonic() - closed >= IDLE_STAND_S - 0.1
    assert [s.player_id for s in stood.seats if s.player_id] == [b.player.player_id]
    assert stood.host == b.player.player_id

    # the last one leaves too: nobody is present, the table leaves the live list
    watch_b.cancel()
    await until(lambda: _gone(w, table_id), within=15)
    listed = await stub.ListTables(pb.ListTablesRequest(room_id=room.room_id), metadata=bearer(c.access_token))
    assert table_id not in [t.table_id for t in listed.tables]
    assert (await tb.get(table_id)).host == ""
    await w.close()
    for client in (ta, tb):
        await client.close()


async def test_a_player_back_in_time_keeps_the_seat(stub: Any, idle_table: Settings) -> None:
    a = await guest(stub)
    ta = TableClient(idle_table.table_addr, a.access_token)
    table_id = (await ta.create("phom")).table_id
    first = asyncio.create_task(_drain(ta.watch(table_id)))
    await until(lambda: _presence(ta, table_id, tpb.SEAT_PRESENCE_HERE))
    version = (await ta.get(table_id)).version
    first.cancel()
    await until(lambda: _version_above(ta, table_id, version))
    again = asyncio.create_task(_drain(ta.watch(table_id)))  # back within the idle stand: Reconnected
    await until(lambda: _version_above(ta, table_id, version + 1))
    await asyncio.sleep(IDLE_STAND_S + 0.5)  # past the first stand's time
    seats = [s.player_id for s in (await ta.get(table_id)).seats if s.player_id]
    assert seats == [a.player.player_id]
    again.cancel()
    await ta.close()


async def _taken(w: Watcher, table_id: str, n: int) -> bool:
    t = w.tables().get(table_id)
    return t is not None and t.seats_taken == n


async def _gone(w: Watcher, table_id: str) -> bool:
    return table_id not in w.tables()


async def _version_above(c: TableClient, table_id: str, version: int) -> bool:
    view: tpb.TableView = await c.get(table_id)
    return view.version > version


async def test_an_idle_stand_outlives_a_restart(stub: Any, operator: Any, settings: Settings,
                                                table_server: str) -> None:
    """The table is in the active bucket while the stand runs: a process that starts resumes it and
    stands the player up with nobody asking for the table."""
    from chieu.table.app import build

    room = await new_room(stub, operator)
    a, c = await guest(stub), await guest(stub)
    mine = replace(settings, table_addr=f"127.0.0.1:{localnats.free_port()}", table_idle_stand_s=3.0)
    first = await build(mine)
    await first.start()
    ta = TableClient(mine.table_addr, a.access_token)
    w = Watcher(stub, room.room_id, c.access_token)
    try:
        await asyncio.wait_for(w.complete.wait(), 5)
        table_id = (await ta.create("phom", stake=room.stake)).table_id
        watch = asyncio.create_task(_drain(ta.watch(table_id)))
        await until(lambda: _presence(ta, table_id, tpb.SEAT_PRESENCE_HERE))
        version = (await ta.get(table_id)).version
        watch.cancel()
        await until(lambda: _version_above(ta, table_id, version))  # the idle stand is written
        await ta.close()
        await first.shutdown()
        await asyncio.sleep(0.5)
        assert await _taken(w, table_id, 1)
        again = await build(replace(mine, table_addr=f"127.0.0.1:{localnats.free_port()}"))
        await again.start()  # resumes the active tables
        try:
            await until(lambda: _gone(w, table_id), within=20)
        finally:
            await again.shutdown()
    finally:
        await w.close()


async def test_a_player_who_sits_and_never_watches_is_stood_up(stub: Any, operator: Any,
                                                               idle_table: Settings) -> None:
    """A seat taken with no stream open starts the idle stand (in the seat's own record); a stream
    opened in time keeps the seat, none: stood up. The creator who never watches is stood up too."""
    room = await new_room(stub, operator)
    a, b, c, d = await guest(stub), await guest(stub), await guest(stub), await guest(stub)
    ta, tb = TableClient(idle_table.table_addr, a.access_token), TableClient(idle_table.table_addr, b.access_token)
    tc = TableClient(idle_table.table_addr, c.access_token)
    w = Watcher(stub, room.room_id, d.access_token)
    await asyncio.wait_for(w.complete.wait(), 5)
    created = await ta.create("phom", stake=room.stake)
    table_id = created.table_id
    assert [s.presence for s in created.seats if s.player_id] == [tpb.SEAT_PRESENCE_RECONNECTING]
    watch_a = asyncio.create_task(_drain(ta.watch(table_id)))  # the creator watches: back
    sat = await tb.sit(table_id)  # b sits and never watches
    assert sat.table.seats[sat.seat].presence == tpb.SEAT_PRESENCE_RECONNECTING
    assert sat.table.seats[sat.seat].until_ms > 0
    watch_c = asyncio.create_task(_drain(tc.watch(table_id)))  # c watches first, then sits: here
    await asyncio.sleep(0.2)
    sat_c = await tc.sit(table_id)
    assert sat_c.table.seats[sat_c.seat].presence == tpb.SEAT_PRESENCE_HERE
    await until(lambda: _taken(w, table_id, 3))
    sat_at = time.monotonic()
    await until(lambda: _taken(w, table_id, 2), within=15)  # b, never watching, is stood up
    assert time.monotonic() - sat_at >= IDLE_STAND_S - 1.0
    seats = {s.player_id: s.presence for s in (await ta.get(table_id)).seats if s.player_id}
    assert seats == {a.player.player_id: tpb.SEAT_PRESENCE_HERE, c.player.player_id: tpb.SEAT_PRESENCE_HERE}
    await asyncio.sleep(IDLE_STAND_S + 0.5)  # the watchers keep their seats
    assert await _taken(w, table_id, 2)
    for task in (watch_a, watch_c):
        task.cancel()
    await w.close()
    for client in (ta, tb, tc):
        await client.close()


async def test_seated_players_whose_streams_closed_with_every_process_get_the_idle_stand_on_restart(
        stub: Any, operator: Any, settings: Settings, table_server: str) -> None:
    """Every table process stops while a waiting table has a seated player watching (a server's stop
    writes no ConnectionLost): the process that starts gives the player without a stream the idle
    stand, and stands them up at its end."""
    from chieu.table.app import build

    room = await new_room(stub, operator)
    a, c = await guest(stub), await guest(stub)
    mine = replace(settings, table_addr=f"127.0.0.1:{localnats.free_port()}", table_idle_stand_s=3.0)
    first = await build(mine)
    await first.start()
    ta = TableClient(mine.table_addr, a.access_token)
    w = Watcher(stub, room.room_id, c.access_token)
    try:
        await asyncio.wait_for(w.complete.wait(), 5)
        table_id = (await ta.create("phom", stake=room.stake)).table_id
        watch = asyncio.create_task(_drain(ta.watch(table_id)))
        await until(lambda: _presence(ta, table_id, tpb.SEAT_PRESENCE_HERE))  # watching: back, no stand
        await first.shutdown()  # the stream closes with the server: no ConnectionLost
        watch.cancel()
        await ta.close()
        await asyncio.sleep(4.0)  # longer than the stand: nothing was running
        assert await _taken(w, table_id, 1)
        again = await build(replace(mine, table_addr=f"127.0.0.1:{localnats.free_port()}"))
        await again.start()  # resumes the tables with someone seated
        started = time.monotonic()
        try:
            await until(lambda: _gone(w, table_id), within=20)
            assert time.monotonic() - started >= 2.9  # the stand's time, from the start
        finally:
            await again.shutdown()
    finally:
        await w.close()


async def _presence(c: TableClient, table_id: str, where: int) -> bool:
    view: tpb.TableView = await c.get(table_id)
    return all(s.presence == where for s in view.seats if s.player_id)
