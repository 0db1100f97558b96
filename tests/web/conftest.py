"""The web stack: every service in-process (the shared fixtures), the front-end's files on a
static server, and Envoy in front of both on one free port (``web_url``)."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from chieu.gateway import envoy
from chieu.kit.settings import Settings
from chieu_tools import localnats
from chieu_tools.gateway import envoyproc, static, web

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "build" / "artifacts" / "web"
"""Screenshots and logs the web tests keep (build/ is not committed)."""


@pytest.fixture(scope="session")
def web_built() -> Path:
    """web/ installed (npm ci) and built (dist/ and build/), once per session."""
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    web.ensure_built(ROOT / "web", rebuild=True)
    return ROOT / "web"


@pytest.fixture(scope="session")
async def web_url(settings: Settings, table_server: str, ledger_server: str, ladder_server: str,
                  lobby_server: str, web_built: Path, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[str]:
    files, static_addr = static.serve(web_built / "dist")
    listen = f"127.0.0.1:{localnats.free_port()}"
    proc = await asyncio.to_thread(envoyproc.start, tmp_path_factory.mktemp("envoy"), listen,
                                   envoy.upstreams(settings), static_addr, quiet=True)
    try:
        yield f"http://{listen}"
    finally:
        envoyproc.stop(proc)
        files.shutdown()


async def run_node(web_dir: Path, args: list[str], env: dict[str, str], limit_s: float) -> tuple[int, str]:
    """Run node without blocking the event loop the in-process services run on."""
    proc = await asyncio.create_subprocess_exec(
        "node", *args, cwd=web_dir, env={**os.environ, **env},
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), limit_s)
    except TimeoutError:
        os.killpg(proc.pid, signal.SIGKILL)  # node --test runs each file in a child process
        out, _ = await proc.communicate()
        return -1, out.decode(errors="replace") + f"\n(timed out after {limit_s}s)"
    return proc.returncode or 0, out.decode(errors="replace")
