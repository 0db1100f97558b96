"""Rooms for the browser tests of 够级, mahjong, 中国象棋 and 连连看 (tests/web/test_<key>_browser.py):
each game's default room plays with its full clocks and boards, so a test puts a points room of
its own (``<game>.short``) with the descriptor's short-clock options, or others the test gives,
through the lobby's operator call PutRoom. Its stake is 2 points: the lobby lists a table in the
first room of its game, currency and stake, so at stake 1 it would show in ``<game>.points``."""

from __future__ import annotations

from typing import Any

import grpc

from chieu.games import registry
from chieu.kit.settings import Settings
from chieu.lobby.v1 import lobby_service_pb2 as pb
from chieu.lobby.v1 import lobby_service_pb2_grpc as pb_grpc
from chieu.table.v1 import log_pb2
from tests.conftest import token


async def short_room(settings: Settings, game: str, options: dict[str, Any] | None = None) -> str:
    """Puts the room ``<game>.short`` (points, stake 2) with ``options`` (default: the game's
    short_clock); its id."""
    room = pb.Room(room_id=f"{game}.short", game=game, name="Short clock", currency=log_pb2.CURRENCY_POINTS,
                   stake=2, sort=registry.descriptor(game).sort * 100 + 50)
    room.options.update(dict(registry.descriptor(game).short_clock) if options is None else options)
    async with grpc.aio.insecure_channel(settings.lobby_addr) as ch:
        await pb_grpc.LobbyServiceStub(ch).PutRoom(
            pb.PutRoomRequest(room=room, reason="browser test: a short clock"),
            metadata=(("authorization", f"Bearer {token(settings, 'ops', 'operator')}"),))
    return room.room_id
