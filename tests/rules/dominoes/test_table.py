"""Đô Mi Nô over gRPC through the table service, against a real nats-server."""

from __future__ import annotations

from typing import Any

import pytest

from chieu.kit.settings import Settings
from chieu.table.client import TableClient, game_view
from chieu.table.v1 import table_service_pb2 as pb
from tests.table.helpers import client

pytestmark = pytest.mark.integration


@pytest.fixture
async def three(settings: Settings, table_server: str) -> Any:
    cs = [client(settings, table_server, f"dm-{n}") for n in ("a", "b", "c")]
    yield cs
    for c in cs:
        await c.close()


async def test_a_hand_is_played_to_its_settlement(three: list[TableClient]) -> None:
    t = await three[0].create("dominoes", {"pipStake": 2})
    for c in three[1:]:
        await c.sit(t.table_id)
    await three[0].start(t.table_id)
    by_player = {f"dm-{n}": c for n, c in zip("abc", three, strict=True)}
    view = await three[0].get(t.table_id)
    for _ in range(200):
        if view.status != pb.TABLE_STATUS_PLAYING:
            break
        mover = by_player[view.hand_players[game_view(view).to_move]]
        mine = game_view(await mover.get(t.table_id))
        assert len(mine.hand) == mine.counts[mine.seat]
        assert mine.boneyard + sum(mine.counts) + len(mine.line) == 28
        command: Any = mine.legal[0]  # a play, else the draw, else the pass: sent as listed
        view = await mover.act(t.table_id, "dominoes", command)
    out = view.last_outcome
    assert out.reason in ("out", "triet_buoc", "triet_win", "triet_loss")
    net = [0, 0, 0]
    for tr in out.transfers:
        net[tr.from_seat] -= tr.amount
        net[tr.to_seat] += tr.amount
    assert sum(net) == 0 and all(tr.amount % 2 == 0 for tr in out.transfers)
