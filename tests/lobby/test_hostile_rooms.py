"""A room whose options are no JSON — NaN or ±Infinity in the ``Struct`` — is refused as bad
options, not an internal error (found by the fuzzers, tests/fuzz), and no room is written."""

from __future__ import annotations

import math
from typing import Any

import grpc
import pytest

from chieu.lobby.v1 import lobby_service_pb2 as pb
from chieu.table.v1 import log_pb2
from tests.lobby.conftest import refused, uid


@pytest.mark.parametrize("options", [{"turnSeconds": math.inf}, {"maxMoves": math.nan}, {"x": [-math.inf]}],
                         ids=repr)
async def test_room_options_that_are_no_json_are_bad_options(stub: Any, operator: Any,
                                                             options: dict[str, object]) -> None:
    room = pb.Room(room_id=uid("nan."), game="o_an_quan", name="NaN", currency=log_pb2.CURRENCY_POINTS, stake=1)
    room.options.update(options)
    await refused(stub.PutRoom(pb.PutRoomRequest(room=room, reason="fuzz"), metadata=operator),
                  grpc.StatusCode.INVALID_ARGUMENT, "bad_options")
    await refused(stub.GetRoom(pb.GetRoomRequest(room_id=room.room_id), metadata=operator),
                  grpc.StatusCode.NOT_FOUND)
