"""One contract (issue 24): an amount is checked before any account is looked up — 2^62 红心币
to convert is an amount error (bad_amount), not a missing account (it was unknown_account)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import grpc
import pytest

from chieu.kit.settings import Settings
from chieu.ledger.service import MAX_AMOUNT
from tests.ledger.test_service import Ledger, refused

from .conftest import uid

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
async def channel(ledger_server: str) -> AsyncIterator[grpc.aio.Channel]:
    ch = grpc.aio.insecure_channel(ledger_server)
    yield ch
    await ch.close()


@pytest.mark.parametrize("hearts", [2**62, 2**63 - 1])
async def test_an_amount_out_of_range_is_refused_before_the_account_is_looked_up(
        channel: grpc.aio.Channel, settings: Settings, hearts: int) -> None:
    nobody = uid("no-hearts-")
    me = Ledger(channel, settings, nobody)
    await refused(me.ConvertHearts(request_id=uid(), hearts=hearts), grpc.StatusCode.INVALID_ARGUMENT, "bad_amount")
    op = Ledger(channel, settings, "ops", "operator")
    await refused(op.ConvertHearts(request_id=uid(), player_id=nobody, hearts=hearts),
                  grpc.StatusCode.INVALID_ARGUMENT, "bad_amount")


async def test_the_largest_convertible_amount_reaches_the_books(channel: grpc.aio.Channel,
                                                                settings: Settings) -> None:
    """At the bound the amount is fine: what answers is the books (no such account here)."""
    most = MAX_AMOUNT // settings.hearts_to_coins
    me = Ledger(channel, settings, uid("bound-"))
    await refused(me.ConvertHearts(request_id=uid(), hearts=most), grpc.StatusCode.NOT_FOUND, "unknown_account")
    await refused(me.ConvertHearts(request_id=uid(), hearts=most + 1), grpc.StatusCode.INVALID_ARGUMENT,
                  "bad_amount")
