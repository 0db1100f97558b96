"""A coin hand's reservations (issue 32; :mod:`chieu.ledger.reservations`): all seats or none, from
the 金币 not already reserved, once per table and hand; reserved 金币 cannot be spent elsewhere; the
consumer posts exactly the log's capped settlement and closes the hand's reservations with its
``HandEnded`` (an aborted hand's too). Real PostgreSQL and nats-server."""

from __future__ import annotations

from collections.abc import Sequence

import asyncpg
import grpc
import pytest

from chieu.games.core import Transfer
from chieu.kit.errors import ServiceError
from chieu.kit.settings import Settings
from chieu.ledger import books as b
from chieu.ledger.books import Books, Leg, Posting
from chieu.ledger.reservations import Answer, Reservations
from chieu.ledger.v1 import ledger_service_pb2 as gpb
from chieu.ledger.v1 import ledger_service_pb2_grpc as gpb_grpc
from chieu.table.v1 import log_pb2
from tests.conftest import credential, token
from tests.ledger.conftest import Log, settlement, uid, until
from tests.table.helpers import reason_of

pytestmark = pytest.mark.integration


async def fund(books: Books, player: str, coins: int) -> None:
    await books.post(Posting(f"fund/{player}", "test", (Leg(f"fund/{player}", b.system(b.COINS, "test"),
                                                             b.player(b.COINS, player), coins, "fund"),)))


@pytest.fixture
def held_books(pool: asyncpg.Pool, tlog: Log) -> tuple[Books, Reservations]:
    """Books that hold reservations back, as the ledger's process wires them."""
    books = Books(pool)
    reservations = Reservations(pool, tlog.stream)
    books.holds_back = reservations.held
    return books, reservations


async def test_all_seats_or_none_from_what_is_not_reserved_and_once(held_books: tuple[Books, Reservations]) -> None:
    books, r = held_books
    a, c = uid("a"), uid("c")
    await fund(books, a, 300)
    await fund(books, c, 100)
    t1, t2, t3, t4 = (uid("t") for _ in range(4))
    assert await r.reserve(t1, 1, {a: 200, c: 100}) == Answer(True)
    assert await r.reserve(t1, 1, {a: 200, c: 100}) == Answer(True, replayed=True)  # a retried start: once
    assert await r.reserve(t2, 1, {a: 200}) == Answer(False, (a,))  # 100 of a's 300 are free
    assert await r.reserve(t3, 1, {a: 100, c: 1}) == Answer(False, (c,))  # c short: a not reserved either
    assert await r.reserve(t4, 1, {a: 100}) == Answer(True)
    async with books.pool.acquire() as conn:
        assert await r.held(conn, [a, c]) == {a: 300, c: 100}


async def test_a_player_without_an_account_is_short(held_books: tuple[Books, Reservations]) -> None:
    _, r = held_books
    nobody = uid("nobody")
    assert await r.reserve(uid("t"), 1, {nobody: 1}) == Answer(False, (nobody,))


async def test_reserved_coins_are_not_spent_elsewhere(held_books: tuple[Books, Reservations]) -> None:
    books, r = held_books
    a = uid("a")
    await fund(books, a, 100)
    assert (await r.reserve(uid("t"), 1, {a: 90})).reserved
    song = Posting(f"song/{a}/1", "song", (Leg(f"song/{a}/1", b.player(b.COINS, a), b.house(b.COINS, "services"),
                                                20, "song"),))
    with pytest.raises(ServiceError) as refused:
        await books.post(song)
    assert refused.value.reason == "insufficient_coins"
    await books.post(Posting(f"song/{a}/2", "song", (Leg(f"song/{a}/2", b.player(b.COINS, a),
                                                          b.house(b.COINS, "services"), 10, "song"),)))
    assert await books.balance(b.player(b.COINS, a)) == 90


async def test_other_seats_replace_an_unstarted_reservation_not_a_started_one(
        held_books: tuple[Books, Reservations], tlog: Log) -> None:
    books, r = held_books
    a, c, t = uid("a"), uid("c"), uid("t")
    await fund(books, a, 100)
    await fund(books, c, 100)
    assert (await r.reserve(t, 1, {a: 50, c: 50})).reserved
    assert (await r.reserve(t, 1, {a: 60})).reserved  # c stood up before the start reached the log
    async with books.pool.acquire() as conn:
        assert await r.held(conn, [a, c]) == {a: 60}
        await conn.execute("INSERT INTO ledger_hands (stream, table_id, hand_no, seq, game, stake, currency, players)"
                           " VALUES ($1, $2, 1, 1, 'xiangqi', 1, 2, $3)", tlog.stream, t, [a])
    with pytest.raises(ServiceError) as refused:
        await r.reserve(t, 1, {a: 70})
    assert refused.value.reason == "id_reused"


def hand_record(table_id: str, kind: str, hand_no: int, players: list[str], reserved: Sequence[int] = (),
                settlements: Sequence[log_pb2.Settlement] = ()) -> log_pb2.Record:
    """A record that starts (``start``) or ends (``end``, after ``settlements``) a coin hand."""
    rec = log_pb2.Record(table_id=table_id, command_id=uid("c"), actor="host", game="xiangqi")
    if kind == "start":
        rec.events.add().hand_started.CopyFrom(log_pb2.HandStarted(
            hand_no=hand_no, players=players, game="xiangqi", stake=100, currency=log_pb2.CURRENCY_COINS,
            reserved=list(reserved)))
    for s in settlements:
        rec.events.add().settlement.CopyFrom(s)
    if kind == "end":
        rec.events.add().hand_ended.CopyFrom(log_pb2.HandEnded(hand_no=hand_no, players=players))
    return rec


async def test_the_consumer_posts_the_capped_log_and_closes_the_reservations(
        held_books: tuple[Books, Reservations], tlog: Log) -> None:
    books, r = held_books
    w, lo, t = uid("w"), uid("l"), uid("xq")
    await fund(books, w, 500)
    await fund(books, lo, 300)
    assert (await r.reserve(t, 1, {w: 150, lo: 150})).reserved
    assert (await r.reserve(t, 2, {w: 100, lo: 100})).reserved  # the 150 of lo not reserved yet
    consumer = tlog.consumer(books)
    await consumer.start()
    subject = f"{tlog.prefix}.{t}"
    try:
        await tlog.js.publish(subject, hand_record(t, "start", 1, [w, lo], [150, 150]).SerializeToString())
        s = settlement("xiangqi", [w, lo], [Transfer(1, 0, 2, "win")], stake=100, coins=True)
        s.capped.extend([150, -150])  # the loser owed 200, the reservation held 150: the log says 150
        await tlog.js.publish(subject, hand_record(t, "end", 1, [w, lo], settlements=[s]).SerializeToString())
        await tlog.js.publish(subject, hand_record(t, "start", 2, [w, lo], [100, 100]).SerializeToString())
        await tlog.js.publish(subject, hand_record(t, "end", 2, [w, lo]).SerializeToString())  # aborted

        async def closed() -> bool:
            return not await books.pool.fetchval(
                "SELECT count(*) FROM ledger_reservations WHERE table_id = $1 AND closed_at IS NULL", t)

        await until(closed)
    finally:
        await consumer.stop()
    assert await books.balance(b.player(b.COINS, lo)) == 150
    assert await books.balance(b.player(b.COINS, w)) == 650
    rows = await books.pool.fetch("SELECT id, amount, owed, reason FROM ledger_transfers WHERE posting_id = $1"
                                  " ORDER BY id", f"{t}/1/0")
    assert [(x["id"], x["amount"], x["owed"], x["reason"]) for x in rows] == [
        (f"{t}/1/0/get/{b.player(b.COINS, w)}", 150, 200, "capped"),
        (f"{t}/1/0/pay/{b.player(b.COINS, lo)}", 150, 200, "capped")]
    async with books.pool.acquire() as conn:
        assert await r.held(conn, [w, lo]) == {}


async def test_the_log_writes_back_a_reservation_the_ledger_lost(held_books: tuple[Books, Reservations],
                                                                 tlog: Log) -> None:
    """A reservation commits without waiting for its flush: lost with a crash in that instant, it is
    written again from the hand's HandStarted (the log's seats and amounts), and closed at its end."""
    books, r = held_books
    a, c, t = uid("a"), uid("c"), uid("lost")
    await fund(books, a, 100)
    assert (await r.reserve(t, 1, {a: 40, c: 40})).reserved is False  # c has no 金币: nothing reserved
    consumer = tlog.consumer(books)
    await consumer.start()
    subject = f"{tlog.prefix}.{t}"

    async def held() -> dict[str, int]:
        async with books.pool.acquire() as conn:
            return await r.held(conn, [a])

    try:
        await tlog.js.publish(subject, hand_record(t, "start", 1, [a], [70]).SerializeToString())

        async def written() -> bool:
            return await held() == {a: 70}

        await until(written)
        await tlog.js.publish(subject, hand_record(t, "end", 1, [a]).SerializeToString())

        async def released() -> bool:
            return await held() == {}

        await until(released)
    finally:
        await consumer.stop()


async def test_reserve_hand_over_grpc(settings: Settings, ledger_server: str) -> None:
    """The RPC as the table calls it (its own credential); malformed requests are refused with a
    reason before anything is reserved."""
    a = uid("a")
    async with grpc.aio.insecure_channel(ledger_server) as ch:
        stub = gpb_grpc.LedgerServiceStub(ch)
        op = (("authorization", f"Bearer {token(settings, 'op', 'operator')}"),)
        table = (("authorization", f"Bearer {credential('table')}"),)
        await stub.Adjust(gpb.AdjustRequest(adjustment_id=uid("f"), player_id=a, currency="coins", delta=100,
                                            reason="test"), metadata=op)
        t = uid("t")
        for request, reason in (
                (gpb.ReserveHandRequest(table_id=t, hand_no=0, seats=[gpb.SeatReservation(player_id=a, coins=1)]),
                 "bad_hand_no"),
                (gpb.ReserveHandRequest(table_id=t, hand_no=1), "bad_seats"),
                (gpb.ReserveHandRequest(table_id=t, hand_no=1, seats=[gpb.SeatReservation(player_id=a, coins=1)] * 2),
                 "bad_seats"),
                (gpb.ReserveHandRequest(table_id=t, hand_no=1, seats=[gpb.SeatReservation(player_id=a, coins=0)]),
                 "bad_amount"),
                (gpb.ReserveHandRequest(table_id="", hand_no=1, seats=[gpb.SeatReservation(player_id=a, coins=1)]),
                 "bad_table_id")):
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await stub.ReserveHand(request, metadata=table)
            assert (refused.value.code(), reason_of(refused.value)) == (grpc.StatusCode.INVALID_ARGUMENT, reason)
        ok = gpb.ReserveHandRequest(table_id=t, hand_no=1, seats=[gpb.SeatReservation(player_id=a, coins=60)])
        assert await stub.ReserveHand(ok, metadata=table) == gpb.ReserveHandResponse(reserved=True)
        assert await stub.ReserveHand(ok, metadata=table) == gpb.ReserveHandResponse(reserved=True, replayed=True)
        more = gpb.ReserveHandRequest(table_id=uid("t"), hand_no=1, seats=[gpb.SeatReservation(player_id=a, coins=60)])
        assert await stub.ReserveHand(more, metadata=table) == gpb.ReserveHandResponse(reserved=False,
                                                                                       short_players=[a])
        with pytest.raises(grpc.aio.AioRpcError) as refused:  # the operator's token is no table's
            await stub.ReserveHand(more, metadata=op)
        assert reason_of(refused.value) == "role_required"


async def test_a_hand_whose_settlement_is_refused_still_releases(held_books: tuple[Books, Reservations],
                                                                 tlog: Log) -> None:
    """The ledger refuses a settlement it cannot account for (here capped nets that do not add up),
    but the log did end the hand: its reservations are closed all the same."""
    books, r = held_books
    w, lo, t = uid("w"), uid("l"), uid("refused")
    await fund(books, w, 100)
    await fund(books, lo, 100)
    assert (await r.reserve(t, 1, {w: 50, lo: 50})).reserved
    consumer = tlog.consumer(books)
    await consumer.start()
    subject = f"{tlog.prefix}.{t}"
    try:
        await tlog.js.publish(subject, hand_record(t, "start", 1, [w, lo], [50, 50]).SerializeToString())
        s = settlement("xiangqi", [w, lo], [Transfer(1, 0, 2, "win")], stake=100, coins=True)
        s.capped.extend([50, -40])  # does not sum to 0: bad_settlement
        await tlog.js.publish(subject, hand_record(t, "end", 1, [w, lo], settlements=[s]).SerializeToString())

        async def released() -> bool:
            async with books.pool.acquire() as conn:
                return await r.held(conn, [w, lo]) == {}

        await until(released)
    finally:
        await consumer.stop()
    outcome = await books.pool.fetchval("SELECT outcome FROM ledger_inbox WHERE posting_id = $1", f"{t}/1/0")
    assert outcome == "refused:bad_settlement"
    assert await books.balance(b.player(b.COINS, lo)) == 100
