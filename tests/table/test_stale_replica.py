"""A command decided on a table process whose copy of the table is behind the log (its follower
late: a NATS node lost, a slow link) is decided again on the current log before it is refused.

Found building the chaos run (a command applied by a process killed before it answered, retried
by the client on the other process): the other process, two records behind, refused the retry
with ``not_your_turn`` although the command had acted — a refusal of an acknowledged command — and
refused valid first sends the same way."""

from __future__ import annotations

import uuid
from dataclasses import replace

import pytest

from chieu.kit.settings import Settings
from chieu.table.client import game_view
from chieu.table.tables import Tables
from chieu.table.v1 import table_service_pb2 as pb
from chieu.tablelog import codec
from chieu_tools import localnats
from tests.table.helpers import client, sowings

pytestmark = pytest.mark.integration


def _sow(view: pb.TableView, command_id: str) -> pb.ActRequest:
    return pb.ActRequest(table_id=view.table_id, command=codec.pack(sowings(game_view(view))[0], "o_an_quan"),
                         command_id=command_id)


async def test_a_late_replica_decides_on_the_current_log(settings: Settings, table_server: str) -> None:
    from chieu.table.app import build

    other = replace(settings, table_addr=f"127.0.0.1:{localnats.free_port()}")
    server = await build(other)
    await server.start()
    tables = next(c.__self__ for c in server._on_shutdown if isinstance(getattr(c, "__self__", None), Tables))
    a = {p: client(settings, table_server, p) for p in ("sa", "sb")}
    b = {p: client(settings, other.table_addr, p) for p in ("sa", "sb")}
    try:
        t = await a["sa"].create("o_an_quan", {})
        await a["sb"].sit(t.table_id)
        view = await a["sa"].start(t.table_id)
        assert (await b["sa"].get(t.table_id)).version == view.version  # the late process has the table
        assert tables.follower.task is not None
        tables.follower.task.cancel()  # from here on it sees nothing the other process appends

        first = view.hand_players[game_view(view).to_move]
        second = next(p for p in a if p != first)
        view = (await a[first].stub.Act(_sow(view, uuid.uuid4().hex), metadata=a[first].metadata)).table
        request = _sow(view, uuid.uuid4().hex)
        applied = (await a[second].stub.Act(request, metadata=a[second].metadata)).table

        # the client's retry of the acknowledged command, on the late process: the same command, acted once
        retried = (await b[second].stub.Act(request, metadata=b[second].metadata)).table
        assert retried.version == applied.version
        # and a valid new command sent there is decided on the log as it is, not on the late copy
        moved = (await b[first].stub.Act(_sow(applied, uuid.uuid4().hex), metadata=b[first].metadata)).table
        assert moved.version == applied.version + 1
    finally:
        for c in (*a.values(), *b.values()):
            await c.close()
        await server.shutdown()
