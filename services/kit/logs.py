"""structlog set-up: JSON lines in production, readable lines in a terminal; per-request context."""

from __future__ import annotations

import logging
import sys

import structlog

from chieu.kit.settings import Settings


def configure(settings: Settings, service: str) -> None:
    """Configure structlog (and the stdlib root logger) once per process."""
    level = getattr(logging, settings.log_level.upper(), logging.INFO)
    shared: list[structlog.types.Processor] = [
        structlog.contextvars.merge_contextvars,
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
