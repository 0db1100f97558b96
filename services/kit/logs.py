"""structlog set-up: JSON lines in production, readable lines in a terminal; per-request context.

Every log line of the process goes through the same pipeline: the service's own (structlog) and
the third-party libraries' (asyncpg, nats-py, grpc, … through the standard library's ``logging``),
each line with the service's name, the logger's name, its level and time; in JSON mode one event
per line, a traceback as one field (``exception``, structured). An error repeated (the same logger,
event and error) is written once per :data:`REPEAT_WINDOW_S`, the next one after it saying how many
were left out (``repeated``): a dependency that is down makes a client library log every reconnect
attempt with its traceback (a PostgreSQL kill: about 2,400 lines in 10 s before this).
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from typing import Any

import structlog
from opentelemetry import trace

from chieu.kit.settings import Settings

REPEAT_WINDOW_S = 10.0
"""How long an error (warning or worse) repeated as it was is not written again."""


def add_trace(logger: object, method: str, event: structlog.types.EventDict) -> structlog.types.EventDict:
    """Put the current span's ``trace_id`` and ``span_id`` (hex, as exporters show them) in the
    log line, when a span is active (tracing on: see :mod:`chieu.kit.tracing`)."""
    ctx = trace.get_current_span().get_span_context()
    if ctx.is_valid:
        event["trace_id"] = format(ctx.trace_id, "032x")
        event["span_id"] = format(ctx.span_id, "016x")
    return event


class Repeats:
    """Writes an error (a warning or worse) repeated as it was once per ``window_s``: the same
    logger, event, and error (``error``, or the exception's type and words). A processor for
    structlog's lines and a filter for the standard library's (a processor of a handler's formatter
    cannot drop a line)."""

    _LEVELS = ("warning", "warn", "error", "exception", "critical", "fatal")

    def __init__(self, window_s: float = REPEAT_WINDOW_S) -> None:
        self.window_s = window_s
        self._seen: dict[tuple[str, ...], tuple[float, int]] = {}
        self._lock = threading.Lock()

    def passes(self, key: tuple[str, ...]) -> int | None:
        """``None`` when the line is to be left out; else how many like it were left out before it."""
        now = time.monotonic()
        with self._lock:
            since, dropped = self._seen.get(key, (0.0, -1))
            if dropped >= 0 and now - since < self.window_s:
                self._seen[key] = (since, dropped + 1)
                return None
            self._seen[key] = (now, 0)
            if len(self._seen) > 10_000:  # a bound: the oldest half forgotten
                for old in sorted(self._seen, key=lambda k: self._seen[k][0])[:5_000]:
                    del self._seen[old]
        return max(dropped, 0)

    @staticmethod
    def _error(exc: object) -> str:
        if isinstance(exc, tuple) and len(exc) == 3:
            exc = exc[1]
        return f"{type(exc).__name__}: {exc}" if isinstance(exc, BaseException) else ""

    def __call__(self, logger: object, method: str, event: structlog.types.EventDict) -> structlog.types.EventDict:
        if method not in self._LEVELS:
            return event
        error = self._error(event.get("exc_info")) or str(event.get("error", ""))
        dropped = self.passes((str(event.get("logger", "")), method, str(event.get("event", "")), error))
        if dropped is None:
            raise structlog.DropEvent
        if dropped:
            event["repeated"] = dropped
        return event

    def filter(self, record: logging.LogRecord) -> bool:
        """The same for a standard library log record (``repeated`` set on the record)."""
        if record.levelno < logging.WARNING:
            return True
        try:
            message = record.getMessage()
        except Exception:  # a record whose arguments do not fit its message: written as it is
            return True
        dropped = self.passes((record.name, record.levelname, message, self._error(record.exc_info)))
        if dropped is None:
            return False
        if dropped:
            record.repeated = dropped
        return True


def _repeated(logger: object, method: str, event: structlog.types.EventDict) -> structlog.types.EventDict:
    record = event.get("_record")
    dropped = getattr(record, "repeated", 0)
    if dropped:
        event["repeated"] = dropped
    return event


def _service(name: str) -> structlog.types.Processor:
    def add(logger: object, method: str, event: structlog.types.EventDict) -> structlog.types.EventDict:
        event.setdefault("service", name)
        return event
    return add


def _logger_name(logger: Any, method: str, event: structlog.types.EventDict) -> structlog.types.EventDict:
    """The standard library logger's name (``asyncpg.pool``, ``nats.aio.client``)."""
    record = event.get("_record")
    if record is not None and "logger" not in event:
        event["logger"] = record.name
    return event


def configure(settings: Settings, service: str) -> None:
    """Configure structlog and the standard library's root logger once per process: both write
    through the same processors and renderer."""
    level = getattr(logging, settings.log_level.upper(), logging.INFO)
    repeats = Repeats(REPEAT_WINDOW_S)
    shared: list[structlog.types.Processor] = [
        structlog.contextvars.merge_contextvars,
        _service(service),
        add_trace,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    renderer: structlog.types.Processor
    tracebacks: list[structlog.types.Processor]
    if settings.log_format == "json":
        renderer = structlog.processors.JSONRenderer()
        tracebacks = [structlog.processors.dict_tracebacks]
    else:
        renderer = structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty(),
                                                 exception_formatter=structlog.dev.plain_traceback)
        tracebacks = []
    structlog.configure(
        processors=[*shared, repeats, *tracebacks, renderer],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=True,
    )
    structlog.contextvars.bind_contextvars(service=service)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=[_logger_name, _repeated, *shared, *tracebacks],
        processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, renderer],
    ))
    handler.addFilter(repeats.filter)
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(max(level, logging.WARNING))


def get(name: str) -> structlog.stdlib.BoundLogger:
    """A logger named ``name``."""
    logger: structlog.stdlib.BoundLogger = structlog.get_logger(name)
    return logger
