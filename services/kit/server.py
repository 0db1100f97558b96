"""The gRPC server bootstrap every service uses: the error guard, limits, health, reflection,
and the graceful shutdown order (health NOT_SERVING → stop with grace → close resources).

Health says two things. The overall service (``""``) and each named service are the readiness:
SERVING while the process's dependencies answer (:class:`Readiness`: PostgreSQL, the NATS
connection, each asked every second), NOT_SERVING from the first dependency that does not answer
until every one has answered :data:`READY_AFTER` times in a row (a readiness that flaps while a
dependency is frozen is worse than one that waits). :data:`LIVENESS` is the process's own
liveness: SERVING as long as its event loop answers, whatever its dependencies do (what a liveness
probe asks: a process is not restarted for its database's outage)."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import signal
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import Any, cast

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool, text_format
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection, reflection_pb2

from chieu.kit import auth, channels, logs, metrics, ratelimit, tracing
from chieu.kit.errors import GuardedServer
from chieu.kit.settings import Settings

log = logs.get("chieu.server")

Register = Callable[[Any], None]
"""Adds a service, given a :class:`GuardedServer` (which the generated
``add_*Servicer_to_server(servicer, server)`` takes for the ``grpc.aio.Server`` it expects)."""


LIVENESS = "chieu.Liveness"
"""The health service name that is SERVING while the process answers at all (its liveness)."""
READY_EVERY_S = 1.0
"""How often the readiness asks each dependency."""
READY_TIMEOUT_S = 2.0
"""How long a dependency's answer is waited for."""
READY_AFTER = 3
"""Rounds in a row every dependency must answer before the service is ready again."""

Check = Callable[[], Awaitable[object]]
"""A dependency's check: returns when it answers, raises (or times out) when it does not."""


class Readiness:
    """Asks every dependency each :data:`READY_EVERY_S` and sets the health of ``names`` from the
    answers: NOT_SERVING at the first failure, SERVING again after :data:`READY_AFTER` rounds of
    answers in a row. Says each change once in the log (not each failed round)."""

    def __init__(self, health: health.aio.HealthServicer, names: Sequence[str], checks: dict[str, Check], *,
                 every_s: float = READY_EVERY_S, timeout_s: float = READY_TIMEOUT_S,
                 after: int = READY_AFTER) -> None:
        self.health = health
        self.names = tuple(names)
        self.checks = dict(checks)
        self.every_s, self.timeout_s, self.after = every_s, timeout_s, after
        self.ready = True
        self.failing: dict[str, str] = {}
        """The dependencies that did not answer in the last round, with what they said."""
        self._good = 0
        self._task: asyncio.Task[None] | None = None

    async def _ask(self, name: str, check: Check) -> str | None:
        try:
            await asyncio.wait_for(check(), self.timeout_s)
        except TimeoutError:
            return f"no answer in {self.timeout_s:g} s"
        except Exception as e:
            return f"{type(e).__name__}: {e}"[:200]
        return None

    async def round(self) -> bool:
        """Ask every dependency once and set the health; whether the service is ready."""
        answers = await asyncio.gather(*(self._ask(n, c) for n, c in self.checks.items()))
        for name, answer in zip(self.checks, answers, strict=True):
            metrics.DEPENDENCY_UP.labels(name).set(0 if answer is not None else 1)
        failing = {n: a for n, a in zip(self.checks, answers, strict=True) if a is not None}
        self.failing = failing
        if failing:
            self._good = 0
            if self.ready:
                self.ready = False
                log.warning("not ready: a dependency does not answer", failing=failing)
                await self._set(health_pb2.HealthCheckResponse.NOT_SERVING)
        elif not self.ready:
            self._good += 1
            if self._good >= self.after:
                self.ready = True
                log.info("ready again: every dependency answered", rounds=self._good)
                await self._set(health_pb2.HealthCheckResponse.SERVING)
        return self.ready

    async def _set(self, status: Any) -> None:
        for name in (*self.names, ""):
            await self.health.set(name, status)

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self.every_s)
            try:
                await self.round()
            except Exception:  # never the end of the readiness
                log.exception("readiness round failed")

    def start(self) -> None:
        if self.checks and self._task is None:
            self._task = asyncio.create_task(self._run(), name="readiness")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None


def nats_check(nc: Any) -> Check:
    """The NATS connection ``nc`` is up and its server answers a ping (a flush)."""
    async def check() -> None:
        if not nc.is_connected:
            raise ConnectionError("the NATS connection is " + ("reconnecting" if nc.is_reconnecting else "closed"))
        await nc.flush(timeout=READY_TIMEOUT_S)
    return check


PENDING_CALLS = 20_000
"""Calls gRPC's core may hold for a server before its event loop takes them
(``grpc.server.max_pending_requests``; twice that is the hard limit). gRPC's default, 1,000, cancelled
every call beyond it (CANCELLED, before the handler ran) when streams opened in a burst while the
loop was busy: 668–694 of 3,000 Watch streams opened at once, none with 20,000 (issue 37; the
bench that "stalled at about 1,830 of 2,000" was waiting for the ~170 cancelled). A table process is
sized for 10,000 streams, all of which reconnect at once after a restart."""

GC_THRESHOLDS = (10_000, 20, 100)
"""Young collections every 10,000 allocations (not 700) and fewer old ones: short, rare pauses."""


def tune_gc() -> None:
    """Keep what start-up built out of every collection, and collect less often.

    A service's start-up objects (modules, descriptors, the registry) live as long as the process:
    ``gc.freeze()`` moves them to the permanent generation, so collections no longer walk them;
    larger thresholds make the pauses rarer. Measured on the table service under 200 tables
    (tests/benchmarks/bench_table.py): the paced p99 fell from about 19 ms to about 11 ms.
    """
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)


def run(settings: Settings, main: Coroutine[Any, Any, None]) -> None:
    """Run a service's ``main`` on the event loop ``settings`` names: uvloop when installed
    (measured on the table service under load: about 7% less CPU per command, 5% more
    commands/s), else asyncio's own."""
    if settings.event_loop == "uvloop":
        try:
            import uvloop
        except ImportError:  # not on this platform (Windows): the standard loop
            pass
        else:
            uvloop.run(main)
            return
    asyncio.run(main)


REFLECTION_V1 = "grpc.reflection.v1.ServerReflection"
"""Server reflection as current clients (grpcurl, buf curl) ask for it first."""


def _describe_v1() -> None:
    """Put ``grpc/reflection/v1/reflection.proto`` in the descriptor pool (``v1alpha``'s file under
    the ``v1`` package, which is what ``v1`` is), so clients can resolve the service they call."""
    pool = descriptor_pool.Default()
    try:
        pool.FindFileByName("grpc/reflection/v1/reflection.proto")
        return
    except KeyError:
        pass
    source = descriptor_pb2.FileDescriptorProto()
    reflection_pb2.DESCRIPTOR.CopyToProto(source)
    text = text_format.MessageToString(source).replace("grpc.reflection.v1alpha", "grpc.reflection.v1")
    v1 = text_format.Parse(text.replace("v1alpha/reflection.proto", "v1/reflection.proto"),
                           descriptor_pb2.FileDescriptorProto())
    pool.Add(v1)


def enable_reflection(server: grpc.aio.Server, services: Sequence[str]) -> None:
    """Serve reflection as ``grpc.reflection.v1`` and ``v1alpha``.

    grpcio-reflection implements only ``v1alpha``; ``v1`` has the same messages with the same
    field numbers under another package, so the same servicer answers it, its messages read and
    written with the ``v1alpha`` classes (the bytes are the same).
    """
    _describe_v1()
    servicer = reflection.aio.ReflectionServicer((*services, reflection.SERVICE_NAME, REFLECTION_V1))
    handler = grpc.stream_stream_rpc_method_handler(
        servicer.ServerReflectionInfo,
        request_deserializer=reflection_pb2.ServerReflectionRequest.FromString,
        response_serializer=reflection_pb2.ServerReflectionResponse.SerializeToString,
    )
    for name in (REFLECTION_V1, reflection.SERVICE_NAME):
        server.add_generic_rpc_handlers(
            (grpc.method_handlers_generic_handler(name, {"ServerReflectionInfo": handler}),))


STOP_SLACK_S = 5.0
"""How long past its grace a gRPC server's stop is waited for before the shutdown goes on."""


async def stop_within(server: Any, grace_s: float, slack_s: float = STOP_SLACK_S) -> bool:
    """Stop ``server`` (its calls given ``grace_s``), waiting at most ``grace_s + slack_s``;
    whether it stopped. grpc.aio's stop can wait for ever on a call task that does not end once
    cancelled (grpc/grpc#28999: seen here at a test session's end, the server's request loop
    "cancelling" for minutes with every listener closed): the stop is then left to finish on its
    own, logged, and the rest of the shutdown (the log's and the books' connections) still runs.
    Not ``wait_for``: it would wait for the cancelled stop just the same."""
    stop = asyncio.ensure_future(server.stop(grace_s))
    done, _ = await asyncio.wait({stop}, timeout=grace_s + slack_s)
    if not done:
        log.warning("the gRPC server did not stop in time; shutting down the rest", waited_s=grace_s + slack_s)
        return False
    stop.result()
    return True


class Server:
    """One service's gRPC server; ``async with`` or ``start()`` / ``shutdown()``."""

    def __init__(self, settings: Settings, *, addr: str, services: Sequence[str],
                 register: Sequence[Register],
                 on_shutdown: Sequence[Callable[[], Awaitable[None]]] = (),
                 on_stopping: Sequence[Callable[[], None]] = (),
                 background: Sequence[Callable[[], Awaitable[None]]] = (),
                 dependencies: dict[str, Check] | None = None) -> None:
        self.settings = settings
        self.background = tuple(background)
        """What starts once the server serves (a service's consumers, relays, pollers)."""
        self.addr = addr
        self.services = tuple(services)
        auth.check_keys(settings)  # the public keyset loads now, or the service does not start
        channels.check(settings)  # production: TLS both ways, or the service does not start
        self.server = grpc.aio.server(
            options=[
                ("grpc.max_receive_message_length", settings.max_message_bytes),
                ("grpc.so_reuseport", 0),
                ("grpc.server.max_pending_requests", PENDING_CALLS),
                ("grpc.server.max_pending_requests_hard_limit", 2 * PENDING_CALLS),
            ],
        )
        tracing.configure(settings, metrics.short_name(self.services[0]) if self.services else "chieu")
        # every handler counted, timed and traced outside the error guard (wrapped once, at registration)
        rates = ratelimit.Limits(settings)  # per player and per address, before every handler
        guarded = GuardedServer(cast(grpc.aio.Server, metrics.Instrumented(self.server)),
                                rates.check if rates.active else None)
        self.metrics: metrics.Endpoint | None = None
        for r in register:
            r(guarded)
        self.health = health.aio.HealthServicer()
        health_pb2_grpc.add_HealthServicer_to_server(self.health, self.server)
        self.readiness = Readiness(self.health, self.services, dependencies or {})
        """SERVING on ``""`` and the services while every dependency answers (``dependencies``)."""
        if settings.reflection:
            enable_reflection(self.server, (*self.services, health.SERVICE_NAME))
        self.port = channels.bind(self.server, settings, addr)  # TLS only when it has a certificate
        if self.port == 0:
            raise OSError(f"cannot listen on {addr}")
        self._on_shutdown = list(on_shutdown)
        self._on_stopping = list(on_stopping)
        """Told first when the server begins to stop, before its streams are closed."""
        self._stopped = False

    async def start(self) -> None:
        tune_gc()
        await self.server.start()
        for name in (*self.services, "", LIVENESS):
            await self.health.set(name, health_pb2.HealthCheckResponse.SERVING)
        self.readiness.start()
        log.info("serving", addr=self.addr, port=self.port, services=list(self.services))
        if self.settings.metrics_addr and self.metrics is None:
            self.metrics = metrics.Endpoint(self.settings.metrics_addr)
            log.info("metrics", url=f"http://{self.metrics.addr}/metrics")
        for begin in self.background:
            await begin()

    async def shutdown(self) -> None:
        """Idempotent graceful stop: ``on_stopping`` told, health NOT_SERVING, the calls given the
        grace then cancelled, ``on_shutdown`` run."""
        if self._stopped:
            return
        self._stopped = True
        log.info("shutting down", grace_s=self.settings.shutdown_grace_s)
        for stopping in self._on_stopping:
            stopping()
        await self.readiness.stop()  # (it would say SERVING again)
        await self.health.enter_graceful_shutdown()
        await stop_within(self.server, self.settings.shutdown_grace_s)
        for close in self._on_shutdown:
            try:
                await close()
            except Exception:
                log.exception("error while closing")
        if self.metrics is not None:
            self.metrics.close()
        tracing.flush()
        log.info("stopped")

    async def run_until_signalled(self) -> None:
        """Serve until SIGINT or SIGTERM, then shut down gracefully."""
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        await self.start()
        try:
            await stop.wait()
        finally:
            await self.shutdown()

    async def __aenter__(self) -> Server:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.shutdown()
