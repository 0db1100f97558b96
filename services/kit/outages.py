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
_JS_FULL = {10002, 10023, 10028, 10047, 10054}
"""JetStream's error codes for a store that refuses a write for want of room: the account's
resources exceeded, insufficient resources, a message over the stream's limits, insufficient
storage (memory or file), maximum bytes exceeded."""
JS_WRONG_LAST = {10071, 10164}
"""Another write to the subject came first: "wrong last sequence: N" (10071), and the constant
"wrong last sequence" (10164) a clustered stream gives while another write with an expected
sequence for the subject is still in flight (after a failover, a retry racing its first try).
Both mean the same to a writer: reload and decide again (:class:`chieu.kit.eventstore.Conflict`)."""
_JS_TRANSIENT = {
    10004,  # incomplete results
    10007,  # JetStream cluster not assigned to this server
    10008,  # JetStream system temporarily unavailable
    10009,  # JetStream cluster can not handle request (not the leader)
    10035,  # account not found (an account still loading)
    10039,  # JetStream not enabled for account (a server that met a full disk disables it)
    10059,  # stream not found (assignments not yet known after a restart of the meta leader)
    10063,  # expected stream sequence does not match
    10075,  # peer remap failed
    10076,  # JetStream not enabled
    10077,  # storing the message failed (the store closed under a failover)
    10118,  # stream is offline
    10158,  # duplicate message id is in process (our own first try still in flight)
    10163,  # expected last sequence per subject temporarily unavailable (a new leader not ready)
    10167,  # too many requests
    10194,  # stream is offline: reason
    10202,  # cluster member change is in progress
}
"""JetStream's error codes that say the log cannot take the write now but may shortly: a client
tries again (``UNAVAILABLE``, ``log_unavailable``). Every one a write may meet during a failover,
a restart or a node that met a full disk."""
_NO_SPACE = ("no space left", "insufficient storage", "insufficient resources")


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
    if isinstance(exc, APIError):
        if exc.err_code in _JS_FULL or any(s in str(exc.description or "").lower() for s in _NO_SPACE):
            return LOG_FULL
        if exc.err_code in _JS_TRANSIENT or exc.err_code in JS_WRONG_LAST or (exc.code or 0) in (429, 503):
            return LOG  # (a wrong last sequence that reaches the guard: the writer gave up reloading)
        if (exc.code or 0) >= 500:  # a JetStream server error: the log's, not the caller's
            return LOG
    if isinstance(exc, _NATS_DOWN):
        return LOG
    if isinstance(exc, _PG_DOWN) and not isinstance(exc, _PG_MISUSE):
        return DATABASE
    if isinstance(exc, OSError):  # a timeout, a refused or vanished socket
        if _through(exc.__traceback__, "asyncpg"):
            return DATABASE
        if _through(exc.__traceback__, "nats"):
            return LOG
    return None
