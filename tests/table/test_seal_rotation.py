"""Sealed hands across a seal key's rotation and a kill -9 (issue 26), on the session's nats-server.

- Rotation: a table made and dealt under key A; the table processes move to the keyset [B, A]: the
  hand in play goes on, the next deal is sealed under B; once that hand is over A is retired ([B]),
  and the table still loads (its finished hands open with their revealed seeds) and deals again.
  Without the key its next deal was sealed under, a table refuses to deal (``seal_key_missing``).
- Kill -9: a table service process killed mid-hand; a new one carries the sealed hand on from the
  log, and the hand verifies once it is over.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from chieu.games import registry
from chieu.kit.errors import ServiceError
from chieu.kit.eventstore import EventStore
from chieu.kit.names import TABLES
from chieu.kit.settings import Settings
from chieu.table import decide
from chieu.table.client import game_view
from chieu.table.tables import Tables
from chieu.table.v1 import log_pb2
from chieu.tablelog.fold import Table
from chieu.tablelog.sealing import SealKeys
from chieu.tablelog.verify import verify
from chieu_tools import localnats
from tests.conftest import nats_env
from tests.table.helpers import client, play_to_end, sowings

pytestmark = pytest.mark.integration


async def _moves(tables: Tables, tid: str, n: int) -> Table:
    """``n`` first-legal Ô ăn quan moves (fewer if the hand ends)."""
    live = await tables.get(tid)
    table = live.table
    for i in range(n):
        if not table.playing:
            break
        seat = table.game_state.to_move
        move = registry.get("o_an_quan").legal(table.game_state, seat)[0]
        player = table.hand_players[seat]
        table = await tables.execute(tid, player, f"m{table.version}-{i}",
                                     lambda t, now, p=player, m=move: decide.act(t, p, m, now))
    return table


async def _deal(tables: Tables, tid: str) -> Table:
    return await tables.execute(tid, "r1", f"deal-{random.getrandbits(32):x}",
                                lambda t, now: decide.start_hand(t, "r1", now, *tables.seeds_to_deal(t)))


def _started(records: list[log_pb2.Record]) -> list[log_pb2.HandStarted]:
    return [e.hand_started for r in records for e in r.events if e.WhichOneof("kind") == "hand_started"]


async def test_a_rotated_seal_key_keeps_the_hands_in_play_and_can_be_retired(settings: Settings) -> None:
    a, b = SealKeys.generate(), SealKeys.generate()
    (kid_a, key_a), (kid_b, key_b) = next(iter(a.keys.items())), next(iter(b.keys.items()))
    rotated = SealKeys({kid_b: key_b, kid_a: key_a}, kid_b)
    store = await EventStore.connect(settings.nats_url, stream=TABLES, creds=settings.nats_creds)
    own = replace(settings, snapshot_every=10_000)  # every load replays the log
    tid = f"rot-{random.getrandbits(40):x}"
    try:
        first = Tables(store, own, a)
        await first.execute(tid, "r1", "c0", lambda t, now: decide.create(
            t, "o_an_quan", {}, "r1", next_seed=a.new_seed(tid, 1)), create=True)
        await first.execute(tid, "r2", "c1", lambda t, now: decide.take_seat(t, "r2", None))
        table = await _deal(first, tid)
        assert table.next_seed is not None and table.next_seed.key_id == kid_a
        await _moves(first, tid, 3)
        await first.close()

        second = Tables(store, own, rotated)  # the rotation: B seals, A still opens
        version = (await second.get(tid)).table.version
        table = await _moves(second, tid, 2)
        assert table.version == version + 2  # the hand sealed under A goes on
        table = await second.execute(tid, "op", "abort-1", lambda t, now: decide.abort_hand(t, "rotation test"))
        assert not table.playing
        table = await _deal(second, tid)  # hand 2: its seed was sealed under A, the next one under B
        assert table.next_seed is not None and table.next_seed.key_id == kid_b
        await _moves(second, tid, 2)
        await second.execute(tid, "op", "abort-2", lambda t, now: decide.abort_hand(t, "rotation test"))
        await second.close()

        retired = Tables(store, own, b)  # A retired: hands 1 and 2 are over, hand 3's seed is B's
        table = (await retired.get(tid)).table
        assert table.hand_no == 2 and not table.playing
        table = await _deal(retired, tid)
        assert table.playing and table.hand_no == 3
        await _moves(retired, tid, 2)
        await retired.close()

        stranger = Tables(store, own, SealKeys.generate())  # a keyset without B: hand 3 in play cannot open
        with pytest.raises(Exception, match="seal key"):
            await stranger.get(tid)
        await stranger.close()

        records = [log_pb2.Record.FromString(s.data) for s in await store.read(tid)]
        assert [h.server_seed for h in _started(records)] == [b"", b"", b""]  # sealed, all three
        verdicts = verify(tid, list(enumerate(records, 1)))
        assert [(v.hand_no, v.ok, v.revealed) for v in verdicts] == [(1, True, True), (2, True, True),
                                                                      (3, False, False)]
    finally:
        await store.close()


async def test_a_table_whose_next_deal_is_sealed_under_a_missing_key_refuses_to_deal(settings: Settings) -> None:
    a = SealKeys.generate()
    store = await EventStore.connect(settings.nats_url, stream=TABLES, creds=settings.nats_creds)
    tid = f"rot-{random.getrandbits(40):x}"
    try:
        first = Tables(store, settings, a)
        await first.execute(tid, "r1", "c0", lambda t, now: decide.create(
            t, "o_an_quan", {}, "r1", next_seed=a.new_seed(tid, 1)), create=True)
        await first.execute(tid, "r2", "c1", lambda t, now: decide.take_seat(t, "r2", None))
        await first.close()
        without = Tables(store, settings, SealKeys.generate())
        with pytest.raises(ServiceError) as refused:
            await _deal(without, tid)
        assert refused.value.reason == "seal_key_missing"
        assert (await without.get(tid)).table.hand_no == 0  # nothing dealt, nothing appended
        await without.close()
    finally:
        await store.close()


def _table_process(settings: Settings, port: int, log: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, **nats_env("table"), "NATS_URL": settings.nats_url, "CHIEU_TABLE_ADDR": f"127.0.0.1:{port}",
           "CHIEU_SEAL_KEYS": settings.seal_keys, "CHIEU_SERVICE_TOKEN": settings.service_token,
           "CHIEU_LEDGER_ADDR": "", "CHIEU_LADDER_ADDR": "", "CHIEU_LOBBY_ADDR": ""}
    with log.open("ab") as out:
        proc = subprocess.Popen([sys.executable, "-m", "chieu.table"], env=env, stdout=out, stderr=subprocess.STDOUT)
    localnats.wait_for_port(port, timeout=60, proc=proc)
    return proc


@pytest.mark.e2e
async def test_a_table_process_killed_mid_hand_carries_the_sealed_hand_on(settings: Settings, tmp_path: Path) -> None:
    port = localnats.free_port()
    addr = f"127.0.0.1:{port}"
    proc = _table_process(settings, port, tmp_path / "table.log")
    p, q = client(settings, addr, "kill-p"), client(settings, addr, "kill-q")
    try:
        t = await p.create("o_an_quan", {"maxMoves": 40})
        await q.sit(t.table_id)
        view = await p.start(t.table_id)
        players = {"kill-p": p, "kill-q": q}
        mover = players[view.hand_players[game_view(view).to_move]]
        await mover.act(t.table_id, "o_an_quan", sowings(game_view(view))[0])
        view = await p.get(t.table_id)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        proc = _table_process(settings, port, tmp_path / "table.log")  # a new process: the log, sealed, is all
        await p.close()
        await q.close()
        p, q = client(settings, addr, "kill-p"), client(settings, addr, "kill-q")
        resumed = await p.get(t.table_id)
        assert resumed.version == view.version and resumed.game_view == view.game_view  # opened again
        end = await play_to_end(resumed, {"kill-p": p, "kill-q": q})
        assert end.status != resumed.status
        auditor = client(settings, addr, "kill-auditor", "auditor")
        from chieu.table.v1 import table_service_pb2 as pb

        hands = (await auditor.stub.VerifyDeals(pb.VerifyDealsRequest(table_id=t.table_id),
                                                metadata=auditor.metadata)).hands
        assert [(h.hand_no, h.revealed, h.commitment_ok, h.committed_first, h.deal_ok, h.moves_ok)
                for h in hands] == [(1, True, True, True, True, True)]
        await auditor.close()
    finally:
        await p.close()
        await q.close()
        proc.kill()
        proc.wait(timeout=10)

