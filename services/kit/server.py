"""The gRPC server bootstrap every service uses: the error guard, limits, health, reflection,
and the graceful shutdown order (health NOT_SERVING → stop with grace → close resources)."""

from __future__ import annotations

import asyncio
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


class Server:
    """One service's gRPC server; ``async with`` or ``start()`` / ``shutdown()``."""

    def __init__(self, settings: Settings, *, addr: str, services: Sequence[str],
                 register: Sequence[Register],
                 on_shutdown: Sequence[Callable[[], Awaitable[None]]] = (),
                 on_stopping: Sequence[Callable[[], None]] = (),
                 background: Sequence[Callable[[], Awaitable[None]]] = ()) -> None:
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
        for name in (*self.services, ""):
            await self.health.set(name, health_pb2.HealthCheckResponse.SERVING)
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
        await self.health.enter_graceful_shutdown()
        await self.server.stop(self.settings.shutdown_grace_s)
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
