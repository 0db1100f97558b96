"""What a browser gets from the gateway (Envoy) in front of the portal: the security headers on
the page, its files and the services' answers (a CSP without 'unsafe-inline' and with
frame-ancestors 'none', nosniff, a referrer policy), each file with its own type (nosniff makes
the browser hold to it), a favicon (no 404), and a page with no inline script or style, so the
CSP never has to allow one."""

from __future__ import annotations

import asyncio
import re
import urllib.error
import urllib.request
from pathlib import Path

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.e2e]


def _get(url: str, method: str = "GET", body: bytes | None = None,
         headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    req = urllib.request.Request(url, data=body, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, {k.lower(): v for k, v in r.headers.items()}, r.read()
    except urllib.error.HTTPError as e:
        return e.code, {k.lower(): v for k, v in e.headers.items()}, e.read()


def _secure(headers: dict[str, str]) -> None:
    csp = headers["content-security-policy"]
    assert "unsafe-inline" not in csp and "frame-ancestors 'none'" in csp and "default-src 'self'" in csp
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["referrer-policy"] == "strict-origin-when-cross-origin"
    assert headers["x-frame-options"] == "DENY"


async def test_the_gateway_sends_the_security_headers_and_every_file_its_type(web_url: str, web_built: Path) -> None:
    for path, kind in (("/", "text/html"), ("/app.js", "text/javascript"), ("/style.css", "text/css"),
                       ("/fonts-vi.css", "text/css"), ("/favicon.ico", "image/"), ("/favicon.svg", "image/svg+xml")):
        status, headers, body = await asyncio.to_thread(_get, web_url + path)
        assert status == 200, path
        assert headers["content-type"].startswith(kind), (path, headers["content-type"])
        assert body, path
        _secure(headers)
    font = next((web_built / "dist" / "fonts").glob("*.woff2")).name
    status, headers, _ = await asyncio.to_thread(_get, f"{web_url}/fonts/{font}")
    assert status == 200 and headers["content-type"] == "font/woff2"
    # a service's answer carries them too (an empty gRPC-Web frame, no token: refused, but answered)
    status, headers, _ = await asyncio.to_thread(
        _get, f"{web_url}/chieu.lobby.v1.LobbyService/ListZones", "POST", b"\x00\x00\x00\x00\x00",
        {"content-type": "application/grpc-web+proto", "x-grpc-web": "1"})
    assert status == 200 and headers["grpc-status"] == "16"
    _secure(headers)


def test_the_page_has_no_inline_script_or_style(web_built: Path) -> None:
    html = (web_built / "dist" / "index.html").read_text()
    for tag in re.findall(r"<script\b[^>]*>", html):
        assert "src=" in tag, tag
    assert re.search(r"<script\b[^>]*>\s*[^<\s]", html) is None, "no inline script body"
    assert "<style" not in html and " style=" not in html
    assert 'rel="icon"' in html
    script = (web_built / "dist" / "app.js").read_text()
    assert "setAttribute(\"style\"" not in script and "eval(" not in script
