"""Service errors with stable reason codes, and the one guard that turns every failure into a
gRPC status.

A client always gets: the status code, details ``"<reason>: <message>"``, the trailing
metadata ``chieu-reason: <reason>``, and a ``google.rpc.Status`` with an ``ErrorInfo``
(``reason``, ``domain`` ``chieu``) in ``grpc-status-details-bin``. Never a stack trace. A refusal
that says when to come back (a limit) adds ``retry-after-ms: <ms>`` to the trailing metadata and a
``RetryInfo`` to the status.

Words (:mod:`chieu.kit.words`): the call's ``accept-language`` picks Vietnamese, Chinese or
English (the fallback, for any other language too). In Vietnamese or Chinese the details'
message is the catalog's sentence for the reason; in English it is the service's own message,
which may say more (the seat, the amount). The ``ErrorInfo``'s metadata carries ``lang``,
``message`` (the catalog's sentence in that language) and ``detail`` (the service's own English
message): a client shows ``message`` and logs ``detail``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any, Protocol, runtime_checkable

import grpc
from google.protobuf import any_pb2
from google.protobuf.message import Message
from google.rpc import code_pb2, error_details_pb2, status_pb2

from chieu.kit import logs, outages, words
from chieu.kit.request_text import nul_field

log = logs.get("chieu.rpc")


@runtime_checkable
class Refusal(Protocol):
    """A refusal raised by pure code that knows nothing of gRPC (the rules core's
    ``RuleViolation``): a stable ``code``, a readable ``message`` and the name of the gRPC status
    it means (``INVALID_ARGUMENT``, ``FAILED_PRECONDITION``). The one guard maps it, so no
    servicer translates errors by hand and the kit imports no service."""

    code: str
    message: str
    status: str


MAX_MESSAGE = 400
"""The longest message a client is sent (UTF-8 bytes): what a refusal echoes of a request is cut,
so an error never outgrows the client's 8 KB metadata limit and hides its own status. Bytes, not
characters: gRPC percent-encodes every byte past ASCII in ``grpc-message`` (×3), and the status
details carry the message twice more, so 400 four-byte characters made 8.3 KB (a fuzzed
GetMonthlyRanking, ``RESOURCE_EXHAUSTED`` instead of the refusal)."""
MAX_REASON = 64


def bounded(text: str, limit: int = MAX_MESSAGE) -> str:
    """``text`` cut to at most ``limit`` UTF-8 bytes, marked with ``…`` where it was cut (never
    inside a character)."""
    data = text.encode("utf-8", "replace")
    if len(data) <= limit:
        return text
    return data[: limit - len("…".encode())].decode("utf-8", "ignore") + "…"


class ServiceError(Exception):
    """A refusal by a service: a gRPC status code, a stable reason and a readable message
    (bounded: see :data:`MAX_MESSAGE`); ``retry_after_ms`` (when positive) is the time to wait
    before trying again."""

    def __init__(self, status: grpc.StatusCode, reason: str, message: str, *, retry_after_ms: int = 0) -> None:
        reason, message = bounded(reason, MAX_REASON), bounded(message)
        super().__init__(f"{reason}: {message}")
        self.status = status
        self.reason = reason
        self.message = message
        self.retry_after_ms = max(0, int(retry_after_ms))


def not_found(reason: str, message: str) -> ServiceError:
    return ServiceError(grpc.StatusCode.NOT_FOUND, reason, message)


def invalid(reason: str, message: str) -> ServiceError:
    return ServiceError(grpc.StatusCode.INVALID_ARGUMENT, reason, message)


def precondition(reason: str, message: str) -> ServiceError:
    return ServiceError(grpc.StatusCode.FAILED_PRECONDITION, reason, message)


def from_exception(exc: BaseException) -> ServiceError:
    """The status a client gets for ``exc``."""
    if isinstance(exc, ServiceError):
        return exc
    if (outage := outages.reason(exc)) is not None:  # a dependency down: bounded, retryable
        return ServiceError(grpc.StatusCode.UNAVAILABLE, outage, outages.MESSAGES[outage],
                            retry_after_ms=outages.RETRY_AFTER_MS)
    if isinstance(exc, Exception) and isinstance(exc, Refusal):
        status = getattr(grpc.StatusCode, exc.status, grpc.StatusCode.FAILED_PRECONDITION)
        return ServiceError(status, exc.code, exc.message)
    return ServiceError(grpc.StatusCode.INTERNAL, "internal", "an internal error occurred; it has been logged")


def worded(err: ServiceError, lang: str = words.FALLBACK) -> tuple[str, str]:
    """The details a client in ``lang`` is sent for ``err`` (``"<reason>: <message>"``), and the
    catalog's sentence for its reason in that language (the service's own message for a reason the
    catalog lacks)."""
    said = words.text(err.reason, lang)
    sentence = bounded(said) if said is not None else err.message
    shown = sentence if lang != words.FALLBACK else err.message
    return f"{err.reason}: {shown}", sentence


def _status_details(err: ServiceError, lang: str = words.FALLBACK) -> bytes:
    details_text, sentence = worded(err, lang)
    info = error_details_pb2.ErrorInfo(reason=err.reason, domain="chieu",
                                       metadata={"lang": lang, "message": sentence, "detail": err.message})
    detail = any_pb2.Any()
    detail.Pack(info)
    details = [detail]
    if err.retry_after_ms:
        retry = error_details_pb2.RetryInfo()
        retry.retry_delay.FromMilliseconds(err.retry_after_ms)
        details.append(any_pb2.Any())
        details[-1].Pack(retry)
    code = err.status.value[0]
    status = status_pb2.Status(code=code if code in code_pb2.Code.values() else 2,
                               message=details_text, details=details)
    data: bytes = status.SerializeToString()
    return data


async def _abort(context: grpc.aio.ServicerContext[Any, Any], exc: BaseException, method: str) -> None:
    """End the call with the status of ``exc`` (an abort already under way goes on as it is)."""
    if isinstance(exc, grpc.aio.AbortError):
        raise exc
    err = from_exception(exc)
    if err.status is grpc.StatusCode.INTERNAL:
        log.error("unhandled error", method=method, exc_info=exc)
    else:
        log.info("refused", method=method, reason=err.reason, status=err.status.name)
    lang = words.of_metadata(context.invocation_metadata())
    trailing: tuple[tuple[str, str | bytes], ...] = (
        ("chieu-reason", err.reason), ("grpc-status-details-bin", _status_details(err, lang)))
    if err.retry_after_ms:
        trailing += (("retry-after-ms", str(err.retry_after_ms)),)
    context.set_trailing_metadata(trailing)
    await context.abort(err.status, worded(err, lang)[0])


class _Malformed:
    """What a request body that does not parse becomes (see :func:`_lenient`)."""

    __slots__ = ()


MALFORMED = _Malformed()


def _lenient(deserializer: Any) -> Any:
    """``deserializer`` that gives :data:`MALFORMED` for a body that does not parse, so the guard
    answers INVALID_ARGUMENT with a reason, not gRPC's UNKNOWN naming the parser's exception."""
    if deserializer is None:
        return None

    def parse(data: bytes) -> Any:
        try:
            return deserializer(data)
        except Exception:
            return MALFORMED

    return parse


def _check_request(request: Any) -> None:
    """INVALID_ARGUMENT for a body that did not parse (``malformed_request``) or a request with a
    NUL character in any string (``bad_text``, :mod:`chieu.kit.request_text`)."""
    if request is MALFORMED:
        raise invalid("malformed_request", "the request is not valid protobuf of its message type")
    if isinstance(request, Message) and (where := nul_field(request)):
        raise invalid("bad_text", f"{where} holds a NUL character")


def guard(method: str, handler: Any, check: Callable[[Any], None] | None = None) -> Any:
    """``handler`` with every failure turned into a status (wrapped once, at registration), and
    a request that does not parse or has a NUL character in its text refused before the handler
    runs.

    A per-call interceptor would build this wrapper again for every RPC; wrapping the method
    handlers when they are registered costs nothing per call. ``check``: run with the call's
    context before the handler (the request rates of :mod:`chieu.kit.ratelimit`); what it raises
    is the call's status.
    """
    if handler.unary_unary is not None:
        inner = handler.unary_unary

        async def unary(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
            try:
                _check_request(request)
                if check is not None:
                    check(context)
                return await inner(request, context)
            except Exception as exc:
                await _abort(context, exc, method)

        return grpc.unary_unary_rpc_method_handler(
            unary, request_deserializer=_lenient(handler.request_deserializer),
            response_serializer=handler.response_serializer,
        )
    if handler.unary_stream is not None:
        inner_stream = handler.unary_stream

        async def stream(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> AsyncIterator[Any]:
            try:
                _check_request(request)
                if check is not None:
                    check(context)
                async for item in inner_stream(request, context):
                    yield item
            except Exception as exc:
                await _abort(context, exc, method)

        return grpc.unary_stream_rpc_method_handler(
            stream, request_deserializer=_lenient(handler.request_deserializer),
            response_serializer=handler.response_serializer,
        )
    raise TypeError(f"{method}: only unary-unary and unary-stream methods are guarded")


class GuardedServer:
    """What a service's registration sees instead of the ``grpc.aio.Server``: every method
    handler it adds is wrapped by :func:`guard` before it reaches the server.

    The generated ``add_*Servicer_to_server`` adds the same handlers twice, as a generic handler
    and as registered methods; both reach the server from :meth:`add_registered_method_handlers`.
    """

    def __init__(self, server: grpc.aio.Server, check: Callable[[Any], None] | None = None) -> None:
        self.server = server
        self.check = check

    def add_generic_rpc_handlers(self, handlers: Any) -> None:
        """Ignored: the same handlers come to :meth:`add_registered_method_handlers`."""

    def add_registered_method_handlers(self, name: str, handlers: dict[str, Any]) -> None:
        guarded = {m: guard(f"/{name}/{m}", h, self.check) for m, h in handlers.items()}
        self.server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(name, guarded),))
        self.server.add_registered_method_handlers(name, guarded)
