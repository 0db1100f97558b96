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
    each view, sends what it returns, and tells :meth:`answered` how it went. A seed counts once
    the table acknowledged its commitment (one in flight at a time; a view older than that answer
    asks nothing: a watch stream may be behind a command's answer)."""

    KEEP = 4
    """Seeds kept per player (older hands' are forgotten)."""

    def __init__(self) -> None:
        self.seeds: dict[tuple[str, int], tuple[bytes, int]] = {}
        """(table, hand) → the seed the table acknowledged, and the version it answered with."""
        self.pending: dict[str, tuple[int, bytes]] = {}
        """Table → the (hand, seed) of a commitment in flight."""

    def step(self, view: pb.TableView, player_id: str) -> tuple[str, Message] | None:
        """The round's next request for ``player_id`` at this view, as ``(method, request)``, or None."""
        if not player_id or all(s.player_id != player_id for s in view.seats) or view.table_id in self.pending:
            return None
        hand = int(view.round_hand_no)
        mine = self.seeds.get((view.table_id, hand))
        if view.reveal_players:
            if player_id in view.reveal_players and player_id not in view.revealed and mine is not None:
                return "RevealSeed", pb.RevealSeedRequest(table_id=view.table_id, seed=mine[0],
                                                          command_id=f"reveal-{hand}-{mine[0][:8].hex()}")
            return None
        if mine is not None and (player_id in view.committed or view.version <= mine[1]):
            return None
        seed = secrets.token_bytes(fairround.SEED_BYTES)  # (a lost seed: committed again, replacing it)
        self.pending[view.table_id] = (hand, seed)
        return "CommitSeed", pb.CommitSeedRequest(
            table_id=view.table_id, commitment=fairround.client_commitment(view.table_id, hand, player_id, seed),
            command_id=f"commit-{hand}-{seed[:8].hex()}")

    def answered(self, request: Message, version: int | None) -> None:
        """The table's answer to a request :meth:`step` gave: the version it answered with, or
        None (refused, or no answer: a commitment then counts for nothing, and is made again)."""
        if not isinstance(request, pb.CommitSeedRequest):
            return
        hand, seed = self.pending.pop(request.table_id, (0, b""))
        if version is not None and seed:
            self.seeds[(request.table_id, hand)] = (seed, version)
            while len(self.seeds) > self.KEEP:
                del self.seeds[next(iter(self.seeds))]


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
            self.round.answered(request, None)
            if e.code() in (grpc.StatusCode.FAILED_PRECONDITION, grpc.StatusCode.PERMISSION_DENIED):
                return None  # the table moved on meanwhile: the next view says what to do
            raise
        table: pb.TableView = r.table
        self.round.answered(request, int(table.version))
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
