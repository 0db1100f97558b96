"""A waiting ``WatchRoom`` stream costs nothing while its room is quiet (issue 37): it wakes for a
change, for its token's expiry (one timer, at that time) and for its session's revocation (pushed:
at once by a sign-out in this lobby, by the revocation poll from another replica), for nothing else."""

from __future__ import annotations

import asyncio
import sys
import time
from types import FrameType
from typing import Any

import grpc
import pytest

from chieu.kit.settings import Settings
from chieu.lobby.service import LobbyService
from chieu.lobby.v1 import lobby_service_pb2 as pb
from tests.conftest import token as sign_token
from tests.lobby.conftest import bearer, guest, refused, uid
from tests.lobby.test_tables import new_room
from tests.table.helpers import reason_of

pytestmark = pytest.mark.integration


async def _end_of_watch(stub: Any, room_id: str, access: str, got: list[pb.WatchRoomResponse]
                        ) -> tuple[grpc.StatusCode, str]:
    with pytest.raises(grpc.aio.AioRpcError) as err:
        async for r in stub.WatchRoom(pb.WatchRoomRequest(room_id=room_id), metadata=bearer(access)):
            got.append(r)
    return err.value.code(), reason_of(err.value)


async def test_idle_room_watches_do_not_wake(stub: Any, operator: Any, settings: Settings) -> None:
    """50 streams on a quiet room: no stream's generator resumes in 2.5 s (the old watch: each
    woke once a second through a ``wait_for``). The profile hook counts every resumption of a
    ``WatchRoom`` generator as a ``call``."""
    room = await new_room(stub, operator)
    n = 50
    got: list[list[pb.WatchRoomResponse]] = [[] for _ in range(n)]
    tasks = [asyncio.create_task(_end_of_watch(stub, room.room_id, sign_token(settings, uid("idle-")), got[i]))
             for i in range(n)]
    for _ in range(500):
        if all(got):
            break
        await asyncio.sleep(0.02)
    assert all(len(g) == 1 and g[0].HasField("snapshot") for g in got)
    await asyncio.sleep(0.2)
    code = LobbyService.WatchRoom.__code__
    wakes = 0

    def profile(frame: FrameType, event: str, arg: object) -> None:
        nonlocal wakes
        if event == "call" and frame.f_code is code:
            wakes += 1

    sys.setprofile(profile)
    try:
        await asyncio.sleep(2.5)
    finally:
        sys.setprofile(None)
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    assert wakes == 0


async def test_a_room_watch_ends_at_expiry_and_at_once_on_sign_out(stub: Any, operator: Any,
                                                                    settings: Settings) -> None:
    room = await new_room(stub, operator)
    began = time.monotonic()
    got: list[pb.WatchRoomResponse] = []
    assert await asyncio.wait_for(_end_of_watch(stub, room.room_id, sign_token(settings, uid("s-"), ttl_s=2), got),
                                  10) == (grpc.StatusCode.UNAUTHENTICATED, "token_expired")
    assert len(got) == 1 and 0.5 < time.monotonic() - began < 6
    s, other = await guest(stub), await guest(stub)
    got, kept = [], []
    watching = [asyncio.create_task(_end_of_watch(stub, room.room_id, s.access_token, got)) for _ in range(2)]
    staying = asyncio.create_task(_end_of_watch(stub, room.room_id, other.access_token, kept))
    for _ in range(500):
        if len(got) == 2 and kept:
            break
        await asyncio.sleep(0.02)
    await stub.SignOut(pb.SignOutRequest(), metadata=bearer(s.access_token))
    # this lobby learnt its own sign-out before answering it: refused now, not at the next poll
    await refused(stub.ListRooms(pb.ListRoomsRequest(game="phom"), metadata=bearer(s.access_token)),
                  grpc.StatusCode.UNAUTHENTICATED, "session_revoked")
    for w in watching:
        assert await asyncio.wait_for(w, 10) == (grpc.StatusCode.UNAUTHENTICATED, "session_revoked")
    await asyncio.sleep(0.5)
    assert not staying.done()
    staying.cancel()
    await asyncio.gather(staying, return_exceptions=True)
