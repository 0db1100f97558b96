"""The gRPC servicer of ``chieu.table.v1.TableService``: the table's API over :class:`Tables`.

Each method checks its caller and its request, asks the table's entry gates of the ledger and
the ladder (:mod:`chieu.table.peers`) where a seat or a hand needs them, and has the command
decided and appended by the command pipeline (:meth:`chieu.table.pipeline.Pipeline.execute`). A
decider's refusal becomes its gRPC status here or in the pipeline (:func:`chieu.table.statuses.error`),
never in the decider.
"""

from __future__ import annotations

import asyncio
import hashlib
import uuid
from collections.abc import AsyncIterator
from functools import partial
from typing import Any

import grpc
from google.protobuf import struct_pb2

from chieu.kit import auth
from chieu.kit.errors import GuardedServer, invalid, precondition
from chieu.kit.revocations import RevocationList
from chieu.kit.settings import Settings
from chieu.table import decide, reservations
from chieu.table.clocks import now_ms
from chieu.table.decide import Decision, Events
from chieu.table.peers import Peers
from chieu.table.quotas import Quotas
from chieu.table.refusals import Kind, Refused
from chieu.table.statuses import check_command_id, check_table_id, refuse
from chieu.table.tables import Tables
from chieu.table.v1 import log_pb2, table_service_pb2, table_service_pb2_grpc
from chieu.tablelog import codec
from chieu.tablelog.fold import Table, options_dict
from chieu.tablelog.verify import verify


def _options(options: struct_pb2.Struct) -> dict[str, Any]:
    """A request's game options (INVALID_ARGUMENT / ``bad_options`` for a value that is no JSON)."""
    try:
        return options_dict(options)
    except ValueError:
        raise invalid("bad_options", "options are JSON: a number is finite (no NaN, no Infinity)") from None


def _decided(decision: Decision) -> Events:
    """A decision's events, or its refusal's status (a command's refusals come before a gate
    asks a peer)."""
    if isinstance(decision, Refused):
        refuse(decision)
    return decision


def _digest(names: list[str]) -> str:
    return hashlib.sha256("\n".join(names).encode()).hexdigest()[:32]


def _gated(table: Table) -> bool:
    """Whether a seat at ``table`` must pass entry gates (a ladder, coin or reputation table)."""
    return bool(table.ladder_level or table.min_reputation or table.currency == log_pb2.CURRENCY_COINS)


class TableService(table_service_pb2_grpc.TableServiceServicer):
    """The gRPC servicer of ``chieu.table.v1.TableService``."""

    def __init__(self, tables: Tables, settings: Settings, peers: Peers,
                 revocations: RevocationList | None = None) -> None:
        self.tables = tables
        self.settings = settings
        self.peers = peers
        """The ledger, the ladder and the lobby, as the table's gates ask them."""
        self.revocations = revocations
        """The sessions the lobby revoked (None: no lobby to ask)."""
        self.quotas = Quotas(settings)
        """The coin stakes offered, and what one player may hold here (tables never played, watches)."""

    def _who(self, context: grpc.aio.ServicerContext[Any, Any]) -> auth.Principal:
        """The caller, verified with the public keys only; a service credential does not play."""
        return auth.require_person(auth.principal(context, auth.public_keys(self.settings), self.revocations))

    async def CreateTable(self, request: table_service_pb2.CreateTableRequest,
                          context: grpc.aio.ServicerContext[Any, Any]) -> table_service_pb2.CreateTableResponse:
        who = self._who(context)
        raw = _options(request.options)
        command_id = check_command_id(request.command_id)
        # a repeated create with the same command id names the same table
        seed = f"{who.player_id}/{command_id}"
        table_id = uuid.uuid5(uuid.NAMESPACE_URL, seed).hex if command_id else uuid.uuid4().hex

        profile = await self.peers.profile(who.player_id)

        def create(t: Table, now: int) -> Decision:
            made = decide.create(t, request.game, raw, who.player_id, request.stake or 1,
                                 request.currency or log_pb2.CURRENCY_POINTS, require_ready=request.require_ready,
                                 reconnect_grace_s=request.reconnect_grace_s, client_seed=request.client_seed,
                                 ladder_level=request.ladder_level, min_reputation=request.min_reputation,
                                 profile=profile, next_seed=self.tables.keys.new_seed(t.table_id, 1))
            # the creator sits with no stream yet: their idle stand runs until they watch
            idle = self.tables.connections.idle_deadline(t.table_id, who.player_id, now)
            return made if isinstance(made, Refused) else made + decide.unwatched(who.player_id, idle)

        self.quotas.check_stake(request.currency or log_pb2.CURRENCY_POINTS, request.stake or 1)
        live = await self.tables.get(table_id, must_exist=False)
        probe = Table(table_id)
        if not live.table.exists:  # its own refusals first: a bad request is counted nowhere
            probe.apply(log_pb2.Record(version=1, events=_decided(create(probe, 0))), 0)
        # counted before it is appended, by every table process alike; uncounted if not created
        reserved = not live.table.exists and await self.quotas.reserve(who.player_id, table_id, self.tables)
        try:
            if not live.table.exists:  # the creator sits in seat 0: the table's gates are theirs too
                await self._admit(probe, who.player_id)
            table = await self.tables.execute(table_id, who.player_id, command_id or f"create-{table_id}", create,
                                              create=True, request=request)
        except BaseException:
            if reserved:
                await self.quotas.release(who.player_id, table_id, self.tables)
            raise
        return table_service_pb2.CreateTableResponse(table=self.tables.view(table, who.player_id))

    async def TakeSeat(self, request: table_service_pb2.TakeSeatRequest,
                       context: grpc.aio.ServicerContext[Any, Any]) -> table_service_pb2.TakeSeatResponse:
        who = self._who(context)
        table_id = check_table_id(request.table_id)
        seat = request.seat if request.HasField("seat") else None
        live = await self.tables.get(table_id)
        sitting = who.player_id not in live.table.seats
        # the name is looked up while the gates are asked (a seat logs it: PlayerSeated)
        named = asyncio.ensure_future(self.peers.profile(who.player_id)) if sitting else None
        try:
            if sitting and _gated(live.table):
                _decided(decide.take_seat(live.table, who.player_id, seat, request.client_seed))  # refusals first
                await self._admit(live.table, who.player_id)  # watching needs no seat, so no gate
        except BaseException:
            if named is not None:
                named.cancel()
            raise
        profile = await named if named is not None else ("", "")
        table = await self.tables.execute(
            table_id, who.player_id, request.command_id,
            lambda t, now: decide.take_seat(t, who.player_id, seat, request.client_seed, profile,
                                            self.tables.connections.idle_deadline(t.table_id, who.player_id, now)),
            request=request)
        your = table.table_seat_of(who.player_id)
        return table_service_pb2.TakeSeatResponse(seat=-1 if your is None else your,
                                                  table=self.tables.view(table, who.player_id))

    async def StandUp(self, request: table_service_pb2.StandUpRequest,
                      context: grpc.aio.ServicerContext[Any, Any]) -> table_service_pb2.StandUpResponse:
        who = self._who(context)
        table = await self.tables.execute(check_table_id(request.table_id), who.player_id, request.command_id,
                                          lambda t, now: decide.stand_up(t, who.player_id), request=request)
        return table_service_pb2.StandUpResponse(table=self.tables.view(table, who.player_id))

    async def SetReady(self, request: table_service_pb2.SetReadyRequest,
                       context: grpc.aio.ServicerContext[Any, Any]) -> table_service_pb2.SetReadyResponse:
        who = self._who(context)
        table = await self.tables.execute(
            check_table_id(request.table_id), who.player_id, request.command_id,
            lambda t, now: decide.set_ready(t, who.player_id, request.ready, request.client_seed), request=request)
        return table_service_pb2.SetReadyResponse(table=self.tables.view(table, who.player_id))

    async def ChangeSettings(self, request: table_service_pb2.ChangeSettingsRequest,
                             context: grpc.aio.ServicerContext[Any, Any]) -> table_service_pb2.ChangeSettingsResponse:
        who = self._who(context)
        patch = _options(request.options)
        stake = request.stake if request.HasField("stake") else None
        ready = request.require_ready if request.HasField("require_ready") else None
        grace = request.reconnect_grace_s if request.HasField("reconnect_grace_s") else None
        table_id = check_table_id(request.table_id)
        live = await self.tables.get(table_id)
        if stake is not None:
            self.quotas.check_stake(live.table.currency, stake)
        # refusals that need no money (not the host, a hand running, bad options) come first
        _decided(decide.change_settings(live.table, who.player_id, patch, stake, ready, grace))
        pot = await self.peers.ledger_pot(table_id) if decide.touches_pot(live.table, patch, stake) else 0
        table = await self.tables.execute(
            table_id, who.player_id, request.command_id,
            lambda t, now: decide.change_settings(t, who.player_id, patch, stake, ready, grace, ledger_pot=pot),
            request=request)
        return table_service_pb2.ChangeSettingsResponse(table=self.tables.view(table, who.player_id))

    async def StartHand(self, request: table_service_pb2.StartHandRequest,
                        context: grpc.aio.ServicerContext[Any, Any]) -> table_service_pb2.StartHandResponse:
        who = self._who(context)
        table_id = check_table_id(request.table_id)
        live = await self.tables.get(table_id)
        reserved = None
        if _gated(live.table) and f"{who.player_id}/{request.command_id}" not in live.table.commands:
            _decided(decide.start_hand(live.table, who.player_id, now_ms(), bytes(32)))  # its refusals first
            # the gates, and at a coin table each seat's largest loss reserved, at once
            reserved = await reservations.gated(self._stand_down, self.peers, live.table)
        table = await self.tables.execute(
            table_id, who.player_id, request.command_id,
            lambda t, now: decide.start_hand(t, who.player_id, now, *self.tables.seeds_to_deal(t), reserved=reserved),
            request=request)
        return table_service_pb2.StartHandResponse(table=self.tables.view(table, who.player_id))

    async def CommitSeed(self, request: table_service_pb2.CommitSeedRequest,
                         context: grpc.aio.ServicerContext[Any, Any]) -> table_service_pb2.CommitSeedResponse:
        who = self._who(context)
        table = await self.tables.execute(
            check_table_id(request.table_id), who.player_id, request.command_id,
            lambda t, now: decide.commit_seed(t, who.player_id, request.commitment), request=request)
        return table_service_pb2.CommitSeedResponse(table=self.tables.view(table, who.player_id))

    async def RevealSeed(self, request: table_service_pb2.RevealSeedRequest,
                         context: grpc.aio.ServicerContext[Any, Any]) -> table_service_pb2.RevealSeedResponse:
        who = self._who(context)
        table = await self.tables.execute(
            check_table_id(request.table_id), who.player_id, request.command_id,
            lambda t, now: decide.reveal_seed(t, who.player_id, request.seed, now, self.tables.seeds_to_deal),
            request=request)
        return table_service_pb2.RevealSeedResponse(table=self.tables.view(table, who.player_id))

    async def _stand_down(self, table: Table) -> None:
        """Before a hand: stand up every seated player the table's gates no longer admit (a
        ladder level fallen below the table's, 3 金币 or fewer at a coin table, a reputation
        below the table's minimum), each ``PlayerLeft`` saying why."""
        refused = await self.refusals(table, [p for p in table.seats if p is not None])
        for reason in sorted(set(refused.values())):
            players = sorted(p for p, r in refused.items() if r == reason)

            def stand_down(t: Table, now: int, players: list[str] = players, reason: str = reason) -> Decision:
                return decide.stand_down(t, players, reason)

            await self.tables.execute(table.table_id, "system",
                                      f"stand-down:{table.version}:{reason}:{_digest(players)}", stand_down)

    async def refusals(self, table: Table, players: list[str], need: int = 0) -> dict[str, str]:
        """The entry gates of ``table`` (every seat, and every seated player before each hand):
        who of ``players`` may not sit there, and why — a ladder table above their level
        (LV-11), 3 金币 or fewer at a coin table (GC-1) or fewer free than ``need`` (a seat: what
        one seat of a hand here reserves; before a hand 0, as the hand's reservation itself asks
        exactly), a reputation below the table's minimum.
        ``UNAVAILABLE`` when the ledger or the ladder cannot answer: never granted blindly."""
        out: dict[str, str] = {}
        if table.ladder_level:
            for p in await self.peers.ladder_check(table.game_key, table.ladder_level, table.ladder_seq, players):
                out[p] = decide.LADDER_TOO_LOW
        rest = [p for p in players if p not in out]
        if table.currency == log_pb2.CURRENCY_COINS and rest:
            short = await asyncio.gather(*(self.peers.coins_short(p, need) for p in rest))
            out.update({p: decide.NOT_ENOUGH_COINS for p, no in zip(rest, short, strict=True) if no})
        rest = [p for p in players if p not in out]
        if table.min_reputation and rest:
            scores = await asyncio.gather(*(self.peers.reputation(p) for p in rest))
            out.update({p: decide.REPUTATION_TOO_LOW for p, score in zip(rest, scores, strict=True)
                        if score < table.min_reputation})
        return out

    async def _admit(self, table: Table, player: str) -> None:
        """Refuse ``player`` a seat at ``table`` with the first gate that does not admit them (at a
        coin table: 金币 not already reserved elsewhere covering what one seat of a hand here
        reserves, the amount StartHand's reservation will ask)."""
        need = reservations.seat_need(table)
        reason = (await self.refusals(table, [player], need)).get(player)
        if reason is not None:
            raise precondition(reason, {
                decide.LADDER_TOO_LOW: f"this is a level-{table.ladder_level} ladder table, above your level",
                decide.NOT_ENOUGH_COINS: f"a hand here may cost each seat {need} 金币 (the game's largest loss "
                                         f"× the stake {table.stake}): sit with at least that many not already "
                                         "in play, and more than the coin-table minimum (GC-1)",
                decide.REPUTATION_TOO_LOW: f"this table needs a reputation (信誉度) of {table.min_reputation}",
            }[reason])

    async def Act(self, request: table_service_pb2.ActRequest,  # type: ignore[override]
                  context: grpc.aio.ServicerContext[Any, Any]) -> bytes:
        """A serialized ``ActResponse``: the actor's view as its watch streams carry it (the two
        messages are the same on the wire, ``TableView table = 1``), encoded once per version."""
        who = self._who(context)
        table_id = check_table_id(request.table_id)
        live = await self.tables.get(table_id)
        command = codec.unpack(request.command, live.table.game_key, commands_only=True)
        expected = request.expected_version if request.HasField("expected_version") else None

        def act(t: Table, now: int) -> Decision:
            if expected is not None and expected != t.version:
                return Refused(Kind.ABORTED, "stale_version", f"the table is at version {t.version}, not {expected}")
            return decide.act(t, who.player_id, command, now)

        table = await self.tables.execute(table_id, who.player_id, request.command_id, act,
                                          game_command=request.command, request=request)
        return self.tables.wire(table, who.player_id)

    async def GetTable(self, request: table_service_pb2.GetTableRequest,
                       context: grpc.aio.ServicerContext[Any, Any]) -> table_service_pb2.GetTableResponse:
        who = self._who(context)
        live = await self.tables.get(check_table_id(request.table_id))
        return table_service_pb2.GetTableResponse(table=live.views.view(live.table, who.player_id))

    def Watch(self, request: table_service_pb2.WatchRequest,  # type: ignore[override]
              context: grpc.aio.ServicerContext[Any, Any]) -> AsyncIterator[bytes]:
        """Serialized ``WatchResponse`` messages: each viewer's view is encoded once per version,
        however many streams carry it (registered with no serializer, see :func:`register`).

        Returns the stream itself rather than re-yielding it (one generator less per message);
        the error guard that :func:`register`'s server applies iterates it.
        """
        who = self._who(context)
        revocations, token = self.revocations, auth.bearer(context)
        on_revoked = None if revocations is None else partial(revocations.subscribe, token)
        stream = self.tables.watch(check_table_id(request.table_id), who.player_id, int(request.from_version),
                                   until_s=who.exp, on_revoked=on_revoked)
        return self._held(stream, who.sid or who.player_id) if self.quotas.watches else stream

    async def _held(self, stream: AsyncIterator[bytes], session: str) -> AsyncIterator[bytes]:
        """``stream`` as one of the session's watches (``too_many_watches`` over its quota)."""
        with self.quotas.watching(session):
            try:
                async for view in stream:
                    yield view
            finally:  # the watcher leaves the table now, not when the stream is collected
                close = getattr(stream, "aclose", None)
                if close is not None:
                    await close()

    async def AbortHand(self, request: table_service_pb2.AbortHandRequest,
                        context: grpc.aio.ServicerContext[Any, Any]) -> table_service_pb2.AbortHandResponse:
        who = self._who(context)
        auth.require_role(who, "operator")
        table = await self.tables.execute(check_table_id(request.table_id), who.player_id, request.command_id,
                                          lambda t, now: decide.abort_hand(t, request.reason), request=request)
        return table_service_pb2.AbortHandResponse(table=self.tables.view(table, who.player_id))

    async def AuditLog(
        self, request: table_service_pb2.AuditLogRequest, context: grpc.aio.ServicerContext[Any, Any],
    ) -> AsyncIterator[table_service_pb2.AuditLogResponse]:
        auth.require_role(self._who(context), "auditor")
        table_id = check_table_id(request.table_id)
        await self.tables.get(table_id)
        for stored in await self.tables.store.read(table_id):
            record = log_pb2.Record.FromString(stored.data)
            if record.version > request.after_version:
                yield table_service_pb2.AuditLogResponse(record=record, stream_sequence=stored.seq)

    async def VerifyDeals(self, request: table_service_pb2.VerifyDealsRequest,
                          context: grpc.aio.ServicerContext[Any, Any]) -> table_service_pb2.VerifyDealsResponse:
        auth.require_role(self._who(context), "auditor")
        table_id = check_table_id(request.table_id)
        await self.tables.get(table_id)
        records = [(s.seq, log_pb2.Record.FromString(s.data)) for s in await self.tables.store.read(table_id)]
        return table_service_pb2.VerifyDealsResponse(hands=[
            table_service_pb2.HandVerdict(hand_no=v.hand_no, commitment_ok=v.commitment_ok, deal_ok=v.deal_ok,
                                          revealed=v.revealed, detail=v.detail, moves_checked=v.moves_checked,
                                          moves_ok=v.moves_ok, committed_first=v.committed_first,
                                          reveals_ok=v.reveals_ok)
            for v in verify(table_id, records)
        ])


class _Capture:
    """Collects the method handlers the generated registration would add to a server."""

    handlers: dict[str, Any]

    def add_generic_rpc_handlers(self, handlers: Any) -> None:
        pass

    def add_registered_method_handlers(self, name: str, handlers: dict[str, Any]) -> None:
        self.handlers = dict(handlers)


def register(servicer: TableService, server: GuardedServer) -> None:
    """Add the servicer to ``server`` as the generated code does, but with ``Act`` and ``Watch``
    sending pre-serialized messages as they are (see :meth:`Views.wire`)."""
    name = table_service_pb2.DESCRIPTOR.services_by_name["TableService"].full_name
    capture = _Capture()
    table_service_pb2_grpc.add_TableServiceServicer_to_server(servicer, capture)  # type: ignore[arg-type]
    handlers = capture.handlers
    handlers["Act"] = grpc.unary_unary_rpc_method_handler(
        servicer.Act, request_deserializer=table_service_pb2.ActRequest.FromString, response_serializer=None)
    handlers["Watch"] = grpc.unary_stream_rpc_method_handler(
        servicer.Watch, request_deserializer=table_service_pb2.WatchRequest.FromString, response_serializer=None)
    server.add_registered_method_handlers(name, handlers)
