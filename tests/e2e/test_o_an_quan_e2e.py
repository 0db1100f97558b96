"""End to end: the table service as its own process on a real nats-server; two gRPC
clients play Ô ăn quan to the end; the service is SIGKILLed mid-game, restarted, and the
game finishes from the log."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator

import pytest

from chieu.kit.settings import Settings
from chieu.table.client import game_view
from chieu.table.v1 import table_service_pb2 as pb
from chieu_tools import localnats
from tests.conftest import nats_env
from tests.table.helpers import client, play_to_end, sowings

pytestmark = [pytest.mark.e2e, pytest.mark.integration]


async def reflection_knows_every_game(addr: str) -> None:
    """A generic client (grpcurl & co.) resolves every game's types for google.protobuf.Any."""
    import grpc
    from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

    from chieu.games import registry

    async def ask() -> AsyncIterator[reflection_pb2.ServerReflectionRequest]:
        for key in registry.KEYS:
            yield reflection_pb2.ServerReflectionRequest(file_containing_symbol=f"chieu.games.{key}.v1.View")

    async with grpc.aio.insecure_channel(addr) as channel:
        stub = reflection_pb2_grpc.ServerReflectionStub(channel)
        answers = [r async for r in stub.ServerReflectionInfo(ask())]
    assert [r.HasField("file_descriptor_response") for r in answers] == [True] * len(registry.keys())


def start_service(nats_url: str, port: int) -> subprocess.Popen[bytes]:
    env = {**os.environ, **nats_env("table"), "NATS_URL": nats_url, "CHIEU_TABLE_ADDR": f"127.0.0.1:{port}",
           "CHIEU_LOG_FORMAT": "json", "CHIEU_SNAPSHOT_EVERY": "7"}
    proc = subprocess.Popen([sys.executable, "-m", "chieu.table"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    localnats.wait_for_port(port, timeout=30, proc=proc)
    return proc


async def test_play_kill_restart_finish(nats_url: str, settings: Settings, port: int) -> None:
    proc = start_service(nats_url, port)
    addr = f"127.0.0.1:{port}"
    try:
        a, b = client(settings, addr, "ann"), client(settings, addr, "ben")
        t = await a.create("o_an_quan", {"maxMoves": 150, "payout": "perPoint"})
        await b.sit(t.table_id)
        view = await a.start(t.table_id)
        players = {"ann": a, "ben": b}
        for _ in range(10):  # part of the game
            gv = game_view(view)
            view = await players[view.hand_players[gv.to_move]].act(
                t.table_id, "o_an_quan", sowings(gv)[0])
        before = game_view(await b.get(t.table_id))  # ben's view, as ben reads it again below
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        await a.close()
        await b.close()

        proc = start_service(nats_url, port)  # a new process: state comes from the log only
        await reflection_knows_every_game(addr)
        a, b = client(settings, addr, "ann"), client(settings, addr, "ben")
        players = {"ann": a, "ben": b}
        again = await b.get(t.table_id)
        assert again.version == view.version
        assert game_view(again) == before
        end = await play_to_end(again, players)
        gv = game_view(end)
        assert gv.finished and end.status == pb.TABLE_STATUS_WAITING
        assert end.last_outcome.reason in ("quans_gone", "max_moves", "no_refill")
        assert list(end.last_outcome.scores) == list(gv.scores)
        if gv.winner >= 0:
            loser = 1 - gv.winner
            (t0,) = end.last_outcome.transfers
            assert (t0.from_seat, t0.to_seat, t0.amount) == (loser, gv.winner, gv.scores[gv.winner] - gv.scores[loser])
        await a.close()
        await b.close()
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(15) == 0  # a graceful stop exits cleanly
