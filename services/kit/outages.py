"""Which failures are a dependency's outage, and which dependency: the reason a client is given
with ``UNAVAILABLE`` (read by the one guard, :func:`chieu.kit.errors.from_exception`).

A call that needs PostgreSQL or the NATS log while it does not answer fails within a bounded time
(the pool's acquire and statement timeouts, :mod:`chieu.kit.db`; the JetStream request timeout,
:mod:`chieu.kit.eventstore`) with ``UNAVAILABLE`` and one of these reasons, never ``INTERNAL`` and
never a hang; the TypeScript client retries ``UNAVAILABLE``.

A timeout is the dependency's when it was raised inside that dependency's client library (a frame
of ``asyncpg`` or ``nats`` in its traceback): a timeout of the service's own is not an outage.
"""

from __future__ import annotations

from types import TracebackType

import asyncpg
import nats.errors
from nats.js.errors import APIError, NoStreamResponseError, ServiceUnavailableError

DATABASE = "database_unavailable"
LOG = "log_unavailable"
LOG_FULL = "log_full"

MESSAGES = {
    DATABASE: "the database did not answer in time; try again shortly",
    LOG: "the table log did not answer in time; try again shortly",
    LOG_FULL: "the table log has no room for new records; try again later",
}
"""The message a client is given with each reason."""

RETRY_AFTER_MS = 1000
"""When to try again (``retry-after-ms``): a dependency back from a restart answers within seconds."""

_PG_DOWN = (
    asyncpg.PostgresConnectionError,  # the connection is gone or cannot be made
    asyncpg.exceptions.OperatorInterventionError,  # statement timeout, shutdown, starting up
    asyncpg.exceptions.InsufficientResourcesError,  # disk full, too many connections
    asyncpg.exceptions.LockNotAvailableError,  # lock timeout
    asyncpg.InterfaceError,  # the connection or the pool closed under the call
)
_PG_MISUSE = (asyncpg.exceptions.DataError, asyncpg.exceptions.ClientConfigurationError,
              asyncpg.exceptions.UnsupportedClientFeatureError, asyncpg.exceptions.UnsupportedServerFeatureError)
"""Interface errors that are the caller's bug, not an outage."""
_NATS_DOWN = (
    nats.errors.TimeoutError, nats.errors.NoRespondersError, nats.errors.ConnectionClosedError,
    nats.errors.StaleConnectionError, nats.errors.OutboundBufferLimitError,
    nats.errors.ConnectionReconnectingError, nats.errors.ConnectionDrainingError,
    ServiceUnavailableError, NoStreamResponseError,
)
_JS_FULL = {10023, 10028, 10047, 10054}
"""JetStream's error codes for a store that refuses a write for want of room: insufficient
resources, a message over the stream's limits, insufficient storage, maximum bytes exceeded."""


def _through(tb: TracebackType | None, package: str) -> bool:
    """Whether any frame of ``tb`` runs code of ``package``."""
    prefix = package + "."
    while tb is not None:
        name = str(tb.tb_frame.f_globals.get("__name__", ""))
        if name == package or name.startswith(prefix):
            return True
        tb = tb.tb_next
    return False


def reason(exc: BaseException) -> str | None:
    """:data:`DATABASE`, :data:`LOG` or :data:`LOG_FULL` when ``exc`` is that dependency's outage;
    ``None`` otherwise."""
    if isinstance(exc, APIError) and exc.err_code in _JS_FULL:
        return LOG_FULL
    if isinstance(exc, _NATS_DOWN):
        return LOG
    if isinstance(exc, APIError) and exc.code == 503:
        return LOG
    if isinstance(exc, _PG_DOWN) and not isinstance(exc, _PG_MISUSE):
        return DATABASE
    if isinstance(exc, OSError):  # a timeout, a refused or vanished socket
        if _through(exc.__traceback__, "asyncpg"):
            return DATABASE
        if _through(exc.__traceback__, "nats"):
            return LOG
    return None
