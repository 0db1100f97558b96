"""The front-end's built files (``web/dist``) over plain HTTP on loopback, for Envoy to serve.

A threaded standard-library file server in a daemon thread: no proxying, no logic; the page's
calls go to the services through Envoy, not here.
"""

from __future__ import annotations

import functools
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "no-cache")
        super().end_headers()


def serve(root: Path, port: int = 0) -> tuple[ThreadingHTTPServer, str]:
    """Serve ``root`` on 127.0.0.1:``port`` (0: any free port); returns the server and its address."""
    handler = functools.partial(_Quiet, directory=str(root))
    server = ThreadingHTTPServer(("127.0.0.1", port), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, name="chieu-static", daemon=True).start()
    return server, f"127.0.0.1:{server.server_address[1]}"
