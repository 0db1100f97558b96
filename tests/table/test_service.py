"""The table service over gRPC, against a real nats-server: a whole game, and every bad input."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import grpc
import pytest
from google.protobuf import any_pb2, struct_pb2

from chieu.games.o_an_quan.board import Direction
from chieu.games.o_an_quan.model import Sow
from chieu.kit.settings import Settings
from chieu.table import decide, views
from chieu.table.client import TableClient, game_view
from chieu.table.v1 import table_service_pb2 as pb
from chieu.table.v1 import table_service_pb2_grpc as pb_grpc
from chieu.tablelog.fold import Table
from tests.table.helpers import client, play_to_end, reason_of, refused, sowings

pytestmark = pytest.mark.integration


@pytest.fixture
async def pair(settings: Settings, table_server: str) -> Any:
    a, b = client(settings, table_server, "alice"), client(settings, table_server, "bob")
    yield a, b
    await a.close()
    await b.close()


async def started(a: TableClient, b: TableClient, options: dict[str, Any] | None = None) -> pb.TableView:
    t = await a.create("o_an_quan", options or {})
    await b.sit(t.table_id)
    return await a.start(t.table_id)


async def test_a_whole_game_is_played_and_settled(pair: tuple[TableClient, TableClient]) -> None:
    a, b = pair
    view = await started(a, b, {"maxMoves": 120})
    assert view.status == pb.TABLE_STATUS_PLAYING and len(view.seed_commitment) == 64
    end = await play_to_end(view, {"alice": a, "bob": b})
    gv = game_view(end)
    assert gv.finished and end.status == pb.TABLE_STATUS_WAITING
    outcome = end.last_outcome
    assert list(outcome.scores) == list(gv.scores)
    if gv.winner >= 0:
        (t,) = outcome.transfers
        assert (t.to_seat, t.from_seat, t.amount, t.reason) == (gv.winner, 1 - gv.winner, 1, "cuoc")
    # the revealed seed matches the commitment made at the start
    import hashlib

    assert hashlib.sha256(end.last_server_seed).hexdigest() == view.seed_commitment


async def test_the_watch_stream_starts_full_and_sees_every_version(pair: tuple[TableClient, TableClient]) -> None:
    a, b = pair
    view = await started(a, b)
    seen: list[int] = []

    async def watch() -> None:
        async for v in b.watch(view.table_id):
            seen.append(v.version)
            if game_view(v).moves_made == 3:
                return

    task = asyncio.create_task(watch())
    await asyncio.sleep(0.1)
    for _ in range(3):
        cur = await a.get(view.table_id)
        gv = game_view(cur)
        mover = a if cur.hand_players[gv.to_move] == "alice" else b
        await mover.act(view.table_id, "o_an_quan", sowings(gv)[0])
    await asyncio.wait_for(task, 5)
    assert seen == list(range(seen[0], seen[0] + 4)) and seen[0] == view.version


async def test_a_repeated_command_id_acts_once(pair: tuple[TableClient, TableClient]) -> None:
    a, b = pair
    view = await started(a, b)
    gv = game_view(view)
    mover = a if view.hand_players[gv.to_move] == "alice" else b
    move = sowings(gv)[0]
    first = await mover.act(view.table_id, "o_an_quan", move, command_id="cmd-1")
    again = await mover.act(view.table_id, "o_an_quan", move, command_id="cmd-1")
    assert first.version == again.version == view.version + 1


async def unchanged(a: TableClient, table_id: str, version: int) -> None:
    assert (await a.get(table_id)).version == version


async def test_rule_violations_are_failed_precondition_and_append_nothing(
    pair: tuple[TableClient, TableClient],
) -> None:
    a, b = pair
    view = await started(a, b)
    gv = game_view(view)
    mover, other = (a, b) if view.hand_players[gv.to_move] == "alice" else (b, a)
    own = (1, 2, 3, 4, 5) if gv.to_move == 0 else (7, 8, 9, 10, 11)
    theirs = 8 if gv.to_move == 0 else 2
    tid = view.table_id
    cases: list[tuple[TableClient, Sow, str]] = [
        (other, Sow(own[0], Direction.CW), "not_your_turn"),
        (mover, Sow(theirs, Direction.CW), "not_your_square"),
        (mover, Sow(0, Direction.CW), "quan_square"),
    ]
    for who, cmd, reason in cases:
        assert await refused(who.act(tid, "o_an_quan", cmd)) == (grpc.StatusCode.FAILED_PRECONDITION, reason)
        await unchanged(a, tid, view.version)
    # an empty own square, after a move empties one
    first = await mover.act(tid, "o_an_quan", Sow(own[0], Direction.CW))
    gv2 = game_view(first)
    empty = [i for i in (1, 2, 3, 4, 5, 7, 8, 9, 10, 11) if gv2.board[i] == 0 and i in
             ((1, 2, 3, 4, 5) if gv2.to_move == 0 else (7, 8, 9, 10, 11))]
    if empty:
        nxt = a if first.hand_players[gv2.to_move] == "alice" else b
        assert await refused(nxt.act(tid, "o_an_quan", Sow(empty[0], Direction.CW))) == (
            grpc.StatusCode.FAILED_PRECONDITION, "empty_square")
        await unchanged(a, tid, first.version)


async def test_malformed_commands_are_invalid_argument(pair: tuple[TableClient, TableClient]) -> None:
    a, b = pair
    view = await started(a, b)
    gv = game_view(view)
    mover = a if view.hand_players[gv.to_move] == "alice" else b
    tid = view.table_id
    assert await refused(mover.act(tid, "o_an_quan", Sow(12, Direction.CW))) == (
        grpc.StatusCode.INVALID_ARGUMENT, "bad_square")
    raw = pb.ActRequest(table_id=tid, command_id="x1")
    raw.command.Pack(struct_pb2.Struct())  # not an Ô ăn quan command
    assert await refused(mover.stub.Act(raw, metadata=mover.metadata)) == (
        grpc.StatusCode.INVALID_ARGUMENT, "unknown_command")
    unspecified = pb.ActRequest(table_id=tid, command_id="x2")
    unspecified.command.Pack(__import__("chieu.games.o_an_quan.v1.o_an_quan_pb2", fromlist=["Sow"]).Sow(square=1))
    assert await refused(mover.stub.Act(unspecified, metadata=mover.metadata)) == (
        grpc.StatusCode.INVALID_ARGUMENT, "bad_enum")
    garbage = pb.ActRequest(table_id=tid, command_id="x3",
                            command=any_pb2.Any(type_url="type.googleapis.com/chieu.games.o_an_quan.v1.Sow",
                                                value=b"\xff\xff\xff"))
    code, _ = await refused(mover.stub.Act(garbage, metadata=mover.metadata))
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    await unchanged(a, tid, view.version)


async def test_table_level_refusals(settings: Settings, table_server: str,
                                    pair: tuple[TableClient, TableClient]) -> None:
    a, b = pair
    cases: list[tuple[Callable[[], Awaitable[Any]], grpc.StatusCode, str]] = [
        (lambda: a.create("chess960"), grpc.StatusCode.NOT_FOUND, "unknown_game"),
        (lambda: a.create("o_an_quan", {"quanValue": 7}), grpc.StatusCode.INVALID_ARGUMENT, "bad_options"),
        (lambda: a.create("o_an_quan", {"nope": True}), grpc.StatusCode.INVALID_ARGUMENT, "bad_options"),
        (lambda: a.get("no-such-table"), grpc.StatusCode.NOT_FOUND, "unknown_table"),
        (lambda: a.get("bad id!"), grpc.StatusCode.INVALID_ARGUMENT, "bad_table_id"),
    ]
    for call, code, reason in cases:
        assert await refused(call()) == (code, reason)
    t = await a.create("o_an_quan")
    assert await refused(a.start(t.table_id)) == (grpc.StatusCode.FAILED_PRECONDITION, "not_enough_players")
    assert await refused(a.sit(t.table_id)) == (grpc.StatusCode.FAILED_PRECONDITION, "already_seated")
    await b.sit(t.table_id)
    carol = client(settings, table_server, "carol")
    assert await refused(carol.sit(t.table_id)) == (grpc.StatusCode.FAILED_PRECONDITION, "table_full")
    assert await refused(b.start(t.table_id)) == (grpc.StatusCode.PERMISSION_DENIED, "not_host")
    assert await refused(carol.act(t.table_id, "o_an_quan", Sow(1, Direction.CW))) == (
        grpc.StatusCode.FAILED_PRECONDITION, "no_hand")
    view = await a.start(t.table_id)
    assert await refused(a.start(t.table_id)) == (grpc.StatusCode.FAILED_PRECONDITION, "hand_in_progress")
    assert await refused(carol.act(t.table_id, "o_an_quan", Sow(1, Direction.CW))) == (
        grpc.StatusCode.PERMISSION_DENIED, "not_seated")
    await play_to_end(view, {"alice": a, "bob": b})
    # nobody watches: after the hand both get their idle stand (ConnectionLost, written after the end)
    for _ in range(100):
        end = await a.get(t.table_id)
        if all(s.presence == pb.SEAT_PRESENCE_RECONNECTING for s in end.seats if s.player_id):
            break
        await asyncio.sleep(0.05)
    assert await refused(a.act(t.table_id, "o_an_quan", Sow(1, Direction.CW))) == (
        grpc.StatusCode.FAILED_PRECONDITION, "no_hand")
    await unchanged(a, t.table_id, end.version)
    await carol.close()


async def test_calls_without_a_valid_token_are_unauthenticated(table_server: str) -> None:
    channel = grpc.aio.insecure_channel(table_server)
    stub = pb_grpc.TableServiceStub(channel)
    for metadata, reason in (((), "no_token"), ((("authorization", "Bearer v1.bad.token"),), "malformed_token"),
                             ((("authorization", "Basic x"),), "no_token")):
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await stub.GetTable(pb.GetTableRequest(table_id="t"), metadata=metadata)
        assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED
        assert reason_of(err.value) == reason
    await channel.close()


async def test_an_oversized_message_is_refused(pair: tuple[TableClient, TableClient]) -> None:
    a, _ = pair
    big = struct_pb2.Struct()
    big.update({"x": "y" * 100_000})
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await a.stub.CreateTable(pb.CreateTableRequest(game="o_an_quan", options=big), metadata=a.metadata)
    assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED


async def test_health_and_reflection_are_served(table_server: str) -> None:
    from grpc_health.v1 import health_pb2, health_pb2_grpc
    from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

    channel = grpc.aio.insecure_channel(table_server)
    health = await health_pb2_grpc.HealthStub(channel).Check(
        health_pb2.HealthCheckRequest(service="chieu.table.v1.TableService"))
    assert health.status == health_pb2.HealthCheckResponse.SERVING
    stub = reflection_pb2_grpc.ServerReflectionStub(channel)

    async def ask() -> Any:
        yield reflection_pb2.ServerReflectionRequest(list_services="")

    async for resp in stub.ServerReflectionInfo(ask()):
        names = {s.name for s in resp.list_services_response.service}
        assert "chieu.table.v1.TableService" in names
        break
    await channel.close()


async def test_the_log_holds_one_record_per_command_and_the_settlement(
    settings: Settings, pair: tuple[TableClient, TableClient],
) -> None:
    from chieu.kit.eventstore import EventStore
    from chieu.kit.names import TABLES
    from chieu.table.v1 import log_pb2
    from chieu.tablelog import sealing

    a, b = pair
    t = await a.create("o_an_quan", {"payout": "perPoint", "maxMoves": 60}, command_id="mk-log-test")
    await b.sit(t.table_id)
    end = await play_to_end(await a.start(t.table_id), {"alice": a, "bob": b})
    store = await EventStore.connect(settings.nats_url, stream=TABLES, creds=settings.nats_creds)
    logged = [(s.seq, log_pb2.Record.FromString(s.data)) for s in await store.read(t.table_id)]
    await store.close()
    records = [r for _, r in sealing.reveal(logged)]  # the hand is over: its seed opens it
    # every version once, in order; nobody watches, so after the hand the idle stands may follow
    assert [r.version for r in records] == list(range(1, len(records) + 1)) and len(records) >= end.version
    assert all(e.WhichOneof("kind") == "connection_lost" for r in records[end.version:] for e in r.events)
    # replaying the log gives what the live service shows (its folding shortcuts change nothing)
    replayed = Table(t.table_id)
    for seq, r in enumerate(records, 1):
        replayed.apply(r, seq)
    for who, c in (("alice", a), ("bob", b)):
        live = await c.get(t.table_id)
        assert views.view(replayed, who).game_view == live.game_view
        assert views.view(replayed, who).last_outcome == live.last_outcome
    kinds = [e.WhichOneof("kind") for r in records for e in r.events]
    assert kinds[:2] == ["table_created", "player_seated"] and kinds.count("hand_ended") == 1
    settlements = [e.settlement for r in records for e in r.events if e.WhichOneof("kind") == "settlement"]
    if end.last_outcome.HasField("winner"):
        (s,) = settlements
        assert list(s.players) == list(end.hand_players) and s.stake == 1 and s.first_leg == 0
        assert list(s.transfers) == list(end.last_outcome.transfers)
    else:
        assert settlements == []
    # the same create command id names the same table and creates nothing new
    again = await a.create("o_an_quan", {"payout": "perPoint", "maxMoves": 60}, command_id="mk-log-test")
    assert again.table_id == t.table_id and again.version >= end.version
    assert again.version == (await a.get(t.table_id)).version


async def test_idle_tables_leave_the_cache_and_come_back_from_the_log(settings: Settings) -> None:
    from dataclasses import replace

    from chieu.kit.eventstore import EventStore
    from chieu.kit.names import TABLES
    from chieu.table.tables import Tables
    from chieu.tablelog.sealing import SealKeys

    store = await EventStore.connect(settings.nats_url, stream=TABLES, creds=settings.nats_creds)
    tables = Tables(store, replace(settings, table_cache=3), SealKeys.load(settings.seal_keys))
    ids = [f"evict-{i}-{id(tables)}" for i in range(6)]
    for tid in ids:
        await tables.execute(tid, "e1", "c0", lambda t, now: decide.create(t, "o_an_quan", {}, "e1"), create=True)
        await tables.get(tid)
    busy = ids[0]
    await tables.execute(busy, "e2", "c1", lambda t, now: decide.take_seat(t, "e2", None))
    # a hand on the clock stays
    await tables.execute(busy, "e1", "c2", lambda t, now: decide.start_hand(t, "e1", now, bytes(32)))
    for tid in ids[1:]:
        await tables.get(tid)
    assert len(tables.cache.live) <= 4 and busy in tables.cache.live
    again = await tables.get(ids[1])  # evicted: reloaded from the log
    assert again.table.version == 1 and again.table.host == "e1"  # one record: created, host seated
    await tables.close()
    await store.close()
