"""The ledger's collusion screen acts (issue 32, point 5): the farm of the issue — pairs of guests
wash-trading two hands each way at stake 10, then each losing its coins to the main account — is
flagged and the main account's winnings moved into its review escrow as the settlements are
posted from the table log; a route through a gà pot is seen; accounts aged past 72 h are seen;
honest play (random opponents, mixed results) is not flagged; an operator's review releases or
reverses a hold exactly once, and the books stay double-entry. Real PostgreSQL and nats-server."""

from __future__ import annotations

import asyncio
import random
import sys
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass

import asyncpg
import grpc
import pytest

from chieu.kit.settings import Settings
from chieu.ledger import books as b
from chieu.ledger import holds
from chieu.ledger.books import Books, Leg, Posting
from chieu.ledger.consumer import settlement_posting
from chieu.ledger.holds import Screen
from chieu.ledger.v1 import ledger_service_pb2 as gpb
from chieu.ledger.v1 import ledger_service_pb2_grpc as gpb_grpc
from tests.conftest import token
from tests.ledger.conftest import Log, settlement, uid, until
from tests.table.helpers import reason_of, refused

pytestmark = pytest.mark.integration


@dataclass(frozen=True)
class T:
    from_seat: int | None
    to_seat: int | None
    amount: int
    reason: str = "cuoc"


@pytest.fixture(scope="module")
def screened(pool: asyncpg.Pool) -> Books:
    """The books with the screen on, at its defaults (as the ledger runs)."""
    return Books(pool, Screen())


async def welcome(books: Books, *players: str, coins: int = 200, source: str = "welcome") -> None:
    """Each player's 金币: its welcome (or, ``source="adjustments"``, an operator's credit)."""
    for p in players:
        pid = f"welcome/{p}" if source == "welcome" else f"adjust/{p}"
        await books.post(Posting(pid, source if source == "welcome" else "adjust", (
            Leg(pid, b.system(b.COINS, source), b.player(b.COINS, p), coins, source),), actor="ops", memo="test"))


async def coins(books: Books, player: str) -> int:
    return await books.balance(b.player(b.COINS, player)) or 0


async def farm(tlog: Log, main: str, guests: Sequence[str]) -> list[str]:
    """The issue's script on the log: pairs of guests wash-trade two hands each way at stake 10
    (30 金币 a hand), then each guest loses its 200 金币 to ``main`` (20 units at stake 10)."""
    tables = []
    for i in range(0, len(guests), 2):
        a, c = guests[i], guests[i + 1]
        wash = uid("wash-")
        for h in range(4):
            winner = h % 2
            await tlog.publish(wash, [settlement("xiangqi", [a, c], [T(1 - winner, winner, 3)], stake=10, coins=True,
                                                 hand_no=h + 1)])
        tables.append(wash)
    for g in guests:
        dump = uid("dump-")
        await tlog.publish(dump, [settlement("xiangqi", [g, main], [T(0, 1, 20)], stake=10, coins=True)])
        tables.append(dump)
    return tables


async def test_the_wash_trade_then_lose_farm_is_flagged_and_its_winnings_held(tlog: Log, screened: Books) -> None:
    main, guests = uid("main-"), [uid("guest-") for _ in range(12)]
    await welcome(screened, main, *guests)
    consumer = tlog.consumer(screened)
    await consumer.start()
    try:
        await farm(tlog, main, guests)
        await until(lambda: _all_zero(screened, guests))
    finally:
        await consumer.stop()
    assert await coins(screened, main) == 200  # its own welcome: the 2,400 it was dumped are held
    assert await screened.balance(holds.escrow(main)) == 2400
    found = await holds.holds(screened.pool, main)
    assert len(found) == 1
    row, payers = found[0]
    assert (row["status"], row["code"], int(row["coins"])) == ("held", "net_dump_target", 2400)
    assert payers == dict.fromkeys(guests, 200)
    assert row["detail"].startswith("2400 金币 net from 12 accounts that lost it at least 90% of their net losses")
    held = await screened.held(main)
    assert held is not None and held["held_by"] == holds.SCREEN_ACTOR  # frozen: no coin table, no paid service
    for g in guests:  # the guests, each a payer, are not held
        assert await holds.holds(screened.pool, g) == [] and await screened.held(g) is None
    _, _, problems = await screened.audit()
    assert problems == []


async def _all_zero(books: Books, players: Sequence[str]) -> bool:
    return all([await coins(books, p) == 0 for p in players])


async def test_without_the_screen_the_farm_pays_the_main_account(tlog: Log, pool: asyncpg.Pool) -> None:
    """The control: the same farm through books without the screen (today's ledger) pays the 2,400 out."""
    plain = Books(pool)
    main, guests = uid("main-"), [uid("guest-") for _ in range(12)]
    await welcome(plain, main, *guests)
    consumer = tlog.consumer(plain)
    await consumer.start()
    try:
        await farm(tlog, main, guests)
        await until(lambda: _all_zero(plain, guests))
    finally:
        await consumer.stop()
    assert await coins(plain, main) == 2600 and await holds.holds(pool, main) == []


async def post(books: Books, table: str, players: Sequence[str], transfers: Sequence[T], *, stake: int = 10,
               hand_no: int = 1) -> None:
    s = settlement("phom", players, transfers, stake=stake, coins=True, hand_no=hand_no)
    p = settlement_posting(table, s)
    assert p is not None
    await books.post(p)


async def test_a_route_through_the_ga_pot_is_seen(screened: Books) -> None:
    """Guests lose into a table's gà pot and the main account wins the pot: the pot is a
    pass-through, its payout counted as paid by its feeders."""
    main, guests = uid("main-"), [uid("guest-") for _ in range(4)]
    await welcome(screened, main, *guests, source="adjustments")
    table = uid("ga-")
    for i, g in enumerate(guests):  # each guest feeds the pot 150 (15 units at stake 10)
        await post(screened, table, [g, main], [T(0, None, 15, "ga")], hand_no=i + 1)
    assert await screened.balance(b.pot(b.COINS, table)) == 600
    await post(screened, table, [guests[0], main], [T(None, 1, 60, "an_ga")], hand_no=5)  # main takes the pot
    row, payers = (await holds.holds(screened.pool, main))[0]
    assert int(row["coins"]) == 600 and payers == dict.fromkeys(guests, 150)
    assert await coins(screened, main) == 200 and await screened.balance(holds.escrow(main)) == 600


async def test_accounts_aged_past_72_hours_and_flows_of_days_ago_are_seen(screened: Books) -> None:
    """Account age plays no part, and the flows of earlier days within the window still count
    (accounts funded otherwise than by the welcome alone: three payers are needed)."""
    main, guests = uid("main-"), [uid("guest-") for _ in range(3)]
    await welcome(screened, main, *guests, source="adjustments")
    async with screened.pool.acquire() as conn:
        await conn.execute("UPDATE ledger_accounts SET opened_at = now() - interval '10 days'"
                           " WHERE owner = ANY($1::text[])", [main, *guests])
    for g in guests[:2]:
        await post(screened, uid("t-"), [g, main], [T(0, 1, 20)])
    async with screened.pool.acquire() as conn:  # those two dumps were four days ago
        await conn.execute("UPDATE ledger_flows SET day = day - 4 WHERE payer = ANY($1::text[])", guests[:2])
    assert await holds.holds(screened.pool, main) == []  # two such payers: not yet
    await post(screened, uid("t-"), [guests[2], main], [T(0, 1, 20)])
    row, payers = (await holds.holds(screened.pool, main))[0]
    assert int(row["coins"]) == 600 and payers == dict.fromkeys(guests, 200)


@pytest.mark.parametrize("seed", [32, 7, 11])
async def test_honest_play_with_random_opponents_and_mixed_results_is_not_flagged(screened: Books, seed: int) -> None:
    rng = random.Random(seed)
    players = [uid("p-") for _ in range(30)]
    await welcome(screened, *players, coins=1000)
    strong = players[0]
    friends = (players[1], players[2])
    for h in range(500):
        if h % 10 == 0:
            pair = list(friends) if rng.random() < 0.5 else [friends[1], friends[0]]
            winner = h // 10 % 2
        else:
            pair = rng.sample(players, 2)
            if rng.random() < 0.2:
                pair = [strong, rng.choice(players[1:])]
            winner = 0 if pair[0] == strong and rng.random() < 0.75 else rng.randrange(2)
        await post(screened, uid("t-"), pair, [T(1 - winner, winner, rng.randrange(1, 4))],
                   stake=rng.choice((1, 10, 100)))
    async with screened.pool.acquire() as conn:
        held = await conn.fetch("SELECT player_id FROM ledger_review_holds WHERE player_id = ANY($1::text[])", players)
    assert held == []


async def _farmed(books: Books) -> tuple[str, list[str], int]:
    """A small farm posted straight to the books (three guests → main): the hold's id."""
    main, guests = uid("main-"), [uid("guest-") for _ in range(3)]
    await welcome(books, main, *guests)
    for g in guests:
        await post(books, uid("t-"), [g, main], [T(0, 1, 15)])
    ((row, _),) = await holds.holds(books.pool, main)
    return main, guests, int(row["id"])


@pytest.fixture
async def ledger(settings: Settings, ledger_server: str) -> AsyncIterator[gpb_grpc.LedgerServiceStub]:
    async with grpc.aio.insecure_channel(ledger_server) as channel:
        yield gpb_grpc.LedgerServiceStub(channel)


async def test_release_and_reverse_work_exactly_once_through_the_api(
        settings: Settings, screened: Books, ledger: gpb_grpc.LedgerServiceStub) -> None:
    ops = (("authorization", f"Bearer {token(settings, 'ops', 'operator')}"),)
    main, guests, hold = await _farmed(screened)
    listed = await ledger.ListReviewHolds(gpb.ListReviewHoldsRequest(player_id=main), metadata=ops)
    assert [(h.hold_id, h.coins, h.status) for h in listed.holds] == [(hold, 450, "held")]
    assert {p.player_id: p.coins for p in listed.holds[0].payers} == dict.fromkeys(guests, 150)
    reverse = gpb.ReviewHoldRequest(hold_id=hold, action=gpb.ReviewHoldRequest.ACTION_REVERSE,
                                    reason="chip dumping: the guests' coins go back")
    # a player (the main account itself) may neither list nor review
    mine = (("authorization", f"Bearer {token(settings, main)}"),)
    assert (await refused(ledger.ReviewHold(reverse, metadata=mine)))[0] == grpc.StatusCode.PERMISSION_DENIED
    assert (await refused(ledger.ListReviewHolds(gpb.ListReviewHoldsRequest(), metadata=mine)))[0] \
        == grpc.StatusCode.PERMISSION_DENIED
    assert await refused(ledger.ReviewHold(gpb.ReviewHoldRequest(hold_id=hold, reason="x"), metadata=ops)) \
        == (grpc.StatusCode.INVALID_ARGUMENT, "bad_action")
    assert await refused(ledger.ReviewHold(gpb.ReviewHoldRequest(
        hold_id=hold, action=gpb.ReviewHoldRequest.ACTION_RELEASE), metadata=ops)) \
        == (grpc.StatusCode.INVALID_ARGUMENT, "reason_required")
    done = await asyncio.gather(*(ledger.ReviewHold(reverse, metadata=ops) for _ in range(3)), return_exceptions=True)
    ok = [d for d in done if isinstance(d, gpb.ReviewHoldResponse)]
    assert len(ok) == 1, done  # three at once: one review, the others refused
    assert all(isinstance(d, grpc.aio.AioRpcError) and reason_of(d) == "hold_reviewed" for d in done if d not in ok)
    assert ok[0].hold.status == "reversed" and ok[0].posting_id == f"review/{hold}/reverse"
    for g in guests:
        assert await coins(screened, g) == 200  # each payer got back what it lost
    assert await coins(screened, main) == 200 and await screened.balance(holds.escrow(main)) == 0
    assert await screened.held(main) is None  # the screen's freeze is lifted with the review
    release = gpb.ReviewHoldRequest(hold_id=hold, action=gpb.ReviewHoldRequest.ACTION_RELEASE, reason="again")
    assert await refused(ledger.ReviewHold(release, metadata=ops)) \
        == (grpc.StatusCode.FAILED_PRECONDITION, "hold_reviewed")
    assert await refused(ledger.ReviewHold(gpb.ReviewHoldRequest(
        hold_id=10**12, action=gpb.ReviewHoldRequest.ACTION_RELEASE, reason="x"), metadata=ops)) \
        == (grpc.StatusCode.NOT_FOUND, "unknown_hold")

    main2, guests2, hold2 = await _farmed(screened)
    released = await ledger.ReviewHold(gpb.ReviewHoldRequest(
        hold_id=hold2, action=gpb.ReviewHoldRequest.ACTION_RELEASE, reason="a café's regulars: honest"), metadata=ops)
    assert released.hold.status == "released" and released.hold.reviewed_by == "ops"
    assert await coins(screened, main2) == 650 and await screened.balance(holds.escrow(main2)) == 0
    assert all([await coins(screened, g) == 50 for g in guests2])
    # released winnings are not held again by the next settlement of the same pattern
    await post(screened, uid("t-"), [guests2[0], main2], [T(0, 1, 1)])
    assert [r["status"] for r, _ in await holds.holds(screened.pool, main2, reviewed=True)] == ["released"]
    assert await coins(screened, main2) == 660
    async with screened.pool.acquire() as conn:
        postings = await conn.fetch("SELECT id, actor, memo FROM ledger_postings WHERE id LIKE $1 ORDER BY id",
                                    f"review/{hold}/%")
    # held at the second welcome-only payer (300), then the third's 150 added to the same hold
    assert [(p["id"], p["actor"]) for p in postings] == [(f"review/{hold}/hold/1", holds.SCREEN_ACTOR),
                                                         (f"review/{hold}/hold/2", holds.SCREEN_ACTOR),
                                                         (f"review/{hold}/reverse", "ops")]
    _, _, problems = await screened.audit()
    assert problems == []  # every currency sums to 0, every balance is its transfers


async def _cli(*args: str) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "chieu.cli", "holds", *args,
                                                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert "Traceback" not in err.decode(), err.decode()
    return proc.returncode or 0, out.decode(), err.decode()


async def test_the_operator_command_lists_and_reviews_once(settings: Settings, screened: Books,
                                                           ledger_server: str) -> None:
    main, guests, hold = await _farmed(screened)
    ops = ("--ledger", ledger_server, "--token", token(settings, "ops", "operator"))
    code, out, _ = await _cli(*ops, "--player", main)
    assert code == 0 and out.startswith(f"hold {hold}: {main} 450 金币 held (net_dump_target: ")
    assert all(f"{g} 150" in out for g in guests)
    assert (await _cli(*ops, str(hold), "--reverse"))[0] == 2  # a review needs its reason
    player = ("--ledger", ledger_server, "--token", token(settings, main))
    code, _, err = await _cli(*player, str(hold), "--release", "--reason", "mine")
    assert code == 1 and "PERMISSION_DENIED" in err
    code, out, _ = await _cli(*ops, str(hold), "--reverse", "--reason", "farm: coins back to the guests")
    assert code == 0 and f"posted review/{hold}/reverse" in out and "reversed by ops" in out
    code, _, err = await _cli(*ops, str(hold), "--release", "--reason", "again")
    assert code == 1 and "already reversed" in err
    assert all([await coins(screened, g) == 200 for g in guests])
