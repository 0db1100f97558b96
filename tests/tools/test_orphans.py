"""A supervisor killed with SIGKILL leaves nothing running (issue 28), on real processes: every
child ``chieu up`` starts is tied to it (``supervise.spawn_tied``: ``PR_SET_PDEATHSIG`` on Linux),
a child restarted by a watcher thread too, and a child started from a thread that ends lives on."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from chieu_tools import localnats, localpg, supervise

pytestmark = [pytest.mark.skipif(not supervise.TIED, reason="no prctl (not Linux): children are not tied"),
              pytest.mark.timeout(120)]

SLEEPER = [sys.executable, "-c", "import time; time.sleep(600)"]

# the supervising process: what `chieu up` runs, with a sleeper, a sleeper the test kills (restarted
# by its watcher thread), a real nats-server and a real PostgreSQL (localpg.Postmaster, as up's)
SUPERVISOR = """
import os, sys, threading
from pathlib import Path
from chieu_tools import localnats, localpg, supervise

folder = Path(sys.argv[1])
sleeper = [sys.executable, "-c", "import time; time.sleep(600)"]
port, monitor = localnats.free_port(), localnats.free_port()
conf = localnats.write_config(folder / "nats", port, monitor_port=monitor, max_file_store=64 << 20)
pg = localpg.Postmaster(folder / "postgres")
children = [
    supervise.Child("sleeper", supervise.popen(sleeper, {**os.environ}), lambda: True),
    supervise.Child("restarted", supervise.popen(sleeper, {**os.environ}), lambda: True),
    supervise.Child("nats-server", supervise.popen([localnats.binary(), "-c", str(conf)], {**os.environ},
                                                   folder / "nats.log"),
                    supervise.http_ok(f"http://127.0.0.1:{monitor}/healthz?js-enabled-only=true")),
    supervise.Child("postgres", pg.spawn, pg.ready, stop=pg.stop),
]
sup = supervise.Supervisor(children, backoff_s=(0.05, 0.2), status_file=folder / "up.json")
sup.start([[c.name for c in children]])
print("supervising", flush=True)
threading.Event().wait()
"""


def _pids(status: Path) -> dict[str, tuple[int, str]]:
    try:
        doc = json.loads(status.read_text())
    except (OSError, ValueError):
        return {}
    return {name: (p["pid"], p["state"]) for name, p in doc["processes"].items()}


def _wait(check: Callable[[], bool], within_s: float, what: str) -> None:
    deadline = time.monotonic() + within_s
    while not check():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def _sigkilled_when_serving(proc: subprocess.Popen[bytes], log: Path, status: Path, pgdata: Path,
                            start_s: float, gone_s: float) -> dict[str, tuple[int, str]]:
    """Once ``proc`` (an ``up``) serves, SIGKILL it; every process its status named is gone within
    ``gone_s``, PostgreSQL (its own child) by a fast shutdown. Returns what the status named."""
    _wait(lambda: "Ctrl-C stops everything" in log.read_text(errors="replace") or proc.poll() is not None,
          start_s, log.read_text(errors="replace"))
    assert proc.poll() is None, log.read_text(errors="replace")
    children = _pids(status)
    assert localpg.postmaster(pgdata) == children["postgres"][0]  # up's own child, not adopted
    killed = time.monotonic()
    proc.kill()
    proc.wait()
    _wait(lambda: not [p for p, _ in children.values() if supervise.alive(p)], gone_s,
          f"left running: {[(n, p) for n, (p, _) in children.items() if supervise.alive(p)]}")
    print(f"{len(children)} processes gone {time.monotonic() - killed:.2f} s after up's SIGKILL")
    assert localpg.postmaster(pgdata) is None
    assert "received fast shutdown request" in (pgdata / "log").read_text(errors="replace")
    return children


@pytest.fixture
def folder() -> Iterator[Path]:
    # not under pytest's basetemp: PostgreSQL runs as another user when we are root
    path = Path(tempfile.mkdtemp(prefix="chieu-orphans-"))
    os.chmod(path, 0o755)
    yield path
    localpg.stop_dir(path / "postgres")
    shutil.rmtree(path, ignore_errors=True)


def test_a_sigkilled_supervisor_leaves_no_child_running(folder: Path) -> None:
    status, log = folder / "up.json", folder / "supervisor.log"
    with log.open("wb") as out:
        proc = subprocess.Popen([sys.executable, "-c", SUPERVISOR, str(folder)], stdout=out,
                                stderr=subprocess.STDOUT)
    pids: list[int] = []
    try:
        _wait(lambda: "supervising" in log.read_text(errors="replace") or proc.poll() is not None, 60,
              "the supervisor did not start")
        assert proc.poll() is None, log.read_text(errors="replace")
        first = _pids(status)["restarted"][0]
        os.kill(first, signal.SIGKILL)  # restarted by its watcher thread, not by the main one
        _wait(lambda: _pids(status)["restarted"][0] != first and _pids(status)["restarted"][1] == "serving", 10,
              "not restarted")
        children = _pids(status)
        assert set(children) == {"sleeper", "restarted", "nats-server", "postgres"}
        assert all(state == "serving" for _, state in children.values()), children
        pids = [pid for pid, _ in children.values()]
        assert localpg.postmaster(folder / "postgres") == children["postgres"][0]  # up's child, not adopted
        killed = time.monotonic()
        proc.kill()
        proc.wait()
        _wait(lambda: not [p for p in pids if supervise.alive(p)], 10,
              f"left running: {[(n, p) for n, (p, _) in children.items() if supervise.alive(p)]}")
        print(f"every child gone {time.monotonic() - killed:.2f} s after the supervisor's SIGKILL")
        text = (folder / "postgres" / "log").read_text(errors="replace")
        assert "received fast shutdown request" in text  # SIGINT, not a smart (SIGTERM) one
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for pid in pids:
            if supervise.alive(pid):
                os.kill(pid, signal.SIGKILL)


def test_a_child_started_from_a_thread_that_ends_lives_on() -> None:
    """The parent-death signal fires when the *thread* that forked ends: a watcher thread restarts
    a child and ends at stop, before that child's turn in the stop order (nats-server after the
    services). The forker thread lives as long as the process."""
    started: list[supervise.Handle] = []

    def start() -> None:
        started.append(supervise.popen(SLEEPER, {**os.environ})())
        time.sleep(1.0)  # the tie is made (the child's prctl) before this thread ends

    t = threading.Thread(target=start)
    t.start()
    t.join()
    time.sleep(0.5)
    try:
        assert started[0].poll() is None, f"the child died with its thread: {started[0].poll()}"
    finally:
        supervise.terminate(started[0])


def test_a_child_whose_parent_died_before_the_tie_exits() -> None:
    """The race: the parent died between the fork and the ``prctl`` (no signal would ever come):
    the tie, told of a parent that is not its parent, exits rather than run the program."""
    tie = [sys.executable, "-I", "-S", "-c", supervise.TIE, str(os.getpid() + 1), str(int(signal.SIGTERM)),
           "-1", "/bin/echo", "echo", "ran on"]
    done = subprocess.run(tie, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "ran on" not in done.stdout, done.stdout + done.stderr
    tie[5] = str(os.getpid())  # its true parent: the program runs
    done = subprocess.run(tie, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout == "ran on\n", done.stdout + done.stderr


def test_a_tied_child_gets_the_environment_and_signals_a_plain_one_gets() -> None:
    """The tie changes nothing else: the same environment (not Python's LC_CTYPE coercion of a C
    locale, PEP 538), SIGPIPE not ignored, the same pid; a missing program is refused at once."""
    env = {"PATH": os.environ.get("PATH", os.defpath), "LANG": "C", "CHIEU_PROBE": "a=b c"}
    argv = ["sh", "-c", 'env; grep SigIgn /proc/self/status; echo "pid=$$"']
    plain = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=30).stdout.splitlines()
    proc = supervise.spawn_tied(argv, env=env, stdout=subprocess.PIPE)
    out, _ = proc.communicate(timeout=30)
    tied = out.decode().splitlines()
    assert proc.returncode == 0 and tied[-1] == f"pid={proc.pid}"
    assert sorted(tied[:-1]) == sorted(plain[:-1]) and not any(line.startswith("LC_CTYPE=") for line in tied)
    with pytest.raises(FileNotFoundError):
        supervise.spawn_tied(["/nonexistent/chieu-nothing"])
    with pytest.raises(FileNotFoundError):
        supervise.popen(["chieu-no-such-program"], {**os.environ})()


@pytest.mark.integration
@pytest.mark.e2e
def test_a_sigkilled_chieu_up_leaves_no_process_running() -> None:
    """``chieu up`` as ``./chieu up`` runs it (``exec``), on free ports, SIGKILLed once it serves:
    its seven processes (the four services, nats-server, PostgreSQL, Envoy) are gone within seconds."""
    from chieu_tools.up import SERVICES
    from tests.tools.test_up import SEVEN, _load_factor, _stop_all, clean_env

    folder = Path(tempfile.mkdtemp(prefix="chieu-up-orphans-"))
    os.chmod(folder, 0o755)
    ports = {k: localnats.free_port() for k in ("nats", "monitor", "admin", "web", *SERVICES)}
    env = {**clean_env(), **{f"CHIEU_{s.upper()}_ADDR": f"127.0.0.1:{ports[s]}" for s in SERVICES}}
    log, status, pgdata = folder / "up.log", folder / ".var" / "up.json", folder / ".var" / "postgres"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "chieu_tools.cli", "up", "--data", ".var", "--nats-port", str(ports["nats"]),
             "--table-port", str(ports["table"]), "--web-port", str(ports["web"]), "--nats-monitor-port",
             str(ports["monitor"]), "--envoy-admin-port", str(ports["admin"]), "--metrics-port", "0", "--no-web"],
            cwd=folder, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        children = _sigkilled_when_serving(proc, log, status, pgdata, 90 * _load_factor(), 15 * _load_factor())
        assert set(children) == set(SEVEN), children
    finally:
        _stop_all(proc, status, pgdata)
        shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.integration
@pytest.mark.e2e
@pytest.mark.timeout(240)
def test_a_sigkilled_chieu_up_cluster_leaves_no_process_running() -> None:
    """``chieu up --cluster`` (on free ports), SIGKILLed once it serves: its twelve processes (three
    nats-server nodes, two processes of each of the four services, PostgreSQL) are gone within
    seconds, PostgreSQL by a fast shutdown."""
    from tests.tools.test_up import _load_factor, _stop_all, clean_env

    folder = Path(tempfile.mkdtemp(prefix="chieu-up-cluster-orphans-"))
    os.chmod(folder, 0o755)
    data = folder / ".var" / "cluster"
    log, status, pgdata = folder / "up.log", data / "up.json", data / "postgres"
    code = ("import sys; from pathlib import Path; from chieu_tools.cluster import run; "
            "sys.exit(run(Path('.var/cluster'), None, Path('.var/local.env')))")
    with log.open("wb") as out:
        proc = subprocess.Popen([sys.executable, "-c", code], cwd=folder, env=clean_env(), stdout=out,
                                stderr=subprocess.STDOUT)
    try:
        children = _sigkilled_when_serving(proc, log, status, pgdata, 120 * _load_factor(), 20 * _load_factor())
        assert len(children) == 3 + 8 + 1 and all(state == "serving" for _, state in children.values()), children
    finally:
        _stop_all(proc, status, pgdata)
        shutil.rmtree(folder, ignore_errors=True)
