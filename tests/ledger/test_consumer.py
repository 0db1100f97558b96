"""Settlements from a real JetStream log, posted exactly once by the real consumer.

Every money scenario of the shared rules (tests/scenarios/*/ with transfers in their outcome)
runs through the rules core; its transfers become Settlement records on a real nats-server;
the consumer posts them; the balances and the gà pot are checked exactly. Then the failure
cases: a crash between commit and acknowledgement, the same settlement published again after
the duplicate window, two consumers at once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from chieu.games.scenarios import Result, _Run
from chieu.ledger import books as b
from chieu.ledger.books import Books, Leg, Posting
from chieu.ledger.consumer import SettlementConsumer
from chieu.scenario_files import load
from tests.conftest import nats_connect

from .conftest import CrashAfterCommit, Log, settlement, uid, until

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[1] / "scenarios"


def money_scenarios() -> list[Any]:
    out = []
    for f in sorted(ROOT.glob("*/*.yaml")):
        for spec in load(f):
            outcome = (spec.get("expect") or {}).get("outcome") or {}
            if any(outcome.get(k) for k in ("transfers", "net", "pot")):
                out.append(pytest.param(spec, id=str(spec.get("id"))))
    return out


def outcome_of(spec: Any) -> tuple[int, Any]:
    r = Result("", str(spec.get("id")), "")
    run = _Run(spec, r)
    run.set_up()
    for i, st in enumerate(spec.get("steps", [])):
        run.step(i, st)
    out = run.game.outcome(run.state)
    if r.failures or out is None:
        pytest.skip(f"the rules core does not reproduce {spec.get('id')} yet: {r.failures[:1]}")
    return run.players, out


async def posted_all(books: Books, posting_ids: Sequence[str]) -> bool:
    n = await books.pool.fetchval("SELECT count(*) FROM ledger_postings WHERE id = ANY($1::text[])",
                                  list(posting_ids))
    return bool(n == len(posting_ids))


@pytest.mark.parametrize("spec", money_scenarios())
async def test_money_scenario_through_the_consumer(spec: Any, books: Books, tlog: Log) -> None:
    players, out = outcome_of(spec)
    if not out.transfers:  # a draw pays nothing: the table writes no Settlement at all
        assert not any(out.net(players))
        return
    game = str(spec["game"])
    names = [uid(f"{game}-s{i}-") for i in range(players)]
    net = out.net(players)
    consumer = tlog.consumer(books)
    await consumer.start()
    try:
        # at a points table, stake 3; split in two records (an in-play payment, then the hand's end)
        t_pts, t_coins = uid("tp"), uid("tc")
        k = max(1, len(out.transfers) // 2)
        parts = [(0, out.transfers[:k]), (k, out.transfers[k:])]
        for first, chunk in parts:
            if chunk:
                await tlog.publish(t_pts, [settlement(game, names, chunk, stake=3, coins=False, first_leg=first)])
        # at a coin table, stake 2, every player holding 1000 金币 (the gà pot fed first when it pays out)
        for n in names:
            await books.post(Posting(f"fund/{n}", "test", (Leg(f"fund/{n}", b.system(b.COINS, "test"),
                                                                b.player(b.COINS, n), 1000, "fund"),)))
        pot_in = -sum(net)
        if pot_in < 0:
            await books.post(Posting(f"fund/{t_coins}", "test", (Leg(f"fund/{t_coins}", b.system(b.COINS, "test"),
                                                                      b.pot(b.COINS, t_coins), -pot_in, "fund"),)))
        await tlog.publish(t_coins, [settlement(game, names, out.transfers, stake=2, coins=True)])
        ids = [f"{t_pts}/1/{first}" for first, chunk in parts if chunk] + [f"{t_coins}/1/0"]
        await until(lambda: posted_all(books, ids))
    finally:
        await consumer.stop()
    for i, n in enumerate(names):
        assert await books.balance(b.player(b.points(game), n)) == 3 * net[i], (spec["id"], i)
        assert await books.balance(b.player(b.COINS, n)) == 1000 + 2 * net[i], (spec["id"], i)
    assert (await books.pot(t_pts))[0] == 3 * pot_in
    assert (await books.pot(t_coins))[0] == (2 * pot_in if pot_in > 0 else 0)
    want = spec["expect"]["outcome"]
    if "net" in want:
        assert list(net) == list(want["net"])


async def test_gc2_coin_table_through_the_consumer(books: Books, tlog: Log) -> None:
    """GC-2 from the log: Xiangqi at a coin table, STAKE 10, ±2: winner 500 → 520, loser 100 → 80;
    then a loser who cannot pay in full is capped (coins.md §6.5)."""
    w, lo, t = uid("w"), uid("l"), uid("xq")
    for p, n in ((w, 500), (lo, 100)):
        await books.post(Posting(f"fund/{p}", "test", (Leg(f"fund/{p}", b.system(b.COINS, "test"),
                                                            b.player(b.COINS, p), n, "fund"),)))
    from chieu.games.core import Transfer

    consumer = tlog.consumer(books)
    await consumer.start()
    try:
        await tlog.publish(t, [settlement("xiangqi", [w, lo], [Transfer(1, 0, 2, "cuoc")], stake=10, coins=True)])
        await until(lambda: posted_all(books, [f"{t}/1/0"]))
        assert await books.balance(b.player(b.COINS, w)) == 520
        assert await books.balance(b.player(b.COINS, lo)) == 80
        await tlog.publish(t, [settlement("xiangqi", [w, lo], [Transfer(1, 0, 10, "cuoc")], stake=10, coins=True,
                                          hand_no=2)], version=2)
        await until(lambda: posted_all(books, [f"{t}/2/0"]))
    finally:
        await consumer.stop()
    assert await books.balance(b.player(b.COINS, lo)) == 0
    assert await books.balance(b.player(b.COINS, w)) == 600


async def test_crash_between_commit_and_ack(books: Books, tlog: Log) -> None:
    """The posting committed, the process died before the ack: the redelivery changes nothing."""
    a, c, t = uid("a"), uid("c"), uid("crash")
    crash = CrashAfterCommit(t)
    crashes = crash.crashes

    from chieu.games.core import Transfer

    durable = uid("d")
    first = tlog.consumer(books, durable, after_commit=crash)
    await first.start()
    seq = await tlog.publish(t, [settlement("phom", [a, c], [Transfer(0, 1, 5, "u")], stake=1, coins=False)])
    await until(lambda: posted_all(books, [f"{t}/1/0"]))
    await until(lambda: asyncio.sleep(0, bool(crashes)))
    await first.stop()
    # a fresh process on the same durable gets the unacknowledged message again
    second = tlog.consumer(books, durable)
    await second.start()
    try:
        async def redelivered() -> bool:
            info = await tlog.js.consumer_info(tlog.stream, durable)
            return bool(info.num_ack_pending == 0 and info.num_pending == 0)

        await until(redelivered)
    finally:
        await second.stop()
    assert crashes == [seq]
    assert await books.balance(b.player(b.points("phom"), a)) == -5
    assert await books.balance(b.player(b.points("phom"), c)) == 5
    assert await books.pool.fetchval("SELECT count(*) FROM ledger_inbox WHERE stream = $1 AND seq = $2",
                                     tlog.stream, seq) == 1


async def test_same_settlement_after_the_duplicate_window(books: Books, tlog: Log) -> None:
    """Published again with the same Nats-Msg-Id once the window (1 s here) has passed: a new
    stream sequence, the same transfer ids, posted once."""
    a, c, t = uid("a"), uid("c"), uid("dup")
    from chieu.games.core import Transfer

    s = settlement("phom", [a, c], [Transfer(0, 1, 4, "chot"), Transfer(0, None, 1, "eat_1")], stake=2, coins=False)
    consumer = tlog.consumer(books)
    await consumer.start()
    try:
        s1 = await tlog.publish(t, [s], msg_id=f"{t}-cmd")
        await asyncio.sleep(1.5)
        s2 = await tlog.publish(t, [s], msg_id=f"{t}-cmd")
        assert s2 != s1

        async def both_seen() -> bool:
            n = await books.pool.fetchval("SELECT count(*) FROM ledger_inbox WHERE stream = $1 AND seq = ANY($2)",
                                          tlog.stream, [s1, s2])
            return bool(n == 2)

        await until(both_seen)
    finally:
        await consumer.stop()
    assert await books.balance(b.player(b.points("phom"), a)) == -10
    assert await books.balance(b.player(b.points("phom"), c)) == 8
    assert (await books.pot(t))[0] == 2
    assert await books.pool.fetchval("SELECT count(*) FROM ledger_transfers WHERE table_id = $1", t) == 2


async def test_two_consumers_at_once(database_url: str, nats_url: str, books: Books, tlog: Log) -> None:
    """Two ledger consumers (own pools, own connections) on one durable: every hand once."""
    from chieu.games.core import Transfer
    from chieu.kit import db

    nc2 = await nats_connect(nats_url)  # admin: the test's own stream and durable
    pool2 = await db.create_pool(database_url, max_size=4)
    durable = uid("d")
    one = tlog.consumer(books, durable, batch=8)
    two = SettlementConsumer(Books(pool2), nc2.jetstream(), durable=durable, stream=tlog.stream,
                             subjects=f"{tlog.prefix}.>", batch=8, ack_wait_s=2.0)
    await one.start()
    await two.start()
    players = [uid("p") for _ in range(4)]
    tables = [uid("two") for _ in range(10)]
    try:
        for hand in range(1, 11):
            for t in tables:
                legs = [Transfer(hand % 4, (hand + 1) % 4, 3, "cuoc"), Transfer(hand % 4, None, 1, "ga_deal")]
                await tlog.publish(t, [settlement("tienlen", players, legs, stake=1, coins=False, hand_no=hand)],
                                   version=hand)
        ids = [f"{t}/{h}/0" for t in tables for h in range(1, 11)]
        await until(lambda: posted_all(books, ids), 60)
    finally:
        await one.stop()
        await two.stop()
        await pool2.close()
        await nc2.close()
    assert one.posted + two.posted >= 100
    total = sum([await books.balance(b.player(b.points("tienlen"), p)) or 0 for p in players])
    pots = sum([(await books.pot(t))[0] for t in tables])
    assert total == -100 and pots == 100
    assert await books.pool.fetchval("SELECT count(*) FROM ledger_transfers WHERE table_id = ANY($1)", tables) == 200
    _, _, problems = await books.audit()
    assert problems == []


async def test_refused_settlement_is_recorded_and_acknowledged(books: Books, tlog: Log, pool: asyncpg.Pool) -> None:
    """A settlement naming a seat with no player is refused (bad_settlement), logged, never retried forever."""
    from chieu.games.core import Transfer

    t = uid("bad")
    consumer = tlog.consumer(books)
    await consumer.start()
    try:
        seq = await tlog.publish(t, [settlement("phom", [uid()], [Transfer(0, 3, 1, "u")], stake=1, coins=False)])

        async def recorded() -> bool:
            return bool(await pool.fetchval("SELECT outcome FROM ledger_inbox WHERE stream = $1 AND seq = $2",
                                            tlog.stream, seq))

        await until(recorded)
    finally:
        await consumer.stop()
    assert await pool.fetchval("SELECT outcome FROM ledger_inbox WHERE stream = $1 AND seq = $2",
                               tlog.stream, seq) == "refused:bad_settlement"


async def test_a_settlement_the_log_does_not_account_for_is_never_posted(books: Books, tlog: Log,
                                                                         pool: asyncpg.Pool) -> None:
    """Attack 1 of the trust issue, as defence in depth: a forged Settlement (victim → attacker)
    on a table the log never started is refused (unknown_hand); one that changes the hand's terms
    (another stake, other players) is refused (hand_mismatch). No coin moves."""
    from chieu.games.core import Transfer

    victim, attacker, other = uid("victim"), uid("attacker"), uid("other")
    await books.post(Posting(uid("fund"), "adjustment", (Leg(uid("fund"), b.system(b.COINS, "adjustments"),
                                                             b.player(b.COINS, victim), 200, "fund"),)))
    consumer = tlog.consumer(books)
    await consumer.start()
    try:
        steal = [Transfer(0, 1, 150, "cuoc")]
        forged = await tlog.publish(uid("forged"), [settlement("phom", [victim, attacker], steal, stake=1,
                                                               coins=True)], start=False)
        honest_table = uid("honest")
        honest = await tlog.publish(honest_table, [settlement("phom", [victim, other], [Transfer(0, 1, 1, "cuoc")],
                                                              stake=1, coins=True)])
        higher = await tlog.publish(honest_table, [settlement("phom", [victim, other], [Transfer(0, 1, 1, "cuoc")],
                                                              stake=150, coins=True, first_leg=1)])
        swapped = await tlog.publish(honest_table, [settlement("phom", [victim, attacker], steal, stake=1,
                                                               coins=True, first_leg=2)])

        async def outcome(seq: int) -> str:
            return str(await pool.fetchval("SELECT outcome FROM ledger_inbox WHERE stream = $1 AND seq = $2",
                                           tlog.stream, seq) or "")

        async def all_seen() -> bool:
            return all([await outcome(s) for s in (forged, honest, higher, swapped)])

        await until(all_seen)
    finally:
        await consumer.stop()
    assert [await outcome(s) for s in (forged, honest, higher, swapped)] == [
        "refused:unknown_hand", "posted", "refused:hand_mismatch", "refused:hand_mismatch"]
    assert await books.balance(b.player(b.COINS, victim)) == 199
    assert (await books.balance(b.player(b.COINS, attacker)) or 0) == 0
