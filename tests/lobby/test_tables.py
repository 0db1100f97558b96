"""The live table list over gRPC: the projection from the table log, ListTables (filters, pages),
WatchRoom (a snapshot, then every change), quick seat with its races, the home screen, and the
whole portal path: sign in, rooms, watch, quick seat four players into a Phỏm coin room, play a
hand through the table service, and see the coins change on the home screen."""

from __future__ import annotations

import asyncio
import random
import time
from typing import Any

import asyncpg
import grpc
import pytest

from chieu.games import registry
from chieu.kit.settings import Settings
from chieu.lobby.v1 import lobby_service_pb2 as pb
from chieu.table.client import TableClient, game_view
from chieu.table.v1 import log_pb2
from chieu.table.v1 import table_service_pb2 as tpb
from tests.conftest import token as sign_token
from tests.lobby.conftest import bearer, guest, refused, uid, until
from tests.table.helpers import reason_of
from tests.table.phom_bot import play_turn


async def new_room(stub: Any, operator: Any, game: str = "phom", currency: int = log_pb2.CURRENCY_POINTS,
                   **kw: Any) -> pb.Room:
    """A room of its own for a test: a stake no other test uses, so only this test's tables fall in it."""
    options = kw.pop("options", {})
    room = pb.Room(room_id=uid(f"{game}.t."), game=game, name="test room", currency=currency,  # type: ignore[arg-type]
                   stake=kw.pop("stake", random.randrange(10_000, 10_000_000)), **kw)
    room.options.update(options)
    await stub.PutRoom(pb.PutRoomRequest(room=room, reason="a test room"), metadata=operator)
    return room


class Watcher:
    """A WatchRoom stream read in the background: the snapshot, then the changes."""

    def __init__(self, stub: Any, room_id: str, access: str) -> None:
        self.call = stub.WatchRoom(pb.WatchRoomRequest(room_id=room_id), metadata=bearer(access))
        self.snapshot: list[pb.TableSummary] = []
        self.complete = asyncio.Event()
        self.events: list[tuple[float, pb.WatchRoomResponse]] = []
        self.task = asyncio.create_task(self._read())

    async def _read(self) -> None:
        async for m in self.call:
            if m.WhichOneof("kind") == "snapshot":
                self.snapshot.extend(m.snapshot.tables)
                if m.snapshot.complete:
                    self.complete.set()
            else:
                self.events.append((time.time(), m))

    def tables(self) -> dict[str, pb.TableSummary]:
        out = {t.table_id: t for t in self.snapshot}
        for _, m in self.events:
            if m.WhichOneof("kind") == "changed":
                out[m.changed.table_id] = m.changed
            else:
                out.pop(m.removed.table_id, None)
        return out

    async def close(self) -> None:
        self.call.cancel()
        self.task.cancel()


async def test_a_table_appears_changes_and_disappears_on_watch_and_list(
        stub: Any, operator: Any, settings: Settings) -> None:
    room = await new_room(stub, operator)
    a, b = await guest(stub), await guest(stub)
    w = Watcher(stub, room.room_id, a.access_token)
    await asyncio.wait_for(w.complete.wait(), 5)
    assert w.snapshot == []
    ta, tb = TableClient(settings.table_addr, a.access_token), TableClient(settings.table_addr, b.access_token)
    view = await ta.create("phom", stake=room.stake)
    created_ms = time.time() * 1000
    await until(lambda: _has(w, view.table_id, 1))
    seen = w.tables()[view.table_id]
    assert seen.room_id == room.room_id and seen.host == a.player.player_id and seen.max_seats == 4
    assert seen.seats_free == 3 and seen.status == tpb.TABLE_STATUS_WAITING and seen.stake == room.stake
    assert w.events[0][0] * 1000 - created_ms < 1000
    await tb.sit(view.table_id)
    await until(lambda: _has(w, view.table_id, 2))
    listed = await stub.ListTables(pb.ListTablesRequest(room_id=room.room_id), metadata=bearer(b.access_token))
    assert [t.table_id for t in listed.tables] == [view.table_id] and listed.tables[0].seats_taken == 2
    home = await stub.GetHome(pb.GetHomeRequest(), metadata=bearer(b.access_token))
    assert [t.table_id for t in home.seated] == [view.table_id]
    for c in (ta, tb):
        await c.stub.StandUp(tpb.StandUpRequest(table_id=view.table_id, command_id=uid()), metadata=c.metadata)
    await until(lambda: _gone(w, view.table_id))
    assert (await stub.ListTables(pb.ListTablesRequest(room_id=room.room_id), metadata=bearer(a.access_token))).tables \
        == []
    await w.close()
    await ta.close()
    await tb.close()


async def _has(w: Watcher, table_id: str, taken: int) -> bool:
    t = w.tables().get(table_id)
    return t is not None and t.seats_taken == taken


async def _gone(w: Watcher, table_id: str) -> bool:
    return any(m.WhichOneof("kind") == "removed" and m.removed.table_id == table_id for _, m in w.events)


async def test_list_tables_filters_and_pages(stub: Any, operator: Any, settings: Settings) -> None:
    room = await new_room(stub, operator)
    players = [await guest(stub) for _ in range(6)]
    clients = [TableClient(settings.table_addr, p.access_token) for p in players]
    # three tables: 3 players, 2 players, 1 player
    t1 = (await clients[0].create("phom", stake=room.stake)).table_id
    t2 = (await clients[1].create("phom", stake=room.stake)).table_id
    t3 = (await clients[2].create("phom", stake=room.stake)).table_id
    await clients[3].sit(t1)
    await clients[4].sit(t1)
    await clients[5].sit(t2)
    me = bearer(players[0].access_token)

    async def listed(**kw: Any) -> list[tuple[str, int]]:
        out, token = [], ""
        while True:
            r = await stub.ListTables(pb.ListTablesRequest(room_id=room.room_id, page_token=token, **kw), metadata=me)
            out += [(t.table_id, t.seats_taken) for t in r.tables]
            if not r.next_page_token:
                return out
            token = r.next_page_token

    await until(lambda: _listed_is(listed, [(t1, 3), (t2, 2), (t3, 1)]))
    assert await listed(page_size=1) == [(t1, 3), (t2, 2), (t3, 1)]
    await clients[0].start(t1)
    await until(lambda: _listed_is(listed, [(t2, 2), (t3, 1)], status=tpb.TABLE_STATUS_WAITING))
    assert await listed(status=tpb.TABLE_STATUS_PLAYING) == [(t1, 3)]
    assert await listed(free_seat=True, page_size=2) == [(t1, 3), (t2, 2), (t3, 1)]
    by_game = await stub.ListTables(pb.ListTablesRequest(game="phom", page_size=500), metadata=me)
    assert {t1, t2, t3} <= {t.table_id for t in by_game.tables}
    for c in clients:
        await c.close()


async def _listed_is(listed: Any, want: list[tuple[str, int]], **kw: Any) -> bool:
    return bool(await listed(**kw) == want)


async def test_bad_input_of_table_calls(stub: Any) -> None:
    me = bearer((await guest(stub)).access_token)
    IA = grpc.StatusCode.INVALID_ARGUMENT
    await refused(stub.ListTables(pb.ListTablesRequest(), metadata=me), IA, "bad_filter")
    await refused(stub.ListTables(pb.ListTablesRequest(room_id="phom.points", game="phom"), metadata=me), IA,
                  "bad_filter")
    await refused(stub.ListTables(pb.ListTablesRequest(room_id="phom.points", status=7), metadata=me), IA,  # type: ignore[arg-type]
                  "bad_filter")
    await refused(stub.ListTables(pb.ListTablesRequest(room_id="phom.points", ladder_level=-1), metadata=me), IA,
                  "bad_filter")
    await refused(stub.ListTables(pb.ListTablesRequest(room_id="phom.points", page_size=501), metadata=me), IA,
                  "bad_page_size")
    for token in ("garbage", "0.abc", "x.y", "3."):
        await refused(stub.ListTables(pb.ListTablesRequest(room_id="phom.points", page_token=token), metadata=me), IA,
                      "bad_page_token")
    await refused(stub.ListTables(pb.ListTablesRequest(room_id="no.such.room"), metadata=me),
                  grpc.StatusCode.NOT_FOUND, "unknown_room")
    await refused(stub.ListTables(pb.ListTablesRequest(game="chess"), metadata=me), grpc.StatusCode.NOT_FOUND,
                  "unknown_game")
    call = stub.WatchRoom(pb.WatchRoomRequest(room_id="no.such.room"), metadata=me)
    await refused(call.read(), grpc.StatusCode.NOT_FOUND, "unknown_room")
    await refused(stub.QuickSeat(pb.QuickSeatRequest(room_id="no.such.room"), metadata=me), grpc.StatusCode.NOT_FOUND,
                  "unknown_room")
    await refused(stub.QuickSeat(pb.QuickSeatRequest(room_id="phom.points", client_seed=b"x" * 65), metadata=me), IA,
                  "bad_client_seed")
    await refused(stub.QuickSeat(pb.QuickSeatRequest(room_id="phom.points")), grpc.StatusCode.UNAUTHENTICATED)


async def test_a_quick_seat_is_seen_by_the_players_next_call(stub: Any, operator: Any, database_url: str) -> None:
    """Read your own seat: QuickSeat returns once the lobby's table list shows the seat it took, so
    the home screen lists the table and a second QuickSeat gives the same seat back (never a second
    table). Here the list is held back on purpose (its table locked against writes, not reads)."""
    room = await new_room(stub, operator)
    host, me = [bearer((await guest(stub)).access_token) for _ in range(2)]
    first = await stub.QuickSeat(pb.QuickSeatRequest(room_id=room.room_id), metadata=host)
    conn = await asyncpg.connect(database_url)
    try:
        tx = conn.transaction()
        await tx.start()
        await conn.execute("LOCK TABLE lobby_tables IN EXCLUSIVE MODE")  # the projection's writes wait
        seat = asyncio.ensure_future(stub.QuickSeat(pb.QuickSeatRequest(room_id=room.room_id), metadata=me))
        await asyncio.sleep(0.8)
        assert not seat.done()  # seated at the table, but not listed yet: the answer waits
        await tx.rollback()
        mine = await asyncio.wait_for(seat, 5)
    finally:
        await conn.close()
    assert (mine.table_id, mine.seat, mine.created) == (first.table_id, 1, False)
    home = await stub.GetHome(pb.GetHomeRequest(), metadata=me)
    assert first.table_id in [t.table_id for t in home.seated]
    again = await stub.QuickSeat(pb.QuickSeatRequest(room_id=room.room_id), metadata=me)
    assert (again.table_id, again.seat, again.created) == (first.table_id, 1, False)


async def test_quick_seat_races_for_the_last_seat(stub: Any, operator: Any, settings: Settings) -> None:
    room = await new_room(stub, operator)
    players = [await guest(stub) for _ in range(5)]
    first = await stub.QuickSeat(pb.QuickSeatRequest(room_id=room.room_id), metadata=bearer(players[0].access_token))
    assert first.created and first.seat == 0
    w = Watcher(stub, room.room_id, players[0].access_token)
    await until(lambda: _has(w, first.table_id, 1))
    for p in players[1:3]:
        r = await stub.QuickSeat(pb.QuickSeatRequest(room_id=room.room_id), metadata=bearer(p.access_token))
        assert r.table_id == first.table_id and not r.created
        await until(lambda r=r: _has(w, first.table_id, r.seat + 1))
    again = await stub.QuickSeat(pb.QuickSeatRequest(room_id=room.room_id), metadata=bearer(players[1].access_token))
    assert again.table_id == first.table_id and again.seat == 1  # already seated: the same seat
    # two players race for the last seat: the table decides, the loser is placed elsewhere
    both = await asyncio.gather(*(stub.QuickSeat(pb.QuickSeatRequest(room_id=room.room_id),
                                                 metadata=bearer(p.access_token)) for p in players[3:]))
    assert sorted(r.table_id == first.table_id for r in both) == [False, True]
    loser = next(r for r in both if r.table_id != first.table_id)
    assert loser.created and loser.seat == 0
    await until(lambda: _has(w, first.table_id, 4))
    await until(lambda: _has(w, loser.table_id, 1))
    await w.close()


async def play_a_hand(stub: Any, settings: Settings, room: pb.Room,
                      sessions: list[Any]) -> tuple[Watcher, str, dict[str, TableClient]]:
    """Quick seat four players into ``room`` and play one hand of Phỏm to its end (the bot's moves)."""
    w = Watcher(stub, room.room_id, sessions[0].access_token)
    await asyncio.wait_for(w.complete.wait(), 5)
    seats = []
    for i, s in enumerate(sessions):
        r = await stub.QuickSeat(pb.QuickSeatRequest(room_id=room.room_id), metadata=bearer(s.access_token))
        seats.append(r)
        await until(lambda r=r, i=i: _has(w, r.table_id, i + 1))
    table_id = seats[0].table_id
    assert {r.table_id for r in seats} == {table_id} and [r.seat for r in seats] == [0, 1, 2, 3]
    assert w.tables()[table_id].seats_free == 0
    clients = {s.player.player_id: TableClient(settings.table_addr, s.access_token) for s in sessions}
    host = clients[sessions[0].player.player_id]
    view = await host.start(table_id)
    await until(lambda: _status(w, table_id, tpb.TABLE_STATUS_PLAYING))
    for _ in range(300):
        view = await host.get(table_id)
        if view.status != tpb.TABLE_STATUS_PLAYING:
            break
        await play_turn(clients[view.hand_players[game_view(view).to_move]], table_id)
    assert view.status == tpb.TABLE_STATUS_WAITING and view.hand_no == 1
    await until(lambda: _status(w, table_id, tpb.TABLE_STATUS_WAITING))
    return w, table_id, clients


async def test_the_portal_path(stub: Any, operator: Any, settings: Settings) -> None:
    """Sign in, rooms, watch, quick seat four players into a Phỏm coin room, play a hand, and see
    the coins change on the home screen."""
    # a stake of 2..4: a Phỏm hand may cost a seat 48 stakes (its max_loss), reserved from 200 welcome 金币
    room = await new_room(stub, operator, currency=log_pb2.CURRENCY_COINS, stake=random.randrange(2, 5),
                          options={"uWindowSeconds": 0, "turnSeconds": 30})  # no Ù window: the bot plays on
    sessions = [await guest(stub, name=f"P{i}") for i in range(4)]
    assert all(s.welcome_coins == 200 for s in sessions)
    rooms = await stub.ListRooms(pb.ListRoomsRequest(game="phom"), metadata=bearer(sessions[0].access_token))
    mine = next(e for e in rooms.rooms if e.room.room_id == room.room_id)
    assert mine.gate.allowed and mine.gate.coins == 200 and mine.gate.need == 48 * room.stake  # what a hand reserves
    w, table_id, clients = await play_a_hand(stub, settings, room, sessions)

    async def homes() -> list[pb.GetHomeResponse]:
        return [await stub.GetHome(pb.GetHomeRequest(), metadata=bearer(s.access_token)) for s in sessions]

    async def settled() -> list[pb.GetHomeResponse] | None:
        hs = await homes()
        return hs if any(h.coins != 200 for h in hs) else None

    hs = await until(settled)
    assert sum(h.coins for h in hs) <= 800 and all(h.coins >= 0 for h in hs)
    assert all([t.table_id for t in h.seated] == [table_id] for h in hs)
    assert all(h.reputation == 100 and len(h.levels) == len(registry.KEYS) and not h.unavailable for h in hs)
    assert hs[0].player.name == "P0"
    assert all(not h.ranks for h in hs)  # a coin room: no points board
    await w.close()
    for c in clients.values():
        await c.close()


async def test_home_shows_the_points_rank(stub: Any, operator: Any, settings: Settings) -> None:
    """Issue 34: a hand in a Điểm/积分 (points) room puts its four players on Phỏm's points board, and
    each one's home shows their points and rank there (ranks in the order of the points, ties by
    player id), where before only 过关斩将 rooms counted."""
    room = await new_room(stub, operator, options={"uWindowSeconds": 0, "turnSeconds": 30})
    sessions = [await guest(stub, name=f"Q{i}") for i in range(4)]
    w, _, clients = await play_a_hand(stub, settings, room, sessions)

    async def ranked() -> list[pb.GameRank] | None:
        hs = [await stub.GetHome(pb.GetHomeRequest(), metadata=bearer(s.access_token)) for s in sessions]
        rows = [next((r for r in h.ranks if r.game == "phom"), None) for h in hs]
        return None if any(r is None for r in rows) else [r for r in rows if r is not None]

    rows = await until(ranked)
    assert all(r.hands == 1 and r.rank >= 1 for r in rows)
    ids = [s.player.player_id for s in sessions]
    by_points = sorted(range(4), key=lambda i: (-rows[i].points, ids[i]))
    assert [rows[i].rank for i in by_points] == sorted(r.rank for r in rows)
    assert len({r.rank for r in rows}) == 4
    await w.close()
    for c in clients.values():
        await c.close()


async def _status(w: Watcher, table_id: str, status: int) -> bool:
    t = w.tables().get(table_id)
    return t is not None and t.status == status


async def test_ladder_rooms_seat_by_level(stub: Any, settings: Settings) -> None:
    """LV-11 through the ladder rooms: a new player (level 1) quick-seats at a level-1 table of the
    1–5 room; the 6–10 room is closed to them; the table service refuses them a level-2 table."""
    a, b = await guest(stub), await guest(stub)
    r = await stub.QuickSeat(pb.QuickSeatRequest(room_id="xiangqi.ladder.1-5"), metadata=bearer(a.access_token))
    assert r.table.ladder_level == 1
    await refused(stub.QuickSeat(pb.QuickSeatRequest(room_id="xiangqi.ladder.6-10"), metadata=bearer(a.access_token)),
                  grpc.StatusCode.FAILED_PRECONDITION, "ladder_level_too_low")
    # the table's own gate says the same to a client that skips the lobby
    tb = TableClient(settings.table_addr, b.access_token)
    try:
        await tb.create("xiangqi", ladder_level=2)
    except grpc.aio.AioRpcError as e:
        assert e.code() == grpc.StatusCode.FAILED_PRECONDITION
    else:
        raise AssertionError("a level-1 player sat at a level-2 table")
    await tb.close()


async def _end_of_watch(stub: Any, room_id: str, access: str) -> tuple[grpc.StatusCode, str]:
    with pytest.raises(grpc.aio.AioRpcError) as err:
        async for _ in stub.WatchRoom(pb.WatchRoomRequest(room_id=room_id), metadata=bearer(access)):
            pass
    return err.value.code(), reason_of(err.value)


async def test_a_room_watch_ends_with_its_token(stub: Any, operator: Any, settings: Settings) -> None:
    """WatchRoom closes with UNAUTHENTICATED when its token expires, or when its session is signed out."""
    room = await new_room(stub, operator)
    short = sign_token(settings, uid("short-"), ttl_s=2)
    assert await asyncio.wait_for(_end_of_watch(stub, room.room_id, short), 10) == (
        grpc.StatusCode.UNAUTHENTICATED, "token_expired")
    s = await guest(stub)
    watching = asyncio.create_task(_end_of_watch(stub, room.room_id, s.access_token))
    await asyncio.sleep(0.3)
    await stub.SignOut(pb.SignOutRequest(), metadata=bearer(s.access_token))
    assert await asyncio.wait_for(watching, 10) == (grpc.StatusCode.UNAUTHENTICATED, "session_revoked")
    await refused(stub.ListRooms(pb.ListRoomsRequest(game="phom"), metadata=bearer(s.access_token)),
                  grpc.StatusCode.UNAUTHENTICATED, "session_revoked")


async def test_coin_gates_ask_what_the_hand_reserves(stub: Any, operator: Any, settings: Settings) -> None:
    """Issue 32: every gate of a coin room asks what StartHand's reservation will (the game's
    largest loss at the table's seats × the stake, of the 金币 not already in play). A Phỏm hand
    at 4 seats may cost a seat 48 stakes: at stake 5 that is 240 金币, more than the 200 welcome
    金币 that opened the old gate (more than 3). The player is refused at the room's gate, at quick
    seat, at the table's seat and at creating a table there, with nothing appended; given 40 more
    they sit and the hand starts."""
    from chieu.ledger.v1 import ledger_service_pb2 as lpb
    from chieu.ledger.v1 import ledger_service_pb2_grpc as lgrpc

    room = await new_room(stub, operator, currency=log_pb2.CURRENCY_COINS, stake=5)
    poor, rich = await guest(stub, name="Poor"), await guest(stub, name="Rich")
    me = bearer(poor.access_token)
    ops = bearer(sign_token(settings, "ops", "operator"))
    async with grpc.aio.insecure_channel(settings.ledger_addr) as ch:
        ledger = lgrpc.LedgerServiceStub(ch)
        await ledger.Adjust(lpb.AdjustRequest(adjustment_id=uid("gate-"), player_id=rich.player.player_id,
                                              currency="coins", delta=100, reason="a richer player"), metadata=ops)
        entry = (await stub.GetRoom(pb.GetRoomRequest(room_id=room.room_id), metadata=me)).room
        g = entry.gate
        assert (g.allowed, g.reason, g.coins, g.need, g.free) == (False, "not_enough_coins", 200, 240, 200)
        assert "240" in g.message
        vi = (await stub.GetRoom(pb.GetRoomRequest(room_id=room.room_id),
                                 metadata=(*me, ("accept-language", "vi")))).room.gate
        assert "240" in vi.message and "200" in vi.message and "xu" in vi.message
        listed = (await stub.ListRooms(pb.ListRoomsRequest(game="phom"), metadata=me)).rooms
        assert not next(e for e in listed if e.room.room_id == room.room_id).gate.allowed
        await refused(stub.QuickSeat(pb.QuickSeatRequest(room_id=room.room_id), metadata=me),
                      grpc.StatusCode.FAILED_PRECONDITION, "not_enough_coins")
        assert not (await stub.ListTables(pb.ListTablesRequest(room_id=room.room_id), metadata=me)).tables

        host = await stub.QuickSeat(pb.QuickSeatRequest(room_id=room.room_id), metadata=bearer(rich.access_token))
        assert host.created
        table = TableClient(settings.table_addr, poor.access_token)
        try:
            before = await table.get(host.table_id)
            e = await refused(table.sit(host.table_id), grpc.StatusCode.FAILED_PRECONDITION, "not_enough_coins")
            assert "240" in (e.details() or "")
            await refused(table.create("phom", stake=5, currency=log_pb2.CURRENCY_COINS),
                          grpc.StatusCode.FAILED_PRECONDITION, "not_enough_coins")
            after = await table.get(host.table_id)
            assert after.version == before.version and poor.player.player_id not in [s.player_id for s in after.seats]

            await ledger.Adjust(lpb.AdjustRequest(adjustment_id=uid("gate-"), player_id=poor.player.player_id,
                                                  currency="coins", delta=40, reason="now enough"), metadata=ops)
            assert (await stub.GetRoom(pb.GetRoomRequest(room_id=room.room_id), metadata=me)).room.gate.allowed
            seat = await stub.QuickSeat(pb.QuickSeatRequest(room_id=room.room_id), metadata=me)
            assert (seat.table_id, seat.seat) == (host.table_id, 1)
            view = await TableClient(settings.table_addr, rich.access_token, table.channel).start(host.table_id)
            assert view.status == tpb.TABLE_STATUS_PLAYING
        finally:
            await table.close()


async def test_coin_gates_count_the_coins_already_in_play(stub: Any, operator: Any, settings: Settings) -> None:
    """A room's gate is held to the 金币 not reserved for the player's hands in play elsewhere: 300
    金币 with 100 reserved for another hand leave 200 free, short of a stake-5 Phỏm room's 240."""
    from chieu.ledger.v1 import ledger_service_pb2 as lpb
    from chieu.ledger.v1 import ledger_service_pb2_grpc as lgrpc
    from tests.conftest import credential

    room = await new_room(stub, operator, currency=log_pb2.CURRENCY_COINS, stake=5)
    s = await guest(stub)
    me, pid = bearer(s.access_token), s.player.player_id
    async with grpc.aio.insecure_channel(settings.ledger_addr) as ch:
        ledger = lgrpc.LedgerServiceStub(ch)
        await ledger.Adjust(lpb.AdjustRequest(adjustment_id=uid("gate-"), player_id=pid, currency="coins",
                                              delta=100, reason="300"), metadata=bearer(sign_token(settings, "ops",
                                                                                                   "operator")))
        assert (await stub.GetRoom(pb.GetRoomRequest(room_id=room.room_id), metadata=me)).room.gate.allowed
        r = await ledger.ReserveHand(lpb.ReserveHandRequest(table_id=uid("elsewhere"), hand_no=1, seats=[
            lpb.SeatReservation(player_id=pid, coins=100)]), metadata=bearer(credential("table")))
        assert r.reserved
    g = (await stub.GetRoom(pb.GetRoomRequest(room_id=room.room_id), metadata=me)).room.gate
    assert (g.allowed, g.reason, g.coins, g.free, g.need) == (False, "not_enough_coins", 300, 200, 240)
    await refused(stub.QuickSeat(pb.QuickSeatRequest(room_id=room.room_id), metadata=me),
                  grpc.StatusCode.FAILED_PRECONDITION, "not_enough_coins")
