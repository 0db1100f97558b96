"""The ledger's gRPC API on a real ledger server (real PostgreSQL, real nats-server): reads,
金币 and 红心币, paid services, operator calls, and every bad request refused with a stable
reason and nothing changed. Then a whole hand through the real table service into the books."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest

from chieu.kit.settings import Settings
from chieu.ledger.v1 import ledger_service_pb2 as pb
from chieu.ledger.v1 import ledger_service_pb2_grpc as pb_grpc
from tests.conftest import credential, token
from tests.table.helpers import client, play_to_end, reason_of

from .conftest import uid

pytestmark = pytest.mark.integration


class Ledger:
    """A LedgerService stub calling as one principal."""

    def __init__(self, channel: grpc.aio.Channel, settings: Settings, player: str, *roles: str) -> None:
        self.stub = pb_grpc.LedgerServiceStub(channel)
        self.md = (("authorization", f"Bearer {token(settings, player, *roles)}"),)
        self.player = player

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.stub, name)

        async def call(**kw: Any) -> Any:
            req = getattr(pb, f"{name}Request")(**kw)
            return await method(req, metadata=self.md)

        return call


@pytest.fixture(scope="module")
async def channel(ledger_server: str) -> AsyncIterator[grpc.aio.Channel]:
    ch = grpc.aio.insecure_channel(ledger_server)
    yield ch
    await ch.close()


async def refused(coro: Any, status: grpc.StatusCode, reason: str) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as e:
        await coro
    assert e.value.code() == status, e.value.details()
    assert reason_of(e.value) == reason


def bal(resp: Any, currency: str) -> int:
    for x in resp.balances:
        if x.currency == currency:
            return int(x.amount)
    return 0


async def test_welcome_once_and_eligibility(channel: grpc.aio.Channel, settings: Settings) -> None:
    """GC-4: a new user gets 200 once; GC-1: 3 coins refused, 4 allowed."""
    p = uid("p")
    me, lobby = Ledger(channel, settings, p), Ledger(channel, settings, "service:lobby", "service")
    # the player cannot claim it: the lobby pays it, within its limits per address and device
    await refused(me.ClaimWelcome(player_id=p), grpc.StatusCode.PERMISSION_DENIED, "role_required")
    r = await lobby.ClaimWelcome(player_id=p)
    assert bal(r.result, "coins") == 200 and not r.result.replayed
    again = await lobby.ClaimWelcome(player_id=p)
    assert again.result.replayed and bal(await me.GetBalances(player_id=p), "coins") == 200
    op = Ledger(channel, settings, "op", "operator")
    three, four = uid("three"), uid("four")
    await op.Adjust(adjustment_id=uid(), player_id=three, currency="coins", delta=3, reason="GC-1")
    await op.Adjust(adjustment_id=uid(), player_id=four, currency="coins", delta=4, reason="GC-1")
    table = Ledger(channel, settings, "table")
    table.md = (("authorization", f"Bearer {credential('table')}"),)  # the table's gate asks
    e3 = await table.CheckEligibility(player_id=three)
    e4 = await table.CheckEligibility(player_id=four)
    assert (e3.eligible, e3.coins, e3.minimum) == (False, 3, 3)
    assert (e4.eligible, e4.coins) == (True, 4)
    assert not (await table.CheckEligibility(player_id=uid("nobody"))).eligible
    assert (await me.CheckEligibility()).eligible  # one's own
    await refused(me.CheckEligibility(player_id=three), grpc.StatusCode.PERMISSION_DENIED, "not_yours")


async def test_hearts_purchase_and_conversion(channel: grpc.aio.Channel, settings: Settings) -> None:
    p = uid("p")
    op, me = Ledger(channel, settings, "provider", "operator"), Ledger(channel, settings, p)
    pay = uid("pay")
    await op.CreditPurchase(payment_id=pay, player_id=p, hearts=30)
    r = await op.CreditPurchase(payment_id=pay, player_id=p, hearts=30)
    assert r.result.replayed and bal(r.result, "hearts") == 30
    await refused(op.CreditPurchase(payment_id=pay, player_id=p, hearts=31), grpc.StatusCode.FAILED_PRECONDITION,
                  "id_reused")
    await refused(me.CreditPurchase(payment_id=uid(), player_id=p, hearts=5), grpc.StatusCode.PERMISSION_DENIED,
                  "role_required")
    c = await me.ConvertHearts(request_id="c1", player_id=p, hearts=4)
    assert bal(c.result, "hearts") == 26 and bal(c.result, "coins") == 4 * settings.hearts_to_coins
    await refused(me.ConvertHearts(request_id="c2", player_id=p, hearts=27), grpc.StatusCode.FAILED_PRECONDITION,
                  "insufficient_hearts")
    await refused(me.ConvertHearts(request_id="c1", player_id=p, hearts=5), grpc.StatusCode.FAILED_PRECONDITION,
                  "id_reused")
    b = await me.GetBalances(player_id=p)
    assert bal(b, "hearts") == 26 and bal(b, "coins") == 40


async def test_paid_services(channel: grpc.aio.Channel, settings: Settings, pool: Any, ladder_server: str) -> None:
    p = uid("p")
    me, op = Ledger(channel, settings, p), Ledger(channel, settings, "op", "operator")
    await op.Adjust(adjustment_id=uid(), player_id=p, currency="coins", delta=1000, reason="test funds")
    await op.Adjust(adjustment_id=uid(), player_id=p, currency="points:phom", delta=-37, reason="a losing streak")
    r = await me.ResetNegativeScore(request_id="r1", player_id=p, game="phom")
    assert bal(r.result, "points:phom") == 0 and bal(r.result, "coins") == 1000 - settings.price_negative_reset
    again = await me.ResetNegativeScore(request_id="r1", player_id=p, game="phom")
    assert again.result.replayed
    await refused(me.ResetNegativeScore(request_id="r2", player_id=p, game="phom"),
                  grpc.StatusCode.FAILED_PRECONDITION, "not_negative")
    await refused(me.ResetNegativeScore(request_id="r3", player_id=p, game="gouji"), grpc.StatusCode.NOT_FOUND,
                  "unknown_account")
    await refused(me.ResetReputation(request_id="rep", player_id=p), grpc.StatusCode.FAILED_PRECONDITION,
                  "nothing_to_reset")  # a full reputation: nothing charged (tests/ledger/test_reset_reputation.py)
    await me.RequestSong(request_id="song", player_id=p, song="Bèo dạt mây trôi", target="room-1")
    m = await me.BuyMembership(request_id="m", player_id=p, days=3)
    spent = settings.price_negative_reset + settings.price_song + 3 * settings.price_membership_day
    assert bal(m.result, "coins") == 1000 - spent
    assert await pool.fetchval("SELECT days FROM ledger_memberships WHERE player_id = $1", p) == 3
    assert (await me.GetBalances()).membership_days == 3
    topics = [r["topic"] for r in await pool.fetch(
        "SELECT o.topic FROM ledger_outbox o JOIN ledger_postings p ON p.id = o.posting_id"
        " WHERE p.id LIKE $1 ORDER BY o.id", f"%/{p}/%")]
    assert topics == ["song", "membership"]
    poor = uid("poor")
    await op.Adjust(adjustment_id=uid(), player_id=poor, currency="coins", delta=5, reason="x")
    await refused(Ledger(channel, settings, poor).RequestSong(request_id="s", player_id=poor, song="x"),
                  grpc.StatusCode.FAILED_PRECONDITION, "insufficient_coins")
    await refused(me.RequestSong(request_id="s", player_id=poor, song="x"), grpc.StatusCode.PERMISSION_DENIED,
                  "not_yours")


async def test_bad_requests_change_nothing(channel: grpc.aio.Channel, settings: Settings) -> None:
    p = uid("p")
    op = Ledger(channel, settings, "op", "operator")
    await op.Adjust(adjustment_id=uid(), player_id=p, currency="coins", delta=10, reason="x")
    before = await op.GetBalances(player_id=p)
    cases = [
        (op.Adjust(adjustment_id=uid(), player_id=p, currency="coins", delta=0, reason="x"),
         grpc.StatusCode.INVALID_ARGUMENT, "bad_amount"),
        (op.Adjust(adjustment_id=uid(), player_id=p, currency="coins", delta=5, reason=" "),
         grpc.StatusCode.INVALID_ARGUMENT, "reason_required"),
        (op.Adjust(adjustment_id=uid(), player_id=p, currency="dollars", delta=5, reason="x"),
         grpc.StatusCode.INVALID_ARGUMENT, "bad_currency"),
        (op.Adjust(adjustment_id=uid(), player_id=p, currency="coins", delta=5, reason="x" * 501),
         grpc.StatusCode.INVALID_ARGUMENT, "bad_reason"),  # kept in the books for ever: bounded
        (op.Adjust(adjustment_id=uid(), player_id=p, currency="coins", delta=5, reason="ok\x1b[2Jwiped"),
         grpc.StatusCode.INVALID_ARGUMENT, "bad_reason"),  # a terminal escape for whoever reads the books
        (op.Adjust(adjustment_id=uid() + "\x07", player_id=p, currency="coins", delta=5, reason="x"),
         grpc.StatusCode.INVALID_ARGUMENT, "bad_adjustment_id"),  # a control character in an id
        (op.CreditReward(reward_id=uid(), player_id=p, coins=5, reason="line\u2028break"),
         grpc.StatusCode.INVALID_ARGUMENT, "bad_reason"),
        (op.RequestSong(request_id=uid(), player_id=p, song="x", target="t" * 201),
         grpc.StatusCode.INVALID_ARGUMENT, "bad_target"),
        (op.Adjust(adjustment_id=uid(), player_id=p, currency="coins", delta=-11, reason="x"),
         grpc.StatusCode.FAILED_PRECONDITION, "insufficient_coins"),
        (op.Adjust(adjustment_id=uid(), player_id=uid("ghost"), currency="coins", delta=-1, reason="x"),
         grpc.StatusCode.NOT_FOUND, "unknown_account"),
        (op.CreditPurchase(payment_id=uid(), player_id=p, hearts=-3), grpc.StatusCode.INVALID_ARGUMENT,
         "bad_amount"),
        (op.ConvertHearts(request_id=uid(), player_id=p, hearts=1), grpc.StatusCode.NOT_FOUND, "unknown_account"),
        (op.GetHistory(player_id=uid("ghost")), grpc.StatusCode.NOT_FOUND, "unknown_account"),
        (op.GetHistory(player_id=p, page_size=501), grpc.StatusCode.INVALID_ARGUMENT, "bad_page_size"),
        (op.GetHistory(player_id=p, page_token="zz"), grpc.StatusCode.INVALID_ARGUMENT, "bad_page_token"),
        (op.BuyMembership(request_id=uid(), player_id=p, days=0), grpc.StatusCode.INVALID_ARGUMENT, "bad_amount"),
        (op.GetPot(table_id=""), grpc.StatusCode.INVALID_ARGUMENT, "bad_table_id"),
        (Ledger(channel, settings, "someone").GetBalances(player_id=p), grpc.StatusCode.PERMISSION_DENIED,
         "not_yours"),
        (Ledger(channel, settings, "someone").Audit(), grpc.StatusCode.PERMISSION_DENIED, "role_required"),
    ]
    for call, status, reason in cases:
        await refused(call, status, reason)
    adj = uid("adj")
    await op.Adjust(adjustment_id=adj, player_id=p, currency="coins", delta=2, reason="x")
    await refused(op.Adjust(adjustment_id=adj, player_id=p, currency="coins", delta=3, reason="x"),
                  grpc.StatusCode.FAILED_PRECONDITION, "id_reused")
    after = await op.GetBalances(player_id=p)
    assert bal(after, "coins") == bal(before, "coins") + 2
    stub = pb_grpc.LedgerServiceStub(channel)
    with pytest.raises(grpc.aio.AioRpcError) as e:
        await stub.GetBalances(pb.GetBalancesRequest(player_id=p))
    assert e.value.code() == grpc.StatusCode.UNAUTHENTICATED
    audit = await Ledger(channel, settings, "aud", "auditor").Audit()
    assert audit.ok, list(audit.problems)


async def test_a_hand_through_the_table_service(channel: grpc.aio.Channel, settings: Settings,
                                                table_server: str) -> None:
    """Ô ăn quan at a coin table, stake 5: the real table appends the Settlement, the ledger's
    consumer posts it, the history shows it by table and hand, the audit holds."""
    a, c = uid("a"), uid("b")
    op = Ledger(channel, settings, "op", "operator")
    for p in (a, c):
        await op.Adjust(adjustment_id=uid(), player_id=p, currency="coins", delta=10_000, reason="test funds")
    players = {a: client(settings, table_server, a), c: client(settings, table_server, c)}
    t = await players[a].create("o_an_quan", {"maxMoves": 300}, stake=5, currency=2)
    await players[c].sit(t.table_id)
    view = await players[a].start(t.table_id)
    await play_to_end(view, players)
    import asyncio

    for _ in range(200):
        h = await op.GetHistory(player_id=a, table_id=t.table_id)
        if h.entries:
            break
        await asyncio.sleep(0.05)
    assert h.entries and all(e.table_id == t.table_id and e.hand_no == 1 for e in h.entries)
    ba, bc = [bal(await op.GetBalances(player_id=p), "coins") for p in (a, c)]
    assert ba + bc == 20_000 and (ba - 10_000) % 5 == 0
    assert sum(e.delta for e in h.entries) == ba - 10_000
    pot = await op.GetPot(table_id=t.table_id)
    assert pot.balance == 0
    for cl in players.values():
        await cl.close()
    assert (await op.Audit()).ok


async def test_history_paging_and_filters(channel: grpc.aio.Channel, settings: Settings) -> None:
    p = uid("p")
    op = Ledger(channel, settings, "op", "operator")
    for i in range(7):
        await op.Adjust(adjustment_id=uid(), player_id=p, currency="coins", delta=i + 1, reason=f"r{i}")
    await op.Adjust(adjustment_id=uid(), player_id=p, currency="points:phom", delta=-2, reason="x")
    seen, token_ = [], ""
    while True:
        page = await op.GetHistory(player_id=p, page_size=3, page_token=token_)
        seen += [e.delta for e in page.entries]
        token_ = page.next_page_token
        if not token_:
            break
    assert seen == [-2, 7, 6, 5, 4, 3, 2, 1]
    coins = await op.GetHistory(player_id=p, currency="coins", page_size=2)
    assert [e.delta for e in coins.entries] == [7, 6] and coins.next_page_token
    assert [e.reason for e in (await op.GetHistory(player_id=p, reason="adjust")).entries][:1] == ["adjust"]


async def test_own_calls_default_to_the_caller(channel: grpc.aio.Channel, settings: Settings) -> None:
    """A call on the caller's own account may leave ``player_id`` empty: the token names the
    caller. Naming another player still needs a staff role."""
    me = Ledger(channel, settings, uid("own"))
    first = await Ledger(channel, settings, "service:lobby", "service").ClaimWelcome(player_id=me.player)
    assert not first.result.replayed
    assert bal(await me.GetBalances(), "coins") == 200
    assert bal(await me.GetBalances(player_id=me.player), "coins") == 200
    assert len((await me.GetHistory()).entries) == 1
    other = Ledger(channel, settings, uid("other"))
    await refused(other.GetBalances(player_id=me.player), grpc.StatusCode.PERMISSION_DENIED, "not_yours")
    assert bal(await other.GetBalances(), "coins") == 0


async def test_the_prices_a_player_sees_are_what_a_purchase_costs(channel: grpc.aio.Channel,
                                                                   settings: Settings) -> None:
    """ListPrices (issue 25: the portal shows a price before one buys): the operator's settings,
    and a song bought right after costs exactly what it said."""
    p = uid("price")
    me, lobby = Ledger(channel, settings, p), Ledger(channel, settings, "service:lobby", "service")
    prices = await me.ListPrices()
    assert (prices.negative_reset, prices.reputation_reset, prices.song, prices.membership_day,
            prices.hearts_to_coins) == (settings.price_negative_reset, settings.price_reputation_reset,
                                        settings.price_song, settings.price_membership_day, settings.hearts_to_coins)
    before = bal((await lobby.ClaimWelcome(player_id=p)).result, "coins")
    await me.RequestSong(player_id=p, target=uid("t"), song="trong-com", request_id=uid("r"))
    assert bal(await me.GetBalances(player_id=p), "coins") == before - prices.song
    await refused(pb_grpc.LedgerServiceStub(channel).ListPrices(pb.ListPricesRequest()),
                  grpc.StatusCode.UNAUTHENTICATED, "no_token")
