"""``chieu up`` never hangs on the portal's build without network: the npm registry is probed with a
bound (then ``npm ci --offline``), every build step is bounded in time and stopped, its whole
process group, when ``up`` stops (issue 28: ``npm ci`` blocked for minutes, ignoring SIGTERM)."""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path

import pytest

from chieu_tools.gateway import web
from chieu_tools.supervise import alive

# a shell whose child (the process group's) would outlive a kill of the shell alone
SLOW = ["sh", "-c", "sleep 60 & echo $! > child.pid; wait"]


def _child(tmp_path: Path) -> int:
    deadline = time.monotonic() + 5
    while not (tmp_path / "child.pid").exists() or not (tmp_path / "child.pid").read_text().strip():
        assert time.monotonic() < deadline
        time.sleep(0.05)
    return int((tmp_path / "child.pid").read_text())


def _gone(pid: int) -> bool:
    deadline = time.monotonic() + 5
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not alive(pid)


def test_a_step_is_stopped_with_its_whole_process_group_when_up_stops(tmp_path: Path) -> None:
    stop = threading.Event()
    threading.Timer(0.5, stop.set).start()
    started = time.monotonic()
    with pytest.raises(web.BuildError, match="stopped"):
        web.run(SLOW, tmp_path, timeout=60, stop=stop.is_set)
    assert time.monotonic() - started < 10
    assert _gone(_child(tmp_path)), "the step's child outlived the stop"


def test_a_step_is_bounded_in_time(tmp_path: Path) -> None:
    started = time.monotonic()
    with pytest.raises(web.BuildError, match="took over 1 s"):
        web.run(SLOW, tmp_path, timeout=1)
    assert time.monotonic() - started < 10
    assert _gone(_child(tmp_path)), "the step's child outlived its time"


def test_an_unreachable_registry_is_known_within_the_probe_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]
    for registry in (f"http://127.0.0.1:{closed}/", "https://registry.invalid/"):
        monkeypatch.setenv("NPM_CONFIG_REGISTRY", registry)
        started = time.monotonic()
        assert not web.registry_reachable(timeout=2.0)
        assert time.monotonic() - started < 2.5
    listening = socket.socket()
    listening.bind(("127.0.0.1", 0))
    listening.listen()
    try:
        monkeypatch.setenv("NPM_CONFIG_REGISTRY", f"http://127.0.0.1:{listening.getsockname()[1]}/")
        assert web.registry_reachable(timeout=2.0)
    finally:
        listening.close()
