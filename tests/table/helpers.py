"""Helpers for table-service tests: clients per player, and playing Ô ăn quan to the end."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any

import grpc
import pytest
from google.rpc import error_details_pb2, status_pb2

from chieu.games.o_an_quan.board import SIDES, Direction
from chieu.games.o_an_quan.model import Sow
from chieu.kit.settings import Settings
from chieu.table.client import TableClient, game_view
from chieu.table.v1 import table_service_pb2 as pb
from chieu.tablelog.fold import Table
from chieu.tablelog.sealing import Opener, SealKeys
from tests.conftest import SEAL_KEYS, token


def client(settings: Settings, addr: str, player: str, *roles: str) -> TableClient:
    return TableClient(addr, token(settings, player, *roles))


def reason_of(err: grpc.aio.AioRpcError) -> str:
    """The stable reason code, read from the google.rpc.Status details (ErrorInfo)."""
    for key, value in err.trailing_metadata() or ():
        if key == "grpc-status-details-bin":
            status = status_pb2.Status.FromString(value)
            for detail in status.details:
                info = error_details_pb2.ErrorInfo()
                if detail.Unpack(info):
                    return info.reason
    raise AssertionError(f"no ErrorInfo in {err!r}")


async def refused(call: Awaitable[Any]) -> tuple[grpc.StatusCode, str]:
    """The status and the stable reason of a refused call (never a stack trace to the client)."""
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await call
    assert "Traceback" not in (err.value.details() or "")
    return err.value.code(), reason_of(err.value)


def sowings(gv: Any) -> list[Sow]:
    """The side to move's sowings in the rules' order, from any seat's Ô ăn quan view (a view
    lists them in ``legal`` only to the mover; the board is public): each square of its side
    holding dân (all five when the side is empty: a refill first), clockwise then
    counter-clockwise."""
    side = SIDES[gv.to_move]
    squares = [i for i in side if gv.board[i]] or list(side)
    return [Sow(i, d) for i in squares for d in (Direction.CW, Direction.CCW)]


async def play_to_end(view: pb.TableView, players: dict[str, TableClient], limit: int = 400) -> pb.TableView:
    """Both players always sow their first legal move until the hand ends."""
    for _ in range(limit):
        if view.status != pb.TABLE_STATUS_PLAYING:
            return view
        gv = game_view(view)
        mover = players[view.hand_players[gv.to_move]]
        view = await mover.act(view.table_id, "o_an_quan", sowings(gv)[0])
    raise AssertionError("the game did not end")


async def mirror(auditor: TableClient, table_id: str, into: Table | None = None) -> Table:
    """The table folded from its log (``AuditLog``, from ``into``'s version on) as a table process
    folds it: the harness opens the hand in play with the session's seal keys, which an auditor
    does not hold (an auditor's own fold sees a hand in play sealed)."""
    table = into if into is not None else Table(table_id)
    opener = Opener(SealKeys.load(SEAL_KEYS))
    async for r in auditor.stub.AuditLog(pb.AuditLogRequest(table_id=table_id, after_version=table.version),
                                         metadata=auditor.metadata):
        table.apply(opener.open(r.record, table), r.stream_sequence)
    return table


class NoLog:
    """A table log holding nothing (what the unplayed-table count asks of a table nobody appended)."""

    async def last(self, key: str) -> None:
        return None

    async def last_seq(self, key: str) -> int:
        return 0

