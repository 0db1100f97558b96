"""Issue 27, no credential mints money: the ledger pays a ladder reward only from the ladder's
record on NATS, exactly once, within a daily cap per player; an operator holds a flagged
player's 金币 for review. Real nats-server and PostgreSQL."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest
from nats.js import api

from chieu.games.v1 import games_pb2
from chieu.kit import names
from chieu.kit.errors import ServiceError
from chieu.kit.settings import Settings
from chieu.ladder.rules import Params
from chieu.ledger import books as b
from chieu.ledger import rewards
from chieu.ledger.books import Books, Leg, Posting
from chieu.ledger.rewards import RewardConsumer
from chieu.ledger.v1 import ledger_service_pb2 as gpb
from chieu.ledger.v1 import ledger_service_pb2_grpc as gpb_grpc
from chieu.table.v1 import log_pb2
from tests.conftest import nats_connect, token
from tests.ledger.conftest import until
from tests.table.helpers import refused

pytestmark = pytest.mark.integration


def uid(prefix: str = "") -> str:
    return f"{prefix}{uuid.uuid4().hex[:10]}"


BEST_COINS = 10
"""``CHIEU_LADDER_REWARD_BEST_COINS`` of these tests' consumers: a best level L pays 10 × L."""
PARAMS = Params(up=1)
"""The ladder's parameters of these tests' consumers: lp above 1 (two wins) takes a level."""


class Records:
    """A stream of reward records of its own (the ladder's subject layout), published as the ladder's
    relay does, with a table log of its own holding the hand each reward names as its source (won
    by the player at a ladder table one level below the reward's), and a consumer of both."""

    def __init__(self, js: Any, stream: str, prefix: str, tables: names.Stream) -> None:
        self.js, self.stream, self.prefix, self.tables = js, stream, prefix, tables
        self.sources: dict[tuple[str, int], dict[str, Any]] = {}
        """(player, level) → the win that took the player there (their climb so far)."""

    async def climb(self, player: str, level: int) -> dict[str, Any]:
        """``player``'s wins up to ``level`` in the table log, as the ladder counts them (at
        :data:`PARAMS`, two wins at a level's tables take a player to the next): the source of the
        reward for ``level``, the win that reached it."""
        at = max([lv for p, lv in self.sources if p == player], default=1)
        while at < level:
            for _ in range(PARAMS.up + 1):
                won = await self.won(player, at)
            at += 1
            self.sources[(player, at)] = won
        return self.sources[(player, level)]

    async def won(self, player: str, level: int, game: str = "xiangqi") -> dict[str, Any]:
        """A hand ``player`` won at a ladder table of ``level``, in the table log: its source."""
        table = uid("t")
        rec = log_pb2.Record(table_id=table, version=9, actor="system", game=game)
        o = games_pb2.Outcome(winner=0, ranking=[0, 1], scores=[2, -2], reason="checkmate")
        rec.events.add().hand_ended.CopyFrom(log_pb2.HandEnded(hand_no=1, outcome=o, players=[player, uid("x")],
                                                               ladder_level=level))
        ack = await self.js.publish(self.tables.subject(table), rec.SerializeToString())
        return {"table_id": table, "hand_no": 1, "stream_seq": int(ack.seq)}

    async def publish(self, reward_id: str, player: str, coins: Any, reason: str = "过关斩将 test",
                      msg_id: str = "", source: dict[str, Any] | None = None) -> int:
        level = reward_id.rsplit("/", 1)[-1]
        if source is None and level.isdigit() and int(level) > 1:
            source = await self.climb(player, int(level))
        body = json.dumps({"reward_id": reward_id, "player_id": player, "coins": coins, "reason": reason,
                           "game": "xiangqi", "kind": "best", "source": source}).encode()
        ack = await self.js.publish(f"{self.prefix}.reward", body, headers={"Nats-Msg-Id": msg_id or uid("m")})
        return int(ack.seq)

    def consumer(self, books: Books, cap: int) -> RewardConsumer:
        return RewardConsumer(books, self.js, daily_cap=cap, best_coins=BEST_COINS, durable=uid("d"),
                              stream=self.stream, subject=f"{self.prefix}.reward", tables=self.tables, ack_wait_s=2.0,
                              params=PARAMS)


@pytest.fixture
async def records(nats_url: str) -> AsyncIterator[Records]:
    nc = await nats_connect(nats_url)  # the test-only admin: a stream of its own
    js = nc.jetstream()
    name, prefix = uid("REWARDTEST_").upper(), uid("rw")
    tables = names.Stream(uid("TABLETEST_").upper(), uid("tt"))
    await js.add_stream(api.StreamConfig(name=name, subjects=[f"{prefix}.>"], storage=api.StorageType.FILE,
                                         duplicate_window=1.0))
    await js.add_stream(api.StreamConfig(name=tables.name, subjects=[tables.subjects], storage=api.StorageType.FILE))
    try:
        yield Records(js, name, prefix, tables)
    finally:
        await js.delete_stream(name)
        await js.delete_stream(tables.name)
        await nc.close()


async def coins(books: Books, player: str) -> int:
    return await books.balance(b.player(b.COINS, player)) or 0


async def test_a_reward_record_is_paid_exactly_once(books: Books, records: Records) -> None:
    me = uid("p-")
    rid = f"ladder/best/xiangqi/{me}/2"
    consumer = records.consumer(books, cap=10_000)
    await consumer.start()
    try:
        await records.publish(rid, me, 20)
        await records.publish(rid, me, 20)  # published again under a new sequence: the posting is found
        await until(lambda: _equal(coins(books, me), 20))
        await until(lambda: _done(consumer, 2))
        assert consumer.paid == 1
        posting = await books.pool.fetchrow("SELECT actor, memo FROM ledger_postings WHERE id = $1", f"reward/{rid}")
        assert dict(posting) == {"actor": "service:ladder", "memo": "过关斩将 test"}  # as the audit expects it
    finally:
        await consumer.stop()
    assert await coins(books, me) == 20


async def test_the_daily_cap_defers_a_reward_to_the_next_day_and_refuses_one_over_it_alone(
        books: Books, records: Records) -> None:
    me = uid("p-")
    consumer = records.consumer(books, cap=100)
    await consumer.start()
    try:
        for level in (6, 3, 2, 15):  # 60, 30, 20 and 150 金币 (10 a level)
            await records.publish(f"ladder/best/xiangqi/{me}/{level}", me, BEST_COINS * level)
        await until(lambda: _equal(coins(books, me), 90))
        await until(lambda: _later(consumer))
        await asyncio.sleep(0.5)
        assert await coins(books, me) == 90  # 20 more would pass the cap: it waits for the next UTC day
        assert consumer.deferred >= 1
        refused_alone = await books.pool.fetchval(
            "SELECT outcome FROM ledger_inbox WHERE stream = $1 AND posting_id = $2", records.stream,
            f"reward/ladder/best/xiangqi/{me}/15")
        assert refused_alone == "refused:reward_over_cap"
        day = await books.pool.fetchval("SELECT coins FROM ledger_reward_days WHERE player_id = $1", me)
        assert day == 90
    finally:
        await consumer.stop()


async def test_a_malformed_or_foreign_record_pays_nothing(books: Books, records: Records) -> None:
    me = uid("p-")
    consumer = records.consumer(books, cap=0)
    await consumer.start()
    try:
        await records.publish(f"ladder/best/xiangqi/{me}/2", me, -5)
        await records.publish(f"purchase/{me}", me, 5)  # not a ladder reward's id
        await records.publish(f"ladder/best/xiangqi/{me}/3", me, "many")
        await records.js.publish(f"{records.prefix}.reward", b"not json")
        await until(lambda: _done(consumer, 4))
        assert await coins(books, me) == 0 and consumer.paid == 0
    finally:
        await consumer.stop()


async def test_charge_day_is_atomic_under_the_cap(books: Books) -> None:
    me = uid("p-")
    async with books.pool.acquire() as conn, conn.transaction():
        await rewards.charge_day(conn, me, 70, 100)
    with pytest.raises(ServiceError) as err:
        async with books.pool.acquire() as conn, conn.transaction():
            await rewards.charge_day(conn, me, 31, 100)
    assert err.value.status == grpc.StatusCode.RESOURCE_EXHAUSTED and err.value.reason == "reward_daily_cap"
    assert 0 < err.value.retry_after_ms <= 86_400_000
    assert await books.pool.fetchval("SELECT coins FROM ledger_reward_days WHERE player_id = $1", me) == 70


async def test_an_operators_credit_reward_is_capped_per_day(settings: Settings, ledger_server: str) -> None:
    me = uid("p-")
    ch = grpc.aio.insecure_channel(ledger_server)
    stub = gpb_grpc.LedgerServiceStub(ch)
    md = (("authorization", f"Bearer {token(settings, 'ops', 'operator')}"),)
    try:
        cap = Settings().reward_daily_cap
        await stub.CreditReward(gpb.CreditRewardRequest(reward_id=uid("r-"), player_id=me, coins=cap - 1,
                                                        reason="x"), metadata=md)
        assert await refused(stub.CreditReward(gpb.CreditRewardRequest(
            reward_id=uid("r-"), player_id=me, coins=2, reason="x"), metadata=md)) == (
            grpc.StatusCode.RESOURCE_EXHAUSTED, "reward_daily_cap")
        got = await stub.GetBalances(gpb.GetBalancesRequest(player_id=me), metadata=md)
        assert {x.currency: x.amount for x in got.balances}["coins"] == cap - 1
    finally:
        await ch.close()


async def test_held_coins_do_not_leave_until_released(settings: Settings, ledger_server: str, books: Books) -> None:
    me, other = uid("p-"), uid("p-")
    await books.post(Posting(f"fund/{me}", "test", (Leg(f"fund/{me}", b.system(b.COINS, "test"),
                                                        b.player(b.COINS, me), 500, "fund"),)))
    ch = grpc.aio.insecure_channel(ledger_server)
    stub = gpb_grpc.LedgerServiceStub(ch)
    ops = (("authorization", f"Bearer {token(settings, 'ops', 'operator')}"),)
    mine = (("authorization", f"Bearer {token(settings, me)}"),)
    try:
        assert await refused(stub.HoldCoins(gpb.HoldCoinsRequest(player_id=me, reason="x"), metadata=mine)) == (
            grpc.StatusCode.PERMISSION_DENIED, "role_required")
        assert await refused(stub.HoldCoins(gpb.HoldCoinsRequest(player_id=me, reason=" "), metadata=ops)) == (
            grpc.StatusCode.INVALID_ARGUMENT, "reason_required")
        held = await stub.HoldCoins(gpb.HoldCoinsRequest(player_id=me, reason="collusion: dump_target"),
                                    metadata=ops)
        again = await stub.HoldCoins(gpb.HoldCoinsRequest(player_id=me, reason="second"), metadata=ops)
        assert held.held and again.reason == "collusion: dump_target" and held.held_by == "ops"
        assert await refused(stub.RequestSong(gpb.RequestSongRequest(player_id=me, request_id=uid(), song="x"),
                                              metadata=mine)) == (grpc.StatusCode.FAILED_PRECONDITION, "coins_held")
        e = await stub.CheckEligibility(gpb.CheckEligibilityRequest(player_id=me), metadata=ops)
        assert (e.eligible, e.held, e.coins) == (False, True, 500)  # no coin table while held
        # the review's outcome: an operator's adjustment takes coins from a held account
        await stub.Adjust(gpb.AdjustRequest(adjustment_id=uid(), player_id=me, currency="coins", delta=-100,
                                            reason="dumped coins returned"), metadata=ops)
        assert (await stub.CheckEligibility(gpb.CheckEligibilityRequest(player_id=other), metadata=ops)).held is False
        assert (await stub.ReleaseCoins(gpb.ReleaseCoinsRequest(player_id=me, reason="reviewed"),
                                        metadata=ops)).released
        assert not (await stub.ReleaseCoins(gpb.ReleaseCoinsRequest(player_id=me, reason="again"),
                                            metadata=ops)).released
        await stub.RequestSong(gpb.RequestSongRequest(player_id=me, request_id=uid(), song="x"), metadata=mine)
        log = await books.pool.fetch("SELECT action, actor FROM ledger_hold_log WHERE player_id = $1 ORDER BY id", me)
        assert [(r["action"], r["actor"]) for r in log] == [("hold", "ops"), ("release", "ops")]
    finally:
        await ch.close()


async def _equal(value: Any, want: int) -> bool:
    return bool(await value == want)


async def _done(consumer: RewardConsumer, n: int) -> bool:
    info = await consumer.js.consumer_info(consumer.stream, consumer.durable)
    return bool(info.ack_floor.stream_seq >= n and info.num_ack_pending == 0)


async def _later(consumer: RewardConsumer) -> bool:
    return consumer.deferred >= 1
