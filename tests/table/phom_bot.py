"""A simple Phỏm player for tests: draws, lays what it must, discards its first discardable card."""

from __future__ import annotations

import grpc

from chieu.games.phom.model import Discard, Draw, Phase, TurnKind
from chieu.table.client import TableClient, game_view
from chieu.table.v1 import table_service_pb2 as pb


async def play_turn(client: TableClient, table_id: str) -> pb.TableView:
    """Make one turn (draw + discard) for the caller, who must be the player to move."""
    view = await client.get(table_id)
    gv = game_view(view)
    assert gv.phase is Phase.PLAY and gv.to_move == view.hand_seat
    if not gv.taken and gv.turn_kind is not TurnKind.FIRST:
        view = await client.act(table_id, "phom", Draw())
        gv = game_view(view)
        if view.status != pb.TABLE_STATUS_PLAYING:
            return view
    for card in gv.hand:
        try:
            return await client.act(table_id, "phom", Discard(card))
        except grpc.aio.AioRpcError as err:
            if err.code() != grpc.StatusCode.FAILED_PRECONDITION:
                raise
    raise AssertionError(f"no card of {gv.hand} could be discarded")
