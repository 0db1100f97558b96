"""The local cluster: the production topology on loopback (``chieu up --cluster``, the chaos run,
the cluster tests).

- **NATS**: three ``nats-server`` nodes ``n1``..``n3`` forming one JetStream cluster (routes on
  loopback, ``sync_interval: always``, client URLs not advertised); every stream and KV bucket at
  R3 (``CHIEU_STREAM_REPLICAS=3``). Every process is given the three nodes' URLs and reconnects to
  another node when its node is gone. The nodes admit only the users of ``<data>/nats-creds/``
  (:mod:`chieu.kit.natsauth`: an NKEY seed per service, each allowed only its subjects, and the
  read-only ``audit`` user); each service process is given its own service's seed.
- **PostgreSQL**: one node (the embedded ``localpg``: its ``postgres`` binary run as our child,
  :class:`chieu_tools.localpg.Postmaster`), restartable in place.
- **Services**: two processes of every service (``table-1``, ``table-2``, ``ledger-1``, …), each
  on its own gRPC port. A process listens on its own address; it reaches the other services
  through a gRPC multi-address target naming both of their processes (``ipv4:a:p1,a:p2``:
  gRPC's ``pick_first`` goes to the next address when one is gone). Any table process serves any
  table (optimistic appends on the log, one follower per process), the ledger's, ladder's and
  lobby's durable consumers are shared by their two processes (an inbox row per stream sequence,
  so one posting, one standing change, one projection each).

Token keys and credentials are :mod:`chieu_tools.up`'s (``ensure_keys``, ``service_envs``). Each process
can be SIGKILLed, paused (SIGSTOP / SIGCONT) and started again with the same address and data.
Every process is tied to the one that started it (:func:`chieu_tools.supervise.spawn_tied`): on
Linux a SIGKILLed ``up --cluster``, chaos run or soak leaves no node, service or postmaster running.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chieu.kit import natsauth
from chieu_tools import localnats, localpg, supervise, up

SERVICES = tuple(up.SERVICES)
"""The services, each run as :data:`PROCESSES` processes."""
PROCESSES = 2
NODES = 3
REPLICAS = 3
"""JetStream replicas of every stream and bucket (one per node)."""
UP_PORTS = {"nats": 4222, "route": 6222, "monitor": 8222, "table": 50051, "ledger": 50052, "ladder": 50053,
            "lobby": 50054}
"""``chieu up --cluster``: the first node's and first process's ports; the next ones add 1 (NATS) or
10 (services): nats 4222-4224, table 50051 and 50061, ledger 50052 and 50062, …"""


@dataclass
class Process:
    """One OS process of the cluster, started (again) with the same command, environment and port."""

    name: str
    kind: str
    """``nats`` or a service name."""
    argv: list[str]
    env: dict[str, str]
    port: int
    log: Path | None
    """Where its output goes (``None``: this terminal)."""
    popen: subprocess.Popen[bytes] | None = None
    paused: bool = False
    starts: int = 0

    @property
    def alive(self) -> bool:
        return self.popen is not None and self.popen.poll() is None

    @property
    def pid(self) -> int:
        assert self.popen is not None
        return self.popen.pid

    def spawn(self) -> subprocess.Popen[bytes]:
        """Start it, tied to us (it gets SIGTERM when we die, even of SIGKILL), without waiting."""
        if self.log is None:
            self.popen = supervise.spawn_tied(self.argv, env=self.env)
        else:
            self.log.parent.mkdir(parents=True, exist_ok=True)
            with self.log.open("ab") as out:
                self.popen = supervise.spawn_tied(self.argv, env=self.env, stdout=out, stderr=subprocess.STDOUT)
        self.paused = False
        self.starts += 1
        return self.popen

    def start(self, timeout: float = 60.0) -> None:
        """Start it and wait until it listens on its port."""
        if self.alive:
            return
        localnats.wait_for_port(self.port, timeout=timeout, proc=self.spawn())

    def signal(self, sig: int) -> None:
        if self.alive:
            os.kill(self.pid, sig)

    def kill(self) -> None:
        """SIGKILL, and reap it."""
        if self.popen is None:
            return
        if self.alive:
            self.popen.kill()
        self.popen.wait()
        self.paused = False

    def pause(self) -> None:
        self.signal(signal.SIGSTOP)
        self.paused = True

    def resume(self) -> None:
        self.signal(signal.SIGCONT)
        self.paused = False

    def stop(self, timeout: float = 15.0) -> None:
        """SIGTERM (after SIGCONT if paused), SIGKILL if it lingers."""
        if not self.alive:
            return
        assert self.popen is not None
        if self.paused:
            self.resume()
        self.popen.send_signal(signal.SIGTERM)
        try:
            self.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()


def _free() -> int:
    return localnats.free_port()


@dataclass
class Cluster:
    """The cluster under ``data_dir``: build it, then :meth:`start` and :meth:`stop`.

    ``ports`` fixes the first node's and first process's ports (:data:`UP_PORTS` for ``chieu up
    --cluster``); by default every port is a free one. ``client_urls`` are the NATS URLs the
    services are given, one per node: the nodes' own by default; the chaos run puts a latency proxy
    in front of one node by replacing its URL before :meth:`start`. ``logs`` sends each process's
    output to ``<data>/logs/<name>.log`` (else this terminal). ``env`` is added to every service's
    environment (ack waits, log format, …).
    """

    data_dir: Path
    ports: dict[str, int] | None = None
    logs: bool = True
    env: dict[str, str] = field(default_factory=dict)
    database_url: str = ""
    """An external PostgreSQL (empty: the embedded one under ``<data>/postgres``)."""
    headroom: int | None = None
    """The room JetStream leaves free on the nodes' volume (None: :func:`localnats.store_limit`'s
    default, 5% of the volume and at least 64 MiB); the disk guards' too (:func:`disk_guards`)."""
    nodes: list[Process] = field(default_factory=list, init=False)
    services: list[Process] = field(default_factory=list, init=False)
    client_urls: list[str] = field(default_factory=list, init=False)
    addrs: dict[str, list[str]] = field(default_factory=dict, init=False)
    monitor_ports: list[int] = field(default_factory=list, init=False)
    pg: localpg.Postmaster | None = field(default=None, init=False)
    """The embedded PostgreSQL (``None``: an external one, :attr:`database_url`)."""
    pg_handle: supervise.Handle | None = field(default=None, init=False)
    """Its postmaster: our tied child, or one found running in its folder (adopted)."""
    signer: Any = field(default=None, init=False)
    """The token signer (``<data>/keys``): the chaos run signs its operator's token with it."""
    private_key: Path | None = field(default=None, init=False)
    creds: Any = field(default=None, init=False)
    """The NATS users' seeds (:class:`chieu.kit.natsauth.Credentials`)."""

    def __post_init__(self) -> None:
        self.data_dir = self.data_dir.resolve()
        fixed = self.ports

        def port(kind: str, i: int) -> int:
            if fixed is None:
                return _free()
            return fixed[kind] + (i if kind in ("nats", "route", "monitor") else 10 * i)

        nats_ports = [port("nats", i) for i in range(NODES)]
        route_ports = [port("route", i) for i in range(NODES)]
        self.monitor_ports = [port("monitor", i) for i in range(NODES)]
        self.client_urls = [f"nats://127.0.0.1:{p}" for p in nats_ports]
        self.creds = natsauth.ensure(self.data_dir / "nats-creds")
        users = natsauth.server_block(self.creds.folder)
        for i in range(NODES):
            name = f"n{i + 1}"
            folder = self.data_dir / "nats" / name
            conf = localnats.write_cluster_config(folder, name, nats_ports[i], route_ports[i],
                                                  [p for j, p in enumerate(route_ports) if j != i],
                                                  self.monitor_ports[i], extra=users, headroom=self.headroom)
            self.nodes.append(Process(name, "nats", [localnats.binary(), "-c", str(conf)], {**os.environ},
                                      nats_ports[i], self._log(name)))
        self.addrs = {s: [f"127.0.0.1:{port(s, i)}" for i in range(PROCESSES)] for s in SERVICES}

    def _log(self, name: str) -> Path | None:
        return self.data_dir / "logs" / f"{name}.log" if self.logs else None

    # ------------------------------------------------------------ addresses

    def target(self, service: str) -> str:
        """The gRPC target naming every process of ``service`` (``ipv4:a:p1,a:p2``)."""
        return "ipv4:" + ",".join(self.addrs[service])

    @property
    def nats_url(self) -> str:
        """Every node's client URL, comma-separated (what the services are given)."""
        return ",".join(self.client_urls)

    @property
    def seal_keys(self) -> Path:
        """The table processes' seal keyset (the harness's oracle opens the hands in play with it)."""
        return up.ensure_seal_keys(self.data_dir / "keys")

    @property
    def audit_creds(self) -> str:
        """The read-only ``audit`` user's seed: what ``chieu audit``, ``verify`` and the chaos run's
        own readers connect as."""
        return str(self.creds.seed("audit"))

    def process(self, name: str) -> Process:
        for p in (*self.nodes, *self.services):
            if p.name == name:
                return p
        raise KeyError(name)

    # ------------------------------------------------------------ life

    def start(self) -> None:
        """Start the NATS nodes (until JetStream has its meta leader), PostgreSQL, then every
        service process; stops what it started if one does not come up."""
        try:
            for n in self.nodes:
                n.start()
            self.wait_jetstream()
            self.database_url = self.database_url or self._start_pg()
            self._build_services()
            # the ledger and the ladder first: the table asks them at gated tables
            for kind in ("ledger", "ladder", "lobby", "table"):
                for p in self.services:
                    if p.kind == kind:
                        p.start()
        except BaseException:
            self.stop()
            raise

    def _start_pg(self) -> str:
        self.pg = localpg.Postmaster(self.data_dir / "postgres")
        self.start_pg()
        return self.pg.url

    def _build_services(self) -> None:
        signer, private, public = up.ensure_keys(self.data_dir)
        self.signer, self.private_key = signer, private
        base = {**os.environ, "NATS_URL": self.nats_url, "DATABASE_URL": self.database_url,
                "CHIEU_STREAM_REPLICAS": str(REPLICAS), **self.env}
        base.update({f"CHIEU_{s.upper()}_ADDR": self.target(s) for s in SERVICES})
        envs = up.service_envs(base, signer, private, public)
        self.services = []
        for s, module in up.SERVICES.items():
            for i, addr in enumerate(self.addrs[s]):
                name = f"{s}-{i + 1}"
                env = {**envs[s], f"CHIEU_{s.upper()}_ADDR": addr, "CHIEU_INSTANCE": name,
                       "CHIEU_REPLICAS": str(len(self.addrs[s])),
                       "CHIEU_NATS_CREDS": str(self.creds.seed(s))}
                self.services.append(Process(name, s, [sys.executable, "-m", module], env,
                                             int(addr.rsplit(":", 1)[1]), self._log(name)))

    def wait_jetstream(self, timeout: float = 60.0, nodes: list[Process] | None = None) -> None:
        """Wait until every running node's ``/healthz`` says JetStream is ready (a meta leader)."""
        deadline = time.monotonic() + timeout
        for i, n in enumerate(self.nodes):
            if nodes is not None and n not in nodes:
                continue
            url = f"http://127.0.0.1:{self.monitor_ports[i]}/healthz"
            while True:
                try:
                    with urllib.request.urlopen(url, timeout=2) as r:
                        if r.status == 200:
                            break
                except OSError:
                    pass
                if time.monotonic() > deadline:
                    raise TimeoutError(f"JetStream on {n.name} is not ready after {timeout}s")
                time.sleep(0.2)

    def stop_pg(self, mode: str = "fast", timeout: float = 30.0) -> None:
        """Stop the embedded PostgreSQL: ``fast`` (SIGINT to the postmaster), or ``immediate``
        (SIGQUIT: no checkpoint, crash recovery at the next start). Signalled directly rather than
        through ``pg_ctl``, which was seen to die of SIGSEGV on this machine under heavy load."""
        assert self.pg is not None, "an external PostgreSQL is not stopped here"
        pid = localpg.postmaster(self.pg.pgdata)
        if pid is None:
            return
        os.kill(pid, signal.SIGQUIT if mode == "immediate" else signal.SIGINT)
        deadline = time.monotonic() + timeout
        while localpg.postmaster(self.pg.pgdata) == pid and time.monotonic() < deadline:
            time.sleep(0.05)
        if self.pg_handle is not None:
            self.pg_handle.poll()  # reaped, when ours

    def start_pg(self, timeout: float = 60.0) -> supervise.Handle:
        """Start the embedded PostgreSQL again on the same data and socket (the same URL), as our
        tied child (or adopt the postmaster running in its folder); back once it accepts
        connections."""
        assert self.pg is not None, "an external PostgreSQL is not started here"
        handle = self.pg_handle = self.pg.spawn()
        deadline = time.monotonic() + timeout
        while not self.pg.ready():
            if handle.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"PostgreSQL in {self.pg.pgdata} did not start (see {self.pg.pgdata}/log)")
            time.sleep(0.1)
        return handle

    def restart_pg(self, mode: str = "fast") -> None:
        self.stop_pg(mode)
        self.start_pg()

    def stop(self) -> None:
        """Stop every process (services first, then NATS, then PostgreSQL)."""
        for p in self.services:
            if p.paused:
                p.resume()
        for p in self.services:
            if p.alive:
                assert p.popen is not None
                p.popen.send_signal(signal.SIGTERM)
        for p in self.services:
            p.stop()
        for n in self.nodes:
            n.stop()
        if self.pg is not None:
            self.pg.stop(self.pg_handle)
            self.pg = self.pg_handle = None


def supervisor(cluster: Cluster, *, max_deaths: int = supervise.MAX_DEATHS,
               window_s: float = supervise.WINDOW_S,
               say: Callable[[str], None] | None = None) -> supervise.Supervisor:
    """A supervisor of the cluster's processes (every node, every service process, the embedded
    PostgreSQL), each restarted on its own with its own health: a node's
    ``/healthz?js-enabled-only=true``, a process's gRPC health, ``pg_isready``. ``say``: where its
    lines go (default: this terminal)."""
    children: list[supervise.Child] = []

    def spawner(p: Process) -> Callable[[], supervise.Handle]:
        return p.spawn

    def stopper(p: Process) -> Callable[[supervise.Handle], None]:
        return lambda _handle: p.stop()

    for i, n in enumerate(cluster.nodes):
        children.append(supervise.Child(n.name, spawner(n), supervise.http_ok(
            f"http://127.0.0.1:{cluster.monitor_ports[i]}/healthz?js-enabled-only=true"), stop=stopper(n)))
    for p in cluster.services:
        children.append(supervise.Child(p.name, spawner(p), supervise.grpc_health(f"127.0.0.1:{p.port}"),
                                        stop=stopper(p)))
    if cluster.pg is not None:
        pg = cluster.pg

        def spawn_pg() -> supervise.Handle:
            cluster.pg_handle = pg.spawn()
            return cluster.pg_handle

        children.append(supervise.Child("postgres", spawn_pg, pg.ready, stop=pg.stop))
    return supervise.Supervisor(children, prefix="chieu up --cluster", max_deaths=max_deaths, window_s=window_s,
                                status_file=cluster.data_dir / "up.json", say=say or supervise.to_terminal)


def disk_guards(cluster: Cluster, sup: supervise.Supervisor, *, every_s: float = 5.0) -> list[localnats.DiskGuard]:
    """A :class:`localnats.DiskGuard` per node (not started), as ``chieu up`` has for its one node:
    each node's ``max_file_store`` follows its share of the volume's free space (the three nodes
    share one volume), a filling volume restarts the node onto the room of its reserve (through
    ``sup``, not counted as a death) so that it refuses with ``log_full``, space freed is reloaded
    (no restart), and a node whose ``/healthz`` names a write error (it met the full disk) is
    restarted. The guards look one after another every ``every_s`` seconds from one thread each."""
    folders = [Path(n.argv[-1]).parent for n in cluster.nodes]
    guards = []
    for i, n in enumerate(cluster.nodes):

        def pid(name: str = n.name) -> int | None:
            handle = sup.children[name].handle
            return handle.pid if handle is not None and handle.poll() is None else None

        def restart(why: str, name: str = n.name) -> None:
            sup.restart(name, why)

        def health(port: int = cluster.monitor_ports[i]) -> str | None:
            return localnats.health_error(port)

        def say(line: str, name: str = n.name) -> None:
            sup.say(f"{name}: {line}")

        guards.append(localnats.DiskGuard(Path(n.argv[-1]), pid, every_s=every_s, headroom=cluster.headroom,
                                          restart=restart, health=health, say=say,
                                          share=localnats.cluster_share(len(cluster.nodes)),
                                          peers=[f for j, f in enumerate(folders) if j != i]))
    return guards


def run(data_dir: Path, ports: dict[str, int] | None = UP_PORTS, local_env: Path | None = None, *,
        max_deaths: int = supervise.MAX_DEATHS, window_s: float = supervise.WINDOW_S) -> int:
    """``chieu up --cluster``: the cluster on the fixed ports of :data:`UP_PORTS` (or ``ports``; None:
    every port a free one),
    output in this terminal, until Ctrl-C; every process supervised (:func:`supervisor`): one that
    dies is said so and restarted on its own while the other one of its service serves. ``local_env``:
    where the audit commands find the cluster (``NATS_URL``, the audit user's seed, ``DATABASE_URL``)."""
    cluster = Cluster(data_dir, ports=dict(ports) if ports is not None else None, logs=False,
                      env={"CHIEU_LOG_FORMAT": "console"})
    stopping = threading.Event()

    def stop(*_: object) -> None:
        stopping.set()

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    print(f"chieu up --cluster: data in {cluster.data_dir}", file=sys.stderr)
    cluster.start()
    sup = supervisor(cluster, max_deaths=max_deaths, window_s=window_s)
    sup.stopping = stopping
    guards = disk_guards(cluster, sup)
    try:
        for p in (*cluster.nodes, *cluster.services):
            assert p.popen is not None
            sup.adopt(p.name, p.popen)
        if cluster.pg_handle is not None:
            sup.adopt("postgres", cluster.pg_handle)
        for g in guards:
            g.start()
        print(f"chieu up --cluster: NATS JetStream cluster n1..n{NODES} on {cluster.nats_url} "
              f"(R{REPLICAS}, sync_interval always)", file=sys.stderr)
        print(f"chieu up --cluster: NATS users {', '.join(cluster.creds.users)} (seeds in {cluster.creds.folder})",
              file=sys.stderr)
        print(f"chieu up --cluster: PostgreSQL (embedded) in {cluster.data_dir / 'postgres'}: "
              f"DATABASE_URL='{cluster.database_url}' (every service's database)", file=sys.stderr)
        for s in SERVICES:
            print(f"chieu up --cluster: {s} on {', '.join(cluster.addrs[s])} (target {cluster.target(s)})",
                  file=sys.stderr)
        if local_env is not None:
            _, archive_private, archive_public = up.ensure_archive_keys(cluster.data_dir)
            up.write_local_env(local_env, {"NATS_URL": cluster.nats_url, "CHIEU_NATS_CREDS": cluster.audit_creds,
                                           "DATABASE_URL": cluster.database_url,
                                           "CHIEU_ARCHIVE_PRIVATE_KEY": str(archive_private),
                                           "CHIEU_ARCHIVE_PUBLIC_KEYS": str(archive_public)})
            print(f"chieu up --cluster: the audit commands, as the read-only audit user, from {local_env}: "
                  "./chieu verify TABLE, ./chieu audit, ./chieu replay TABLE --html F, ./chieu export F",
                  file=sys.stderr)
        print(f"chieu up --cluster: supervising {len(sup.children)} processes (each restarted on its own; given "
              f"up after {max_deaths} deaths in {window_s:.0f} s; pids in {cluster.data_dir / 'up.json'}); "
              "each node's store limit follows its share of the volume's free space (a disk guard a node)",
              file=sys.stderr)
        print(f"chieu up --cluster: sign a token: CHIEU_TOKEN_PRIVATE_KEY={cluster.private_key} ./chieu token "
              "PLAYER. Ctrl-C stops everything.", file=sys.stderr)
        stopping.wait()
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C does not cut the stop short
        print("chieu up --cluster: stopping every process", file=sys.stderr)
        for g in guards:
            g.stop()
        sup.stop([])  # the watchers first: nothing is restarted while the cluster stops
        cluster.stop()
        print("chieu up --cluster: stopped", file=sys.stderr)
    return 0
