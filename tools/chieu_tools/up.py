"""``chieu up``: the whole system on one machine, on loopback, data under one folder.

Starts a real nats-server with JetStream (``sync_interval: always``), PostgreSQL, every service as
its own process and Envoy, with their logs in this terminal, and supervises all seven
(:mod:`chieu_tools.supervise`): one that dies is said so and restarted on its own while the
others serve; five deaths within a minute and it is given up. Ctrl-C stops everything cleanly
(PostgreSQL too, even one restarted by hand in the same folder); a second run reuses the data.

``<data>/local.env`` tells the audit commands (``chieu verify``, ``audit``, ``replay``,
``export``, run next to ``<data>``) where NATS and PostgreSQL are and which credential to use
(the read-only ``audit`` user's seed); ``<data>/up.json`` names each process's pid and state.

Token keys: the first run generates an Ed25519 key under ``<data>/keys/`` (``private.pem``, mode
0600) and writes its public keyset (``public.jwks.json``); later runs reuse them. Each service is
given the public keyset and its own key (``<data>/keys/service-<name>.pem``, bound to
``service:<name>`` in the keyset), with which it signs its own 15-minute credential and renews
it; only the lobby is given the token private key. No constant secret anywhere.

Archive key: the first run also generates the key ``chieu export`` signs archives with
(``<data>/keys/archive.pem``, mode 0600; :mod:`chieu.audit.signing`), apart from the token key,
and its public keyset (``archive.jwks.json``); ``local.env`` names both, so ``./chieu export`` and
``./chieu audit --archive`` work beside ``<data>`` as they are. No service is given either.

NATS: the server admits only the users of ``<data>/nats-creds/`` (an NKEY seed per service and the
read-only ``audit`` user, generated on first run, mode 0600; :mod:`chieu.kit.natsauth`), each
allowed only its subjects; each service is given its own seed (``CHIEU_NATS_CREDS``).
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import sys
import threading
from pathlib import Path

from chieu.audit import signing
from chieu.gateway.envoy import DEFAULT_PORT as DEFAULT_WEB_PORT
from chieu.kit import auth, natsauth
from chieu.kit.settings import from_env
from chieu.tablelog.sealing import SealKeys
from chieu_tools import localnats, localpg, supervise, tlsgen
from chieu_tools.gateway import envoyproc
from chieu_tools.gateway import local as local_gateway

SERVICES = {"table": "chieu.table", "ledger": "chieu.ledger", "ladder": "chieu.ladder", "lobby": "chieu.lobby"}
SIGNERS = ("lobby",)
"""The services given the private key (every other one verifies with the public keys only)."""
METRICS_PORTS = {"table": 9464, "ledger": 9465, "ladder": 9466, "lobby": 9467}
"""Where each service serves its Prometheus metrics under ``chieu up`` (``CHIEU_METRICS_ADDR``)."""


def ensure_keys(data_dir: Path) -> tuple[auth.Signer, Path, Path]:
    """The signer of ``<data>/keys/private.pem`` (generated on first run, mode 0600), and the
    paths of the private key and of the public keyset (``public.jwks.json``, which keeps every
    key already listed there, so a key added for a rotation stays)."""
    keys = data_dir / "keys"
    keys.mkdir(mode=0o700, parents=True, exist_ok=True)
    private = keys / "private.pem"
    signer, made = auth.Signer.ensure(private)
    if made:
        print(f"chieu up: generated the token signing key {signer.kid} in {private}", file=sys.stderr)
    public = keys / "public.jwks.json"
    keyset = signer.keyset()
    if public.exists():
        keyset = auth.KeySet.load(public).with_key(signer.public)
    for name in SERVICES:  # each service's own key, bound to it in the keyset
        keyset = keyset.with_key(_own_key(keys / f"service-{name}.pem").public, name)
    document = json.dumps(keyset.to_jwks(), indent=2) + "\n"
    if not public.exists() or public.read_text() != document:
        public.write_text(document)
    return signer, private, public


def _own_key(path: Path) -> auth.Signer:
    """A service's own key at ``path`` (generated on first run, mode 0600)."""
    return auth.Signer.ensure(path)[0]


def ensure_archive_keys(data_dir: Path) -> tuple[signing.ArchiveSigner, Path, Path]:
    """The archive signer of ``<data>/keys/archive.pem`` (generated on first run, mode 0600), and
    the paths of that key and of its public keyset (``archive.jwks.json``, which keeps every key
    already listed there: archives signed by an older key still verify)."""
    keys = data_dir / "keys"
    keys.mkdir(mode=0o700, parents=True, exist_ok=True)
    private, public = keys / "archive.pem", keys / "archive.jwks.json"
    signer, made = signing.ensure_key(private, public)
    if made:
        print(f"chieu up: generated the archive signing key {signer.kid} in {private} (public keyset {public})",
              file=sys.stderr)
    return signer, private, public


def ensure_seal_keys(keys: Path) -> Path:
    """``<keys>/seal.jwks.json``, the table processes' seal keyset (generated on first run, mode
    0600; kept across runs: the next deal of every table is sealed under it)."""
    path = keys / "seal.jwks.json"
    if not path.exists():
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(SealKeys.document(SealKeys.generate().keys.items()))
    os.chmod(path, 0o600)
    return path


def service_envs(base: dict[str, str], signer: auth.Signer, private: Path, public: Path,
                 nats: natsauth.Credentials | None = None) -> dict[str, dict[str, str]]:
    """Each service's environment: the public keyset for all, its own key (and its own NATS seed
    from ``nats``), and the token private key for the lobby alone."""
    common = {k: v for k, v in base.items()
              if k not in ("CHIEU_TOKEN_PRIVATE_KEY", "CHIEU_SERVICE_TOKEN", "CHIEU_SERVICE_KEY", "CHIEU_NATS_CREDS",
                           "CHIEU_SEAL_KEYS")}
    common["CHIEU_TOKEN_PUBLIC_KEYS"] = str(public)
    envs: dict[str, dict[str, str]] = {}
    for name in SERVICES:
        # its own key (ensure_keys): the service signs its own 15-minute credential and renews it
        env = {**common, "CHIEU_SERVICE_KEY": str(public.parent / f"service-{name}.pem")}
        if nats is not None:
            env["CHIEU_NATS_CREDS"] = str(nats.seed(name))
        if name in SIGNERS:
            env["CHIEU_TOKEN_PRIVATE_KEY"] = str(private)
        if name == "table":  # the seal keyset: the table processes alone open a hand in play
            env["CHIEU_SEAL_KEYS"] = str(ensure_seal_keys(public.parent))
        envs[name] = env
    return envs


def write_local_env(path: Path, values: dict[str, str]) -> None:
    """``path`` as ``KEY='value'`` lines (a shell can source it; ``chieu verify``, ``audit``,
    ``replay`` and ``export`` read it when their environment does not say), mode 0600."""
    text = "# written by ./chieu up: what the audit commands use when the environment does not say\n" + "".join(
        f"{k}={shlex.quote(v)}\n" for k, v in values.items() if v)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)


STOP_ORDER = (("envoy",), tuple(SERVICES), ("nats-server",), ("postgres",))
"""Envoy first, then the services (together), NATS, PostgreSQL last."""


def run(data_dir: Path, nats_port: int, table_port: int, ledger_port: int | None = None,
        web_port: int = DEFAULT_WEB_PORT, tls: bool = False, *, nats_monitor_port: int = 8222,
        envoy_admin_port: int = 9901, metrics_port: int = METRICS_PORTS["table"], web: bool = True,
        max_deaths: int = supervise.MAX_DEATHS, window_s: float = supervise.WINDOW_S) -> int:
    """``tls``: a local CA under ``<data>/tls`` (:mod:`chieu_tools.tlsgen`), every gRPC port and NATS
    with TLS only, every service's and Envoy's calls checked against that CA. ``metrics_port``: the
    table's metrics port, the ledger's, ladder's and lobby's the next ones (0: no metrics endpoint).
    ``web``: build and serve the portal's files (off: Envoy serves gRPC-Web only). ``max_deaths``
    deaths within ``window_s`` s and a process is given up."""
    data_dir = data_dir.resolve()
    data_dir.mkdir(parents=True, exist_ok=True)
    print(f"chieu up: data in {data_dir}", file=sys.stderr)
    stopping = threading.Event()

    def on_signal(*_: object) -> None:
        stopping.set()

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)

    creds = natsauth.ensure(data_dir / "nats-creds")
    pki = tlsgen.ensure(data_dir / "tls") if tls else None
    extra = natsauth.server_block(creds.folder) + (natsauth.tls_block(pki.cert, pki.key) if pki else "")
    conf = localnats.write_config(data_dir / "nats", nats_port, extra=extra, monitor_port=nats_monitor_port,
                                  max_file_store=localnats.store_limit(data_dir / "nats"))
    url = f"{'tls' if pki else 'nats'}://127.0.0.1:{nats_port}"
    settings = from_env()
    pg_server = None
    database_url = settings.database_url
    if not database_url:
        pg_server = localpg.Postmaster(data_dir / "postgres")
        database_url = pg_server.url
    ledger_port = ledger_port or int(settings.ledger_addr.rsplit(":", 1)[1])
    ladder_port = int(settings.ladder_addr.rsplit(":", 1)[1])
    lobby_port = int(settings.lobby_addr.rsplit(":", 1)[1])
    ports = {"table": table_port, "ledger": ledger_port, "ladder": ladder_port, "lobby": lobby_port}
    env = {
        "CHIEU_TRUSTED_PROXIES": "127.0.0.1/32,::1/128",  # the local Envoy's X-Forwarded-For (unless set)
        **os.environ,
        "NATS_URL": url,
        **{f"CHIEU_{s.upper()}_ADDR": f"127.0.0.1:{port}" for s, port in ports.items()},
        "DATABASE_URL": database_url,
        **({"CHIEU_TLS_CERT": str(pki.cert), "CHIEU_TLS_KEY": str(pki.key), "CHIEU_TLS_CA": str(pki.ca),
            "CHIEU_NATS_CA": str(pki.ca)} if pki else {}),
    }
    signer, private, public = ensure_keys(data_dir)
    _, archive_private, archive_public = ensure_archive_keys(data_dir)
    envs = service_envs(env, signer, private, public, creds)
    if metrics_port:
        for i, name in enumerate(METRICS_PORTS):
            envs[name]["CHIEU_METRICS_ADDR"] = f"127.0.0.1:{metrics_port + i}"

    children: list[supervise.Child] = []
    if pg_server is not None:
        children.append(supervise.Child("postgres", pg_server.spawn, pg_server.ready, stop=pg_server.stop))
    children.append(supervise.Child(
        "nats-server", supervise.popen([localnats.binary(), "-c", str(conf)], {**os.environ}),
        supervise.http_ok(f"http://127.0.0.1:{nats_monitor_port}/healthz?js-enabled-only=true")))
    tls_files = (str(pki.ca), str(pki.cert), str(pki.key)) if pki else ("", "", "")
    for name, module in SERVICES.items():
        children.append(supervise.Child(name, supervise.popen([sys.executable, "-m", module], envs[name]),
                                        supervise.grpc_health(f"127.0.0.1:{ports[name]}", *tls_files)))
    sup = supervise.Supervisor(children, max_deaths=max_deaths, window_s=window_s,
                               status_file=data_dir / "up.json")
    sup.stopping = stopping
    files = None

    def nats_pid() -> int | None:
        handle = sup.children["nats-server"].handle
        return handle.pid if handle is not None and handle.poll() is None else None

    guard = localnats.DiskGuard(conf, nats_pid, restart=lambda why: sup.restart("nats-server", why),
                                health=lambda: localnats.health_error(nats_monitor_port))
    try:
        sup.start([[c.name for c in children if c.name in ("postgres", "nats-server")]])
        if stopping.is_set():
            return 0
        guard.start()
        print(f"chieu up: nats-server (JetStream, sync_interval always{', TLS' if pki else ''}) on {url}, "
              f"health on http://127.0.0.1:{nats_monitor_port}/healthz; users {', '.join(creds.users)} "
              f"(seeds in {creds.folder})", file=sys.stderr)
        print(f"chieu up: PostgreSQL {'(embedded) in ' + str(data_dir / 'postgres') if pg_server else '(yours)'}: "
              f"DATABASE_URL='{database_url}' (the ledger's, the ladder's and the lobby's database)", file=sys.stderr)
        sup.start([list(SERVICES)])
        if stopping.is_set():
            return 0
        for name, port in ports.items():
            print(f"chieu up: {name} service on 127.0.0.1:{port} (gRPC{', TLS' if pki else ''}, reflection on)",
                  file=sys.stderr)
        if metrics_port:
            print("chieu up: metrics on " + ", ".join(f"http://127.0.0.1:{metrics_port + i}/metrics ({name})"
                                                      for i, name in enumerate(METRICS_PORTS)), file=sys.stderr)
        if pki:
            print(f"chieu up: TLS on every gRPC port and on NATS (local CA {pki.ca}: CHIEU_TLS_CA and "
                  "CHIEU_NATS_CA for a client)", file=sys.stderr)
        print(f"chieu up: token key {signer.kid}; public keys in {public} "
              f"(sign a token: CHIEU_TOKEN_PRIVATE_KEY={private} ./chieu token PLAYER)", file=sys.stderr)
        files, static_addr = local_gateway.portal(build=web, stop=stopping.is_set)
        if stopping.is_set():
            return 0
        envoy_conf = envoyproc.write(data_dir / "envoy", f"127.0.0.1:{web_port}",
                                     {s: env[f"CHIEU_{s.upper()}_ADDR"] for s in SERVICES}, static_addr,
                                     upstream_ca=str(pki.ca) if pki else None,
                                     admin=f"127.0.0.1:{envoy_admin_port}")
        sup.children["envoy"] = supervise.Child(
            "envoy", supervise.popen(envoyproc.argv(envoy_conf), {**os.environ}),
            supervise.http_ok(f"http://127.0.0.1:{envoy_admin_port}/ready"))
        sup.start([["envoy"]])
        if stopping.is_set():
            return 0
        local_env = data_dir / "local.env"
        write_local_env(local_env, {"NATS_URL": url, "CHIEU_NATS_CREDS": str(creds.seed("audit")),
                                    "CHIEU_NATS_CA": str(pki.ca) if pki else "", "DATABASE_URL": database_url,
                                    "CHIEU_ARCHIVE_PRIVATE_KEY": str(archive_private),
                                    "CHIEU_ARCHIVE_PUBLIC_KEYS": str(archive_public)})
        print(f"chieu up: the audit commands, as the read-only audit user, from {local_env} (run them beside "
              f"{data_dir.name}/, or set CHIEU_LOCAL_ENV): ./chieu verify TABLE, ./chieu audit, "
              "./chieu replay TABLE --html F, ./chieu export F (signed with the archive key; ./chieu audit "
              "--archive F verifies it)", file=sys.stderr)
        print(f"chieu up: supervising postgres, nats-server, {', '.join(SERVICES)} and envoy (each restarted "
              f"on its own; given up after {max_deaths} deaths in {window_s:.0f} s; pids in {data_dir / 'up.json'})",
              file=sys.stderr)
        print(f"chieu up: open http://127.0.0.1:{web_port}/ (the portal; Envoy, gRPC-Web for every service, "
              f"ready on http://127.0.0.1:{envoy_admin_port}/ready). Ctrl-C stops everything.", file=sys.stderr)
        stopping.wait()
    except RuntimeError as e:
        print(f"chieu up: {e}; stopping", file=sys.stderr)
        return 1
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C does not cut the stop short
        print("chieu up: stopping every process", file=sys.stderr)
        guard.stop()
        sup.stop([[n for n in group if n in sup.children] for group in STOP_ORDER])
        if files is not None:
            files.shutdown()
        if pg_server is not None:
            pg_server.stop()  # whichever postmaster runs there now: one started outside up too
        print("chieu up: stopped", file=sys.stderr)
    return 0
