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
    # explicit types: the gateway sends nosniff, so a browser takes each file only as its type says
    extensions_map = {  # noqa: RUF012 (the base class reads it from the instance)
        **SimpleHTTPRequestHandler.extensions_map, ".js": "text/javascript", ".css": "text/css",
        ".woff2": "font/woff2", ".svg": "image/svg+xml", ".ico": "image/x-icon",
        ".map": "application/json", ".html": "text/html; charset=utf-8"}

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def end_headers(self) -> None:
        # the fonts never change under a name (a new version of the package is a new build): cached
        self.send_header("Cache-Control", "max-age=86400" if self.path.startswith("/fonts/") else "no-cache")
        super().end_headers()


class _Server(ThreadingHTTPServer):
    # a board's first draw asks for a dozen font pieces at once through Envoy: the listen queue's
    # default of 5 refused some of them (Envoy answered 503 and the glyphs stayed empty boxes)
    request_queue_size = 128


def serve(root: Path, port: int = 0) -> tuple[ThreadingHTTPServer, str]:
    """Serve ``root`` on 127.0.0.1:``port`` (0: any free port); returns the server and its address."""
    handler = functools.partial(_Quiet, directory=str(root))
    server = _Server(("127.0.0.1", port), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, name="chieu-static", daemon=True).start()
    return server, f"127.0.0.1:{server.server_address[1]}"
