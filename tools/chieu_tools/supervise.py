"""Supervision of the processes ``chieu up`` starts: each one watched and restarted on its own.

Each :class:`Child` is watched by a thread of its own. When it dies (any exit, whatever the
signal) the supervisor says so loudly and starts it again after a backoff (0.5 s, doubling up to
8 s) while every other process keeps running. It is back once its own health answers (gRPC
health, NATS ``/healthz?js-enabled-only=true``, ``pg_isready``, Envoy ``/ready``). After
``max_deaths`` deaths within ``window_s`` seconds it gives up on that process, says so, and leaves
the others running. :meth:`Supervisor.stop` stops every process, whoever started it last.

A process need not be our child: PostgreSQL's postmaster is started by ``pg_ctl`` (or by an
operator), so its handle is :class:`Pid`, the pid its data folder names, watched by polling.

Every process :func:`popen` (and :class:`chieu_tools.localpg.Postmaster`) starts is tied to this
one (:func:`spawn_tied`): on Linux the kernel sends it a signal when we die, even of SIGKILL
(``PR_SET_PDEATHSIG``), so a killed ``up`` leaves nothing running. Elsewhere (macOS: no
``prctl``) the tie is a no-op.
"""

from __future__ import annotations

import errno
import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Protocol, TypeVar

MAX_DEATHS = 5
HEALTHY_AGAIN_AFTER = 3
"""Health checks in a row (one a second) a process that was unhealthy must pass to be said healthy
again: an answer now and then while its dependency is frozen is no recovery (issue 36)."""
"""Deaths within :data:`WINDOW_S` after which a process is given up."""
WINDOW_S = 60.0
BACKOFF_S = (0.5, 8.0)
"""The first restart's delay and the longest one (doubling with each death in the window)."""


class Handle(Protocol):
    """A running process: a :class:`subprocess.Popen` or a :class:`Pid`."""

    @property
    def pid(self) -> int: ...

    def poll(self) -> int | None: ...


class Pid:
    """A process that is not our child (a daemonised postmaster), watched by its pid. A zombie
    counts as dead: the container's init may never reap it."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None and not alive(self.pid):
            self.returncode = -1
        return self.returncode


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (and is no zombie)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True  # no /proc: the signal test is all there is
    return stat.rsplit(")", 1)[-1].split()[0] not in ("Z", "X")


def describe(code: int | None) -> str:
    """``exit code 3``, ``killed by SIGKILL``, or ``gone`` (a process not our child)."""
    if code is None:
        return "running"
    if code == -1:
        return "gone"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


def terminate(handle: Handle, sig: int = signal.SIGTERM, timeout: float = 15.0) -> None:
    """Send ``sig``, wait up to ``timeout`` s, then SIGKILL."""
    if handle.poll() is not None:
        return
    try:
        os.kill(handle.pid, sig)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + timeout
    while handle.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    if handle.poll() is None:
        try:
            os.kill(handle.pid, signal.SIGKILL)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + 5
        while handle.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)


# ---------------------------------------------------------------- health, from each process itself


def grpc_health(addr: str, ca: str = "", cert: str = "", key: str = "") -> Callable[[], bool]:
    """``addr``'s ``grpc.health.v1`` answers SERVING (with TLS when ``ca`` is given)."""
    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    state: dict[str, grpc.Channel] = {}
    # a process being restarted is asked again within a second (gRPC's default reconnect backoff
    # grows to minutes while a port stays closed)
    options = [("grpc.initial_reconnect_backoff_ms", 100), ("grpc.min_reconnect_backoff_ms", 100),
               ("grpc.max_reconnect_backoff_ms", 1000)]

    def check() -> bool:
        if "channel" not in state:
            if ca:
                creds = grpc.ssl_channel_credentials(Path(ca).read_bytes(),
                                                     Path(key).read_bytes() if key else None,
                                                     Path(cert).read_bytes() if cert else None)
                state["channel"] = grpc.secure_channel(addr, creds, options=options)
            else:
                state["channel"] = grpc.insecure_channel(addr, options=options)
        stub = health_pb2_grpc.HealthStub(state["channel"])
        try:
            reply = stub.Check(health_pb2.HealthCheckRequest(service=""), timeout=2.0)  # type: ignore[attr-defined]
        except grpc.RpcError:
            return False
        return bool(reply.status == health_pb2.HealthCheckResponse.SERVING)

    return check


def http_ok(url: str) -> Callable[[], bool]:
    """``url`` answers 200: NATS ``/healthz?js-enabled-only=true``, Envoy's admin ``/ready``."""

    def check() -> bool:
        try:
            with urllib.request.urlopen(url, timeout=2.0) as r:
                return bool(r.status == 200)
        except OSError:
            return False

    return check


# ---------------------------------------------------------------- the supervisor


@dataclass
class Child:
    """One supervised process: how to start it (again) and how to ask it whether it serves."""

    name: str
    spawn: Callable[[], Handle]
    """Start it; returns at once (its health says when it serves)."""
    healthy: Callable[[], bool]
    stop: Callable[[Handle], None] = terminate
    ready_timeout: float = 60.0
    """A start not healthy after this long counts as a death."""
    restart_unhealthy_after: float | None = None
    """Alive but unhealthy this long: restarted (None: only reported)."""
    handle: Handle | None = None
    state: str = "new"
    """``new``, ``starting``, ``serving``, ``unhealthy``, ``restarting``, ``gave up``, ``stopped``."""
    starts: int = 0
    planned: str = ""
    """Why the supervisor itself stopped it to start it again (:meth:`Supervisor.restart`): no death."""
    deaths: deque[float] = field(default_factory=deque)
    lock: threading.Lock = field(default_factory=threading.Lock)


def to_terminal(line: str) -> None:
    """A supervisor's line, to this terminal (stderr)."""
    print(line, file=sys.stderr, flush=True)


class Supervisor:
    """Watches ``children`` (started in the groups given to :meth:`start`), each on its own."""

    def __init__(self, children: Sequence[Child], *, prefix: str = "chieu up", max_deaths: int = MAX_DEATHS,
                 window_s: float = WINDOW_S, backoff_s: tuple[float, float] = BACKOFF_S,
                 status_file: Path | None = None, say: Callable[[str], None] = to_terminal) -> None:
        self.children = {c.name: c for c in children}
        self.prefix = prefix
        self.max_deaths, self.window_s, self.backoff_s = max_deaths, window_s, backoff_s
        self.status_file = status_file
        self._say = say
        self.stopping = threading.Event()
        self._threads: list[threading.Thread] = []
        self._status_lock = threading.Lock()

    def say(self, line: str) -> None:
        self._say(f"{self.prefix}: {line}")

    # ------------------------------------------------------------ start

    def start(self, groups: Sequence[Sequence[str]]) -> None:
        """Start the children group by group, each group healthy before the next starts (NATS and
        PostgreSQL before the services, the services before Envoy), then watch them all. Raises
        if one does not come up (nothing is left running that it started: call :meth:`stop`)."""
        for group in groups:
            for name in group:
                self._spawn(self.children[name])
            for name in group:
                child = self.children[name]
                if not self._await_healthy(child):
                    if self.stopping.is_set():
                        return
                    code = child.handle.poll() if child.handle is not None else None
                    raise RuntimeError(f"{name} did not come up: " + (
                        f"{describe(code)} before it was healthy" if code is not None
                        else f"not healthy after {child.ready_timeout:.0f} s"))
                child.state = "serving"
            self._write_status()
            for name in group:
                self.watch(self.children[name])

    def adopt(self, name: str, handle: Handle) -> None:
        """Watch a child already started by someone else (the local cluster's own start)."""
        child = self.children[name]
        child.handle, child.state, child.starts = handle, "serving", child.starts + 1
        self._write_status()
        self.watch(child)

    def watch(self, child: Child) -> None:
        t = threading.Thread(target=self._watch, args=(child,), name=f"supervise-{child.name}", daemon=True)
        self._threads.append(t)
        t.start()

    def _spawn(self, child: Child) -> bool:
        with child.lock:
            if self.stopping.is_set():
                return False
            child.handle = child.spawn()
            child.starts += 1
            child.state = "starting"
        self._write_status()
        return True

    def _await_healthy(self, child: Child) -> bool:
        """Wait until ``child`` is healthy; False if it died, the wait ran out or we stop."""
        deadline = time.monotonic() + child.ready_timeout
        while time.monotonic() < deadline and not self.stopping.is_set():
            if child.handle is None or child.handle.poll() is not None:
                return False
            if child.healthy():
                return True
            self.stopping.wait(0.1)
        return False

    # ------------------------------------------------------------ watch

    def _watch(self, child: Child) -> None:
        last_check, unhealthy_since, good = 0.0, 0.0, 0
        while not self.stopping.is_set():
            assert child.handle is not None
            code = child.handle.poll()
            if code is None:
                now = time.monotonic()
                if now - last_check >= 1.0:
                    last_check = now
                    ok = child.healthy()
                    if self.stopping.is_set():
                        return
                    good = good + 1 if ok else 0
                    if ok and child.state == "unhealthy" and good >= HEALTHY_AGAIN_AFTER:
                        self.say(f"{child.name} is healthy again")
                        child.state = "serving"
                        self._write_status()
                    elif not ok and child.state == "serving":
                        self.say(f"WARNING {child.name} (pid {child.handle.pid}) is alive but not healthy")
                        child.state, unhealthy_since = "unhealthy", now
                        self._write_status()
                    elif (not ok and child.restart_unhealthy_after is not None
                          and now - unhealthy_since > child.restart_unhealthy_after):
                        self.say(f"RESTART {child.name}: unhealthy for {now - unhealthy_since:.0f} s; stopping it")
                        child.stop(child.handle)
                        continue
                self.stopping.wait(0.2)
                continue
            if self.stopping.is_set():
                return
            if not self._died(child, code):
                return

    def restart(self, name: str, why: str) -> None:
        """Stop ``name`` to start it again at once (a new configuration it cannot reload): said so,
        and not counted as a death."""
        child = self.children[name]
        with child.lock:
            if self.stopping.is_set() or child.handle is None or child.handle.poll() is not None:
                return
            child.planned = why
            self.say(f"RESTART {name}: {why}")
            child.stop(child.handle)

    def _died(self, child: Child, code: int, why: str = "") -> bool:
        """Report a death (or a start that failed: ``why``), then restart after the backoff; False
        once given up (or stopping)."""
        if child.planned:
            child.planned = ""
            return self._start_again(child, time.monotonic())
        now = time.monotonic()
        child.deaths.append(now)
        while child.deaths and now - child.deaths[0] > self.window_s:
            child.deaths.popleft()
        n = len(child.deaths)
        pid = child.handle.pid if child.handle is not None else "?"
        what = f"DIED {child.name} (pid {pid}): {describe(code)}" if not why else f"FAILED {child.name}: {why}"
        self.say(f"{what}; death {n} of {self.max_deaths} allowed in {self.window_s:.0f} s; the other processes "
                 "keep running")
        if n >= self.max_deaths:
            child.state = "gave up"
            self._write_status()
            self.say(f"GAVE UP on {child.name}: {n} deaths in {self.window_s:.0f} s; it stays down (its log "
                     f"says why); the others keep running; Ctrl-C and run ./chieu up again once it is fixed")
            return False
        delay = min(self.backoff_s[1], self.backoff_s[0] * 2 ** (n - 1))
        child.state = "restarting"
        self._write_status()
        self.say(f"RESTART {child.name} in {delay:.1f} s")
        if self.stopping.wait(delay):
            return False
        return self._start_again(child, time.monotonic())

    def _start_again(self, child: Child, started: float) -> bool:
        try:
            if not self._spawn(child):
                return False
        except Exception as e:
            return not self.stopping.is_set() and self._died(child, 1, f"could not start ({type(e).__name__}: {e})")
        if self._await_healthy(child):
            child.state = "serving"
            self._write_status()
            assert child.handle is not None
            self.say(f"BACK {child.name} (pid {child.handle.pid}): healthy {time.monotonic() - started:.1f} s "
                     "after its restart")
            return True
        if self.stopping.is_set():
            return False
        assert child.handle is not None
        if child.handle.poll() is None:  # alive, never healthy: stop it, it counts as a death
            self.say(f"{child.name} (pid {child.handle.pid}) not healthy {child.ready_timeout:.0f} s after "
                      "its restart; stopping it")
            child.stop(child.handle)
        return True  # the loop sees it dead and counts the death

    # ------------------------------------------------------------ stop

    def stop(self, order: Sequence[Sequence[str]]) -> None:
        """Stop every child, group by group (each group's children in parallel), whoever started it."""
        self.stopping.set()
        for t in self._threads:
            t.join(timeout=10)
        for group in order:
            stoppers = []
            for name in group:
                child = self.children[name]

                def stop_one(c: Child = child) -> None:
                    with c.lock:
                        if c.handle is not None:
                            c.stop(c.handle)
                        c.state = "stopped"

                t = threading.Thread(target=stop_one, daemon=True)
                t.start()
                stoppers.append(t)
            for t in stoppers:
                t.join(timeout=60)
        self._write_status()

    # ------------------------------------------------------------ status

    def status(self) -> dict[str, dict[str, object]]:
        """Each child's pid, state, starts and deaths in the window."""
        out: dict[str, dict[str, object]] = {}
        for c in self.children.values():
            pid = c.handle.pid if c.handle is not None else None
            out[c.name] = {"pid": pid, "state": c.state, "starts": c.starts, "recent_deaths": len(c.deaths)}
        return out

    def _write_status(self) -> None:
        """``status_file`` (JSON) rewritten at each change: who runs as which pid. Left as it was
        when it cannot be written (its volume full: the supervision goes on)."""
        if self.status_file is None:
            return
        with self._status_lock:
            doc = {"supervisor": os.getpid(), "processes": self.status()}
            tmp = self.status_file.with_suffix(".tmp")
            try:
                tmp.write_text(json.dumps(doc, indent=2) + "\n")
                os.replace(tmp, self.status_file)
            except OSError:
                tmp.unlink(missing_ok=True)


def popen(argv: list[str], env: dict[str, str], log: Path | None = None) -> Callable[[], Handle]:
    """A spawn function: ``argv`` with ``env``, its output appended to ``log`` (or this terminal);
    the process gets SIGTERM when we die (:func:`spawn_tied`)."""

    def spawn() -> Handle:
        if log is None:
            return spawn_tied(argv, env=env)
        log.parent.mkdir(parents=True, exist_ok=True)
        with log.open("ab") as out:
            return spawn_tied(argv, env=env, stdout=out, stderr=subprocess.STDOUT)

    return spawn


# ---------------------------------------------------------------- children that die with us

TIED = sys.platform.startswith("linux") and bool(sys.executable)
"""Whether :func:`spawn_tied` ties its children to us (Linux: ``prctl(PR_SET_PDEATHSIG)``)."""

TIE = """\
import ctypes, os, signal, sys
parent, sig, uid, path = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
try:  # the environment as given, without the LC_CTYPE Python's start may have added (PEP 538)
    with open("/proc/self/environ", "rb") as f:
        env = dict(v.split(b"=", 1) for v in f.read().split(b"\\0") if b"=" in v)
except OSError:
    env = dict(os.environb)
if uid >= 0:
    os.setreuid(uid, uid)  # first: a change of user clears the parent-death signal
try:  # PR_SET_PDEATHSIG (1): the kernel sends sig when our parent dies (failing: untied, as before)
    prctl = ctypes.CDLL(None, use_errno=True).prctl
    prctl.argtypes = [ctypes.c_int] + [ctypes.c_ulong] * 4
    prctl(1, sig, 0, 0, 0)
except (OSError, AttributeError):
    pass
if os.getppid() != parent:  # it died before the prctl: no signal will ever come
    os._exit(1)
for name in ("SIGPIPE", "SIGXFSZ"):  # Python's start ignores them; Popen restores them
    signal.signal(getattr(signal, name), signal.SIG_DFL)
os.execve(path, sys.argv[5:], env)
"""
"""The tie, run in the child before the real program: ``python -I -S -c TIE PARENT SIG UID PATH
ARGV...`` sets the parent-death signal (after switching to ``UID``, if not -1), exits if
``PARENT`` is gone already, then becomes ``PATH`` (same pid). Not a ``preexec_fn``: that would
make Python ``fork()`` (rather than ``vfork()``) this process, whose threads hold gRPC channels,
and gRPC's fork handlers then pause and restart its threads around every start."""

T = TypeVar("T")


class _Forker:
    """One thread, started on first use and never ended, that starts every tied child: the
    parent-death signal fires when the *thread* that forked a child ends, and the watcher threads
    that restart children end (at stop, or on giving up) while their children must run on."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._jobs: queue.SimpleQueue[tuple[Callable[[], Any], Future[Any]]] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._pid = 0

    def call(self, fn: Callable[[], T]) -> T:
        """``fn()`` run on the forker thread; its result, or its exception raised here."""
        if threading.current_thread() is self._thread:
            return fn()
        with self._lock:
            if self._thread is None or self._pid != os.getpid():  # (a forked copy of us has no such thread)
                self._jobs = queue.SimpleQueue()
                self._thread = threading.Thread(target=self._run, args=(self._jobs,), name="supervise-forker",
                                                daemon=True)
                self._pid = os.getpid()
                self._thread.start()
            jobs = self._jobs
        done: Future[T] = Future()
        jobs.put((fn, done))
        return done.result()

    @staticmethod
    def _run(jobs: queue.SimpleQueue[tuple[Callable[[], Any], Future[Any]]]) -> None:
        while True:
            fn, done = jobs.get()
            try:
                done.set_result(fn())
            except BaseException as e:  # the caller's, raised in its thread
                done.set_exception(e)


_forker = _Forker()


def spawn_tied(argv: Sequence[str], *, env: Mapping[str, str] | None = None,
               stdout: int | IO[Any] | None = None, stderr: int | IO[Any] | None = None,
               start_new_session: bool = False, user: str | None = None,
               sig: int = signal.SIGTERM) -> subprocess.Popen[bytes]:
    """``subprocess.Popen(argv, ...)``, the child tied to this process: on Linux (:data:`TIED`) it
    gets ``sig`` when we die, even of SIGKILL (``prctl(PR_SET_PDEATHSIG)`` by :data:`TIE`), and it
    is forked by the one thread that lives as long as we do. Elsewhere (macOS): a plain ``Popen``,
    as before; the child outlives a SIGKILLed parent."""
    if not TIED:
        return subprocess.Popen(argv, env=env, stdout=stdout, stderr=stderr, start_new_session=start_new_session,
                                user=user)
    # what Popen would refuse at once is refused here too, not by a child that dies
    path: str | None = argv[0]
    if os.sep not in argv[0]:
        path = shutil.which(argv[0], path=(env if env is not None else os.environ).get("PATH", os.defpath))
    if path is None or not os.path.exists(path):
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), argv[0])
    import pwd  # (POSIX only)

    uid = pwd.getpwnam(user).pw_uid if user is not None else -1
    tied = [sys.executable, "-I", "-S", "-c", TIE, str(os.getpid()), str(int(sig)), str(uid), path, *argv]

    def start() -> subprocess.Popen[bytes]:
        return subprocess.Popen(tied, env=env, stdout=stdout, stderr=stderr, start_new_session=start_new_session)

    return _forker.call(start)
