"""End to end with Phỏm: SIGKILL of the table service mid-hand; the restarted service resumes
the table's clock from the log by itself (no client call needed) and the hand goes on."""

from __future__ import annotations

import asyncio
import signal

import pytest

from chieu.kit.eventstore import EventStore
from chieu.kit.names import TABLES
from chieu.kit.settings import Settings
from chieu.table.client import game_view
from tests.conftest import nats_creds, nats_env
from tests.e2e.test_o_an_quan_e2e import start_service
from tests.table.helpers import client
from tests.table.phom_bot import play_turn

pytestmark = [pytest.mark.e2e, pytest.mark.integration]


async def test_sigkill_mid_hand_then_the_clock_resumes_alone(nats_url: str, settings: Settings, port: int) -> None:
    proc = start_service(nats_url, port)
    addr = f"127.0.0.1:{port}"
    names = ["k1", "k2", "k3", "k4"]
    clients = {n: client(settings, addr, n) for n in names}
    store = await EventStore.connect(nats_url, stream=TABLES, creds=nats_creds("table"))
    try:
        t = await clients["k1"].create("phom", {"uWindowSeconds": 0, "turnSeconds": 2})
        for n in names[1:]:
            await clients[n].sit(t.table_id)
        view = await clients["k1"].start(t.table_id)
        for _ in range(3):
            gv = game_view(view)
            view = await play_turn(clients[view.hand_players[gv.to_move]], t.table_id)
        before = await store.last_seq(t.table_id)
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        for c in clients.values():
            await c.close()
        proc = start_service(nats_url, port)
        # nobody calls the service: its timer alone must time out the seat to move
        for _ in range(80):
            await asyncio.sleep(0.1)
            if await store.last_seq(t.table_id) > before:
                break
        assert await store.last_seq(t.table_id) > before
        fresh = client(settings, addr, "k1")
        after = await fresh.get(t.table_id)
        assert after.version > view.version and game_view(after).hand == game_view(
            await fresh.get(t.table_id)).hand
        await fresh.close()
    finally:
        await store.close()
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            proc.wait(15)


async def test_the_verify_command_re_derives_every_deal_from_the_log(
    nats_url: str, settings: Settings, table_server: str,
) -> None:
    import os
    import subprocess
    import sys

    names = ["v1", "v2"]
    clients = {n: client(settings, table_server, n) for n in names}
    t = await clients["v1"].create("phom", {"uWindowSeconds": 0})
    await clients["v2"].sit(t.table_id)
    for _ in range(2):
        view = await clients["v1"].start(t.table_id)
        for _ in range(100):
            if view.status != 2:
                break
            view = await play_turn(clients[view.hand_players[game_view(view).to_move]], t.table_id)
    out = await asyncio.to_thread(
        subprocess.run, [sys.executable, "-m", "chieu.cli", "verify", t.table_id],
        env={**os.environ, **nats_env("audit"), "NATS_URL": nats_url}, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.count(": OK") == 2, out.stdout
    assert "money: proven from the rules  outcomes=2 " in out.stdout, out.stdout  # the hands' ends derived again
    for c in clients.values():
        await c.close()
