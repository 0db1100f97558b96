"""Zones and rooms over gRPC: the default set, the gates a player sees, operator changes with an
audit trail and a mandatory reason, and bad input of each call."""

from __future__ import annotations

from typing import Any

import grpc

from chieu.games import registry
from chieu.kit.settings import Settings
from chieu.lobby.v1 import lobby_service_pb2 as pb
from chieu.table.v1 import log_pb2
from tests.conftest import token
from tests.lobby.conftest import bearer, guest, refused, uid


async def test_default_zones_and_rooms(stub: Any) -> None:
    s = await guest(stub)
    me = bearer(s.access_token)
    zones = (await stub.ListZones(pb.ListZonesRequest(), metadata=me)).zones
    assert [z.game for z in zones] == list(registry.KEYS)
    assert all(z.rooms >= 7 for z in zones)
    rooms = {e.room.room_id: e for e in (await stub.ListRooms(pb.ListRoomsRequest(game="phom"), metadata=me)).rooms}
    assert {"phom.points", "phom.coins.1", "phom.coins.10", "phom.coins.100", "phom.ladder.1-5",
            "phom.ladder.6-10", "phom.ladder.11-20"} <= set(rooms)
    coins = rooms["phom.coins.10"]
    assert coins.room.currency == log_pb2.CURRENCY_COINS and coins.room.stake == 10
    # the welcome coins (GC-4) open the coin rooms whose hands they cover: a Phỏm hand reserves up to
    # 48 stakes of a seat (its largest loss at 4 seats), 48 金币 at stake 1, 480 at stake 10
    one = rooms["phom.coins.1"].gate
    assert one.allowed and (one.coins, one.need, one.free) == (200, 48, 200)
    assert not coins.gate.allowed and coins.gate.reason == "not_enough_coins" and coins.gate.need == 480
    assert rooms["phom.ladder.1-5"].gate.allowed and rooms["phom.ladder.1-5"].gate.level == 1
    low = rooms["phom.ladder.6-10"].gate
    assert not low.allowed and low.reason == "ladder_level_too_low"  # ladder.md §5.2 / LV-11
    one = (await stub.GetRoom(pb.GetRoomRequest(room_id="phom.points"), metadata=me)).room
    assert one.room.name == "Points" and one.gate.allowed


async def test_a_player_with_3_coins_sees_coin_rooms_closed(stub: Any, settings: Settings) -> None:
    from chieu.ledger.v1 import ledger_service_pb2 as lpb
    from chieu.ledger.v1 import ledger_service_pb2_grpc as lgrpc

    s = await guest(stub)
    me = bearer(s.access_token)
    async with grpc.aio.insecure_channel(settings.ledger_addr) as ch:
        await lgrpc.LedgerServiceStub(ch).Adjust(lpb.AdjustRequest(
            adjustment_id=uid("gc1-"), player_id=s.player.player_id, currency="coins", delta=-197, reason="GC-1 test"),
            metadata=bearer(token(settings, "ops", "operator")))
    gate = (await stub.GetRoom(pb.GetRoomRequest(room_id="phom.coins.1"), metadata=me)).room.gate
    assert not gate.allowed and gate.reason == "not_enough_coins" and gate.coins == 3
    await refused(stub.QuickSeat(pb.QuickSeatRequest(room_id="phom.coins.1"), metadata=me),
                  grpc.StatusCode.FAILED_PRECONDITION, "not_enough_coins")
    assert (await stub.GetRoom(pb.GetRoomRequest(room_id="phom.points"), metadata=me)).room.gate.allowed


async def test_operators_manage_rooms_with_an_audit_trail(stub: Any, operator: Any) -> None:
    s = await guest(stub)
    me = bearer(s.access_token)
    rid = uid("xq.test.")
    room = pb.Room(room_id=rid, game="xiangqi", name="Cờ tướng 50", currency=log_pb2.CURRENCY_COINS, stake=50,
                   min_reputation=90, sort=5)
    await refused(stub.PutRoom(pb.PutRoomRequest(room=room, reason="new"), metadata=me),
                  grpc.StatusCode.PERMISSION_DENIED, "role_required")
    await refused(stub.PutRoom(pb.PutRoomRequest(room=room), metadata=operator), grpc.StatusCode.INVALID_ARGUMENT,
                  "reason_required")
    r = await stub.PutRoom(pb.PutRoomRequest(room=room, reason="a high-stake room"), metadata=operator)
    assert r.created
    entry = (await stub.GetRoom(pb.GetRoomRequest(room_id=rid), metadata=me)).room
    assert entry.room.stake == 50 and entry.gate.allowed and entry.gate.reputation == 100
    room.min_reputation = 101
    assert not (await stub.PutRoom(pb.PutRoomRequest(room=room, reason="stricter"), metadata=operator)).created
    gate = (await stub.GetRoom(pb.GetRoomRequest(room_id=rid), metadata=me)).room.gate
    assert not gate.allowed and gate.reason == "reputation_too_low"
    await stub.DeleteRoom(pb.DeleteRoomRequest(room_id=rid, reason="closed"), metadata=operator)
    await refused(stub.GetRoom(pb.GetRoomRequest(room_id=rid), metadata=me), grpc.StatusCode.NOT_FOUND, "unknown_room")
    audit = (await stub.ListRoomAudit(pb.ListRoomAuditRequest(room_id=rid, page_size=2), metadata=operator))
    assert [e.action for e in audit.entries] == ["delete", "update"] and audit.next_page_token
    assert audit.entries[0].actor == "ops-1" and audit.entries[0].reason == "closed"
    assert audit.entries[1].before.min_reputation == 90 and audit.entries[1].after.min_reputation == 101
    rest = await stub.ListRoomAudit(pb.ListRoomAuditRequest(room_id=rid, page_token=audit.next_page_token),
                                    metadata=operator)
    assert [e.action for e in rest.entries] == ["create"] and not rest.next_page_token
    await refused(stub.ListRoomAudit(pb.ListRoomAuditRequest(), metadata=me), grpc.StatusCode.PERMISSION_DENIED)


async def test_bad_input_of_room_calls(stub: Any, operator: Any) -> None:
    me = bearer((await guest(stub)).access_token)
    IA = grpc.StatusCode.INVALID_ARGUMENT
    await refused(stub.ListRooms(pb.ListRoomsRequest(game="chess"), metadata=me), grpc.StatusCode.NOT_FOUND,
                  "unknown_game")
    await refused(stub.ListRooms(pb.ListRoomsRequest(), metadata=me), IA, "bad_game")
    await refused(stub.GetRoom(pb.GetRoomRequest(room_id="nope"), metadata=me), grpc.StatusCode.NOT_FOUND,
                  "unknown_room")
    await refused(stub.GetRoom(pb.GetRoomRequest(), metadata=me), IA, "bad_room_id")
    good = pb.Room(room_id=uid("r"), game="phom", name="ok", currency=log_pb2.CURRENCY_POINTS, stake=1)
    for field, value, reason in (("room_id", "Bad Id", "bad_room_id"), ("name", "", "bad_name"),
                                 ("currency", 0, "bad_currency"), ("stake", 0, "bad_stake"),
                                 ("ladder_min_level", 3, "bad_ladder_levels"), ("min_reputation", -1,
                                                                                  "bad_min_reputation")):
        bad = pb.Room()
        bad.CopyFrom(good)
        setattr(bad, field, value)
        await refused(stub.PutRoom(pb.PutRoomRequest(room=bad, reason="x"), metadata=operator), IA, reason)
    bad = pb.Room()
    bad.CopyFrom(good)
    bad.options.update({"noSuchOption": 1})
    await refused(stub.PutRoom(pb.PutRoomRequest(room=bad, reason="x"), metadata=operator), IA, "bad_options")
    bad.CopyFrom(good)
    bad.game = "chess"
    await refused(stub.PutRoom(pb.PutRoomRequest(room=bad, reason="x"), metadata=operator),
                  grpc.StatusCode.NOT_FOUND, "unknown_game")
    await refused(stub.DeleteRoom(pb.DeleteRoomRequest(room_id="nope", reason="x"), metadata=operator),
                  grpc.StatusCode.NOT_FOUND, "unknown_room")
    await refused(stub.ListRoomAudit(pb.ListRoomAuditRequest(page_token="abc"), metadata=operator), IA,
                  "bad_page_token")
    await refused(stub.GetHome(pb.GetHomeRequest(player_id="someone-else"), metadata=me),
                  grpc.StatusCode.PERMISSION_DENIED, "not_yours")
    await refused(stub.GetHome(pb.GetHomeRequest(player_id="nobody"), metadata=operator),
                  grpc.StatusCode.NOT_FOUND, "unknown_player")


async def test_a_coin_room_is_offered_only_at_the_operators_stakes(stub: Any, operator: Any,
                                                                  settings: Settings) -> None:
    """Issue 27: the table service plays coin tables at CHIEU_COIN_STAKES only, so a coin room at
    another stake is refused (nothing written); a points room may have any stake."""
    rid = uid("xq.stake.")
    room = pb.Room(room_id=rid, game="xiangqi", name="Cờ tướng 1000", currency=log_pb2.CURRENCY_COINS, stake=1000)
    await refused(stub.PutRoom(pb.PutRoomRequest(room=room, reason="a dumping room"), metadata=operator),
                  grpc.StatusCode.INVALID_ARGUMENT, "stake_not_offered")
    await refused(stub.GetRoom(pb.GetRoomRequest(room_id=rid), metadata=operator), grpc.StatusCode.NOT_FOUND,
                  "unknown_room")
    room.currency = log_pb2.CURRENCY_POINTS
    assert (await stub.PutRoom(pb.PutRoomRequest(room=room, reason="points"), metadata=operator)).created
