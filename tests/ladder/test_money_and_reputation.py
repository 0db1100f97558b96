"""The ladder beside the ledger and the table, all real: the ladder down refuses a seat at a
ladder table (nothing appended); reputation lowered by quits and disconnects and restored once by
the ledger's paid 信誉度复位; best-level and monthly rewards paid in 金币 through the ledger under
ids that never pay twice."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

import grpc
import pytest

from chieu.kit import names
from chieu.kit.errors import ServiceError
from chieu.kit.outbox import OutboxRelay
from chieu.kit.settings import Settings
from chieu.ladder.consumer import items_of
from chieu.ladder.rewards import decide_month
from chieu.ladder.standings import Store
from chieu.ladder.terms import Terms
from chieu.ladder.v1 import ladder_service_pb2 as lpb
from chieu.ledger.v1 import ledger_service_pb2 as gpb
from chieu.ledger.v1 import ledger_service_pb2_grpc as gpb_grpc
from chieu_tools import localnats
from tests.conftest import credential, nats_connect, token
from tests.ladder.conftest import hand_ended
from tests.ladder.helpers import Ladder, play, uid, until
from tests.table.helpers import client, refused

pytestmark = pytest.mark.integration


async def test_the_ladder_down_refuses_the_seat_and_appends_nothing(settings: Settings, table_server: str,
                                                                     ladder_server: str) -> None:
    from chieu.table.app import build

    down = replace(settings, table_addr=f"127.0.0.1:{localnats.free_port()}",
                   ladder_addr=f"127.0.0.1:{localnats.free_port()}", ladder_check_timeout_s=0.5)
    second = await build(down)  # a table-service replica whose ladder does not answer
    await second.start()
    host = client(settings, table_server, uid("host-"))
    guest = client(settings, down.table_addr, uid("guest-"))
    try:
        view = await host.create("xiangqi", {}, ladder_level=1)
        status, reason = await refused(guest.sit(view.table_id))
        assert (status, reason) == (grpc.StatusCode.UNAVAILABLE, "ladder_unavailable")
        status, reason = await refused(guest.create("xiangqi", {}, ladder_level=1))
        assert (status, reason) == (grpc.StatusCode.UNAVAILABLE, "ladder_unavailable")
        assert (await host.get(view.table_id)).version == view.version
        await guest.sit(await _plain_table(host))  # not a ladder table: the ladder is not asked
    finally:
        await host.close()
        await guest.close()
        await second.shutdown()


async def _plain_table(host: Any) -> str:
    return str((await host.create("xiangqi", {})).table_id)


async def test_reputation_lowered_by_quits_and_restored_once_by_a_paid_reset(
        settings: Settings, table_server: str, ladder_server: str, ledger_server: str) -> None:
    me = uid("rep-")
    ladder = Ladder(settings, ladder_server)
    player = client(settings, table_server, me)
    ledger = grpc.aio.insecure_channel(ledger_server)
    stub = gpb_grpc.LedgerServiceStub(ledger)
    md = (("authorization", f"Bearer {token(settings, me)}"),)
    try:
        for result in ("Q", "X"):
            other = client(settings, table_server, uid("rival-"))
            await play(result, player, me, other, 1)
            await other.close()

        async def reputation() -> lpb.GetReputationResponse | None:
            try:
                r = await ladder.stub.GetReputation(lpb.GetReputationRequest(player_id=me), metadata=ladder.md)
            except grpc.aio.AioRpcError:
                return None
            return r if r.quits == 1 and r.disconnects == 1 else None

        r = await until(reputation)
        assert (r.reputation, r.below_threshold) == (100 - 10 - 5, False)
        await stub.ClaimWelcome(gpb.ClaimWelcomeRequest(player_id=me),
                                metadata=(("authorization", f"Bearer {credential('lobby')}"),))
        for _ in range(2):  # the same request twice: paid once, announced once
            await stub.ResetReputation(gpb.ResetReputationRequest(request_id="r1", player_id=me), metadata=md)

        async def restored() -> bool:
            got = await ladder.stub.GetReputation(lpb.GetReputationRequest(player_id=me), metadata=ladder.md)
            return got.reputation == 100

        await until(restored)
        other = client(settings, table_server, uid("rival-"))
        await play("Q", player, me, other, 1)
        await other.close()

        async def lowered() -> bool:
            got = await ladder.stub.GetReputation(lpb.GetReputationRequest(player_id=me), metadata=ladder.md)
            return got.quits == 2

        await until(lowered)
        got = await ladder.stub.GetReputation(lpb.GetReputationRequest(player_id=me), metadata=ladder.md)
        assert got.reputation == 90  # the reset was not applied again
    finally:
        await ladder.close()
        await player.close()
        await ledger.close()


async def test_reward_ids_never_pay_twice(settings: Settings, ledger_server: str, lpool: Any) -> None:
    store = Store(lpool, Terms(reward_best_coins=10))
    a, b, t = uid("rw-"), uid("rw-"), uid("rwt-")
    stream = uid("REWARDS_")
    january = 1_704_067_200_000 + 14 * 86_400_000  # 2024-01-15
    for hand in range(1, 7):  # six wins: a new best of 2
        rec = hand_ended(t, hand, [a, b], 0, level=1, at_ms=january)
        assert await store.apply(stream, hand, items_of(rec, stream, hand)) == "applied"
    rewards = await decide_month(store, "xiangqi", "2024-01", (30, 20))
    again = await decide_month(store, "xiangqi", "2024-01", (999, 999))  # decided once
    assert [(r["player_id"], r["coins"]) for r in again] == [(r["player_id"], r["coins"]) for r in rewards]
    ours = {r["player_id"]: r["coins"] for r in rewards if r["player_id"] in (a, b)}
    want = {a: 2 * 10 + ours.get(a, 0), b: ours.get(b, 0)}
    nc = await nats_connect(settings.nats_url, "ladder")  # the ladder's own NATS user relays its records
    relay = OutboxRelay(lpool, nc.jetstream(), service="ladder", stream=names.LADDER)
    ledger = grpc.aio.insecure_channel(ledger_server)
    md = (("authorization", f"Bearer {token(settings, 'ops', 'operator')}"),)
    balances: dict[str, int] = {}

    async def paid() -> bool:
        for p in (a, b):
            r = await gpb_grpc.LedgerServiceStub(ledger).GetBalances(gpb.GetBalancesRequest(player_id=p), metadata=md)
            balances[p] = {x.currency: x.amount for x in r.balances}.get("coins", 0)
        return balances == want

    try:
        await relay.ensure()
        while await relay.relay_once():
            pass
        await until(paid)
        # a relay that crashed after publishing, before marking: the records go out again, under new
        # message ids (after the duplicate window), and the ledger pays nothing twice
        await lpool.execute("UPDATE ladder_outbox SET published_at = NULL WHERE topic = 'reward'"
                            " AND payload->>'player_id' = ANY($1)", [a, b])
        for r in await lpool.fetch("SELECT payload FROM ladder_outbox WHERE topic = 'reward'"
                                   " AND payload->>'player_id' = ANY($1)", [a, b]):
            await nc.jetstream().publish(names.LADDER_REWARDS, str(r["payload"]).encode())
        while await relay.relay_once():
            pass
        await asyncio.sleep(1.0)
        assert await paid()
    finally:
        await ledger.close()
        await nc.close()
    assert balances[a] == 2 * 10 + ours.get(a, 0)  # the new best of 2, and the month's place
    assert balances[b] == ours.get(b, 0)
    with pytest.raises(ServiceError) as err:
        await decide_month(store, "xiangqi", "2999-01", (1,))
    assert err.value.reason == "month_not_over"


async def test_monthly_rewards_over_grpc_need_an_operator_and_a_finished_month(settings: Settings,
                                                                             ladder_server: str) -> None:
    ops, player = Ladder(settings, ladder_server), Ladder(settings, ladder_server, "someone", "player")
    try:
        assert await refused(ops.stub.PayMonthlyRewards(lpb.PayMonthlyRewardsRequest(game="xiangqi", month="2999-01"),
                                                        metadata=ops.md)) == (grpc.StatusCode.FAILED_PRECONDITION,
                                                                              "month_not_over")
        assert await refused(ops.stub.PayMonthlyRewards(lpb.PayMonthlyRewardsRequest(game="xiangqi", month="2024-13"),
                                                        metadata=ops.md)) == (grpc.StatusCode.INVALID_ARGUMENT,
                                                                              "bad_month")
        code, _ = await refused(player.stub.PayMonthlyRewards(
            lpb.PayMonthlyRewardsRequest(game="xiangqi", month="2024-01"), metadata=player.md))
        assert code == grpc.StatusCode.PERMISSION_DENIED
    finally:
        await ops.close()
        await player.close()
