"""The ladder's consumer against a real nats-server and PostgreSQL: every record applied once
(a crash between commit and ack changes nothing when the message comes back), in stream order
whatever the number of consumers, and what it folds equals the pure rules folded in order."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chieu.ladder.rules import Standing
from chieu.ladder.standings import Store
from tests.ladder.conftest import Log, hand_ended, penalty, random_games, script
from tests.ladder.helpers import uid, until

pytestmark = pytest.mark.integration


async def standing(store: Store, player: str) -> Standing:
    found = await store.standing("xiangqi", player)
    return found[0] if found else Standing()


async def history_count(store: Store, players: list[str]) -> int:
    return int(await store.pool.fetchval("SELECT count(*) FROM ladder_history WHERE player_id = ANY($1)", players))


async def test_a_crash_between_commit_and_ack_changes_nothing_on_redelivery(store: Store, tlog: Log) -> None:
    s = script([("W", 1), ("L", 1), ("Q", 1), ("X", 1), ("D", 1)], "crash")
    crashed: list[int] = []

    async def crash_once(msg: Any) -> None:
        if not crashed:
            crashed.append(int(msg.metadata.sequence.stream))
            raise RuntimeError("simulated crash after commit, before ack")

    consumer = tlog.consumer(store, after_commit=crash_once, ack_wait_s=1.0)
    for rec in s.records:
        await tlog.publish(rec)
    await consumer.start()
    try:
        await until(lambda: _at(store, tlog.stream, 5))
        await until(lambda: _delivered_again(consumer, tlog, crashed[0]), within=10)
    finally:
        await consumer.stop()
    assert await history_count(store, [s.a, s.b]) == s.changes
    for p, expected in s.expected.items():
        assert await standing(store, p) == expected
    inbox = await store.pool.fetchval("SELECT count(*) FROM ladder_inbox WHERE stream = $1", tlog.stream)
    assert inbox == 5


async def _at(store: Store, stream: str, seq: int) -> bool:
    return await store.applied(stream) >= seq


async def _delivered_again(consumer: Any, tlog: Log, seq: int) -> bool:
    info = await tlog.js.consumer_info(tlog.stream, consumer.durable)
    return bool(info.num_ack_pending == 0 and info.ack_floor.stream_seq >= 5)


async def test_an_aborted_hand_counts_for_nobody_but_its_quitter(store: Store, tlog: Log) -> None:
    a, b, t = uid("ab-"), uid("ab-"), uid("abt-")
    rec = hand_ended(t, 1, [a, b], None, level=1, reason="aborted: server fault",
                     before=[penalty("Q", a, 1, 0, 1)])
    consumer = tlog.consumer(store)
    await tlog.publish(rec)
    await consumer.start()
    try:
        await until(lambda: _at(store, tlog.stream, 1))
    finally:
        await consumer.stop()
    assert await standing(store, a) == Standing(1, 1, -2)
    assert await store.standing("xiangqi", b) is None
    assert (await store.reputation(a))[0] == 90


async def test_team_games_count_each_members_own_sign(store: Store, tlog: Log) -> None:
    """LV-12 as the log carries it (a 够级 table of level 1, team A = seats 0, 2, 4 wins 2:−2)."""
    players = [uid(f"lv12-{i}-") for i in range(6)]
    rec = hand_ended(uid("gouji-"), 1, players, 0, level=1, game="gouji", scores=[2, -2, 2, -2, 2, -2])
    consumer = tlog.consumer(store)
    await tlog.publish(rec)
    await consumer.start()
    try:
        await until(lambda: _at(store, tlog.stream, 1))
    finally:
        await consumer.stop()
    got = [(await store.standing("gouji", p) or (None,))[0] for p in players]
    assert got == [Standing(1, 1, 1), Standing(1, 1, -1)] * 3


async def test_two_consumers_apply_every_record_once_in_stream_order(store: Store, tlog: Log) -> None:
    rng = random.Random(14)
    scripts = [script(random_games(rng, 12), "two") for _ in range(12)]
    # the same players at several tables at once: per-player order needs the stream's order
    players = [p for s in scripts for p in (s.a, s.b)]
    order = [(i, r) for i, s in enumerate(scripts) for r in s.records]
    rng.shuffle(order)
    order.sort(key=lambda x: scripts[x[0]].records.index(x[1]))  # each table's own order kept
    first, second = tlog.consumer(store, batch=8), None
    for _, rec in order:
        await tlog.publish(rec)
    second = tlog.consumer(store, durable=first.durable, batch=8)
    await first.start()
    await second.start()
    try:
        await until(lambda: _at(store, tlog.stream, len(order)), within=60)
    finally:
        await first.stop()
        await second.stop()
    assert await history_count(store, players) == sum(s.changes for s in scripts)
    for s in scripts:
        for p, expected in s.expected.items():
            assert await standing(store, p) == expected


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(games=st.lists(st.tuples(st.sampled_from("WLDQX"), st.integers(1, 4)), min_size=1, max_size=25))
async def test_any_results_folded_by_the_service_equal_the_pure_rules(store: Store, tlog: Log,
                                                                       games: list[tuple[str, int]]) -> None:
    s = script(games, "prop")
    consumer = tlog.consumer(store)
    last = 0
    for rec in s.records:
        last = await tlog.publish(rec)
    await consumer.start()
    try:
        await until(lambda: _at(store, tlog.stream, last))
    finally:
        await consumer.stop()
    for p, expected in s.expected.items():
        assert await standing(store, p) == expected
    assert await history_count(store, [s.a, s.b]) == s.changes


async def test_the_same_message_applied_twice_at_once_counts_once(store: Store) -> None:
    from chieu.ladder.consumer import items_of

    s = script([("W", 1)], "race")
    stream = uid("RACE_")
    items = items_of(s.records[0], stream, 1)
    outcomes = await asyncio.gather(*(store.apply(stream, 1, items) for _ in range(4)))
    assert sorted(outcomes) == ["applied", "seen", "seen", "seen"]
    assert await history_count(store, [s.a, s.b]) == 2
