"""The commit–reveal round of client seeds (``chieu-fair-v2``) over gRPC: the Python client takes
part with no call of its own (a fresh seed per hand, revealed when asked), the hand is dealt from
the revealed seeds and verifies; a seat that withholds its reveal is stood up with a forced quit
by the table's clock and the hand dealt without it; the refusals reach the client with their
reasons."""

from __future__ import annotations

import asyncio

import grpc
import pytest

from chieu.kit.settings import Settings
from chieu.table import decide
from chieu.table.client import TableClient
from chieu.table.v1 import log_pb2
from chieu.table.v1 import table_service_pb2 as pb
from tests.conftest import token
from tests.table.helpers import refused

pytestmark = pytest.mark.integration

FAST = {"uWindowSeconds": 0, "turnSeconds": 30}


def _player(settings: Settings, addr: str, name: str, *roles: str) -> TableClient:
    return TableClient(addr, token(settings, name, *roles), player_id=name)


async def _table(settings: Settings, addr: str, names: list[str]) -> tuple[list[TableClient], str]:
    clients = [_player(settings, addr, n) for n in names]
    view = await clients[0].create("phom", FAST)
    for c in clients[1:]:
        await c.sit(view.table_id)
    return clients, view.table_id


async def _take_part(clients: list[TableClient], table_id: str) -> pb.TableView:
    """Each client, once, does what the round asks at the table's current view."""
    last = None
    for c in clients:
        last = await c.take_part(await c.get(table_id)) or last
    assert last is not None
    return last


async def test_the_clients_commit_and_reveal_and_the_hand_is_dealt_from_their_seeds(
        settings: Settings, table_server: str) -> None:
    clients, tid = await _table(settings, table_server, ["fr1", "fr2", "fr3"])
    view = await _take_part(clients, tid)
    assert sorted(view.committed) == ["fr1", "fr2", "fr3"] and view.round_hand_no == 1
    assert await refused(clients[1].reveal_seed(tid, bytes(32))) == (grpc.StatusCode.FAILED_PRECONDITION,
                                                                     "reveal_too_early")
    view = await clients[0].start(tid)
    assert view.status == pb.TABLE_STATUS_WAITING and list(view.reveal_players) == ["fr1", "fr2", "fr3"]
    assert await refused(clients[1].reveal_seed(tid, bytes(32))) == (grpc.StatusCode.INVALID_ARGUMENT,
                                                                     "reveal_mismatch")
    assert await refused(clients[1].commit_seed(tid, "0" * 64)) == (grpc.StatusCode.FAILED_PRECONDITION,
                                                                    "commitments_closed")
    view = await _take_part(clients, tid)
    assert view.status == pb.TABLE_STATUS_PLAYING and list(view.hand_players) == ["fr1", "fr2", "fr3"]
    # during the hand the clients commit for the next one: off the move path
    view = await _take_part(clients, tid)
    assert sorted(view.committed) == ["fr1", "fr2", "fr3"] and view.round_hand_no == 2

    auditor = _player(settings, table_server, "fr-auditor", "auditor")
    records = [r.record async for r in auditor.stub.AuditLog(pb.AuditLogRequest(table_id=tid),
                                                             metadata=auditor.metadata)]
    started = [e.hand_started for r in records for e in r.events if e.WhichOneof("kind") == "hand_started"]
    assert [h.algorithm for h in started] == ["chieu-fair-v2"]
    revealed = {e.client_revealed.player_id: e.client_revealed.seed for r in records for e in r.events
                if e.WhichOneof("kind") == "client_revealed"}
    assert list(started[0].client_seeds) == [revealed[p] for p in started[0].players]
    operator = _player(settings, table_server, "fr-ops", "operator")
    await operator.stub.AbortHand(pb.AbortHandRequest(table_id=tid, reason="test"), metadata=operator.metadata)
    (verdict,) = (await auditor.stub.VerifyDeals(pb.VerifyDealsRequest(table_id=tid),
                                                 metadata=auditor.metadata)).hands
    assert verdict.deal_ok and verdict.commitment_ok and verdict.committed_first and verdict.reveals_ok, verdict
    for c in [*clients, auditor, operator]:
        await c.close()


async def test_a_withheld_reveal_is_a_forced_quit_by_the_clock(settings: Settings, table_server: str,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(decide, "REVEAL_S", 1.0)
    clients, tid = await _table(settings, table_server, ["fw1", "fw2", "fw3"])
    await _take_part(clients, tid)
    await clients[0].start(tid)
    honest = [clients[0], clients[2]]
    await _take_part(honest, tid)  # fw2 withholds
    view = await clients[0].get(tid)
    for _ in range(100):
        if view.status == pb.TABLE_STATUS_PLAYING:
            break
        await asyncio.sleep(0.1)
        view = await clients[0].get(tid)
    assert view.status == pb.TABLE_STATUS_PLAYING and list(view.hand_players) == ["fw1", "fw3"]
    assert all(s.player_id != "fw2" for s in view.seats)
    auditor = _player(settings, table_server, "fw-auditor", "auditor")
    records = [r.record async for r in auditor.stub.AuditLog(pb.AuditLogRequest(table_id=tid),
                                                             metadata=auditor.metadata)]
    quits = [e.forced_quit for r in records for e in r.events if e.WhichOneof("kind") == "forced_quit"]
    left = [e.player_left for r in records for e in r.events if e.WhichOneof("kind") == "player_left"]
    assert [(q.player_id, q.hand_no) for q in quits] == [("fw2", 1)]
    assert [(p.player_id, p.reason) for p in left] == [("fw2", decide.WITHHELD)]
    system = [r for r in records if any(e.WhichOneof("kind") == "forced_quit" for e in r.events)]
    assert system[0].actor == "system" and isinstance(system[0], log_pb2.Record)
    for c in [*clients, auditor]:
        await c.close()
