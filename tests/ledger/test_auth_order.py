"""Who is calling is settled before what they ask is read: a call without a valid token is
UNAUTHENTICATED, and another player's is PERMISSION_DENIED, whatever its request holds (found by
the role matrix, tests/security: RequestSong and BuyMembership checked the song and the days
first, so a caller with no token learnt INVALID_ARGUMENT)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import grpc
import pytest

from chieu.kit.settings import Settings
from chieu.ledger.v1 import ledger_service_pb2 as pb
from chieu.ledger.v1 import ledger_service_pb2_grpc as pb_grpc
from tests.conftest import token
from tests.table.helpers import refused

from .conftest import uid

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
async def stub(ledger_server: str) -> AsyncIterator[pb_grpc.LedgerServiceAsyncStub]:
    ch = grpc.aio.insecure_channel(ledger_server)
    yield pb_grpc.LedgerServiceStub(ch)
    await ch.close()


async def test_paid_services_check_the_caller_before_the_request(
        stub: pb_grpc.LedgerServiceAsyncStub, settings: Settings) -> None:
    victim = uid("victim-")
    mallory = (("authorization", f"Bearer {token(settings, uid('mallory-'))}"),)
    bad_song = pb.RequestSongRequest(request_id=uid(), player_id=victim, song="")
    bad_days = pb.BuyMembershipRequest(request_id=uid(), player_id=victim, days=0)
    for request, call in ((bad_song, stub.RequestSong), (bad_days, stub.BuyMembership)):
        assert await refused(call(request)) == (grpc.StatusCode.UNAUTHENTICATED, "no_token")
        assert await refused(call(request, metadata=mallory)) == (grpc.StatusCode.PERMISSION_DENIED, "not_yours")
