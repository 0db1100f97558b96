"""structlog set-up: JSON lines in production, readable lines in a terminal; per-request context."""

from __future__ import annotations

import logging
import sys

import structlog
from opentelemetry import trace

from chieu.kit.settings import Settings


def add_trace(logger: object, method: str, event: structlog.types.EventDict) -> structlog.types.EventDict:
    """Put the current span's ``trace_id`` and ``span_id`` (hex, as exporters show them) in the
    log line, when a span is active (tracing on: see :mod:`chieu.kit.tracing`)."""
    ctx = trace.get_current_span().get_span_context()
    if ctx.is_valid:
        event["trace_id"] = format(ctx.trace_id, "032x")
        event["span_id"] = format(ctx.span_id, "016x")
    return event


def configure(settings: Settings, service: str) -> None:
    """Configure structlog (and the stdlib root logger) once per process."""
    level = getattr(logging, settings.log_level.upper(), logging.INFO)
    shared: list[structlog.types.Processor] = [
        structlog.contextvars.merge_contextvars,
        add_trace,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    renderer: structlog.types.Processor
    if settings.log_format == "json":
        renderer = structlog.processors.JSONRenderer()
        shared.append(structlog.processors.dict_tracebacks)
    else:
        renderer = structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty())
    structlog.configure(
        processors=[*shared, renderer],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=True,
    )
    structlog.contextvars.bind_contextvars(service=service)
    logging.basicConfig(level=max(level, logging.WARNING), stream=sys.stderr)


def get(name: str) -> structlog.stdlib.BoundLogger:
    """A logger named ``name``."""
    logger: structlog.stdlib.BoundLogger = structlog.get_logger(name)
    return logger
