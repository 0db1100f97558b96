"""Revocation everywhere (issue 27): a signed-out session is refused by the ledger and the ladder
(as by the table) within ``CHIEU_REVOCATION_POLL_S``, through the one list of the kit
(:mod:`chieu.kit.revocations`); ``ListRevocations`` answers services only, and only hashes.

Seen before: ``RequestSong`` spent 20 金币 three seconds after ``SignOut``, and the ladder still
accepted the token; any player could list other players' ids, session ids and token hashes.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import grpc
import pytest

from chieu.kit.settings import Settings
from chieu.ladder.v1 import ladder_service_pb2 as dpb
from chieu.ladder.v1 import ladder_service_pb2_grpc as dpb_grpc
from chieu.ledger.v1 import ledger_service_pb2 as gpb
from chieu.ledger.v1 import ledger_service_pb2_grpc as gpb_grpc
from chieu.lobby.v1 import lobby_service_pb2 as pb
from chieu.lobby.v1 import lobby_service_pb2_grpc as pb_grpc
from tests.conftest import credential, token

pytestmark = pytest.mark.integration

SLACK_S = 2.5
"""What the check may take beyond the poll interval on a loaded machine (a poll's round trip, the
test's own calls)."""


def bearer(t: str) -> tuple[tuple[str, str]]:
    return (("authorization", f"Bearer {t}"),)


def reason(e: grpc.aio.AioRpcError) -> str:
    return str(dict(e.trailing_metadata() or ()).get("chieu-reason", ""))


async def refused_within(call: Callable[[], Awaitable[Any]], within_s: float) -> float:
    """Seconds until ``call`` is refused with ``session_revoked`` (polled every 50 ms); fails
    if it is still answered after ``within_s``."""
    start = time.monotonic()
    while True:
        try:
            await call()
        except grpc.aio.AioRpcError as e:
            assert (e.code(), reason(e)) == (grpc.StatusCode.UNAUTHENTICATED, "session_revoked"), e.details()
            return time.monotonic() - start
        assert time.monotonic() - start < within_s, f"still honoured {within_s:.1f} s after the sign-out"
        await asyncio.sleep(0.05)


async def test_the_ledger_and_the_ladder_refuse_a_signed_out_session(
        channels: dict[str, grpc.aio.Channel], settings: Settings) -> None:
    lobby = pb_grpc.LobbyServiceStub(channels["lobby"])
    ledger = gpb_grpc.LedgerServiceStub(channels["ledger"])
    ladder = dpb_grpc.LadderServiceStub(channels["ladder"])
    s = (await lobby.SignInGuest(pb.SignInGuestRequest(device_id=f"revoke-{uuid.uuid4().hex[:10]}"))).session
    me, md = s.player.player_id, bearer(s.access_token)
    before = await ledger.GetBalances(gpb.GetBalancesRequest(player_id=me), metadata=md)  # honoured while signed in
    coins = {b.currency: b.amount for b in before.balances}.get("coins", 0)
    assert coins == settings.welcome_coins
    await ladder.GetStanding(dpb.GetStandingRequest(player_id=me, game="phom"), metadata=md)

    await lobby.SignOut(pb.SignOutRequest(), metadata=md)
    within = settings.revocation_poll_s + SLACK_S
    took = await refused_within(lambda: ledger.GetBalances(gpb.GetBalancesRequest(player_id=me), metadata=md), within)
    await refused_within(lambda: ladder.GetStanding(dpb.GetStandingRequest(player_id=me, game="phom"), metadata=md),
                         within)
    # and it spends nothing: the song of issue 27 is refused, the coins are all there
    await refused_within(lambda: ledger.RequestSong(gpb.RequestSongRequest(
        request_id="song-1", player_id=me, song="Trống Cơm", target="table-1"), metadata=md), 0.0)
    after = await ledger.GetBalances(gpb.GetBalancesRequest(player_id=me),
                                     metadata=bearer(token(settings, "ops-rev", "operator")))
    assert {b.currency: b.amount for b in after.balances}.get("coins", 0) == coins
    assert took < within


async def test_an_operators_revocation_reaches_the_ledger(channels: dict[str, grpc.aio.Channel],
                                                          settings: Settings) -> None:
    lobby = pb_grpc.LobbyServiceStub(channels["lobby"])
    ledger = gpb_grpc.LedgerServiceStub(channels["ledger"])
    s = (await lobby.SignInGuest(pb.SignInGuestRequest(device_id=f"revoke-{uuid.uuid4().hex[:10]}"))).session
    me, md = s.player.player_id, bearer(s.access_token)
    await ledger.GetHistory(gpb.GetHistoryRequest(player_id=me), metadata=md)
    await lobby.RevokeSessions(pb.RevokeSessionsRequest(player_id=me, reason="stolen phone"),
                               metadata=bearer(token(settings, "ops-rev", "operator")))
    await refused_within(lambda: ledger.GetHistory(gpb.GetHistoryRequest(player_id=me), metadata=md),
                         settings.revocation_poll_s + SLACK_S)


async def test_list_revocations_is_for_services_and_tells_no_ids(channels: dict[str, grpc.aio.Channel],
                                                                 settings: Settings) -> None:
    lobby = pb_grpc.LobbyServiceStub(channels["lobby"])
    s = (await lobby.SignInGuest(pb.SignInGuestRequest(device_id=f"revoke-{uuid.uuid4().hex[:10]}"))).session
    await lobby.SignOut(pb.SignOutRequest(), metadata=bearer(s.access_token))
    other = (await lobby.SignInGuest(pb.SignInGuestRequest(device_id=f"revoke-{uuid.uuid4().hex[:10]}"))).session
    for who in (bearer(other.access_token), bearer(token(settings, "ops-rev", "operator")),
                bearer(token(settings, "aud-rev", "auditor"))):
        with pytest.raises(grpc.aio.AioRpcError) as e:
            await lobby.ListRevocations(pb.ListRevocationsRequest(), metadata=who)
        assert (e.value.code(), reason(e.value)) == (grpc.StatusCode.PERMISSION_DENIED, "role_required")
    seen, cursor = [], 0
    while True:
        r = await lobby.ListRevocations(pb.ListRevocationsRequest(after_cursor=cursor),
                                        metadata=bearer(credential("ledger")))
        seen += list(r.revocations)
        if not r.revocations:
            break
        cursor = r.next_cursor
    assert hashlib.sha256(s.access_token.encode()).digest() in {x.token_sha256 for x in seen}
    assert all(not x.session_id and not x.player_id for x in seen)
