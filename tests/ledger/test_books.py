"""The books on a real PostgreSQL: postings all or nothing, ids derived from the source,
the 金币 cap (coins.md §6.5, GC-2), fixed lock order under concurrency, the audit."""

from __future__ import annotations

import asyncio

import asyncpg
import grpc
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chieu.kit import db
from chieu.kit.errors import ServiceError
from chieu.ledger import books as b
from chieu.ledger.books import Books, Leg, Posting, cap
from chieu.ledger.schema import MIGRATIONS

from .conftest import uid


async def fund(books: Books, account: str, coins: int, currency: str = b.COINS) -> None:
    await books.post(Posting(f"fund/{account}", "test", (Leg(f"fund/{account}", b.system(currency, "test"),
                                                                account, coins, "fund"),)))


async def test_migrations_twice_and_concurrently(database_url: str, pool: asyncpg.Pool) -> None:
    conns = [await asyncpg.connect(database_url) for _ in range(3)]
    try:
        done = await asyncio.gather(*(db.migrate(c, "ledger", MIGRATIONS) for c in conns))
        assert done == [[], [], []]
        extra = ("CREATE TABLE IF NOT EXISTS ledger_test_extra (x int)",)
        twice = await asyncio.gather(*(db.migrate(c, f"t-{id(conns)}", extra) for c in conns))
        assert sorted(twice) == [[], [], [1]]
    finally:
        for c in conns:
            await c.close()


async def test_gc2_xiangqi_coin_game(books: Books) -> None:
    """GC-2: STAKE 10, Xiangqi ±2: winner 500 → 520, loser 100 → 80."""
    w, lo, t = b.player(b.COINS, uid("w")), b.player(b.COINS, uid("l")), uid("t")
    await fund(books, w, 500)
    await fund(books, lo, 100)
    r = await books.post(Posting(f"{t}/1/0", "settlement", (Leg(f"{t}/1/0", lo, w, 20, "cuoc"),), cap=True))
    assert r.balances[w] == 520 and r.balances[lo] == 80
    assert await books.balance(w) == 520


async def test_same_id_same_content_returns_first_result(books: Books) -> None:
    a, c = b.player(b.COINS, uid()), b.player(b.COINS, uid())
    await fund(books, a, 50)
    p = Posting(uid("p"), "test", (Leg(uid("l"), a, c, 7, "x"),))
    first = await books.post(p)
    again = await books.post(p)
    assert again.replayed and not first.replayed
    assert await books.balance(a) == 43 and await books.balance(c) == 7


async def test_same_id_other_content_refused_and_nothing_changes(books: Books) -> None:
    a, c = b.player(b.COINS, uid()), b.player(b.COINS, uid())
    await fund(books, a, 50)
    pid, lid = uid("p"), uid("l")
    await books.post(Posting(pid, "test", (Leg(lid, a, c, 7, "x"),)))
    with pytest.raises(ServiceError) as e:
        await books.post(Posting(pid, "test", (Leg(lid, a, c, 8, "x"),)))
    assert e.value.reason == "id_reused" and e.value.status is grpc.StatusCode.FAILED_PRECONDITION
    assert await books.balance(a) == 43


@pytest.mark.parametrize(("legs", "reason"), [
    ((Leg("x", "player/coins/a", "player/coins/b", 0, "r"),), "bad_amount"),
    ((Leg("x", "player/coins/a", "player/coins/b", -5, "r"),), "bad_amount"),
    ((Leg("x", "player/coins/a", "player/hearts/b", 5, "r"),), "currency_mismatch"),
    ((Leg("x", "nonsense", "player/coins/b", 5, "r"),), "unknown_account"),
    ((Leg("x", "player/dollars/a", "player/dollars/b", 5, "r"),), "unknown_account"),
])
async def test_malformed_postings_refused(books: Books, legs: tuple[Leg, ...], reason: str) -> None:
    with pytest.raises(ServiceError) as e:
        await books.post(Posting(uid("bad"), "test", legs))
    assert e.value.reason == reason


async def test_insufficient_coins_refused_all_or_nothing(books: Books) -> None:
    a, c, d = (b.player(b.COINS, uid()) for _ in range(3))
    await fund(books, a, 10)
    with pytest.raises(ServiceError) as e:
        await books.post(Posting(uid("p"), "test", (Leg(uid(), a, c, 6, "x"), Leg(uid(), a, d, 6, "x"))))
    assert e.value.reason == "insufficient_coins"
    assert await books.balance(a) == 10 and await books.balance(c) in (None, 0) and await books.balance(d) in (None, 0)


async def test_unknown_account_when_it_must_exist(books: Books) -> None:
    a, c = b.player(b.COINS, uid()), b.player(b.COINS, uid())
    with pytest.raises(ServiceError) as e:
        await books.post(Posting(uid("p"), "test", (Leg(uid(), a, c, 1, "x"),), must_exist=(a,)))
    assert e.value.reason == "unknown_account" and e.value.status is grpc.StatusCode.NOT_FOUND


def test_cap_pro_rata_and_leftovers() -> None:
    """coins.md §6.5: loser pays min(owed, balance); winners pro rata, rounded down; leftovers
    one at a time to the winners owed most, ties to the lower seat."""
    L, W1, W2, W3 = (f"player/coins/{n}" for n in ("L", "W1", "W2", "W3"))
    legs = [Leg("t/1/0", L, W1, 30, "u"), Leg("t/1/1", L, W2, 20, "u"), Leg("t/1/2", L, W3, 20, "u")]
    out = cap(legs, {L: 11}, seats=(L, W1, W2, W3))
    got = b.legs_total(out)
    # collected 11 of 70: W1 floor(11*30/70)=4, W2 floor(11*20/70)=3, W3 3 → 10, leftover 1 → W1 (owed most)
    assert got[L] == -11 and got[W1] == 5 and got[W2] == 3 and got[W3] == 3
    # a tie among the owed-most: the lower seat gets the leftover
    legs = [Leg("t/2/0", L, W2, 10, "u"), Leg("t/2/1", L, W1, 10, "u")]
    got = b.legs_total(cap(legs, {L: 3}, seats=(L, W1, W2)))
    assert got[W1] == 2 and got[W2] == 1
    # nobody short: the legs unchanged
    assert cap(legs, {L: 20}) == legs


async def test_cap_posted(books: Books) -> None:
    lo, w1, w2 = (b.player(b.COINS, uid()) for _ in range(3))
    await fund(books, lo, 7)
    t = uid("t")
    r = await books.post(Posting(f"{t}/1/0", "settlement", (
        Leg(f"{t}/1/0", lo, w1, 10, "u"), Leg(f"{t}/1/1", lo, w2, 10, "u")), cap=True, seats=(lo, w1, w2)))
    assert r.balances[lo] == 0 and r.balances[w1] == 4 and r.balances[w2] == 3
    rows = await books.pool.fetch("SELECT amount, owed FROM ledger_transfers WHERE posting_id = $1 ORDER BY seq",
                                  f"{t}/1/0")
    assert [(r["amount"], r["owed"]) for r in rows] == [(7, 20), (4, 10), (3, 10)]


async def test_transfers_are_immutable(books: Books, pool: asyncpg.Pool) -> None:
    a = b.player(b.COINS, uid())
    await fund(books, a, 5)
    with pytest.raises(asyncpg.RaiseError):
        await pool.execute("UPDATE ledger_transfers SET amount = 1 WHERE credit = $1", a)
    with pytest.raises(asyncpg.RaiseError):
        await pool.execute("DELETE FROM ledger_transfers WHERE credit = $1", a)


async def test_fifty_concurrent_postings_same_accounts(books: Books) -> None:
    """No lost update, no deadlock: accounts locked in a fixed order."""
    accts = [b.player(b.COINS, uid()) for _ in range(4)]
    for a in accts:
        await fund(books, a, 1000)

    async def one(i: int) -> None:
        x, y = accts[i % 4], accts[(i * 3 + 1) % 4]
        if x == y:
            y = accts[(i + 1) % 4]
        z = accts[(i + 2) % 4]
        await books.post(Posting(uid("c"), "test", (Leg(uid(), x, y, 3, "x"), Leg(uid(), z, x, 2, "x"))))

    await asyncio.wait_for(asyncio.gather(*(one(i) for i in range(50))), 60)
    total = sum([await books.balance(a) or 0 for a in accts])
    assert total == 4000
    expected = {a: 1000 for a in accts}
    for i in range(50):
        x, y = accts[i % 4], accts[(i * 3 + 1) % 4]
        if x == y:
            y = accts[(i + 1) % 4]
        z = accts[(i + 2) % 4]
        expected[x] += -3 + 2
        expected[y] += 3
        expected[z] -= 2
    assert {a: await books.balance(a) for a in accts} == expected
    _, _, problems = await books.audit()
    assert problems == []


PARTIES = ["p0", "p1", "p2", "p3", "pot"]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.lists(st.tuples(st.sampled_from(PARTIES), st.sampled_from(PARTIES),
                                   st.integers(1, 60)), min_size=1, max_size=5), min_size=1, max_size=6),
       st.booleans())
async def test_random_postings_keep_zero_sum_and_no_negative_coins(
        books: Books, postings: list[list[tuple[str, str, int]]], capped: bool) -> None:
    t = uid("h")
    acct = {p: (b.pot(b.COINS, t) if p == "pot" else b.player(b.COINS, f"{t}-{p}")) for p in PARTIES}
    for p in PARTIES[:4]:
        await fund(books, acct[p], 40)
    for i, legs in enumerate(postings):
        ls = tuple(Leg(f"{t}/{i}/{j}", acct[x], acct[y], n, "r") for j, (x, y, n) in enumerate(legs) if x != y)
        if not ls:
            continue
        try:
            await books.post(Posting(f"{t}/{i}", "test", ls, cap=capped))
        except ServiceError as e:
            assert e.reason in ("insufficient_coins", "pot_short")
    bal = {p: await books.balance(acct[p]) or 0 for p in PARTIES}
    assert all(v >= 0 for v in bal.values())
    assert sum(bal.values()) == 160
    n, _, problems = await books.audit()
    assert problems == [] and n > 0
