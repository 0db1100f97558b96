"""Small helpers for the benchmarks: percentiles and a uniform report line."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from chieu_tools import localnats
from tests.conftest import PRIVATE_KEY, PUBLIC_KEYS, SIGNER, credential

__all__ = ["PRIVATE_KEY", "PUBLIC_KEYS", "credential"]
"""The run's token key (importing tests.conftest makes it and exports CHIEU_TOKEN_PUBLIC_KEYS,
so the services started here verify with its public key)."""


def token(player: str, *roles: str) -> str:
    """A session token for ``player`` signed with the run's key."""
    return SIGNER.sign(player, roles or ("player",))


def pct(samples: list[float], q: float) -> float:
    """The q-quantile (0..1) of ``samples``."""
    s = sorted(samples)
    return s[min(len(s) - 1, int(q * len(s)))]


def line(name: str, value: float, unit: str, target: str, ok: bool, extra: str = "") -> None:
    print(f"  {name:<44} {value:>12.3f} {unit:<10} target {target:<14} {'MET' if ok else 'MISSED'} {extra}")


def median(samples: list[float]) -> float:
    return statistics.median(samples)


@contextlib.contextmanager
def running_table_service() -> Iterator[tuple[str, str]]:
    """A nats-server and a table-service process on loopback: yields (nats url, table address)."""
    data = Path(tempfile.mkdtemp(prefix="chieu-bench-"))
    nats_proc, url = localnats.start(data / "nats", quiet=True)
    try:
        with another_table_service(url) as addr:
            yield url, addr
    finally:
        localnats.stop(nats_proc)
        shutil.rmtree(data, ignore_errors=True)


@contextlib.contextmanager
def another_table_service(url: str) -> Iterator[str]:
    """A table-service process on the nats-server at ``url``: yields its address."""
    port = localnats.free_port()
    env = {**os.environ, "NATS_URL": url, "CHIEU_TABLE_ADDR": f"127.0.0.1:{port}", "CHIEU_LOG_LEVEL": "warning",
           # every bench client is 127.0.0.1 and plays far faster than a person (bench_quotas measures the limits)
           "CHIEU_RATE_PER_PLAYER": "0", "CHIEU_RATE_PER_ADDRESS": "0"}
    svc = subprocess.Popen([sys.executable, "-m", "chieu.table"], env=env)
    try:
        localnats.wait_for_port(port, 30, svc)
        yield f"127.0.0.1:{port}"
    finally:
        svc.send_signal(signal.SIGTERM)
        svc.wait(20)
