"""Prometheus metrics of every service (prometheus-client), all named here.

Dashboards and alerts are written against these names (docs/observability.md says what each
one means): add, never rename. Each process serves its own registry on ``CHIEU_METRICS_ADDR``
(``/metrics``), started by the kit's :class:`~chieu.kit.server.Server`.

Per call the cost is kept to a clock read, a dict lookup and two pre-bound children: the
label children are bound once per method (and per status code on its first use), and the gRPC
handlers are wrapped once, when they are registered (:class:`Instrumented`), not per call.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc
from prometheus_client import Counter, Gauge, Histogram, start_http_server

from chieu.kit import logs, tasks, tracing

log = logs.get("chieu.metrics")

LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
                   60.0, 300.0, 1800.0)
"""Seconds: sub-millisecond moves up to half-hour watch streams (a stream's latency is its life)."""

RPC_REQUESTS = Counter("chieu_rpc_requests", "gRPC calls served, by method and final status code "
                       "(a stream counts when it ends)", ["service", "method", "code"])
RPC_LATENCY = Histogram("chieu_rpc_latency_seconds", "gRPC call latency (a stream: its whole life)",
                        ["service", "method"], buckets=LATENCY_BUCKETS)
JS_APPEND = Histogram("chieu_js_append_seconds", "JetStream append latency (publish to ack, conflicts included)",
                      buckets=(0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0))
JS_APPEND_CONFLICTS = Counter("chieu_js_append_conflicts", "Appends refused because another writer appended "
                              "first (wrong last subject sequence): the writer reloads and decides again")
JS_APPEND_ERRORS = Counter("chieu_js_append_errors", "Appends that failed for any other reason (timeouts, "
                           "no responders, stream errors)")
CONSUMER_LAG = Gauge("chieu_consumer_lag", "Messages of the stream not yet delivered to the durable "
                     "(JetStream consumer info num_pending)", ["durable"])
CONSUMER_ACK_PENDING = Gauge("chieu_consumer_ack_pending", "Messages delivered to the durable and not yet "
                             "acknowledged (consumer info num_ack_pending)", ["durable"])
CONSUMER_REDELIVERIES = Counter("chieu_consumer_redeliveries", "Messages received again (delivery count > 1: "
                                "an ack wait ran out, or the consumer put the message back to keep its order)",
                                ["durable"])
CONSUMER_INBOX_HITS = Counter("chieu_consumer_inbox_hits", "Messages found already applied by the exactly-once "
                              "inbox (or a posting found by its id), so changed nothing", ["durable"])
TABLES_OPEN = Gauge("chieu_tables_open", "Tables this table-service process holds in memory")
HANDS = Counter("chieu_hands", "Hands ended (played to the end or aborted) on this process", ["game"])
WATCHERS = Gauge("chieu_watchers", "Open Watch streams on this table-service process")
LEDGER_POSTINGS = Counter("chieu_ledger_postings", "Postings committed by this ledger process", ["kind"])
LEDGER_AUDIT_CLEAN = Gauge("chieu_ledger_audit_clean", "1 when the ledger's last self-audit found every balance "
                           "equal to its transfers and every currency summing to 0; 0 otherwise (or not yet run)")
LEDGER_AUDIT_PROBLEMS = Gauge("chieu_ledger_audit_problems", "Problems the ledger's last self-audit found")
LEDGER_PARKED = Counter("chieu_ledger_parked", "Table-log records this ledger process parked: they cannot be "
                        "posted (a data error); an operator retries them after a fix (chieu ledger-parked)")
LEDGER_PARKED_OPEN = Gauge("chieu_ledger_parked_open", "Parked table-log records not posted yet (read from the "
                           "books at each park, each retry and each self-audit)")
LEDGER_AUDIT_LAST = Gauge("chieu_ledger_audit_last_run_timestamp_seconds", "When the last self-audit finished")
LADDER_CHANGES = Counter("chieu_ladder_changes", "Ladder changes committed (one per player per counted result, "
                         "penalty, conduct change or reset)")
LOBBY_SIGNINS = Counter("chieu_lobby_signins", "Sign-ins by kind (guest, register, password, refresh) and "
                        "result (ok, or the refusal's reason)", ["kind", "result"])
PROCESS_START = Gauge("chieu_process_start_time_seconds", "When this process started (Unix time): a new value "
                      "is a restart, a crash included")
RPC_ABANDONED = Counter("chieu_rpc_abandoned", "Unary calls that ended CANCELLED: the client stopped waiting before "
                        "the answer (its deadline ran out, or it gave up), a fault it saw; a stream's CANCELLED is "
                        "how every watch ends and is not counted here", ["service", "method"])
DEPENDENCY_UP = Gauge("chieu_dependency_up", "1 while the dependency answers this process's readiness check "
                      "(database: PostgreSQL; nats: a ping round trip), 0 while it does not", ["dependency"])
JS_STREAM_LEADER = Gauge("chieu_js_stream_leader", "1 when JetStream's info of the stream names a leader, 0 when it "
                         "names none or does not come (the stream takes no writes)", ["stream"])
JS_STREAM_REPLICAS = Gauge("chieu_js_stream_replicas", "The stream's configured replicas", ["stream"])
JS_STREAM_REPLICAS_CURRENT = Gauge("chieu_js_stream_replicas_current", "The stream's replicas that are current, "
                                   "its leader included (0 when its info does not come)", ["stream"])


def _start_time() -> float:
    """When this process started: the kernel's record on Linux, else now (the module loads at start)."""
    try:
        with open("/proc/self/stat", encoding="ascii") as f:
            ticks = int(f.read().rpartition(")")[2].split()[19])
        with open("/proc/stat", encoding="ascii") as f:
            boot = next(int(line.split()[1]) for line in f if line.startswith("btime "))
        return boot + ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, StopIteration):
        return time.time()


PROCESS_START.set(_start_time())


# ---------------------------------------------------------------- the endpoint


class Endpoint:
    """The HTTP endpoint of this process's metrics (a thread of prometheus-client's)."""

    def __init__(self, addr: str) -> None:
        host, _, port = addr.rpartition(":")
        self.server, self.thread = start_http_server(int(port), host.strip("[]") or "0.0.0.0")
        self.port: int = self.server.server_port
        self.addr = f"{host}:{self.port}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)


# ---------------------------------------------------------------- gRPC


def short_name(service: str) -> str:
    """``chieu.table.v1.TableService`` → ``table`` (the ``service`` label)."""
    parts = service.split(".")
    return parts[1] if len(parts) > 2 and parts[0] == "chieu" else service


class _Calls:
    """One method's label children, bound once."""

    __slots__ = ("abandoned", "codes", "latency", "method", "service", "span")

    def __init__(self, service: str, method: str, full: str) -> None:
        self.service, self.method, self.span = service, method, full
        self.latency = RPC_LATENCY.labels(service, method)
        self.codes: dict[str, Any] = {}
        self.abandoned = RPC_ABANDONED.labels(service, method)

    def done(self, code: str, started: float) -> None:
        self.latency.observe(time.perf_counter() - started)
        child = self.codes.get(code)
        if child is None:
            child = self.codes[code] = RPC_REQUESTS.labels(self.service, self.method, code)
        child.inc()


def _code(context: grpc.aio.ServicerContext[Any, Any], default: str) -> str:
    code = context.code()
    if isinstance(code, grpc.StatusCode):
        return code.name
    if isinstance(code, int):
        for c in grpc.StatusCode:
            if c.value[0] == code:
                return c.name
    return default


def _failed(exc: BaseException, context: grpc.aio.ServicerContext[Any, Any]) -> str:
    """The status code a call ended with when its handler raised ``exc``."""
    if isinstance(exc, grpc.aio.AbortError):
        return _code(context, "UNKNOWN")
    if isinstance(exc, (asyncio.CancelledError, GeneratorExit)):
        return "CANCELLED"
    return "UNKNOWN"


def instrument(name: str, method: str, handler: Any) -> Any:
    """``handler`` (of service ``name``) counted, timed and traced; unary and server streams."""
    calls = _Calls(short_name(name), method, f"{name}/{method}")
    if handler.unary_unary is not None:
        inner = handler.unary_unary

        async def unary(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
            started = time.perf_counter()
            code = "OK"
            try:
                if tracing._tracer is None:
                    return await inner(request, context)
                with tracing.server_span(calls.span, context.invocation_metadata()):
                    return await inner(request, context)
            except BaseException as e:
                code = _failed(e, context)
                if code == "CANCELLED":
                    calls.abandoned.inc()
                raise
            finally:
                calls.done(code, started)

        return grpc.unary_unary_rpc_method_handler(unary, request_deserializer=handler.request_deserializer,
                                                   response_serializer=handler.response_serializer)
    if handler.unary_stream is not None:
        inner_stream = handler.unary_stream

        async def stream(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> AsyncIterator[Any]:
            started = time.perf_counter()
            code = "OK"
            try:
                with tracing.server_span(calls.span, context.invocation_metadata()):
                    async for item in inner_stream(request, context):
                        yield item
            except BaseException as e:
                code = _failed(e, context)
                raise
            finally:
                calls.done(code, started)

        return grpc.unary_stream_rpc_method_handler(stream, request_deserializer=handler.request_deserializer,
                                                    response_serializer=handler.response_serializer)
    return handler


class Instrumented:
    """What the error guard registers its handlers with instead of the ``grpc.aio.Server``: each
    (guarded) handler is wrapped by :func:`instrument` once, outside the guard, so the status
    counted is the one the client gets and the guard's own log lines fall inside the call's span."""

    def __init__(self, server: grpc.aio.Server) -> None:
        self.server = server

    def add_generic_rpc_handlers(self, handlers: Any) -> None:
        """Ignored: the same handlers come to :meth:`add_registered_method_handlers`."""

    def add_registered_method_handlers(self, name: str, handlers: dict[str, Any]) -> None:
        wrapped = {m: instrument(name, m, h) for m, h in handlers.items()}
        self.server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(name, wrapped),))
        self.server.add_registered_method_handlers(name, wrapped)


# ---------------------------------------------------------------- consumers


class ConsumerMetrics:
    """A durable consumer's metrics: redeliveries and inbox hits as it handles messages, and its
    lag and unacknowledged messages read from the consumer info every ``every_s`` seconds."""

    def __init__(self, durable: str) -> None:
        self.durable = durable
        self.redeliveries = CONSUMER_REDELIVERIES.labels(durable)
        self.inbox_hits = CONSUMER_INBOX_HITS.labels(durable)
        self.lag = CONSUMER_LAG.labels(durable)
        self.ack_pending = CONSUMER_ACK_PENDING.labels(durable)
        self._refresher: Every | None = None

    def delivered(self, msg: Any) -> None:
        """Count ``msg`` if it is a redelivery."""
        metadata = getattr(msg, "metadata", None)
        if metadata is not None and (metadata.num_delivered or 1) > 1:
            self.redeliveries.inc()

    async def refresh(self, js: Any, stream: str) -> None:
        """Read the durable's lag from JetStream now (nothing while it does not exist yet)."""
        try:
            info = await js.consumer_info(stream, self.durable)
        except asyncio.CancelledError:
            raise
        except Exception:
            return
        self.lag.set(int(info.num_pending or 0))
        self.ack_pending.set(int(info.num_ack_pending or 0))

    async def watch(self, js: Any, stream: str, every_s: float) -> None:
        """Refresh the lag every ``every_s`` seconds in the background (until :meth:`stop`)."""
        if self._refresher is None:
            self._refresher = Every(every_s, lambda: self.refresh(js, stream), name=f"lag-{self.durable}")
            await self._refresher.start()

    async def stop(self) -> None:
        if self._refresher is not None:
            await self._refresher.stop()
            self._refresher = None


class Every:
    """``work`` run at start and then every ``period_s`` seconds in the background, its failures
    logged, not raised (a metric read from elsewhere: a lag, an audit)."""

    def __init__(self, period_s: float, work: Callable[[], Awaitable[None]], *, name: str) -> None:
        self.period_s, self.work, self.name = period_s, work, name
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._loop(), name=self.name)

    async def stop(self) -> None:
        await tasks.cancel(self._task)
        self._task = None

    async def _loop(self) -> None:
        while True:
            try:
                await self.work()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("metrics refresh failed", task=self.name)
            await asyncio.sleep(self.period_s)


class StreamHealth:
    """A stream's health as JetStream's stream info tells it (a leader, current replicas), read every
    ``every_s`` seconds: what the alerts on a NATS node and on the stream's quorum read."""

    def __init__(self, js: Any, stream: str, every_s: float) -> None:
        self.js, self.stream = js, stream
        self.leader = JS_STREAM_LEADER.labels(stream)
        self.replicas = JS_STREAM_REPLICAS.labels(stream)
        self.current = JS_STREAM_REPLICAS_CURRENT.labels(stream)
        self._refresher = Every(every_s, self.refresh, name=f"stream-health-{stream}")

    async def refresh(self) -> None:
        try:
            info = await self.js.stream_info(self.stream)
        except asyncio.CancelledError:
            raise
        except Exception:  # no answer: no leader known, no replica known current
            self.leader.set(0)
            self.current.set(0)
            return
        cluster = info.cluster
        self.replicas.set(int(info.config.num_replicas or 1))
        if cluster is None:  # a single server: it is the stream
            self.leader.set(1)
            self.current.set(1)
            return
        self.leader.set(1 if cluster.leader else 0)
        self.current.set((1 if cluster.leader else 0)
                         + sum(1 for r in cluster.replicas or () if r.current and not r.offline))

    async def start(self) -> None:
        await self._refresher.start()

    async def stop(self) -> None:
        await self._refresher.stop()
