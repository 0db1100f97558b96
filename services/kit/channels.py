"""gRPC transport security, in one place: the channels a process opens to the other services and
the port its own server listens on.

- ``CHIEU_TLS_CA`` set: every channel to another service is TLS, the server's certificate checked
  against that CA (and, when the process has its own certificate, presented as a client
  certificate too); unset: plaintext (loopback development).
- ``CHIEU_TLS_CERT`` + ``CHIEU_TLS_KEY`` set: the server listens with TLS only — a plaintext client
  gets no answer. The files are read again when they change (cert-manager renews them in place),
  for every new connection, with no restart.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import grpc

from chieu.kit.settings import Settings, SettingsError

Options = Sequence[tuple[str, Any]]


def client_credentials(ca: str, cert: str = "", key: str = "") -> grpc.ChannelCredentials:
    """TLS checked against the CA file ``ca``, presenting ``cert``/``key`` when given."""
    return grpc.ssl_channel_credentials(
        root_certificates=Path(ca).read_bytes(),
        private_key=Path(key).read_bytes() if cert and key else None,
        certificate_chain=Path(cert).read_bytes() if cert and key else None,
    )


def open_channel(addr: str, *, ca: str = "", cert: str = "", key: str = "", options: Options = ()) -> grpc.aio.Channel:
    """A channel to ``addr``: TLS checked against ``ca`` when given, else plaintext."""
    if ca:
        return grpc.aio.secure_channel(addr, client_credentials(ca, cert, key), options=list(options))
    return grpc.aio.insecure_channel(addr, options=list(options))


RECONNECT: Options = (("grpc.initial_reconnect_backoff_ms", 500), ("grpc.max_reconnect_backoff_ms", 2_000))
"""How soon a channel to another service tries again while that service is away: every 2 s at
most. gRPC's own backoff grows to 120 s, so a peer back after a few minutes' outage (a restart, a
service started after this one) stayed unreachable from here for up to two minutes more, every
call failing fast meanwhile: a session signed out then was not refused here for that long."""


def channel(settings: Settings, addr: str, options: Options = ()) -> grpc.aio.Channel:
    """This process's channel to another service at ``addr`` (TLS when ``CHIEU_TLS_CA`` is set),
    trying again every :data:`RECONNECT` while it is away."""
    return open_channel(addr, ca=settings.tls_ca, cert=settings.tls_cert, key=settings.tls_key,
                        options=[*RECONNECT, *options])


class _Files:
    """The certificate and key files of a server, re-read when either changes."""

    def __init__(self, cert: str, key: str) -> None:
        self.cert, self.key = Path(cert), Path(key)
        self._seen: tuple[float, float] | None = None

    def _stamp(self) -> tuple[float, float]:
        return os.stat(self.cert).st_mtime, os.stat(self.key).st_mtime

    def load(self) -> grpc.ServerCertificateConfiguration:
        self._seen = self._stamp()
        return grpc.ssl_server_certificate_configuration([(self.key.read_bytes(), self.cert.read_bytes())])

    def fetch(self) -> grpc.ServerCertificateConfiguration | None:
        """Called by gRPC before each handshake: a new configuration when the files changed."""
        try:
            if self._stamp() == self._seen:
                return None
            return self.load()
        except OSError:
            return None  # mid-rename: keep the one in use


def server_credentials(settings: Settings) -> grpc.ServerCredentials:
    """TLS with ``CHIEU_TLS_CERT`` / ``CHIEU_TLS_KEY``, re-read when they change."""
    files = _Files(settings.tls_cert, settings.tls_key)
    # the fetcher returns None for "unchanged", as gRPC documents (the stub says it may not)
    return grpc.dynamic_ssl_server_credentials(files.load(), files.fetch)  # type: ignore[arg-type]


def check(settings: Settings) -> None:
    """Production refuses to serve or call in plaintext: a certificate for its own port and the CA
    its peers' certificates chain to."""
    if settings.env != "prod":
        return
    missing = [n for n, v in (("CHIEU_TLS_CERT", settings.tls_cert), ("CHIEU_TLS_KEY", settings.tls_key),
                              ("CHIEU_TLS_CA", settings.tls_ca)) if not v]
    if missing:
        raise SettingsError(f"{', '.join(missing)} must be set in production (gRPC is TLS only there)")


def bind(server: grpc.aio.Server, settings: Settings, addr: str) -> int:
    """Listen on ``addr``: TLS only when the process has a certificate, else plaintext; the port."""
    if settings.tls_cert:
        return server.add_secure_port(addr, server_credentials(settings))
    return server.add_insecure_port(addr)
