"""OpenTelemetry traces across the services: off by default, and free when off.

One trace follows a move: the table service's server span of ``Act`` → its ``append`` span
(which writes the W3C ``traceparent`` into the NATS headers of the appended record, beside
``Nats-Msg-Id``) → the ledger's ``ledger.post`` and the ladder's ``ladder.apply`` spans, which
continue the trace from those headers. Log lines written inside a span carry its
``trace_id`` and ``span_id`` (:func:`chieu.kit.logs.add_trace`).

On when ``CHIEU_TRACING`` is ``otlp`` or ``console``, or when ``OTEL_EXPORTER_OTLP_ENDPOINT``
is set (unless ``CHIEU_TRACING=off``). Every check on the hot path is one module global:
:data:`_tracer` is ``None`` while tracing is off.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from opentelemetry import trace
from opentelemetry.trace import SpanKind
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from chieu.kit.settings import Settings

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider

PROPAGATOR = TraceContextTextMapPropagator()
"""W3C trace context (``traceparent``, ``tracestate``): in gRPC metadata and NATS headers alike."""

_tracer: trace.Tracer | None = None
_provider: TracerProvider | None = None


def wanted(settings: Settings) -> str:
    """The exporter ``settings`` ask for: ``otlp``, ``console`` or ``""`` (tracing off)."""
    if settings.tracing in ("otlp", "console"):
        return settings.tracing
    if settings.tracing == "" and settings.otlp_endpoint:
        return "otlp"
    return ""


def configure(settings: Settings, service: str) -> bool:
    """Turn tracing on for this process if ``settings`` ask for it (once; later calls keep the
    first provider). Returns whether tracing is on."""
    if _provider is not None:
        return True
    kind = wanted(settings)
    if not kind:
        return False
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter, SpanExporter

    exporter: SpanExporter
    if kind == "console":
        exporter = ConsoleSpanExporter()
    else:
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter

        exporter = OTLPSpanExporter(endpoint=settings.otlp_endpoint or None)
    provider = TracerProvider(resource=Resource.create({"service.name": f"chieu-{service}",
                                                        "service.instance.id": settings.instance or ""}))
    provider.add_span_processor(BatchSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    use(provider)
    return True


def use(provider: TracerProvider | None) -> None:
    """Trace with ``provider`` (``None``: stop tracing). Tests give an SDK provider with an
    in-memory exporter; it need not be the global one."""
    global _tracer, _provider
    _provider = provider
    _tracer = None if provider is None else provider.get_tracer("chieu")


def on() -> bool:
    """Whether this process traces."""
    return _tracer is not None


def flush(timeout_ms: int = 5000) -> None:
    """Export the spans still buffered (at shutdown)."""
    if _provider is not None:
        _provider.force_flush(timeout_ms)


def outgoing() -> tuple[tuple[str, str], ...]:
    """gRPC metadata carrying the current span's context to another service (empty when off)."""
    if _tracer is None:
        return ()
    carrier: dict[str, str] = {}
    PROPAGATOR.inject(carrier)
    return tuple(carrier.items())


def _carrier(headers: Any) -> Mapping[str, str]:
    return headers if isinstance(headers, Mapping) else {}


@contextlib.contextmanager
def server_span(name: str, metadata: Any) -> Iterator[trace.Span | None]:
    """A gRPC server span named ``name`` (``<service>/<method>``), continuing the caller's trace if
    its metadata carries a ``traceparent``; nothing when tracing is off."""
    tracer = _tracer
    if tracer is None:
        yield None
        return
    carrier = {k: v for k, v in (metadata or ()) if isinstance(v, str)}
    parent = PROPAGATOR.extract(carrier) if "traceparent" in carrier else None
    with tracer.start_as_current_span(name, context=parent, kind=SpanKind.SERVER,
                                      attributes={"rpc.system": "grpc"}) as span:
        yield span


@contextlib.contextmanager
def producing(stream: str, subject: str, headers: dict[str, str]) -> Iterator[None]:
    """A producer span around a publish to ``subject``, with its context written into ``headers``."""
    tracer = _tracer
    if tracer is None:
        yield
        return
    with tracer.start_as_current_span(f"append {stream}", kind=SpanKind.PRODUCER, attributes={
            "messaging.system": "nats", "messaging.destination.name": subject}):
        PROPAGATOR.inject(headers)
        yield


@contextlib.contextmanager
def consuming(msg: Any, name: str, *, active: bool = True,
              attributes: Mapping[str, Any] | None = None) -> Iterator[trace.Span | None]:
    """A consumer span named ``name`` for one delivered message, continuing the trace its headers
    carry (a message without one starts a trace); nothing when tracing is off or not ``active``."""
    tracer = _tracer
    if tracer is None or not active:
        yield None
        return
    parent = PROPAGATOR.extract(_carrier(getattr(msg, "headers", None)))
    seq = getattr(getattr(getattr(msg, "metadata", None), "sequence", None), "stream", None)
    with tracer.start_as_current_span(name, context=parent, kind=SpanKind.CONSUMER, attributes={
            "messaging.system": "nats", "messaging.destination.name": str(getattr(msg, "subject", "")),
            **({"messaging.message.id": str(seq)} if seq is not None else {}), **(attributes or {})}) as span:
        yield span

