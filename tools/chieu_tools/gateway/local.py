"""The gateway on one machine (``chieu up``): the front-end built, its files served on loopback,
and Envoy on one port in front of them and of every service."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from http.server import ThreadingHTTPServer
from pathlib import Path

from chieu.gateway import envoy
from chieu_tools.gateway import envoyproc, static, web

WEB_DIR = Path(__file__).resolve().parents[3] / "web"


@dataclass
class Gateway:
    proc: subprocess.Popen[bytes]
    files: ThreadingHTTPServer | None
    url: str

    def stop(self) -> None:
        envoyproc.stop(self.proc)
        if self.files is not None:
            self.files.shutdown()


def start(data_dir: Path, upstream: dict[str, str], port: int = envoy.DEFAULT_PORT,
          web_dir: Path = WEB_DIR, upstream_ca: str | None = None) -> Gateway:
    """Build the front-end (npm ci on first use), serve it, start Envoy on 127.0.0.1:``port``.
    Without node the gateway still starts, for gRPC-Web clients only."""
    files, static_addr = None, None
    try:
        dist = web.ensure_built(web_dir, rebuild=True)
        files, static_addr = static.serve(dist)
    except (FileNotFoundError, subprocess.CalledProcessError) as e:
        print(f"chieu up: the web front-end is not served ({e})", file=sys.stderr)
    proc = envoyproc.start(data_dir / "envoy", f"127.0.0.1:{port}", upstream, static_addr, upstream_ca=upstream_ca)
    return Gateway(proc, files, f"http://127.0.0.1:{port}/")
