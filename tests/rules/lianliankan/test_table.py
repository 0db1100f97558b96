"""连连看 over gRPC through the table service, against a real nats-server: four players send
moves at the same time to one table and none is lost or refused."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from chieu.games.lianliankan.board import Board, find_pair
from chieu.games.lianliankan.model import Cell, Remove
from chieu.kit.settings import Settings
from chieu.table.client import TableClient, game_view
from chieu.table.v1 import table_service_pb2 as pb
from tests.table.helpers import client

pytestmark = pytest.mark.integration


@pytest.fixture
async def four(settings: Settings, table_server: str) -> Any:
    cs = [client(settings, table_server, f"lk-{n}") for n in ("a", "b", "c", "d")]
    yield cs
    for c in cs:
        await c.close()


def _move(view: pb.TableView) -> Remove:
    gv = game_view(view)
    board = Board.of(gv.rows, gv.cols, gv.board)
    pair = find_pair(board)
    assert pair is not None
    a, b = (Cell(*divmod(i, board.cols)) for i in pair)
    return Remove(a, b)


async def test_simultaneous_moves_of_four_seats_are_all_accepted(four: list[TableClient]) -> None:
    t = await four[0].create("lianliankan", {"BOARD": "14x6", "TIME_LIMIT": 600})
    for c in four[1:]:
        await c.sit(t.table_id)
    await four[0].start(t.table_id)
    views = [await c.get(t.table_id) for c in four]
    assert len({tuple(game_view(v).board) for v in views}) == 1  # the same layout for all
    for _ in range(10):
        # Every seat sends its next move at the same moment.
        views = list(await asyncio.gather(
            *(c.act(t.table_id, "lianliankan", _move(v)) for c, v in zip(four, views, strict=True))
        ))
    final = await four[0].get(t.table_id)
    gv = game_view(final)
    assert list(gv.remaining) == [84 - 20] * 4
    assert final.status == pb.TABLE_STATUS_PLAYING


async def test_first_to_clear_wins_and_the_table_settles(four: list[TableClient]) -> None:
    t = await four[0].create("lianliankan", {"BOARD": "14x6"})
    for c in four[1:]:
        await c.sit(t.table_id)
    view = await four[0].start(t.table_id)
    other = await four[1].get(t.table_id)
    other = await four[1].act(t.table_id, "lianliankan", _move(other))
    while view.status == pb.TABLE_STATUS_PLAYING:
        view = await four[0].act(t.table_id, "lianliankan", _move(view))
    out = view.last_outcome
    assert out.winner == 0 and out.reason == "cleared"
    assert list(out.scores) == [10, -2, -3, -5]  # P2 removed a pair: fewest remaining of the rest
    assert sum(tr.amount for tr in out.transfers) == 10
