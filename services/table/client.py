"""A small asyncio client of the table service, for tests, benchmarks, bots and scripts."""

from __future__ import annotations

import secrets
import uuid
from collections.abc import AsyncIterator
from typing import Any

import grpc
from google.protobuf import struct_pb2
from google.protobuf.message import Message

from chieu.games import fairround
from chieu.kit import channels
from chieu.table.v1 import table_service_pb2 as pb
from chieu.table.v1 import table_service_pb2_grpc as pb_grpc
from chieu.tablelog import codec


class SeedRound:
    """One player's side of the commit–reveal round of client seeds (``chieu-fair-v2``,
    docs/fairness.md), read from the table views the player gets: a fresh random 32-byte seed
    committed for each hand while no reveal is asked (during the previous hand, or between
    hands), revealed when the player's seat is asked. No click: a client calls :meth:`step` with
    each view and sends what it returns."""

    KEEP = 4
    """Seeds kept per player (older hands' are forgotten)."""

    def __init__(self) -> None:
        self.seeds: dict[tuple[str, int], bytes] = {}

    def step(self, view: pb.TableView, player_id: str) -> tuple[str, Message] | None:
        """The round's next request for ``player_id`` at this view, as ``(method, request)``, or None."""
        if not player_id or all(s.player_id != player_id for s in view.seats):
            return None
        hand = int(view.round_hand_no)
        key = (view.table_id, hand)
        if view.reveal_players:
            seed = self.seeds.get(key)
            if player_id in view.reveal_players and player_id not in view.revealed and seed is not None:
                return "RevealSeed", pb.RevealSeedRequest(table_id=view.table_id, seed=seed,
                                                          command_id=f"reveal-{hand}-{seed[:8].hex()}")
            return None
        if player_id in view.committed and key in self.seeds:
            return None
        seed = self.seeds[key] = secrets.token_bytes(fairround.SEED_BYTES)  # (a lost seed: committed again)
        while len(self.seeds) > self.KEEP:
            del self.seeds[next(iter(self.seeds))]
        return "CommitSeed", pb.CommitSeedRequest(
            table_id=view.table_id, commitment=fairround.client_commitment(view.table_id, hand, player_id, seed),
            command_id=f"commit-{hand}-{seed[:8].hex()}")


class TableClient:
    """One player's connection: every call carries the player's session token."""

    def __init__(self, target: str, token: str, channel: grpc.aio.Channel | None = None, *, ca: str = "",
                 player_id: str = "") -> None:
        """``ca``: the CA file a TLS service's certificate must chain to (none: plaintext).
        ``player_id``: the token's player, for the commit–reveal round (:meth:`take_part`)."""
        self.channel = channel or channels.open_channel(target, ca=ca)
        self.stub = pb_grpc.TableServiceStub(self.channel)
        self.metadata = (("authorization", f"Bearer {token}"),)
        self.player_id = player_id
        self.round = SeedRound()

    async def take_part(self, view: pb.TableView) -> pb.TableView | None:
        """Commit or reveal as the round asks at ``view`` (the table after, or None: nothing to do,
        or the table moved on meanwhile)."""
        step = self.round.step(view, self.player_id)
        if step is None:
            return None
        method, request = step
        try:
            r = await getattr(self.stub, method)(request, metadata=self.metadata)
        except grpc.aio.AioRpcError as e:
            if e.code() == grpc.StatusCode.FAILED_PRECONDITION or e.code() == grpc.StatusCode.PERMISSION_DENIED:
                return None
            raise
        table: pb.TableView = r.table
        return table

    async def commit_seed(self, table_id: str, commitment: str) -> pb.TableView:
        r = await self.stub.CommitSeed(pb.CommitSeedRequest(table_id=table_id, commitment=commitment,
                                                            command_id=uuid.uuid4().hex), metadata=self.metadata)
        return r.table

    async def reveal_seed(self, table_id: str, seed: bytes) -> pb.TableView:
        r = await self.stub.RevealSeed(pb.RevealSeedRequest(table_id=table_id, seed=seed, command_id=uuid.uuid4().hex),
                                       metadata=self.metadata)
        return r.table

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

    async def watch(self, table_id: str, *, take_part: bool = False) -> AsyncIterator[pb.TableView]:
        """The caller's views; ``take_part``: commit and reveal as each view asks, before yielding it."""
        call = self.stub.Watch(pb.WatchRequest(table_id=table_id), metadata=self.metadata)
        async for update in call:
            if take_part:
                await self.take_part(update.table)
            yield update.table

    async def close(self) -> None:
        await self.channel.close()


def game_view(view: pb.TableView) -> Any:
    """The game's own view dataclass inside a table view."""
    return codec.unpack(view.game_view, view.game)
