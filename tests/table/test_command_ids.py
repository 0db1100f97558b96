"""A command id acts once: the same request again returns the table as it is; the same id with
another request is refused (``command_id_reused``) and changes nothing, on every process."""

from __future__ import annotations

import grpc
import pytest

from chieu.kit.settings import Settings
from chieu.table.client import game_view
from chieu.table.pipeline import request_digest
from chieu.table.v1 import table_service_pb2 as pb
from tests.table.helpers import client, refused, sowings

pytestmark = pytest.mark.integration


def test_the_digest_leaves_the_command_id_out() -> None:
    one = pb.TakeSeatRequest(table_id="t", seat=1, command_id="a")
    assert request_digest(one) == request_digest(pb.TakeSeatRequest(table_id="t", seat=1, command_id="b"))
    assert request_digest(one) != request_digest(pb.TakeSeatRequest(table_id="t", seat=2, command_id="a"))
    assert len(request_digest(one)) == 16


async def test_a_command_id_used_with_another_move_is_refused(settings: Settings, table_server: str) -> None:
    a, b = client(settings, table_server, "cid-a"), client(settings, table_server, "cid-b")
    t = await a.create("o_an_quan", {})
    await b.sit(t.table_id)
    view = await a.start(t.table_id)
    gv = game_view(view)
    mover = a if view.hand_players[gv.to_move] == "cid-a" else b
    first, second = sowings(gv)[:2]
    played = await mover.act(t.table_id, "o_an_quan", first, command_id="m-1")
    again = await mover.act(t.table_id, "o_an_quan", first, command_id="m-1")
    assert again.version == played.version == view.version + 1
    assert await refused(mover.act(t.table_id, "o_an_quan", second,
                                   command_id="m-1")) == (grpc.StatusCode.FAILED_PRECONDITION, "command_id_reused")
    assert (await a.get(t.table_id)).version == played.version
    await a.close()
    await b.close()


async def test_a_create_command_id_used_with_other_options_is_refused(settings: Settings, table_server: str) -> None:
    a = client(settings, table_server, "cid-c")
    t = await a.create("o_an_quan", {"maxMoves": 50}, command_id="make-1")
    assert (await a.create("o_an_quan", {"maxMoves": 50}, command_id="make-1")).table_id == t.table_id
    assert await refused(a.create("o_an_quan", {"maxMoves": 60}, command_id="make-1")) == (
        grpc.StatusCode.FAILED_PRECONDITION, "command_id_reused")
    await a.close()
