"""Calls as a careful client makes them: one command id for every retry, a deadline per attempt,
and the outcome as the client knows it — acknowledged, refused (with its status and reason), or
unknown (no answer before the client gave up: the command may or may not have acted)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import grpc

T = TypeVar("T")

RETRIED = frozenset({grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.INTERNAL,
                     grpc.StatusCode.UNKNOWN, grpc.StatusCode.CANCELLED})
"""Statuses that say nothing of the command's fate: the client tries again with the same id."""
BUSY_REASONS = frozenset({"busy", "ledger_unavailable", "ladder_unavailable", "table_unavailable",
                          "lobby_unavailable"})
"""Reasons of a refusal that is a "try again" (a contended table, a peer that could not answer)."""

ACKED, REFUSED, UNKNOWN = "acked", "refused", "unknown"


def reason_of(err: grpc.aio.AioRpcError) -> str:
    """The stable reason of a refusal (the ``chieu-reason`` trailer; "" when there is none)."""
    for key, value in err.trailing_metadata() or ():
        if key == "chieu-reason":
            return str(value)
    return ""


@dataclass(frozen=True, slots=True)
class Result:
    """What a call came to: its outcome, the response if acknowledged, the last status and reason,
    how many attempts it took and when (monotonic seconds) it was sent and settled."""

    outcome: str
    response: Any
    code: str
    reason: str
    attempts: int
    sent: float
    settled: float
    detail: str = ""
    """The last refusal's details (``"<reason>: <message>"``, in English: the bots send no
    ``accept-language``)."""


async def call(attempt: Callable[[float], Awaitable[T]], *, per_try_s: float = 3.0, give_up_s: float = 20.0,
               backoff_s: float = 0.1, stop: Callable[[], bool] | None = None) -> Result:
    """Call ``attempt(timeout)`` until it is answered or ``give_up_s`` has passed.

    A status in :data:`RETRIED`, or a busy refusal, is tried again (the caller keeps one command id,
    so a retry of a command that did act is answered as acknowledged); any other refusal is final.
    ``stop()`` true ends the retries early (the run is over): the outcome is then unknown.
    """
    sent = time.monotonic()
    code, reason, detail, attempts, wait = "", "", "", 0, backoff_s
    while True:
        attempts += 1
        try:
            response = await attempt(per_try_s)
        except grpc.aio.AioRpcError as e:
            code, reason, detail = e.code().name, reason_of(e), e.details() or ""
            if e.code() not in RETRIED and reason not in BUSY_REASONS:
                return Result(REFUSED, None, code, reason, attempts, sent, time.monotonic(), detail)
        else:
            return Result(ACKED, response, "OK", "", attempts, sent, time.monotonic())
        if time.monotonic() - sent + wait > give_up_s or (stop is not None and stop()):
            return Result(UNKNOWN, None, code, reason, attempts, sent, time.monotonic(), detail)
        await asyncio.sleep(wait)
        wait = min(wait * 2, 1.0)
