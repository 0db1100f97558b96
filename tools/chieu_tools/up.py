"""``chieu up``: the whole system on one machine, on loopback, data under one folder.

Starts a real nats-server with JetStream (``sync_interval: always``) and every service as
its own process, with their logs in this terminal. Ctrl-C stops everything cleanly; a second
run reuses the data.

Token keys: the first run generates an Ed25519 key under ``<data>/keys/`` (``private.pem``, mode
0600) and writes its public keyset (``public.jwks.json``); later runs reuse them. Each service is
given the public keyset and its own credential (``service:<name>``, minted at start); only the
lobby is given the private key. No constant secret anywhere.

NATS: the server admits only the users of ``<data>/nats-creds/`` (an NKEY seed per service and the
read-only ``audit`` user, generated on first run, mode 0600; :mod:`chieu.kit.natsauth`), each
allowed only its subjects; each service is given its own seed (``CHIEU_NATS_CREDS``).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from chieu.gateway.envoy import DEFAULT_PORT as DEFAULT_WEB_PORT
from chieu.kit import auth, natsauth
from chieu.kit.settings import from_env
from chieu_tools import localnats, localpg, tlsgen
from chieu_tools.gateway import local as local_gateway

SERVICES = {"table": "chieu.table", "ledger": "chieu.ledger", "ladder": "chieu.ladder", "lobby": "chieu.lobby"}
SIGNERS = ("lobby",)
METRICS_PORTS = {"table": 9464, "ledger": 9465, "ladder": 9466, "lobby": 9467}
"""Where each service serves its Prometheus metrics under ``chieu up`` (``CHIEU_METRICS_ADDR``)."""
"""The services given the private key (every other one verifies with the public keys only)."""
CREDENTIAL_TTL_S = 30 * 86400
"""Lifetime of the service credentials minted at each start."""


def ensure_keys(data_dir: Path) -> tuple[auth.Signer, Path, Path]:
    """The signer of ``<data>/keys/private.pem`` (generated on first run, mode 0600), and the
    paths of the private key and of the public keyset (``public.jwks.json``, which keeps every
    key already listed there, so a key added for a rotation stays)."""
    keys = data_dir / "keys"
    keys.mkdir(mode=0o700, parents=True, exist_ok=True)
    private = keys / "private.pem"
    if private.exists():
        signer = auth.Signer.load(private)
        os.chmod(private, 0o600)
    else:
        signer = auth.Signer.generate()
        fd = os.open(private, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(signer.private_pem())
        print(f"chieu up: generated the token signing key {signer.kid} in {private}", file=sys.stderr)
    public = keys / "public.jwks.json"
    keyset = signer.keyset()
    if public.exists():
        keyset = auth.KeySet.load(public).with_key(signer.public)
    document = json.dumps(keyset.to_jwks(), indent=2) + "\n"
    if not public.exists() or public.read_text() != document:
        public.write_text(document)
    return signer, private, public


def service_envs(base: dict[str, str], signer: auth.Signer, private: Path, public: Path,
                 nats: natsauth.Credentials | None = None) -> dict[str, dict[str, str]]:
    """Each service's environment: the public keyset for all, its own credential (and its own NATS
    seed from ``nats``), and the private key for the lobby alone."""
    common = {k: v for k, v in base.items()
              if k not in ("CHIEU_TOKEN_PRIVATE_KEY", "CHIEU_SERVICE_TOKEN", "CHIEU_NATS_CREDS")}
    common["CHIEU_TOKEN_PUBLIC_KEYS"] = str(public)
    envs: dict[str, dict[str, str]] = {}
    for name in SERVICES:
        env = {**common, "CHIEU_SERVICE_TOKEN": signer.service_credential(name, CREDENTIAL_TTL_S)}
        if nats is not None:
            env["CHIEU_NATS_CREDS"] = str(nats.seed(name))
        if name in SIGNERS:
            env["CHIEU_TOKEN_PRIVATE_KEY"] = str(private)
        envs[name] = env
    return envs


def run(data_dir: Path, nats_port: int, table_port: int, ledger_port: int | None = None,
        web_port: int = DEFAULT_WEB_PORT, tls: bool = False) -> int:
    """``tls``: a local CA under ``<data>/tls`` (:mod:`chieu_tools.tlsgen`), every gRPC port and NATS
    with TLS only, every service's and Envoy's calls checked against that CA."""
    data_dir = data_dir.resolve()
    print(f"chieu up: data in {data_dir}", file=sys.stderr)
    creds = natsauth.ensure(data_dir / "nats-creds")
    pki = tlsgen.ensure(data_dir / "tls") if tls else None
    extra = natsauth.server_block(creds.folder) + (natsauth.tls_block(pki.cert, pki.key) if pki else "")
    nats, url = localnats.start(data_dir / "nats", nats_port, extra=extra)
    print(f"chieu up: nats-server (JetStream, sync_interval always{', TLS' if pki else ''}) on {url}; users "
          f"{', '.join(creds.users)} (seeds in {creds.folder}; the audit commands: "
          f"CHIEU_NATS_CREDS={creds.seed('audit')})", file=sys.stderr)
    if pki:
        print(f"chieu up: TLS on every gRPC port and on NATS (local CA {pki.ca}: CHIEU_TLS_CA and CHIEU_NATS_CA "
              "for a client)", file=sys.stderr)
    settings = from_env()
    pg = None
    database_url = settings.database_url
    if not database_url:
        pg, database_url = localpg.start(data_dir / "postgres")
        print(f"chieu up: PostgreSQL (embedded) in {data_dir / 'postgres'}", file=sys.stderr)
    ledger_port = ledger_port or int(settings.ledger_addr.rsplit(":", 1)[1])
    ladder_port = int(settings.ladder_addr.rsplit(":", 1)[1])
    lobby_port = int(settings.lobby_addr.rsplit(":", 1)[1])
    env = {
        **os.environ,
        "NATS_URL": url,
        "CHIEU_TABLE_ADDR": f"127.0.0.1:{table_port}",
        "CHIEU_LEDGER_ADDR": f"127.0.0.1:{ledger_port}",
        "CHIEU_LADDER_ADDR": f"127.0.0.1:{ladder_port}",
        "CHIEU_LOBBY_ADDR": f"127.0.0.1:{lobby_port}",
        "DATABASE_URL": database_url,
        **({"CHIEU_TLS_CERT": str(pki.cert), "CHIEU_TLS_KEY": str(pki.key), "CHIEU_TLS_CA": str(pki.ca),
            "CHIEU_NATS_CA": str(pki.ca)} if pki else {}),
    }
    signer, private, public = ensure_keys(data_dir)
    print(f"chieu up: token key {signer.kid}; public keys in {public} "
          f"(sign a token: CHIEU_TOKEN_PRIVATE_KEY={private} ./chieu token PLAYER)", file=sys.stderr)
    envs = service_envs(env, signer, private, public, creds)
    for name, port in METRICS_PORTS.items():
        envs[name]["CHIEU_METRICS_ADDR"] = f"127.0.0.1:{port}"
    print("chieu up: metrics on " + ", ".join(f"http://127.0.0.1:{port}/metrics ({name})"
                                              for name, port in METRICS_PORTS.items()), file=sys.stderr)
    procs: dict[str, subprocess.Popen[bytes]] = {}
    gateway: local_gateway.Gateway | None = None
    stopping = False

    def stop(*_: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    try:
        for name, module in SERVICES.items():
            procs[name] = subprocess.Popen([sys.executable, "-m", module], env=envs[name])
        localnats.wait_for_port(table_port, timeout=30, proc=procs["table"])
        localnats.wait_for_port(ledger_port, timeout=60, proc=procs["ledger"])
        print(f"chieu up: ledger service on 127.0.0.1:{ledger_port} (gRPC, reflection on)", file=sys.stderr)
        localnats.wait_for_port(ladder_port, timeout=60, proc=procs["ladder"])
        print(f"chieu up: ladder service on 127.0.0.1:{ladder_port} (gRPC, reflection on)", file=sys.stderr)
        localnats.wait_for_port(lobby_port, timeout=60, proc=procs["lobby"])
        print(f"chieu up: lobby service on 127.0.0.1:{lobby_port} (gRPC, reflection on)", file=sys.stderr)
        print(f"chieu up: table service on 127.0.0.1:{table_port} (gRPC, reflection on)", file=sys.stderr)
        gateway = local_gateway.start(data_dir, {
            "table": env["CHIEU_TABLE_ADDR"], "ledger": env["CHIEU_LEDGER_ADDR"],
            "ladder": env["CHIEU_LADDER_ADDR"], "lobby": env["CHIEU_LOBBY_ADDR"]}, web_port,
            upstream_ca=str(pki.ca) if pki else None)
        print(f"chieu up: open {gateway.url} (the portal; Envoy, gRPC-Web for every service). "
              "Ctrl-C stops everything.", file=sys.stderr)
        while not stopping:
            for name, p in procs.items():
                if p.poll() is not None:
                    print(f"chieu up: {name} exited with {p.returncode}; stopping", file=sys.stderr)
                    stopping = True
            time.sleep(0.2)
    finally:
        if gateway is not None:
            gateway.stop()
        for p in procs.values():
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in procs.values():
            try:
                p.wait(15)
            except subprocess.TimeoutExpired:
                p.kill()
        localnats.stop(nats)
        if pg is not None:
            localpg.stop(pg)
        print("chieu up: stopped", file=sys.stderr)
    return 0
