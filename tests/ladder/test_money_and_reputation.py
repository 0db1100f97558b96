"""The ladder beside the ledger and the table, all real: the ladder down refuses a seat at a
ladder table (nothing appended); reputation lowered by quits and disconnects and restored once by
the ledger's paid 信誉度复位; best-level and monthly rewards paid in 金币 through the ledger under
ids that never pay twice."""

from __future__ import annotations

import asyncio
import json
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


async def test_reward_ids_never_pay_twice(settings: Settings, table_server: str, ledger_server: str,
                                          ladder_server: str, lpool: Any) -> None:
    """A best level paid once its record proves it from the table log, never twice; a record whose
    source the table log does not hold pays nothing; a month's places paid by the operator's
    PayMonthlyRewards (the ladder passes the operator's token on to CreditReward), once."""
    store = Store(lpool, Terms(reward_best_coins=10))
    a, b, t = uid("rw-"), uid("rw-"), uid("rwt-")
    stream = uid("REWARDS_")
    january = 1_704_067_200_000 + 14 * 86_400_000  # 2024-01-15
    for hand in range(1, 7):  # six wins: a new best of 2, its source a record this stream does not hold
        rec = hand_ended(t, hand, [a, b], 0, level=1, at_ms=january)
        assert await store.apply(stream, hand, items_of(rec, stream, hand)) == "applied"
    month = await decide_month(store, "xiangqi", "2024-01", (30, 20))
    ours = {r["player_id"]: r["coins"] for r in month if r["player_id"] in (a, b)}
    nc = await nats_connect(settings.nats_url, "ladder")  # the ladder's own NATS user relays its records
    table = await nats_connect(settings.nats_url, "table")  # the table's writes the hand that proves it
    relay = OutboxRelay(lpool, nc.jetstream(), service="ladder", stream=names.LADDER)
    ledger = grpc.aio.insecure_channel(ledger_server)
    ladder = Ladder(settings, ladder_server)
    md = (("authorization", f"Bearer {token(settings, 'ops', 'operator')}"),)
    rid = f"ladder/best/xiangqi/{a}/2"
    balances: dict[str, int] = {}

    async def coins() -> dict[str, int]:
        for p in (a, b):
            r = await gpb_grpc.LedgerServiceStub(ledger).GetBalances(gpb.GetBalancesRequest(player_id=p), metadata=md)
            balances[p] = {x.currency: x.amount for x in r.balances}.get("coins", 0)
        return balances

    async def refused_unproven() -> bool:
        return bool(await lpool.fetchval("SELECT count(*) FROM ledger_inbox WHERE posting_id = $1"
                                         " AND outcome = 'refused:reward_unproven'", f"reward/{rid}"))

    try:
        await relay.ensure()
        while await relay.relay_once():
            pass
        await until(refused_unproven)
        assert (await coins())[a] == 0  # the ladder's record alone paid nothing
        # the six hands as the table logged them: the sixth raised a's best (the ledger folds the
        # ladder's rules over the table log), and the record, sent again naming it, now proves it
        for hand in range(1, 7):
            proof = hand_ended(t, hand, [a, b], 0, level=1, at_ms=january)
            seq = int((await table.jetstream().publish(names.TABLES.subject(t), proof.SerializeToString())).seq)
        row = await lpool.fetchrow("SELECT id, payload FROM ladder_outbox WHERE topic = 'reward'"
                                   " AND payload->>'reward_id' = $1", rid)
        payload = json.loads(row["payload"]) | {"source": {"table_id": t, "hand_no": 6, "stream_seq": seq}}
        for _ in range(2):  # published twice (a relay that crashed after publishing): paid once
            await nc.jetstream().publish(names.LADDER_REWARDS, json.dumps(payload).encode())

        async def paid() -> bool:
            return (await coins())[a] == 20

        await until(paid)
        # the month's places: paid by the operator through the ladder, once however often asked
        for _ in range(2):
            await ladder.stub.PayMonthlyRewards(lpb.PayMonthlyRewardsRequest(game="xiangqi", month="2024-01"),
                                                metadata=ladder.md)
        await asyncio.sleep(1.0)
        assert await coins() == {a: 20 + ours.get(a, 0), b: ours.get(b, 0)}
        assert not await lpool.fetchval("SELECT count(*) FROM ladder_rewards WHERE reward_id LIKE $1"
                                        " AND paid_at IS NULL AND player_id = ANY($2)", "ladder/monthly/%", [a, b])
    finally:
        await ledger.close()
        await ladder.close()
        await nc.close()
        await table.close()
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
