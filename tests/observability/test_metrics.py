"""Metrics scraped over HTTP from the four services running as their own processes (as
``chieu up`` runs them, each on its own metrics port): a played 过关斩将 xiangqi hand moves the
call counts by status, the appends, the hands, the watchers, the ledger's postings, the ladder's
changes and the lobby's sign-ins; the ledger's own audit says clean; the lag gauges are there."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator

import grpc
import pytest

from chieu.games.xiangqi.v1 import xiangqi_pb2
from chieu.kit.settings import Settings
from chieu.lobby.v1 import lobby_service_pb2 as lpb
from chieu.lobby.v1 import lobby_service_pb2_grpc as lpb_grpc
from chieu_tools import localnats
from tests.conftest import PRIVATE_KEY, credential
from tests.ladder.helpers import act
from tests.observability.conftest import Samples, scrape, total, until, value
from tests.table.helpers import client, refused

pytestmark = [pytest.mark.e2e, pytest.mark.integration]

MODULES = {"table": "chieu.table", "ledger": "chieu.ledger", "ladder": "chieu.ladder", "lobby": "chieu.lobby"}


class Stack:
    """The four services as processes: their gRPC and metrics ports."""

    def __init__(self) -> None:
        self.grpc = {name: localnats.free_port() for name in MODULES}
        self.metrics = {name: localnats.free_port() for name in MODULES}
        self.procs: dict[str, subprocess.Popen[bytes]] = {}

    def addr(self, name: str) -> str:
        return f"127.0.0.1:{self.grpc[name]}"

    def scrape(self, name: str) -> Samples:
        return scrape(self.metrics[name])


@pytest.fixture(scope="module")
def stack(private_nats: str, private_db: str) -> Iterator[Stack]:
    s = Stack()
    base = {**os.environ, "NATS_URL": private_nats, "DATABASE_URL": private_db, "CHIEU_LOG_FORMAT": "json",
            "CHIEU_METRICS_REFRESH_S": "0.2", "CHIEU_LEDGER_AUDIT_EVERY_S": "0.5", "CHIEU_REVOCATION_POLL_S": "0.5",
            "CHIEU_LOBBY_WELCOME_AFTER_HANDS": "0",  # the guest's welcome at its sign-in
            **{f"CHIEU_{name.upper()}_ADDR": s.addr(name) for name in MODULES}}
    try:
        for name, module in MODULES.items():  # the table first: it creates the table stream
            env = {**base, "CHIEU_SERVICE_TOKEN": credential(name),
                   "CHIEU_METRICS_ADDR": f"127.0.0.1:{s.metrics[name]}"}
            if name == "lobby":
                env["CHIEU_TOKEN_PRIVATE_KEY"] = str(PRIVATE_KEY)
            s.procs[name] = subprocess.Popen([sys.executable, "-m", module], env=env,
                                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            localnats.wait_for_port(s.grpc[name], timeout=60, proc=s.procs[name])
            localnats.wait_for_port(s.metrics[name], timeout=10, proc=s.procs[name])
        yield s
    finally:
        for p in s.procs.values():
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in s.procs.values():
            try:
                p.wait(15)
            except subprocess.TimeoutExpired:
                p.kill()


def rpc(samples: Samples, service: str, method: str, code: str) -> float:
    return value(samples, "chieu_rpc_requests_total", service=service, method=method, code=code)


async def test_a_played_hand_moves_the_counters(stack: Stack) -> None:
    before = {name: stack.scrape(name) for name in MODULES}

    # the lobby: a guest signs in, a password sign-in is refused
    async with grpc.aio.insecure_channel(stack.addr("lobby")) as channel:
        lobby = lpb_grpc.LobbyServiceStub(channel)
        await lobby.SignInGuest(lpb.SignInGuestRequest(device_id=f"device-{uuid.uuid4().hex[:8]}", name="Khách"))
        with pytest.raises(grpc.aio.AioRpcError):
            await lobby.SignIn(lpb.SignInRequest(username="nobody-here", password="wrong-password",
                                                 device_id=f"device-{uuid.uuid4().hex[:8]}"))

    # the table: a ladder hand of xiangqi, watched, and resigned (a settlement and a ladder result)
    ann, bob = f"ann-{uuid.uuid4().hex[:6]}", f"bob-{uuid.uuid4().hex[:6]}"
    settings = Settings()
    a = client(settings, stack.addr("table"), ann)
    b = client(settings, stack.addr("table"), bob)
    try:
        view = await a.create("xiangqi", {}, ladder_level=1)
        table_id = view.table_id
        await b.sit(table_id)
        opened = asyncio.Event()

        async def watching() -> None:
            async for _ in b.watch(table_id):
                opened.set()

        watch = asyncio.create_task(watching())
        await opened.wait()
        watching_now = stack.scrape("table")
        assert value(watching_now, "chieu_watchers") == value(before["table"], "chieu_watchers") + 1
        assert value(watching_now, "chieu_tables_open") >= 1
        await a.start(table_id)
        code, reason = await refused(act(a, "no-such-table", xiangqi_pb2.Resign()))
        assert (code, reason) == (grpc.StatusCode.NOT_FOUND, "unknown_table")
        await act(a, table_id, xiangqi_pb2.Resign())
        watch.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watch
    finally:
        await a.close()
        await b.close()

    # the consumers post and apply it; the stream ended counts when it ends
    await until(lambda: total(stack.scrape("ledger"), "chieu_ledger_postings_total", kind="settlement")
                > total(before["ledger"], "chieu_ledger_postings_total", kind="settlement"))
    await until(lambda: value(stack.scrape("ladder"), "chieu_ladder_changes_total")
                >= value(before["ladder"], "chieu_ladder_changes_total") + 2)
    await until(lambda: rpc(stack.scrape("table"), "table", "Watch", "CANCELLED")
                == rpc(before["table"], "table", "Watch", "CANCELLED") + 1)
    after = {name: stack.scrape(name) for name in MODULES}

    t0, t1 = before["table"], after["table"]
    assert rpc(t1, "table", "Act", "OK") - rpc(t0, "table", "Act", "OK") == 1
    assert rpc(t1, "table", "Act", "NOT_FOUND") - rpc(t0, "table", "Act", "NOT_FOUND") == 1
    assert rpc(t1, "table", "CreateTable", "OK") - rpc(t0, "table", "CreateTable", "OK") == 1
    latency = "chieu_rpc_latency_seconds_count"
    assert value(t1, latency, service="table", method="Act") - value(t0, latency, service="table", method="Act") == 2
    assert value(t1, "chieu_watchers") == value(t0, "chieu_watchers")
    # created, seated, started, resigned: four appends at least (the table may append on its own)
    assert value(t1, "chieu_js_append_seconds_count") - value(t0, "chieu_js_append_seconds_count") >= 4
    assert value(t1, "chieu_js_append_conflicts_total") == value(t0, "chieu_js_append_conflicts_total")
    assert value(t1, "chieu_js_append_errors_total") == value(t0, "chieu_js_append_errors_total")
    assert value(t1, "chieu_hands_total", game="xiangqi") - value(t0, "chieu_hands_total", game="xiangqi") == 1

    l0, l1 = before["ledger"], after["ledger"]
    assert total(l1, "chieu_ledger_postings_total", kind="settlement") \
        - total(l0, "chieu_ledger_postings_total", kind="settlement") == 1
    assert total(l1, "chieu_ledger_postings_total", kind="welcome") \
        - total(l0, "chieu_ledger_postings_total", kind="welcome") == 1  # the guest's welcome coins
    await until(lambda: value(stack.scrape("ledger"), "chieu_ledger_audit_clean") == 1)
    await until(lambda: ("chieu_consumer_lag", (("durable", "ledger"),)) in stack.scrape("ledger")
                and value(stack.scrape("ledger"), "chieu_consumer_lag", durable="ledger") == 0)

    d0, d1 = before["ladder"], after["ladder"]
    assert value(d1, "chieu_ladder_changes_total") - value(d0, "chieu_ladder_changes_total") == 2  # both players
    assert ("chieu_consumer_lag", (("durable", "ladder"),)) in d1
    await until(lambda: ("chieu_consumer_lag", (("durable", "ladder-reputation-resets"),)) in stack.scrape("ladder"))

    o0, o1 = before["lobby"], after["lobby"]
    signins = "chieu_lobby_signins_total"
    assert value(o1, signins, kind="guest", result="ok") - value(o0, signins, kind="guest", result="ok") == 1
    assert value(o1, signins, kind="password", result="bad_credentials") \
        - value(o0, signins, kind="password", result="bad_credentials") == 1
    assert rpc(o1, "lobby", "SignIn", "UNAUTHENTICATED") - rpc(o0, "lobby", "SignIn", "UNAUTHENTICATED") == 1
    assert ("chieu_consumer_lag", (("durable", "lobby"),)) in o1
