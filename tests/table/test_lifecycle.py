"""The table lifecycle over gRPC with Phỏm: host, seats, settings and the gà pot, presence,
timeouts and auto-play, forced quits, spectators, two service processes, and the auditor."""

from __future__ import annotations

import asyncio
from typing import Any

import grpc
import pytest

from chieu.games.phom.model import Phase
from chieu.kit.settings import Settings
from chieu.table.client import TableClient, game_view
from chieu.table.v1 import table_service_pb2 as pb
from tests.table.helpers import client, refused
from tests.table.phom_bot import play_turn

pytestmark = pytest.mark.integration

FAST = {"uWindowSeconds": 0, "turnSeconds": 30}


async def four(settings: Settings, addr: str, options: dict[str, Any] | None = None,
               **create: Any) -> tuple[list[TableClient], str]:
    names = ["p1", "p2", "p3", "p4"]
    clients = [client(settings, addr, n) for n in names]
    t = await clients[0].create("phom", {**FAST, **(options or {})}, **create)
    for c in clients[1:]:
        await c.sit(t.table_id)
    return clients, t.table_id


async def close_all(clients: list[TableClient]) -> None:
    for c in clients:
        await c.close()


def by_player(clients: list[TableClient], view: pb.TableView) -> dict[str, TableClient]:
    names = ["p1", "p2", "p3", "p4", "p5"]
    return {names[i]: c for i, c in enumerate(clients)}


async def test_host_rules_and_hosting_passes_to_the_longest_seated(settings: Settings, table_server: str) -> None:
    clients, tid = await four(settings, table_server)
    p1, p2, p3, _p4 = clients
    assert await refused(p2.start(tid)) == (grpc.StatusCode.PERMISSION_DENIED, "not_host")
    change = p2.stub.ChangeSettings(pb.ChangeSettingsRequest(table_id=tid, stake=5), metadata=p2.metadata)
    assert await refused(change) == (grpc.StatusCode.PERMISSION_DENIED, "not_host")
    r = await p1.stub.StandUp(pb.StandUpRequest(table_id=tid), metadata=p1.metadata)
    assert r.table.host == "p2" and all(s.player_id != "p1" for s in r.table.seats)
    await p2.stub.StandUp(pb.StandUpRequest(table_id=tid), metadata=p2.metadata)
    assert (await p3.get(tid)).host == "p3"
    view = await p3.start(tid)  # two seated: enough for Phỏm
    assert view.status == pb.TABLE_STATUS_PLAYING and list(view.hand_players) == ["p3", "p4"]
    await close_all(clients)


async def test_settings_between_hands_and_the_ga_pot_rule(settings: Settings, table_server: str,
                                                         ledger_server: str) -> None:
    clients, tid = await four(settings, table_server, {"ga": True})
    p1 = clients[0]

    async def change(**kw: Any) -> pb.TableView:
        req = pb.ChangeSettingsRequest(table_id=tid, **{k: v for k, v in kw.items() if k != "options"})
        if "options" in kw:
            req.options.update(kw["options"])
        return (await p1.stub.ChangeSettings(req, metadata=p1.metadata)).table

    assert await refused(change(options={"turnSeconds": 0})) == (grpc.StatusCode.INVALID_ARGUMENT, "bad_options")
    assert (await change(stake=3)).stake == 3  # the pot is empty: fine
    view = await p1.start(tid)
    assert view.pot == 4  # every player paid 1 into the gà pot at the deal
    assert await refused(change(stake=2)) == (grpc.StatusCode.FAILED_PRECONDITION, "hand_in_progress")
    # play the hand out with the bots, then the pot still holds money unless someone Ù'd
    players = by_player(clients, view)
    for _ in range(200):
        view = await p1.get(tid)
        if view.status != pb.TABLE_STATUS_PLAYING:
            break
        gv = game_view(view)
        await play_turn(players[view.hand_players[gv.to_move]], tid)
    assert view.status == pb.TABLE_STATUS_WAITING
    if view.pot:
        assert await refused(change(stake=2)) == (grpc.StatusCode.FAILED_PRECONDITION, "pot_not_empty")
        assert await refused(change(options={"ga": False})) == (grpc.StatusCode.FAILED_PRECONDITION, "pot_not_empty")
        assert (await change(options={"turnSeconds": 25})).options["turnSeconds"] == 25
    else:
        assert (await change(stake=2)).stake == 2
    await close_all(clients)


async def test_a_timeout_auto_plays_and_the_hand_goes_on(settings: Settings, table_server: str) -> None:
    clients, tid = await four(settings, table_server, {"turnSeconds": 1})
    view = await clients[0].start(tid)
    gv = game_view(view)
    mover = gv.to_move
    seen = await clients[0].get(tid)
    for _ in range(40):  # the server plays for the seat to move after 1 s
        await asyncio.sleep(0.1)
        seen = await clients[0].get(tid)
        if game_view(seen).to_move != mover:
            break
    assert game_view(seen).to_move == (mover + 1) % 4
    assert game_view(seen).seats[mover].cards == 9  # the dealer (10 cards) discarded: auto-play
    await close_all(clients)


async def test_disconnect_reconnect_forced_quit_and_spectators(settings: Settings, table_server: str) -> None:
    clients, tid = await four(settings, table_server, {"turnSeconds": 30}, reconnect_grace_s=1)
    p1, p2, p3, _p4 = clients
    view = await p1.start(tid)
    players = by_player(clients, view)
    spectator = client(settings, table_server, "watcher")
    spectator_views: list[pb.TableView] = []

    async def spectate() -> None:
        async for v in spectator.watch(tid):
            spectator_views.append(v)

    spy = asyncio.create_task(spectate())

    # p2 watches, drops, and comes back within the grace: nothing happens to the seat
    async def watch_briefly(c: TableClient, seconds: float) -> None:
        async def go() -> None:
            async for _ in c.watch(tid):
                pass
        task = asyncio.create_task(go())
        await asyncio.sleep(seconds)
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)

    await watch_briefly(p2, 0.3)
    await asyncio.sleep(0.2)
    lost = await p1.get(tid)
    assert "p2" in lost.reconnect_deadlines
    await watch_briefly(p2, 0.3)  # back in time (and gone again)
    await asyncio.sleep(1.6)  # the grace of the second drop runs out
    after = await p1.get(tid)
    assert "p2" in after.auto_played and "p2" not in after.reconnect_deadlines
    assert await refused(p2.act(tid, "phom", __import__("chieu.games.phom.model",
                                                        fromlist=["Draw"]).Draw())) == (
        grpc.StatusCode.FAILED_PRECONDITION, "auto_played")

    # p3 leaves mid-hand: a forced quit, the seat is free and auto-played for the rest of the hand
    r = await p3.stub.StandUp(pb.StandUpRequest(table_id=tid), metadata=p3.metadata)
    assert "p3" in r.table.auto_played and all(s.player_id != "p3" for s in r.table.seats)

    # play on with p1 and p4; auto-played seats move by themselves
    for _ in range(300):
        view = await p1.get(tid)
        if view.status != pb.TABLE_STATUS_PLAYING:
            break
        gv = game_view(view)
        name = view.hand_players[gv.to_move]
        if name in ("p1", "p4") and gv.phase is Phase.PLAY:
            await play_turn(players[name], tid)
        else:
            await asyncio.sleep(0.02)
    assert view.status == pb.TABLE_STATUS_WAITING
    await asyncio.sleep(0.2)
    spy.cancel()
    await asyncio.gather(spy, return_exceptions=True)
    # the spectator saw the hand but never a hidden card
    assert len(spectator_views) > 10
    for v in spectator_views:
        sv = game_view(v)
        if sv.phase is not Phase.OVER:
            assert sv.hand == () and not v.HasField("hand_seat")

    # the log carries the integration events
    auditor = client(settings, table_server, "auditor", "auditor")
    kinds: list[str] = []
    async for rec in auditor.stub.AuditLog(pb.AuditLogRequest(table_id=tid), metadata=auditor.metadata):
        kinds += [e.WhichOneof("kind") for e in rec.record.events]
    for kind in ("connection_lost", "reconnected", "disconnected", "forced_quit", "player_left", "hand_ended"):
        assert kind in kinds, kind
    await close_all([*clients, spectator, auditor])


async def test_auditor_role_and_deal_verification(settings: Settings, table_server: str) -> None:
    clients, tid = await four(settings, table_server)
    p1 = clients[0]
    for c in clients[1:]:
        await c.stub.SetReady(pb.SetReadyRequest(table_id=tid, ready=True, client_seed=c.metadata[0][1][-8:].encode()),
                              metadata=c.metadata)
    view = await p1.start(tid)
    players = by_player(clients, view)
    for _ in range(200):  # hand 1 to the end
        view = await p1.get(tid)
        if view.status != pb.TABLE_STATUS_PLAYING:
            break
        gv = game_view(view)
        await play_turn(players[view.hand_players[gv.to_move]], tid)
    await p1.start(tid)  # hand 2, still running
    assert await refused(p1.stub.VerifyDeals(pb.VerifyDealsRequest(table_id=tid), metadata=p1.metadata)) == (
        grpc.StatusCode.PERMISSION_DENIED, "role_required")
    auditor = client(settings, table_server, "auditor", "auditor")
    verdicts = (await auditor.stub.VerifyDeals(pb.VerifyDealsRequest(table_id=tid), metadata=auditor.metadata)).hands
    assert [(h.hand_no, h.revealed, h.commitment_ok, h.deal_ok, h.moves_ok) for h in verdicts] == [
        (1, True, True, True, True), (2, False, False, False, True)]
    assert verdicts[0].moves_checked > 10  # every draw and discard of hand 1 decided again
    await close_all([*clients, auditor])


async def test_two_service_processes_serve_the_same_table(settings: Settings, table_server: str) -> None:
    from dataclasses import replace

    from chieu.table.app import build
    from chieu_tools import localnats

    other = replace(settings, table_addr=f"127.0.0.1:{localnats.free_port()}")
    server = await build(other)
    await server.start()
    try:
        a = [client(settings, table_server, n) for n in ("p1", "p2", "p3", "p4")]
        b = [client(settings, other.table_addr, n) for n in ("p1", "p2", "p3", "p4")]
        t = await a[0].create("phom", FAST)
        for i in (1, 2, 3):
            await (a if i % 2 else b)[i].sit(t.table_id)
        view = await b[0].start(t.table_id)
        watched: list[int] = []

        async def watch_on_b() -> None:
            async for v in b[2].watch(t.table_id):
                watched.append(v.version)

        async def converged() -> pb.TableView:
            """Both processes show the same version soon (a read may trail the other's append by ms)."""
            for _ in range(100):
                va, vb = await a[0].get(t.table_id), await b[0].get(t.table_id)
                if va.version == vb.version:
                    return va
                await asyncio.sleep(0.02)
            raise AssertionError(f"the processes did not converge: {va.version} vs {vb.version}")

        w = asyncio.create_task(watch_on_b())
        for turn in range(8):  # alternate processes: each sees the other's appends
            view = await converged()
            gv = game_view(view)
            side = b if turn % 2 else a
            await play_turn(side[gv.to_move], t.table_id)
        final = await converged()
        await asyncio.sleep(0.2)
        w.cancel()
        await asyncio.gather(w, return_exceptions=True)
        assert watched[-1] == final.version
        assert watched == sorted(set(watched))
        await close_all([*a, *b])
    finally:
        await server.shutdown()


async def test_the_stake_changes_only_when_the_ledger_can_vouch_for_the_pot(settings: Settings) -> None:
    """The ledger is the authority on the gà pot: with the ledger unreachable, a stake change is
    refused (UNAVAILABLE) while a change that needs no money goes through."""
    from dataclasses import replace

    from chieu.table.app import build
    from chieu_tools import localnats

    lonely = replace(settings, table_addr=f"127.0.0.1:{localnats.free_port()}",
                     ledger_addr=f"127.0.0.1:{localnats.free_port()}")  # nothing listens there
    server = await build(lonely)
    await server.start()
    try:
        host = client(settings, lonely.table_addr, "h1")
        t = await host.create("phom", FAST)

        async def change(**kw: Any) -> Any:
            req = pb.ChangeSettingsRequest(table_id=t.table_id, **{k: v for k, v in kw.items() if k != "options"})
            if "options" in kw:
                req.options.update(kw["options"])
            return await host.stub.ChangeSettings(req, metadata=host.metadata)

        assert await refused(change(stake=2)) == (grpc.StatusCode.UNAVAILABLE, "ledger_unavailable")
        assert await refused(change(options={"ga": True})) == (grpc.StatusCode.UNAVAILABLE, "ledger_unavailable")
        assert (await change(options={"turnSeconds": 15})).table.options["turnSeconds"] == 15
        assert (await host.get(t.table_id)).stake == 1
        await host.close()
    finally:
        await server.shutdown()


async def test_only_an_operator_aborts_a_hand(settings: Settings, table_server: str) -> None:
    clients, tid = await four(settings, table_server, {"ga": True})
    p1 = clients[0]
    view = await p1.start(tid)
    req = pb.AbortHandRequest(table_id=tid, reason="stuck client build 1.2.3")
    assert await refused(p1.stub.AbortHand(req, metadata=p1.metadata)) == (
        grpc.StatusCode.PERMISSION_DENIED, "role_required")
    operator = client(settings, table_server, "ops", "operator")
    empty = pb.AbortHandRequest(table_id=tid, reason="  ")
    assert await refused(operator.stub.AbortHand(empty, metadata=operator.metadata)) == (
        grpc.StatusCode.INVALID_ARGUMENT, "bad_reason")
    after = (await operator.stub.AbortHand(req, metadata=operator.metadata)).table
    assert after.status == pb.TABLE_STATUS_WAITING and after.last_outcome.reason.startswith("aborted: stuck")
    import hashlib

    assert hashlib.sha256(after.last_server_seed).hexdigest() == view.seed_commitment
    assert await refused(operator.stub.AbortHand(req, metadata=operator.metadata)) == (
        grpc.StatusCode.FAILED_PRECONDITION, "no_hand")
    nxt = await p1.start(tid)  # the table goes on, and the gà pot with it: 4 fed before the abort, 4 now
    assert nxt.hand_no == 2 and nxt.pot == 8 and game_view(nxt).pot == 8
    await close_all([*clients, operator])


async def test_a_stream_open_on_another_replica_keeps_the_player_present(settings: Settings, table_server: str) -> None:
    from dataclasses import replace

    from chieu.table.app import build
    from chieu_tools import localnats

    other = replace(settings, table_addr=f"127.0.0.1:{localnats.free_port()}")
    server = await build(other)
    await server.start()
    try:
        clients, tid = await four(settings, table_server, reconnect_grace_s=1)
        await clients[0].start(tid)
        p2_here, p2_there = clients[1], client(settings, other.table_addr, "p2")

        async def watch(c: TableClient) -> None:
            async for _ in c.watch(tid):
                pass

        stays = asyncio.create_task(watch(p2_there))
        brief = asyncio.create_task(watch(p2_here))
        await asyncio.sleep(0.3)
        brief.cancel()  # the stream on the first replica closes; the one on the other stays
        await asyncio.gather(brief, return_exceptions=True)
        await asyncio.sleep(1.8)  # longer than the grace
        view = await clients[0].get(tid)
        assert "p2" not in view.auto_played and "p2" not in view.reconnect_deadlines
        stays.cancel()
        await asyncio.gather(stays, return_exceptions=True)
        await close_all([*clients, p2_there])
    finally:
        await server.shutdown()
