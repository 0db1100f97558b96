"""``chieu up``: the whole system on one machine, on loopback, data under one folder.

Starts a real nats-server with JetStream (``sync_interval: always``) and every service as
its own process, with their logs in this terminal. Ctrl-C stops everything cleanly; a second
run reuses the data.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from chieu.kit import localnats, localpg
from chieu.kit.settings import from_env

SERVICES = {"table": "chieu.table", "ledger": "chieu.ledger", "ladder": "chieu.ladder", "lobby": "chieu.lobby"}


def run(data_dir: Path, nats_port: int, table_port: int, ledger_port: int | None = None) -> int:
    data_dir = data_dir.resolve()
    print(f"chieu up: data in {data_dir}", file=sys.stderr)
    nats, url = localnats.start(data_dir / "nats", nats_port)
    print(f"chieu up: nats-server (JetStream, sync_interval always) on {url}", file=sys.stderr)
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
        "CHIEU_TOKEN_SECRET": settings.token_secret,
    }
    procs: dict[str, subprocess.Popen[bytes]] = {}
    stopping = False

    def stop(*_: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    try:
        for name, module in SERVICES.items():
            procs[name] = subprocess.Popen([sys.executable, "-m", module], env=env)
        localnats.wait_for_port(table_port, timeout=30, proc=procs["table"])
        localnats.wait_for_port(ledger_port, timeout=60, proc=procs["ledger"])
        print(f"chieu up: ledger service on 127.0.0.1:{ledger_port} (gRPC, reflection on)", file=sys.stderr)
        localnats.wait_for_port(ladder_port, timeout=60, proc=procs["ladder"])
        print(f"chieu up: ladder service on 127.0.0.1:{ladder_port} (gRPC, reflection on)", file=sys.stderr)
        localnats.wait_for_port(lobby_port, timeout=60, proc=procs["lobby"])
        print(f"chieu up: lobby service on 127.0.0.1:{lobby_port} (gRPC, reflection on)", file=sys.stderr)
        print(f"chieu up: table service on 127.0.0.1:{table_port} (gRPC, reflection on). "
              "Ctrl-C stops everything.", file=sys.stderr)
        while not stopping:
            for name, p in procs.items():
                if p.poll() is not None:
                    print(f"chieu up: {name} exited with {p.returncode}; stopping", file=sys.stderr)
                    stopping = True
            time.sleep(0.2)
    finally:
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
