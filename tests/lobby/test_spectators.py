"""Spectators (旁观) in the table list: viewers of a table without a seat, announced by the
table processes on core NATS and summed by the lobby (ListTables, WatchRoom, the home screen).
The counting rules on their own first, then over gRPC with the real services."""

from __future__ import annotations

import asyncio
from typing import Any

from chieu.kit.settings import Settings
from chieu.lobby.presence import Spectators
from chieu.lobby.v1 import lobby_service_pb2 as pb
from chieu.table.client import TableClient
from chieu.table.presence import subject
from chieu.table.v1 import presence_pb2
from tests.lobby.conftest import bearer, guest, until
from tests.lobby.test_tables import Watcher, new_room


def _p(instance: str, counts: dict[str, int], *, full: bool = False, ttl_ms: int = 15_000) -> presence_pb2.Presence:
    return presence_pb2.Presence(instance=instance, full=full, spectators=counts, ttl_ms=ttl_ms)


def test_counts_add_up_over_processes_and_a_silent_process_counts_for_nobody() -> None:
    now = [100.0]
    changes: list[set[str]] = []
    s = Spectators(changes.append, clock=lambda: now[0])
    s.heard(_p("t1", {"A": 2, "B": 1}, full=True))
    s.heard(_p("t2", {"A": 1}, full=True, ttl_ms=30_000))
    assert (s.count("A"), s.count("B"), s.count("C")) == (3, 1, 0)
    s.heard(_p("t1", {"B": 0, "C": 4}))  # a change: B has none here any more, C has four
    assert (s.count("A"), s.count("B"), s.count("C")) == (3, 0, 4)
    s.heard(_p("t1", {"A": 1}, full=True))  # a full announcement: what it leaves out is gone
    assert (s.count("A"), s.count("C")) == (2, 0)
    assert changes[-1] == {"A", "C"}
    now[0] += 16  # t1 silent past its 15 s; t2 still within its 30 s
    s.sweep()
    assert s.count("A") == 1 and changes[-1] == {"A"}
    s.heard(_p("t2", {}, full=True, ttl_ms=0))  # a process stopping says so
    assert s.count("A") == 0
    s.heard(_p("", {"A": 5}, full=True))  # no instance: ignored
    assert s.count("A") == 0


def test_a_process_name_cannot_reach_another_subject() -> None:
    assert subject("host-1:42") == "chieu.presence.host-1:42"
    assert subject("a.b.*.>") == "chieu.presence.a_b____"
    assert subject("") == "chieu.presence.unnamed"


async def test_spectators_are_listed_watched_and_gone_when_they_leave(
        stub: Any, operator: Any, settings: Settings) -> None:
    room = await new_room(stub, operator)
    host, fan1, fan2 = await guest(stub), await guest(stub), await guest(stub)
    t_host = TableClient(settings.table_addr, host.access_token)
    t1, t2 = TableClient(settings.table_addr, fan1.access_token), TableClient(settings.table_addr, fan2.access_token)
    view = await t_host.create("phom", stake=room.stake)
    table_id = view.table_id
    w = Watcher(stub, room.room_id, host.access_token)
    await asyncio.wait_for(w.complete.wait(), 5)

    async def listed() -> pb.TableSummary:
        r = await stub.ListTables(pb.ListTablesRequest(room_id=room.room_id), metadata=bearer(host.access_token))
        return next((t for t in r.tables if t.table_id == table_id), pb.TableSummary(spectators=-1))

    async def count(n: int) -> bool:
        return (await listed()).spectators == n and w.tables().get(table_id, pb.TableSummary()).spectators == n

    host_watch = asyncio.create_task(_drain(t_host.watch(table_id)))  # the seated host watching: no spectator
    watches = [asyncio.create_task(_drain(c.watch(table_id))) for c in (t1, t1, t2)]  # fan1 twice: one viewer
    await until(lambda: count(2))
    await t2.sit(table_id)  # a spectator who sits down is one no more
    await until(lambda: count(1))
    home = await stub.GetHome(pb.GetHomeRequest(), metadata=bearer(host.access_token))
    assert [t.spectators for t in home.seated] == [1]
    for task in watches[:2]:
        task.cancel()
    await until(lambda: count(0))
    for task in (*watches, host_watch):
        task.cancel()
    await w.close()
    for c in (t_host, t1, t2):
        await c.close()


async def _drain(views: Any) -> None:
    async for _ in views:
        pass

