"""Text with a NUL character is refused at the door, by the guard every method is wrapped in:
INVALID_ARGUMENT / ``bad_text``, before the handler runs. PostgreSQL cannot store a NUL in
``text`` or ``jsonb``, so such a string reached the database and came back as INTERNAL (found by
the fuzzers, tests/fuzz: the ladder's GetReputation with player_id "\\0", the lobby's
RevokeSessions with a reason of NULs)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import grpc
import pytest
from google.protobuf import struct_pb2

from chieu.kit.request_text import nul_field
from chieu.kit.settings import Settings
from chieu.ladder.v1 import ladder_service_pb2 as dpb
from chieu.ladder.v1 import ladder_service_pb2_grpc as dpb_grpc
from chieu.lobby.v1 import lobby_service_pb2 as opb
from chieu.lobby.v1 import lobby_service_pb2_grpc as opb_grpc
from chieu.table.v1 import table_service_pb2 as tpb
from tests.conftest import token
from tests.table.helpers import refused


def test_a_nul_is_found_at_any_depth() -> None:
    assert nul_field(dpb.GetReputationRequest(player_id="alice")) is None
    assert nul_field(dpb.GetReputationRequest(player_id="al\x00ice")) == "player_id"
    assert nul_field(dpb.CheckSeatRequest(player_ids=["a", "b\x00"])) == "player_ids"
    options = struct_pb2.Struct()
    options.update({"fine": ["x", {"deep": "y\x00"}]})
    where = nul_field(tpb.CreateTableRequest(game="phom", options=options))
    assert where is not None and where.startswith("options.fields") and where.endswith("string_value")
    key = struct_pb2.Struct()
    key.update({"k\x00": 1})
    assert nul_field(tpb.ChangeSettingsRequest(options=key)) == "options.fields"
    clean = struct_pb2.Struct()
    clean.update({"turnSeconds": 30, "payout": "fixed", "list": [1, "a", None]})
    assert nul_field(tpb.CreateTableRequest(game="o_an_quan", options=clean)) is None


@pytest.fixture
async def channels(ladder_server: str, lobby_server: str) -> AsyncIterator[dict[str, grpc.aio.Channel]]:
    chans = {"ladder": grpc.aio.insecure_channel(ladder_server), "lobby": grpc.aio.insecure_channel(lobby_server)}
    yield chans
    for ch in chans.values():
        await ch.close()


@pytest.mark.integration
async def test_a_nul_is_refused_before_it_reaches_the_database(settings: Settings,
                                                              channels: dict[str, grpc.aio.Channel]) -> None:
    auditor = (("authorization", f"Bearer {token(settings, 'nul-aud', 'auditor')}"),)
    operator = (("authorization", f"Bearer {token(settings, 'nul-ops', 'operator')}"),)
    ladder = dpb_grpc.LadderServiceStub(channels["ladder"])
    lobby = opb_grpc.LobbyServiceStub(channels["lobby"])
    bad = grpc.StatusCode.INVALID_ARGUMENT, "bad_text"
    assert await refused(ladder.GetReputation(dpb.GetReputationRequest(player_id="\x00"), metadata=auditor)) == bad
    assert await refused(lobby.RevokeSessions(opb.RevokeSessionsRequest(player_id="nul-p", reason="\x00" * 65),
                                              metadata=operator)) == bad
    # what has no NUL goes on as before
    assert (await ladder.GetReputation(dpb.GetReputationRequest(player_id="nul-p"), metadata=auditor)).player_id == (
        "nul-p")
