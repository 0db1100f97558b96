"""The portal on one machine (``chieu up``): the front-end built and its files served on loopback,
for Envoy (:mod:`chieu_tools.gateway.envoyproc`, supervised by ``up``) to serve in front of them
and of every service."""

from __future__ import annotations

import sys
from collections.abc import Callable
from http.server import ThreadingHTTPServer
from pathlib import Path

from chieu_tools.gateway import static, web

WEB_DIR = Path(__file__).resolve().parents[3] / "web"


def portal(web_dir: Path = WEB_DIR, *, build: bool = True,
           stop: Callable[[], bool] | None = None) -> tuple[ThreadingHTTPServer | None, str | None]:
    """Build the front-end (``npm ci`` on first use; offline: from npm's cache or not at all) and
    serve it; returns the file server and its address, or ``(None, None)`` with a line saying why
    (no node, no network and no cache, too slow, stopped, or ``build`` off): Envoy still starts, for
    gRPC-Web clients."""
    if not build:
        print("chieu up: the web front-end is not built (--no-web); Envoy serves gRPC-Web only", file=sys.stderr)
        return None, None
    try:
        dist = web.ensure_built(web_dir, rebuild=True, stop=stop)
    except (FileNotFoundError, OSError, web.BuildError) as e:
        print(f"chieu up: the web front-end is not served ({e}); Envoy serves gRPC-Web only", file=sys.stderr)
        return None, None
    return static.serve(dist)
