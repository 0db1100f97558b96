"""The ledger's leaderboards (issue 34): hands at points tables and coin tables put their players on
the game's boards for this week, this month and all time, exactly once, ordered (score descending,
ties by player id) and paged by cursor; every bad request refused with a stable reason.

A database of its own (the boards are global per game and period) and a clock the test sets; the
settlements come through the real consumer from a real JetStream log, the boards through a real
gRPC server of the ledger's servicer.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

import grpc
import pytest

from chieu.games.core import Transfer
from chieu.kit import db
from chieu.kit.server import Server
from chieu.kit.settings import Settings
from chieu.ledger import books as b
from chieu.ledger.books import Books, Leg, Posting
from chieu.ledger.schema import MIGRATIONS
from chieu.ledger.service import LedgerService
from chieu.ledger.v1 import ledger_service_pb2 as pb
from chieu.ledger.v1 import ledger_service_pb2_grpc as pb_grpc
from chieu_tools import localnats
from tests.conftest import new_database, token
from tests.table.helpers import reason_of

from .conftest import CrashAfterCommit, Log, settlement, uid, until

pytestmark = pytest.mark.integration

NOW = dt.datetime(2026, 11, 25, 12, 0, tzinfo=dt.UTC)
"""A Wednesday of ISO week 2026-W48, in November."""


class Clock:
    """The books' clock, moved by the test."""

    def __init__(self) -> None:
        self.at = NOW

    def __call__(self) -> dt.datetime:
        return self.at


@pytest.fixture(scope="module")
async def own(database_url: str) -> AsyncIterator[tuple[Books, Clock]]:
    url = await new_database(database_url, uid("boards_"))
    pool = await db.create_pool(url, max_size=8)
    async with pool.acquire() as conn:
        await db.migrate(conn, "ledger", MIGRATIONS)
    clock = Clock()
    try:
        yield Books(pool, clock=clock), clock
    finally:
        await pool.close()


@pytest.fixture(scope="module")
async def stub(own: tuple[Books, Clock], settings: Settings) -> AsyncIterator[Any]:
    addr = f"127.0.0.1:{localnats.free_port()}"
    servicer = LedgerService(own[0], settings)
    name = pb.DESCRIPTOR.services_by_name["LedgerService"].full_name
    server = Server(replace(settings, ledger_addr=addr), addr=addr, services=[name],
                    register=[lambda s: pb_grpc.add_LedgerServiceServicer_to_server(servicer, s)])
    await server.start()
    channel = grpc.aio.insecure_channel(addr)
    try:
        yield pb_grpc.LedgerServiceStub(channel)
    finally:
        await channel.close()
        await server.shutdown()


def md(settings: Settings, player: str = "viewer") -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token(settings, player)}"),)


async def board(stub: Any, settings: Settings, game: str, kind: int, period: int, **kw: Any) -> Any:
    return await stub.GetBoard(pb.GetBoardRequest(game=game, kind=kind, period=period, **kw),
                               metadata=md(settings))


async def whole(stub: Any, settings: Settings, game: str, kind: int, period: int, size: int = 50) -> list[Any]:
    """Every row of a board, page after page."""
    rows, tok = [], ""
    while True:
        r = await board(stub, settings, game, kind, period, page_size=size, page_token=tok)
        assert len(r.rows) <= size
        rows += list(r.rows)
        tok = r.next_page_token
        if not tok:
            return rows


def settle(game: str, table: str, hand: int, nets: dict[str, int], *, coins: bool = False) -> Posting:
    """A settlement posting as the consumer makes it: the first player pays the others."""
    cur = b.COINS if coins else b.points(game)
    players = list(nets)
    legs = []
    for i, p in enumerate(players[1:], 1):
        if nets[p] > 0:
            legs.append(Leg(f"{table}/{hand}/{i}", b.player(cur, players[0]), b.player(cur, p), nets[p], "win"))
        elif nets[p] < 0:
            legs.append(Leg(f"{table}/{hand}/{i}", b.player(cur, p), b.player(cur, players[0]), -nets[p], "lose"))
    return Posting(f"{table}/{hand}/0", "settlement", tuple(legs), table_id=table, hand_no=hand, memo=game,
                   cap=coins)


async def test_points_hands_put_players_on_every_period(own: tuple[Books, Clock], tlog: Log, stub: Any,
                                                        settings: Settings) -> None:
    """Two hands of Phỏm at a points table, through the consumer: both players on the points board
    of phom for the week, the month and all time, with their nets and hands; another game's board
    and the 金币 board stay empty; a new week starts empty while the month and all time keep them."""
    books, clock = own
    a, c, t = "pa-" + uid(), "pc-" + uid(), uid("pt")
    consumer = tlog.consumer(books)
    await consumer.start()
    try:
        await tlog.publish(t, [settlement("phom", [a, c], [Transfer(0, 1, 5, "u")], stake=2, coins=False)])
        await tlog.publish(t, [settlement("phom", [a, c], [Transfer(1, 0, 1, "u")], stake=2, coins=False,
                                          hand_no=2)], version=2)

        async def posted() -> bool:
            return bool(await books.pool.fetchval("SELECT count(*) FROM ledger_postings WHERE table_id = $1", t) == 2)

        await until(posted)
    finally:
        await consumer.stop()
    for period in (pb.BOARD_PERIOD_WEEK, pb.BOARD_PERIOD_MONTH, pb.BOARD_PERIOD_ALL):
        r = await board(stub, settings, "phom", pb.BOARD_KIND_POINTS, period, player_id=a)
        mine = [(x.rank, x.player_id, x.score, x.hands) for x in r.rows if x.player_id in (a, c)]
        assert mine == [(1, c, 8, 2), (2, a, -8, 2)], period
        assert (r.you.rank, r.you.score) == (2, -8)
    keys = {x: (await board(stub, settings, "phom", pb.BOARD_KIND_POINTS, x)).period_key
            for x in (pb.BOARD_PERIOD_WEEK, pb.BOARD_PERIOD_MONTH, pb.BOARD_PERIOD_ALL)}
    assert list(keys.values()) == ["w2026-W48", "m2026-11", "all"]
    assert not (await board(stub, settings, "phom", pb.BOARD_KIND_COINS, pb.BOARD_PERIOD_ALL)).rows
    assert not (await board(stub, settings, "xiangqi", pb.BOARD_KIND_POINTS, pb.BOARD_PERIOD_ALL)).rows
    clock.at = NOW + dt.timedelta(days=5)  # Monday of W49, still November
    try:
        assert not (await board(stub, settings, "phom", pb.BOARD_KIND_POINTS, pb.BOARD_PERIOD_WEEK)).rows
        for period in (pb.BOARD_PERIOD_MONTH, pb.BOARD_PERIOD_ALL):
            r = await board(stub, settings, "phom", pb.BOARD_KIND_POINTS, period, player_id=c)
            assert r.you.rank == 1 and r.you.score == 8
    finally:
        clock.at = NOW


async def test_pages_are_ordered_and_ties_broken_by_player(own: tuple[Books, Clock], stub: Any,
                                                           settings: Settings) -> None:
    """137 players of 够级 at points tables, many tied: the pages of 50 walk the whole
    board once, score descending and ties by player id, ranks 1..n; each player's own rank is
    where the pages put them."""
    books, _ = own
    game, host = "gouji", "a-host"
    scores = {f"p{i:03d}": (i * 7) % 23 - 5 for i in range(136)}
    for p, s in scores.items():
        if s:
            await books.post(settle(game, uid("gt"), 1, {host: -s, p: s}))
        else:  # played, net nothing: on the board at 0
            await books.post(settle(game, uid("gt"), 1, {host: -1, p: 1}))
            await books.post(settle(game, uid("gt"), 2, {host: 1, p: -1}))
    want = sorted([*scores.items(), (host, -sum(scores.values()))], key=lambda x: (-x[1], x[0]))
    for size in (50, 7):
        rows = await whole(stub, settings, game, pb.BOARD_KIND_POINTS, pb.BOARD_PERIOD_WEEK, size)
        assert [(x.player_id, x.score) for x in rows] == want
        assert [x.rank for x in rows] == list(range(1, len(want) + 1))
    for rank, (p, s) in enumerate(want, 1):
        if rank % 17 == 0 or s == 0:
            r = await board(stub, settings, game, pb.BOARD_KIND_POINTS, pb.BOARD_PERIOD_ALL, page_size=1, player_id=p)
            assert (r.you.rank, r.you.score) == (rank, s)


async def test_own_rank_is_counted_to_the_bound(own: tuple[Books, Clock], stub: Any, settings: Settings,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Further down than the bound, one's own row comes with rank 0 (beyond), not a long count."""
    books, _ = own
    game = "dominoes"
    players = [f"d{i}" for i in range(6)]
    for i, p in enumerate(players):
        await books.post(settle(game, uid("dt"), 1, {"d-host": -(10 - i), p: 10 - i}))
    monkeypatch.setattr(b, "RANK_BOUND", 3)
    r = await board(stub, settings, game, pb.BOARD_KIND_POINTS, pb.BOARD_PERIOD_ALL, player_id="d1")
    assert (r.you.rank, r.rank_bound) == (2, 3)
    r = await board(stub, settings, game, pb.BOARD_KIND_POINTS, pb.BOARD_PERIOD_ALL, player_id="d4")
    assert (r.you.rank, r.you.score, r.you.player_id) == (0, 6, "d4")


async def test_coins_won_board(own: tuple[Books, Clock], tlog: Log, stub: Any, settings: Settings) -> None:
    """Xiangqi at a coin table through the consumer, the second hand capped (coins.md §6.5): the 金币
    board holds what each player's coins moved, as paid; the points board stays empty."""
    books, _ = own
    w, lo, t = "cw-" + uid(), "cl-" + uid(), uid("xq")
    for p, n in ((w, 500), (lo, 100)):
        await books.post(Posting(f"fund/{p}", "test", (Leg(f"fund/{p}", b.system(b.COINS, "test"),
                                                            b.player(b.COINS, p), n, "fund"),)))
    consumer = tlog.consumer(books)
    await consumer.start()
    try:
        await tlog.publish(t, [settlement("xiangqi", [w, lo], [Transfer(1, 0, 2, "cuoc")], stake=10, coins=True)])
        await tlog.publish(t, [settlement("xiangqi", [w, lo], [Transfer(1, 0, 10, "cuoc")], stake=10, coins=True,
                                          hand_no=2)], version=2)

        async def posted() -> bool:
            return bool(await books.pool.fetchval("SELECT count(*) FROM ledger_postings WHERE table_id = $1", t) == 2)

        await until(posted)
    finally:
        await consumer.stop()
    rows = await whole(stub, settings, "xiangqi", pb.BOARD_KIND_COINS, pb.BOARD_PERIOD_MONTH)
    assert [(x.rank, x.player_id, x.score, x.hands) for x in rows] == [(1, w, 100, 2), (2, lo, -100, 2)]
    assert not (await board(stub, settings, "xiangqi", pb.BOARD_KIND_POINTS, pb.BOARD_PERIOD_ALL)).rows


async def test_exactly_once_under_redelivery(own: tuple[Books, Clock], tlog: Log, stub: Any,
                                             settings: Settings) -> None:
    """A crash between commit and ack (the message redelivered to a fresh consumer), and the same
    settlement published again after the duplicate window: the boards count the hand once."""
    import asyncio

    books, _ = own
    a, c, t = "ea-" + uid(), "ec-" + uid(), uid("once")
    crash = CrashAfterCommit(t)
    durable = uid("d")
    first = tlog.consumer(books, durable, after_commit=crash)
    await first.start()
    s = settlement("o_an_quan", [a, c], [Transfer(0, 1, 3, "u")], stake=1, coins=False)
    seq = await tlog.publish(t, [s], msg_id=f"{t}-cmd")
    await until(lambda: asyncio.sleep(0, bool(crash.crashes)))
    await first.stop()
    second = tlog.consumer(books, durable)
    await second.start()
    try:
        async def drained() -> bool:
            info = await tlog.js.consumer_info(tlog.stream, durable)
            return bool(info.num_ack_pending == 0 and info.num_pending == 0)

        await until(drained)
        await asyncio.sleep(1.5)
        again = await tlog.publish(t, [s], msg_id=f"{t}-cmd")
        assert again != seq

        async def seen() -> bool:
            return bool(await books.pool.fetchval("SELECT count(*) FROM ledger_inbox WHERE stream = $1 AND seq = $2",
                                                  tlog.stream, again) == 1)

        await until(seen)
    finally:
        await second.stop()
    assert crash.crashes == [seq]
    for period in (pb.BOARD_PERIOD_WEEK, pb.BOARD_PERIOD_MONTH, pb.BOARD_PERIOD_ALL):
        rows = await whole(stub, settings, "o_an_quan", pb.BOARD_KIND_POINTS, period)
        assert [(x.player_id, x.score, x.hands) for x in rows if x.player_id in (a, c)] == [(c, 3, 1), (a, -3, 1)]


@pytest.mark.parametrize(("req", "status", "reason"), [
    ({"game": ""}, grpc.StatusCode.INVALID_ARGUMENT, "bad_game"),
    ({"game": "chess"}, grpc.StatusCode.NOT_FOUND, "unknown_game"),
    ({"kind": 0}, grpc.StatusCode.INVALID_ARGUMENT, "bad_board"),
    ({"kind": 9}, grpc.StatusCode.INVALID_ARGUMENT, "bad_board"),
    ({"period": 0}, grpc.StatusCode.INVALID_ARGUMENT, "bad_period"),
    ({"page_size": 51}, grpc.StatusCode.INVALID_ARGUMENT, "bad_page_size"),
    ({"page_size": -1}, grpc.StatusCode.INVALID_ARGUMENT, "bad_page_size"),
    ({"page_token": "nonsense"}, grpc.StatusCode.INVALID_ARGUMENT, "bad_page_token"),
    ({"player_id": "a\nb"}, grpc.StatusCode.INVALID_ARGUMENT, "bad_player_id"),
])
async def test_bad_requests(stub: Any, settings: Settings, req: dict[str, Any], status: grpc.StatusCode,
                            reason: str) -> None:
    full = {"game": "phom", "kind": pb.BOARD_KIND_POINTS, "period": pb.BOARD_PERIOD_ALL, **req}
    with pytest.raises(grpc.aio.AioRpcError) as e:
        await stub.GetBoard(pb.GetBoardRequest(**full), metadata=md(settings))
    assert e.value.code() == status and reason_of(e.value) == reason


async def test_a_cursor_is_of_its_own_board(own: tuple[Books, Clock], stub: Any, settings: Settings) -> None:
    """A page token of one board is refused on another (game or kind), and keeps its period's key."""
    books, _ = own
    for i in range(3):
        await books.post(settle("lianliankan", uid("lt"), 1, {"l-host": -1 - i, f"l{i}": 1 + i}))
    r = await board(stub, settings, "lianliankan", pb.BOARD_KIND_POINTS, pb.BOARD_PERIOD_ALL, page_size=1)
    assert r.next_page_token
    for game, kind in (("phom", pb.BOARD_KIND_POINTS), ("lianliankan", pb.BOARD_KIND_COINS)):
        with pytest.raises(grpc.aio.AioRpcError) as e:
            await board(stub, settings, game, kind, pb.BOARD_PERIOD_ALL, page_token=r.next_page_token)
        assert reason_of(e.value) == "bad_page_token"
    nxt = await board(stub, settings, "lianliankan", pb.BOARD_KIND_POINTS, pb.BOARD_PERIOD_WEEK, page_size=1,
                      page_token=r.next_page_token)
    assert nxt.period_key == "all" and nxt.rows[0].rank == 2


async def test_no_token_no_board(stub: Any) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as e:
        await stub.GetBoard(pb.GetBoardRequest(game="phom", kind=1, period=3))
    assert e.value.code() == grpc.StatusCode.UNAUTHENTICATED



async def test_a_capped_hand_that_moves_nothing(own: tuple[Books, Clock], stub: Any, settings: Settings) -> None:
    """A 金币 hand whose loser has nothing (the cap leaves no transfer) is posted, and puts nobody
    on the 金币 board."""
    books, _ = own
    w, lo = "zw-" + uid(), "zl-" + uid()
    await books.post(settle("mahjong", uid("mt"), 1, {lo: -5, w: 5}, coins=True))
    rows = await whole(stub, settings, "mahjong", pb.BOARD_KIND_COINS, pb.BOARD_PERIOD_ALL)
    assert not [x for x in rows if x.player_id in (w, lo)]


async def test_the_migration_counts_what_was_posted_before(database_url: str) -> None:
    """V9's backfill (schema.BOARDS_BACKFILL) gives, from the postings alone, exactly the rows the
    postings raised live: points and 金币 hands, a capped one, a pot's, a net-zero one."""
    from chieu.ledger.schema import BOARDS_BACKFILL

    url = await new_database(database_url, uid("backfill_"))
    pool = await db.create_pool(url, max_size=2)
    try:
        async with pool.acquire() as conn:
            await db.migrate(conn, "ledger", MIGRATIONS)
        books = Books(pool)  # the real clock, as posted_at is
        await books.post(Posting("fund/r", "test", (Leg("fund/r", b.system(b.COINS, "test"),
                                                        b.player(b.COINS, "r"), 7, "fund"),)))
        await books.post(settle("phom", "t1", 1, {"a": -5, "c": 3, "d": 2}))
        await books.post(settle("phom", "t1", 2, {"c": -1, "a": 1}))
        await books.post(settle("phom", "t1", 3, {"d": 4, "a": -4}))
        await books.post(settle("phom", "t1", 4, {"d": -4, "a": 4}))
        await books.post(settle("xiangqi", "t2", 1, {"r": -10, "s": 10}, coins=True))  # capped at 7
        cur = b.points("gouji")
        ga = Leg("t3/1/0", b.player(cur, "a"), b.pot(cur, "t3"), 2, "ga")
        await books.post(Posting("t3/1/0", "settlement", (ga,), table_id="t3", hand_no=1, memo="gouji"))
        cols = "SELECT game, board, period, player_id, score, hands FROM ledger_boards ORDER BY 1, 2, 3, 4"
        live = [tuple(r) for r in await pool.fetch(cols)]
        assert ("xiangqi", "coins", "all", "s", 7, 1) in live and ("phom", "points", "all", "d", 2, 3) in live
        async with pool.acquire() as conn, conn.transaction():
            await conn.execute("DELETE FROM ledger_boards")
            await conn.execute(BOARDS_BACKFILL)
        assert [tuple(r) for r in await pool.fetch(cols)] == live
    finally:
        await pool.close()
