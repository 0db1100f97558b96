"""A 信誉度复位 with nothing to reset is refused and charges nothing (issue 32, point 8): the ledger
asks the ladder (``GetReputation``, as ``service:ledger``) before it charges; a reputation at its
start is ``nothing_to_reset``, one below it is reset and paid once; a ladder that cannot answer
refuses (``ladder_unavailable``) and charges nothing; a request paid before is answered as it was."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import grpc
import pytest

from chieu.kit.errors import GuardedServer
from chieu.kit.settings import Settings
from chieu.ledger.books import Books
from chieu.ledger.peers import Ladder
from chieu.ledger.service import LedgerService
from chieu_tools import localnats
from tests.conftest import credential

from .conftest import uid
from .test_service import Ledger, bal, refused

pytestmark = pytest.mark.integration


async def coins(op: Ledger, player: str) -> int:
    return bal(await op.GetBalances(player_id=player), "coins")


async def test_nothing_to_reset_is_refused_and_a_lowered_reputation_is_reset_once(
        settings: Settings, ledger_server: str, ladder_server: str, pool: Any) -> None:
    p = uid("rep")
    async with grpc.aio.insecure_channel(ledger_server) as ch:
        me, op = Ledger(ch, settings, p), Ledger(ch, settings, "op", "operator")
        await op.Adjust(adjustment_id=uid(), player_id=p, currency="coins", delta=500, reason="test funds")
        await refused(me.ResetReputation(request_id="r0", player_id=p), grpc.StatusCode.FAILED_PRECONDITION,
                      "nothing_to_reset")
        await refused(op.ResetReputation(request_id="r0", player_id=p), grpc.StatusCode.FAILED_PRECONDITION,
                      "nothing_to_reset")  # an operator's too
        assert await coins(op, p) == 500
        # two quits (the ladder's own table: it shares the test database)
        await pool.execute("INSERT INTO ladder_reputation (player_id, score, quits) VALUES ($1, 80, 2)", p)
        paid = await me.ResetReputation(request_id="r1", player_id=p)
        assert bal(paid.result, "coins") == 500 - settings.price_reputation_reset
        await pool.execute("UPDATE ladder_reputation SET score = 100 WHERE player_id = $1", p)  # the ladder applied it
        again = await me.ResetReputation(request_id="r1", player_id=p)  # the same request: as it was, not again
        assert again.result.replayed
        await refused(me.ResetReputation(request_id="r2", player_id=p), grpc.StatusCode.FAILED_PRECONDITION,
                      "nothing_to_reset")
        assert await coins(op, p) == 500 - settings.price_reputation_reset


async def test_a_ladder_that_cannot_answer_charges_nothing(settings: Settings, pool: Any) -> None:
    nowhere = replace(settings, ladder_addr=f"127.0.0.1:{localnats.free_port()}", service_token=credential("ledger"))
    ladder = Ladder(nowhere)
    server = grpc.aio.server()
    addr = f"127.0.0.1:{localnats.free_port()}"
    from chieu.ledger.v1 import ledger_service_pb2_grpc as pb_grpc

    pb_grpc.add_LedgerServiceServicer_to_server(LedgerService(Books(pool), nowhere, resettable=ladder.resettable),
                                                GuardedServer(server))  # type: ignore[arg-type]
    server.add_insecure_port(addr)
    await server.start()
    p = uid("away")
    try:
        async with grpc.aio.insecure_channel(addr) as ch:
            me, op = Ledger(ch, settings, p), Ledger(ch, settings, "op", "operator")
            await op.Adjust(adjustment_id=uid(), player_id=p, currency="coins", delta=300, reason="test funds")
            await refused(me.ResetReputation(request_id="r1", player_id=p), grpc.StatusCode.UNAVAILABLE,
                          "ladder_unavailable")
            assert await coins(op, p) == 300
    finally:
        await server.stop(0)
        await ladder.close()
