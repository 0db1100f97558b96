"""A small asyncio client of the table service, for tests, benchmarks, bots and scripts."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import Any

import grpc
from google.protobuf import struct_pb2

from chieu.kit import channels
from chieu.table.v1 import table_service_pb2 as pb
from chieu.table.v1 import table_service_pb2_grpc as pb_grpc
from chieu.tablelog import codec


class TableClient:
    """One player's connection: every call carries the player's session token."""

    def __init__(self, target: str, token: str, channel: grpc.aio.Channel | None = None, *, ca: str = "") -> None:
        """``ca``: the CA file a TLS service's certificate must chain to (none: plaintext)."""
        self.channel = channel or channels.open_channel(target, ca=ca)
        self.stub = pb_grpc.TableServiceStub(self.channel)
        self.metadata = (("authorization", f"Bearer {token}"),)

    async def create(self, game: str, options: dict[str, Any] | None = None,
                     command_id: str = "", **settings: Any) -> pb.TableView:
        """Create a table; ``settings`` are CreateTableRequest fields (stake, currency, ...)."""
        opts = struct_pb2.Struct()
        opts.update(options or {})
        req = pb.CreateTableRequest(game=game, options=opts, command_id=command_id, **settings)
        r = await self.stub.CreateTable(req, metadata=self.metadata)
        return r.table

    async def sit(self, table_id: str, seat: int | None = None) -> pb.TakeSeatResponse:
        req = pb.TakeSeatRequest(table_id=table_id, command_id=uuid.uuid4().hex)
        if seat is not None:
            req.seat = seat
        resp: pb.TakeSeatResponse = await self.stub.TakeSeat(req, metadata=self.metadata)
        return resp

    async def start(self, table_id: str) -> pb.TableView:
        r = await self.stub.StartHand(pb.StartHandRequest(table_id=table_id, command_id=uuid.uuid4().hex),
                                      metadata=self.metadata)
        return r.table

    async def act(self, table_id: str, game: str, command: Any, command_id: str | None = None) -> pb.TableView:
        req = pb.ActRequest(table_id=table_id, command=codec.pack(command, game),
                            command_id=command_id or uuid.uuid4().hex)
        r = await self.stub.Act(req, metadata=self.metadata)
        return r.table

    async def get(self, table_id: str) -> pb.TableView:
        r = await self.stub.GetTable(pb.GetTableRequest(table_id=table_id), metadata=self.metadata)
        return r.table

    async def watch(self, table_id: str) -> AsyncIterator[pb.TableView]:
        call = self.stub.Watch(pb.WatchRequest(table_id=table_id), metadata=self.metadata)
        async for update in call:
            yield update.table

    async def close(self) -> None:
        await self.channel.close()


def game_view(view: pb.TableView) -> Any:
    """The game's own view dataclass inside a table view."""
    return codec.unpack(view.game_view, view.game)
