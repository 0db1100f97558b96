"""Sessions over gRPC: guests and accounts, the welcome 金币 once, token rotation and reuse,
sign-out, an operator's revocation, the sign-in failure limit, and bad input of each call."""

from __future__ import annotations

import asyncio
import hashlib
from typing import Any

import grpc

from chieu.kit import auth
from chieu.kit.settings import Settings
from chieu.ledger.v1 import ledger_service_pb2 as lpb
from chieu.ledger.v1 import ledger_service_pb2_grpc as lgrpc
from chieu.lobby.v1 import lobby_service_pb2 as pb
from tests.conftest import credential, token
from tests.lobby.conftest import bearer, guest, refused, uid

Stub = Any


async def coins(settings: Settings, player_id: str) -> int:
    async with grpc.aio.insecure_channel(settings.ledger_addr) as ch:
        r = await lgrpc.LedgerServiceStub(ch).GetBalances(lpb.GetBalancesRequest(player_id=player_id),
                                                          metadata=bearer(token(settings, player_id)))
    return {b.currency: b.amount for b in r.balances}.get("coins", 0)


async def test_guest_sign_in_pays_the_welcome_coins_once(stub: Stub, settings: Settings) -> None:
    device = uid("device-")
    first = await guest(stub, device, "Lan")
    assert first.player.guest and first.player.name == "Lan" and first.player.player_id.startswith("g-")
    assert first.welcome_coins == 200
    again = await guest(stub, device)
    assert again.player.player_id == first.player.player_id and again.welcome_coins == 0
    assert again.session_id != first.session_id
    assert await coins(settings, first.player.player_id) == 200  # GC-4
    who = auth.verify(auth.public_keys(settings), first.access_token)
    assert who.player_id == first.player.player_id and who.roles == {"player"}
    assert who.sid == first.session_id and who.jti and who.exp * 1000 == first.access_expires_ms


async def test_two_sign_ins_at_once_pay_once(stub: Stub, settings: Settings) -> None:
    device = uid("device-")
    both = await asyncio.gather(*(guest(stub, device) for _ in range(4)))
    assert len({s.player.player_id for s in both}) == 1
    assert sorted(s.welcome_coins for s in both) == [0, 0, 0, 200]
    assert await coins(settings, both[0].player.player_id) == 200

    name, password = uid("u"), "correct horse"
    reg = (await stub.Register(pb.RegisterRequest(username=name, password=password, device_id=uid("device-")))).session
    assert reg.welcome_coins == 200 and not reg.player.guest
    signs = await asyncio.gather(*(stub.SignIn(pb.SignInRequest(username=name.upper(), password=password,
                                                                  device_id=uid("device-"))) for _ in range(3)))
    assert {s.session.player.player_id for s in signs} == {reg.player.player_id}
    assert all(s.session.welcome_coins == 0 for s in signs)
    assert await coins(settings, reg.player.player_id) == 200


async def test_accounts_and_wrong_passwords(stub: Stub, settings: Settings) -> None:
    name, device = uid("acc"), uid("device-")
    await stub.Register(pb.RegisterRequest(username=name, password="pass-word-1", device_id=device, name="Minh"))
    await refused(stub.Register(pb.RegisterRequest(username=name.upper(), password="pass-word-2", device_id=device)),
                  grpc.StatusCode.ALREADY_EXISTS, "username_taken")
    await refused(stub.SignIn(pb.SignInRequest(username=name, password="wrong-pass", device_id=device)),
                  grpc.StatusCode.UNAUTHENTICATED, "bad_credentials")
    await refused(stub.SignIn(pb.SignInRequest(username=uid("nobody"), password="wrong-pass", device_id=device)),
                  grpc.StatusCode.UNAUTHENTICATED, "bad_credentials")
    ok = await stub.SignIn(pb.SignInRequest(username=name, password="pass-word-1", device_id=device))
    assert ok.session.player.name == "Minh"


async def test_too_many_failures_are_refused_with_a_retry_time(stub: Stub, settings: Settings) -> None:
    """Failures from many devices at one address (127.0.0.1): that address's count for the account
    delays new devices there, never the owner's known device (tests/lobby/test_abuse.py: the delay
    growing, the stranger elsewhere)."""
    name, phone = uid("victim"), uid("device-")
    await stub.Register(pb.RegisterRequest(username=name, password="the-right-one", device_id=phone))
    limit = settings.lobby_signin_failures
    for _ in range(limit):  # from many devices: the (account, address) count
        await refused(stub.SignIn(pb.SignInRequest(username=name, password="guess-guess", device_id=uid("device-"))),
                      grpc.StatusCode.UNAUTHENTICATED, "bad_credentials")
    e = await refused(stub.SignIn(pb.SignInRequest(username=name, password="the-right-one", device_id=uid("dev-"))),
                      grpc.StatusCode.RESOURCE_EXHAUSTED, "too_many_attempts")
    assert "retry_after_ms=" in (e.details() or "")
    assert 0 < int(dict(e.trailing_metadata() or ())["retry-after-ms"]) <= settings.lobby_signin_delay_s * 1000 + 1
    ok = await stub.SignIn(pb.SignInRequest(username=name, password="the-right-one", device_id=phone))
    assert ok.session.player.name  # the device that registered the account is known to it
    # one device guessing many accounts: the device's own count (4x the free failures)
    device = uid("device-")
    for _ in range(4 * limit):
        await refused(stub.SignIn(pb.SignInRequest(username=uid("x"), password="guess-guess", device_id=device)),
                      grpc.StatusCode.UNAUTHENTICATED, "bad_credentials")
    await refused(stub.SignIn(pb.SignInRequest(username=uid("x"), password="guess-guess", device_id=device)),
                  grpc.StatusCode.RESOURCE_EXHAUSTED, "too_many_attempts")
    await refused(stub.SignInGuest(pb.SignInGuestRequest(device_id=device)), grpc.StatusCode.RESOURCE_EXHAUSTED,
                  "too_many_attempts")


async def test_refresh_rotates_and_a_reused_token_revokes_the_family(stub: Stub, settings: Settings) -> None:
    s1 = await guest(stub)
    s2 = (await stub.Refresh(pb.RefreshRequest(refresh_token=s1.refresh_token))).session
    assert s2.session_id == s1.session_id and s2.refresh_token != s1.refresh_token
    assert s2.player.player_id == s1.player.player_id
    s3 = (await stub.Refresh(pb.RefreshRequest(refresh_token=s2.refresh_token))).session
    check = await stub.CheckSession(pb.CheckSessionRequest(access_token=s3.access_token),
                                    metadata=bearer(s3.access_token))
    assert check.active and check.session_id == s1.session_id
    # the old refresh token again: refused, and the whole family is revoked
    await refused(stub.Refresh(pb.RefreshRequest(refresh_token=s1.refresh_token)), grpc.StatusCode.UNAUTHENTICATED,
                  "refresh_reused")
    await refused(stub.Refresh(pb.RefreshRequest(refresh_token=s3.refresh_token)), grpc.StatusCode.UNAUTHENTICATED,
                  "session_revoked")
    for s in (s1, s2, s3):
        r = await stub.CheckSession(pb.CheckSessionRequest(access_token=s.access_token),
                                    metadata=bearer(token(settings, "table-service", "operator")))
        assert not r.active
    revoked = await _revoked(stub, settings)
    assert {hashlib.sha256(s.access_token.encode()).digest() for s in (s1, s2, s3)} <= revoked


async def _revoked(stub: Stub, settings: Settings) -> set[bytes]:
    out: set[bytes] = set()
    cursor = 0
    while True:
        r = await stub.ListRevocations(pb.ListRevocationsRequest(after_cursor=cursor, limit=500),
                                       metadata=bearer(credential("table")))
        assert all(not x.session_id and not x.player_id for x in r.revocations)  # hashes only, never whose
        out |= {x.token_sha256 for x in r.revocations}
        if not r.revocations:
            return out
        cursor = r.next_cursor


async def test_sign_out_and_operator_revocation(stub: Stub, settings: Settings, operator: object) -> None:
    s = await guest(stub)
    r = await stub.SignOut(pb.SignOutRequest(), metadata=bearer(s.access_token))
    assert r.session_id == s.session_id
    await refused(stub.Refresh(pb.RefreshRequest(refresh_token=s.refresh_token)), grpc.StatusCode.UNAUTHENTICATED,
                  "session_revoked")
    device = uid("device-")
    a, b = await guest(stub, device), await guest(stub, device)
    other = await guest(stub)
    await refused(stub.SignOut(pb.SignOutRequest(refresh_token=a.refresh_token), metadata=bearer(other.access_token)),
                  grpc.StatusCode.PERMISSION_DENIED, "not_yours")
    await refused(stub.RevokeSessions(pb.RevokeSessionsRequest(player_id=a.player.player_id, reason="x"),
                                      metadata=bearer(a.access_token)), grpc.StatusCode.PERMISSION_DENIED,
                  "role_required")
    await refused(stub.RevokeSessions(pb.RevokeSessionsRequest(player_id=a.player.player_id, reason=" "),
                                      metadata=operator), grpc.StatusCode.INVALID_ARGUMENT, "reason_required")
    await refused(stub.RevokeSessions(pb.RevokeSessionsRequest(player_id=a.player.player_id, reason="x\x1b[2J"),
                                      metadata=operator), grpc.StatusCode.INVALID_ARGUMENT, "bad_reason")
    n = await stub.RevokeSessions(pb.RevokeSessionsRequest(player_id=a.player.player_id, reason="stolen phone"),
                                  metadata=operator)
    assert n.revoked == 2
    for x in (a, b):
        await refused(stub.Refresh(pb.RefreshRequest(refresh_token=x.refresh_token)),
                      grpc.StatusCode.UNAUTHENTICATED, "session_revoked")
    assert (await stub.CheckSession(pb.CheckSessionRequest(access_token=other.access_token),
                                    metadata=bearer(other.access_token))).active


async def test_bad_input_of_session_calls(stub: Stub, settings: Settings) -> None:
    IA, UA = grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.UNAUTHENTICATED
    await refused(stub.SignInGuest(pb.SignInGuestRequest(device_id="short")), IA, "bad_device_id")
    await refused(stub.SignInGuest(pb.SignInGuestRequest(device_id="x" * 129)), IA, "bad_device_id")
    await refused(stub.SignInGuest(pb.SignInGuestRequest(device_id=uid("device-"), name="n" * 41)), IA, "name_too_long")
    await refused(stub.Register(pb.RegisterRequest(username="a b", password="long-enough", device_id=uid("dev-"))),
                  IA, "bad_username")
    await refused(stub.Register(pb.RegisterRequest(username=uid("u"), password="short", device_id=uid("dev-"))),
                  IA, "bad_password")
    await refused(stub.SignIn(pb.SignInRequest(username="", password="x", device_id=uid("dev-"))), IA,
                  "bad_credentials")
    await refused(stub.Refresh(pb.RefreshRequest(refresh_token="nonsense")), UA, "bad_refresh_token")
    await refused(stub.Refresh(pb.RefreshRequest(refresh_token="r1.unknown")), UA, "bad_refresh_token")
    await refused(stub.SignOut(pb.SignOutRequest()), UA, "no_token")
    await refused(stub.ListZones(pb.ListZonesRequest(), metadata=(("authorization", "Bearer v1.x.y"),)), UA,
                  "malformed_token")
    expired = token(settings, "p1", ttl_s=-10)
    await refused(stub.ListZones(pb.ListZonesRequest(), metadata=bearer(expired)), UA, "token_expired")
    forged = auth.Signer.generate().sign("p1", ("player",))
    await refused(stub.ListZones(pb.ListZonesRequest(), metadata=bearer(forged)), UA, "unknown_key")
    s = await guest(stub)
    await refused(stub.CheckSession(pb.CheckSessionRequest(), metadata=bearer(s.access_token)), IA,
                  "bad_access_token")
    assert not (await stub.CheckSession(pb.CheckSessionRequest(access_token="v1.a.b"),
                                        metadata=bearer(s.access_token))).active
    await refused(stub.ListRevocations(pb.ListRevocationsRequest(limit=10_001), metadata=bearer(credential("table"))),
                  IA, "bad_page_size")
    beyond = pb.ListRevocationsRequest(after_cursor=2**64 - 2)  # past bigint (the fuzz found INTERNAL)
    r = await stub.ListRevocations(beyond, metadata=bearer(credential("table")))
    assert not r.revocations and r.next_cursor == 2**64 - 2
    await refused(stub.SignOut(pb.SignOutRequest(), metadata=bearer(token(settings, "dev-player"))),
                  grpc.StatusCode.FAILED_PRECONDITION, "no_session")
