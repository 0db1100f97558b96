"""Builds the reference front-end (``web/``): ``npm ci`` when its packages are missing or stale,
then the bundle (``web/dist``) and the node tests (``web/build``).

Never a hang: when the npm registry cannot be reached within a few seconds the packages come
from npm's cache alone (``npm ci --offline``, which fails at once if they are not there); every
step is bounded in time and stopped (its whole process group) when ``stop()`` says so.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import threading
import time
import urllib.parse
from collections.abc import Callable
from pathlib import Path

NPM_TIMEOUT_S = 300.0
"""The longest ``npm ci`` may take."""
BUILD_TIMEOUT_S = 120.0
PROBE_TIMEOUT_S = 3.0
"""How long the registry has to answer (name lookup and connect) before the build goes offline."""


class BuildError(RuntimeError):
    """The front-end could not be built (no node, offline without a cache, too slow, stopped)."""


def registry_reachable(timeout: float = PROBE_TIMEOUT_S) -> bool:
    """Whether npm's registry (``npm_config_registry``, else registry.npmjs.org) accepts a TCP
    connection within ``timeout`` s, name lookup included (run in a thread: it has no timeout)."""
    registry = {k.lower(): v for k, v in os.environ.items()}.get("npm_config_registry")
    url = urllib.parse.urlsplit(registry or "https://registry.npmjs.org/")
    host, port = url.hostname or "registry.npmjs.org", url.port or (443 if url.scheme == "https" else 80)
    result: list[bool] = []

    def probe() -> None:
        try:
            with socket.create_connection((host, port), timeout=timeout):
                result.append(True)
        except OSError:
            result.append(False)

    t = threading.Thread(target=probe, name="npm-registry-probe", daemon=True)
    t.start()
    t.join(timeout)
    return bool(result and result[0])


def run(argv: list[str], cwd: Path, *, timeout: float, stop: Callable[[], bool] | None = None) -> None:
    """Run ``argv`` in its own process group; the group is terminated when ``timeout`` runs out or
    ``stop()`` turns true (raises :class:`BuildError`), or raises it when the command fails."""
    proc = subprocess.Popen(argv, cwd=cwd, start_new_session=True)
    deadline = time.monotonic() + timeout
    while True:
        try:
            code = proc.wait(0.2)
            break
        except subprocess.TimeoutExpired:
            pass
        stopped = stop is not None and stop()
        if stopped or time.monotonic() > deadline:
            for sig, wait in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
                try:
                    os.killpg(proc.pid, sig)
                except ProcessLookupError:
                    break
                try:
                    proc.wait(wait)
                    break
                except subprocess.TimeoutExpired:
                    continue
            raise BuildError(f"{' '.join(argv[:2])} {'stopped' if stopped else f'took over {timeout:.0f} s'}")
    if code != 0:
        raise BuildError(f"{' '.join(argv[:2])} failed with exit code {code}")


def ensure_built(web_dir: Path, *, rebuild: bool = False, stop: Callable[[], bool] | None = None,
                 npm_timeout: float = NPM_TIMEOUT_S) -> Path:
    """``web_dir/dist``, built (``rebuild``: even if it exists). Needs node and npm."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        raise FileNotFoundError("node and npm are needed for the web front-end (Node 20 or newer)")
    lock = web_dir / "package-lock.json"
    stamp = web_dir / "node_modules" / ".package-lock.json"
    if not stamp.exists() or stamp.stat().st_mtime < lock.stat().st_mtime:
        argv = ["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"]
        if not registry_reachable():
            argv.append("--offline")  # npm's cache only: fails at once rather than retrying for minutes
        try:
            run(argv, web_dir, timeout=npm_timeout, stop=stop)
        except BuildError as e:
            offline = " (offline: the npm registry cannot be reached and npm's cache lacks the packages)" \
                if "--offline" in argv else ""
            raise BuildError(f"{e}{offline}") from None
    dist = web_dir / "dist"
    if rebuild or not (dist / "app.js").exists():
        run(["node", "scripts/build.mjs"], web_dir, timeout=BUILD_TIMEOUT_S, stop=stop)
    return dist
