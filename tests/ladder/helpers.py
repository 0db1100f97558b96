"""Helpers for the ladder's tests over the real path: xiangqi ladder tables over gRPC (a
resignation, a draw, a forced quit, a disconnect), standings read back over the ladder's API."""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any

import grpc
from google.protobuf import any_pb2

from chieu.games.xiangqi.v1 import xiangqi_pb2
from chieu.kit.settings import Settings
from chieu.ladder.v1 import ladder_service_pb2 as lpb
from chieu.ladder.v1 import ladder_service_pb2_grpc as lpb_grpc
from chieu.table.client import TableClient
from chieu.table.v1 import table_service_pb2 as tpb
from tests.conftest import token


def uid(prefix: str = "") -> str:
    return f"{prefix}{uuid.uuid4().hex[:10]}"


class Ladder:
    """A ladder client with one token (a player's, or an operator's)."""

    def __init__(self, settings: Settings, addr: str, player: str = "ops", *roles: str) -> None:
        self.channel = grpc.aio.insecure_channel(addr)
        self.stub = lpb_grpc.LadderServiceStub(self.channel)
        self.md = (("authorization", f"Bearer {token(settings, player, *(roles or ('operator',)))}"),)

    async def standing(self, player: str, game: str = "xiangqi") -> tuple[int, int, int]:
        r = await self.stub.GetStanding(lpb.GetStandingRequest(player_id=player, game=game), metadata=self.md)
        return r.standing.level, r.standing.best, r.standing.lp

    async def changes(self, player: str, game: str = "") -> list[lpb.Change]:
        out: list[lpb.Change] = []
        token = ""
        while True:
            r = await self.stub.GetHistory(lpb.GetHistoryRequest(player_id=player, game=game, page_size=500,
                                                                 page_token=token), metadata=self.md)
            out.extend(r.changes)
            token = r.next_page_token
            if not token:
                return out[::-1]

    async def set(self, player: str, level: int, best: int, lp: int, game: str = "xiangqi") -> None:
        await self.stub.Correct(lpb.CorrectRequest(
            correction_id=uid("fix-"), player_id=player, game=game, reason="test set-up",
            standing=lpb.Standing(level=level, best=best, lp=lp)), metadata=self.md)

    async def close(self) -> None:
        await self.channel.close()


async def until(pred: Any, within: float = 20.0) -> Any:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        got = await pred()
        if got:
            return got
        await asyncio.sleep(0.05)
    raise AssertionError("timed out")


def command(msg: Any) -> any_pb2.Any:
    a = any_pb2.Any()
    a.Pack(msg)
    return a


async def act(c: TableClient, table_id: str, msg: Any) -> tpb.TableView:
    r = await c.stub.Act(tpb.ActRequest(table_id=table_id, command=command(msg), command_id=uid("c")),
                         metadata=c.metadata)
    return r.table


async def play(result: str, player: TableClient, player_id: str, other: TableClient, table_level: int,
               grace_s: int = 1) -> str:
    """One xiangqi hand at a fresh ladder table of ``table_level`` giving ``player`` ``result``
    (W L D Q X against ``other``); returns the table id."""
    view = await other.create("xiangqi", {}, ladder_level=table_level, reconnect_grace_s=grace_s)
    table_id = view.table_id
    await player.sit(table_id)
    watch: asyncio.Task[Any] | None = None
    if result == "X":
        opened = asyncio.Event()

        async def watching() -> None:
            async for _ in player.watch(table_id):
                opened.set()

        watch = asyncio.create_task(watching())
        await opened.wait()
    view = await other.start(table_id)
    mover = 0  # seat 0 (the creator, red) moves first
    assert view.hand_players[mover] != player_id
    if result == "W":
        await act(other, table_id, xiangqi_pb2.Resign())
    elif result == "L":
        await act(player, table_id, xiangqi_pb2.Resign())
    elif result == "D":
        await act(other, table_id, xiangqi_pb2.OfferDraw())
        await act(player, table_id, xiangqi_pb2.AcceptDraw())
    elif result == "Q":
        await player.stub.StandUp(tpb.StandUpRequest(table_id=table_id, command_id=uid("c")),
                                  metadata=player.metadata)
    elif result == "X":
        assert watch is not None
        watch.cancel()  # the stream drops; the grace (1 s) runs out: 断线不重连
    return table_id
