"""Service-to-service credentials over the real services: each service calls with its own
credential (role ``service``, subject ``service:<name>``), each RPC admits only the callers the
README's table "RPC → who may call" lists, a service credential never passes for an operator or a
player, and the services that only verify hold no private key."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from dataclasses import replace

import grpc
import pytest

from chieu.kit import auth
from chieu.kit.settings import Settings
from chieu.ladder.v1 import ladder_service_pb2 as lpb
from chieu.ladder.v1 import ladder_service_pb2_grpc as lpb_grpc
from chieu.ledger.v1 import ledger_service_pb2 as gpb
from chieu.ledger.v1 import ledger_service_pb2_grpc as gpb_grpc
from chieu.table.v1 import table_service_pb2 as tpb
from chieu.table.v1 import table_service_pb2_grpc as tpb_grpc
from tests.conftest import credential, token
from tests.table.helpers import refused

pytestmark = pytest.mark.integration

DENIED = grpc.StatusCode.PERMISSION_DENIED


def md(tok: str) -> tuple[tuple[str, str]]:
    return (("authorization", f"Bearer {tok}"),)


def uid(prefix: str) -> str:
    return f"{prefix}{uuid.uuid4().hex[:10]}"


@pytest.fixture(scope="module")
async def ledger(ledger_server: str) -> AsyncIterator[gpb_grpc.LedgerServiceAsyncStub]:
    ch = grpc.aio.insecure_channel(ledger_server)
    yield gpb_grpc.LedgerServiceStub(ch)
    await ch.close()


@pytest.fixture(scope="module")
async def ladder(ladder_server: str) -> AsyncIterator[lpb_grpc.LadderServiceAsyncStub]:
    ch = grpc.aio.insecure_channel(ladder_server)
    yield lpb_grpc.LadderServiceStub(ch)
    await ch.close()


def test_the_services_that_only_verify_hold_no_private_key(settings: Settings) -> None:
    """The table (the shared test settings are the table's), the ledger and the ladder are given
    the public keys and their own credential, never the private key: they cannot mint."""
    assert settings.token_public_keys and settings.service_token and not settings.token_private_key
    with pytest.raises(ValueError, match="no private key"):
        auth.signer(settings)
    table = auth.verify(auth.public_keys(settings), settings.service_token)
    assert table.service == "table" and table.roles == {"service"}


async def test_a_service_credential_cannot_call_operator_only_rpcs(
        settings: Settings, ledger: gpb_grpc.LedgerServiceAsyncStub, ladder: lpb_grpc.LadderServiceAsyncStub) -> None:
    p = uid("cred-")
    for name in ("table", "ladder", "lobby", "ledger"):
        svc = md(credential(name))
        assert await refused(ledger.Adjust(gpb.AdjustRequest(
            adjustment_id=uid("adj-"), player_id=p, currency="coins", delta=1_000, reason="x"), metadata=svc)) == (
            DENIED, "role_required")
        assert await refused(ledger.CreditPurchase(gpb.CreditPurchaseRequest(
            payment_id=uid("pay-"), player_id=p, hearts=5), metadata=svc)) == (DENIED, "role_required")
        assert await refused(ledger.Audit(gpb.AuditRequest(), metadata=svc)) == (DENIED, "role_required")
        assert await refused(ladder.Correct(lpb.CorrectRequest(
            correction_id=uid("fix-"), player_id=p, game="xiangqi", reason="x",
            standing=lpb.Standing(level=9, best=9)), metadata=svc)) == (DENIED, "role_required")
        assert await refused(ladder.PayMonthlyRewards(lpb.PayMonthlyRewardsRequest(game="xiangqi", month="2024-01"),
                                                      metadata=svc)) == (DENIED, "role_required")
        # nor spend a player's money
        assert await refused(ledger.RequestSong(gpb.RequestSongRequest(
            player_id=p, request_id=uid("r-"), song="x"), metadata=svc)) == (DENIED, "not_yours")


async def test_no_service_credential_mints_coins_credit_reward_is_the_operators_only(
        settings: Settings, ledger: gpb_grpc.LedgerServiceAsyncStub) -> None:
    """Issue 27: the ladder's credential credited 1,000,000 金币 to anyone. Now no service credential
    (the ladder's included) may call CreditReward, and the refused calls credit nothing."""
    p = uid("rwd-")

    def reward(coins: int = 7) -> gpb.CreditRewardRequest:
        return gpb.CreditRewardRequest(reward_id=uid("r-"), player_id=p, coins=coins, reason="test")

    for caller in (credential("ladder"), credential("table"), credential("lobby"), credential("ledger"),
                   token(settings, p), token(settings, "aud", "auditor")):
        assert await refused(ledger.CreditReward(reward(1_000_000), metadata=md(caller))) == (DENIED, "role_required")
    operator = md(token(settings, "ops", "operator"))
    got = await ledger.GetBalances(gpb.GetBalancesRequest(player_id=p), metadata=operator)
    assert [b.amount for b in got.balances if b.currency == "coins"] == []  # nothing minted
    r = await ledger.CreditReward(reward(), metadata=operator)
    assert [b.amount for b in r.result.balances if b.currency == "coins"] == [7]


async def test_each_peer_call_is_allowed_to_the_services_that_make_it(
        settings: Settings, ledger: gpb_grpc.LedgerServiceAsyncStub, ladder: lpb_grpc.LadderServiceAsyncStub) -> None:
    p, other = uid("peer-"), uid("peer-")
    table, lobby, player = md(credential("table")), md(credential("lobby")), md(token(settings, p))
    # the table's gates: the gà pot, 金币 eligibility, the ladder's seat check and reputation
    await ledger.GetPot(gpb.GetPotRequest(table_id=uid("t-")), metadata=table)
    assert await refused(ledger.GetPot(gpb.GetPotRequest(table_id=uid("t-")), metadata=player)) == (
        DENIED, "role_required")
    await ledger.CheckEligibility(gpb.CheckEligibilityRequest(player_id=other), metadata=table)
    await ladder.CheckSeat(lpb.CheckSeatRequest(game="xiangqi", table_level=1, player_ids=[p]), metadata=table)
    assert await refused(ladder.CheckSeat(lpb.CheckSeatRequest(game="xiangqi", table_level=1, player_ids=[p]),
                                          metadata=player)) == (DENIED, "role_required")
    await ladder.GetReputation(lpb.GetReputationRequest(player_id=other), metadata=table)
    # the lobby's: welcome coins, balances, standings, reputation
    await ledger.ClaimWelcome(gpb.ClaimWelcomeRequest(player_id=other), metadata=lobby)
    await ledger.GetBalances(gpb.GetBalancesRequest(player_id=other), metadata=lobby)
    await ladder.GetStanding(lpb.GetStandingRequest(player_id=other, game="xiangqi"), metadata=lobby)
    # … and not to the others
    assert await refused(ledger.ClaimWelcome(gpb.ClaimWelcomeRequest(player_id=other), metadata=table)) == (
        DENIED, "role_required")  # the lobby's and an operator's only (issue 27)
    assert await refused(ledger.GetBalances(gpb.GetBalancesRequest(player_id=other), metadata=table)) == (
        DENIED, "not_yours")
    assert await refused(ledger.GetHistory(gpb.GetHistoryRequest(player_id=other), metadata=lobby)) == (
        DENIED, "not_yours")
    assert await refused(ladder.GetStanding(lpb.GetStandingRequest(player_id=other, game="xiangqi"),
                                            metadata=table)) == (DENIED, "not_yours")
    # a service has no account of its own to default to
    assert (await refused(ledger.CheckEligibility(gpb.CheckEligibilityRequest(), metadata=table)))[1] == \
        "bad_player_id"


async def test_the_table_refuses_a_service_credential_as_a_player(table_server: str) -> None:
    async with grpc.aio.insecure_channel(table_server) as ch:
        stub = tpb_grpc.TableServiceStub(ch)
        for name in ("lobby", "ladder"):
            assert await refused(stub.GetTable(tpb.GetTableRequest(table_id="t"), metadata=md(credential(name)))) == (
                DENIED, "not_a_player")


async def test_the_table_asks_the_ledger_with_its_own_credential(settings: Settings, ledger_server: str) -> None:
    """With its credential the table's peer call passes; without one the ledger refuses it and the
    gate is UNAVAILABLE (never passed blindly, never a token the table signs itself)."""
    from chieu.kit.errors import ServiceError
    from chieu.table.peers import Peers

    own = Peers(replace(settings, ledger_addr=ledger_server))
    bare = Peers(replace(settings, service_token="", ledger_addr=ledger_server))
    try:
        assert await own.ledger_pot(uid("t-")) == 0
        with pytest.raises(ServiceError) as err:
            await bare.ledger_pot(uid("t-"))
        assert err.value.reason == "ledger_unavailable" and "UNAUTHENTICATED" in err.value.message
    finally:
        await own.close()
        await bare.close()
