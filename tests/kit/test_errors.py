"""The error guard, over a real gRPC server: every failure becomes a status with a stable
reason, never a stack trace; an abort a handler makes itself passes through unchanged."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest
from google.rpc import error_details_pb2, status_pb2
from hypothesis import given
from hypothesis import strategies as st

from chieu.games.core import IllegalMove
from chieu.kit.errors import MAX_MESSAGE, GuardedServer, ServiceError, bounded, invalid
from chieu_tools.localnats import free_port
from tests.table.helpers import reason_of


async def _boom(request: bytes, context: Any) -> bytes:
    raise RuntimeError("secret detail of the server")


async def _refuse(request: bytes, context: Any) -> bytes:
    raise invalid("bad_thing", "that thing is bad")


async def _illegal(request: bytes, context: Any) -> bytes:
    raise IllegalMove("not_your_turn", "wait for your turn")


async def _abort(request: bytes, context: Any) -> bytes:
    await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, "slow down")
    return b""


async def _wait(request: bytes, context: Any) -> bytes:
    raise ServiceError(grpc.StatusCode.RESOURCE_EXHAUSTED, "too_many", "slow down; retry in 2 s", retry_after_ms=1500)


async def _echo(request: bytes, context: Any) -> bytes:
    raise invalid("unknown_game", f"no game {request.decode()!r}; games: phom, tien_len")


async def _stream(request: bytes, context: Any) -> AsyncIterator[bytes]:
    yield b"first"
    raise ServiceError(grpc.StatusCode.FAILED_PRECONDITION, "gone", "the table went away")


@pytest.fixture
async def channel() -> AsyncIterator[grpc.aio.Channel]:
    server = grpc.aio.server()
    GuardedServer(server).add_registered_method_handlers("test.Guarded", {
        "Boom": grpc.unary_unary_rpc_method_handler(_boom),
        "Refuse": grpc.unary_unary_rpc_method_handler(_refuse),
        "Illegal": grpc.unary_unary_rpc_method_handler(_illegal),
        "Abort": grpc.unary_unary_rpc_method_handler(_abort),
        "Stream": grpc.unary_stream_rpc_method_handler(_stream),
        "Wait": grpc.unary_unary_rpc_method_handler(_wait),
        "Echo": grpc.unary_unary_rpc_method_handler(_echo),
    })
    port = server.add_insecure_port(f"127.0.0.1:{free_port()}")
    await server.start()
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
        yield ch
    await server.stop(None)


async def _fail(channel: grpc.aio.Channel, method: str) -> grpc.aio.AioRpcError:
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await channel.unary_unary(f"/test.Guarded/{method}")(b"x")
    return err.value


async def test_an_unexpected_failure_is_internal_and_tells_nothing(channel: grpc.aio.Channel) -> None:
    err = await _fail(channel, "Boom")
    assert err.code() == grpc.StatusCode.INTERNAL and reason_of(err) == "internal"
    assert "secret" not in (err.details() or "") and "Traceback" not in (err.details() or "")


@pytest.mark.parametrize(("method", "code", "reason"), [
    ("Refuse", grpc.StatusCode.INVALID_ARGUMENT, "bad_thing"),
    ("Illegal", grpc.StatusCode.FAILED_PRECONDITION, "not_your_turn"),
])
async def test_refusals_keep_their_status_and_reason(channel: grpc.aio.Channel, method: str,
                                                     code: grpc.StatusCode, reason: str) -> None:
    err = await _fail(channel, method)
    assert err.code() == code and reason_of(err) == reason
    assert (err.details() or "").startswith(f"{reason}: ")
    assert dict(err.trailing_metadata() or ())["chieu-reason"] == reason


async def test_a_limit_says_when_to_come_back(channel: grpc.aio.Channel) -> None:
    err = await _fail(channel, "Wait")
    trailing = dict(err.trailing_metadata() or ())
    assert err.code() == grpc.StatusCode.RESOURCE_EXHAUSTED and trailing["retry-after-ms"] == "1500"
    status = status_pb2.Status.FromString(trailing["grpc-status-details-bin"])
    retry = error_details_pb2.RetryInfo()
    assert [d.Unpack(retry) for d in status.details if d.Is(retry.DESCRIPTOR)] == [True]
    assert retry.retry_delay.ToMilliseconds() == 1500
    ok = await _fail(channel, "Refuse")  # a refusal with no wait says none
    assert "retry-after-ms" not in dict(ok.trailing_metadata() or ())


async def test_an_abort_of_the_handler_passes_through(channel: grpc.aio.Channel) -> None:
    err = await _fail(channel, "Abort")
    assert err.code() == grpc.StatusCode.RESOURCE_EXHAUSTED and err.details() == "slow down"


async def test_a_stream_delivers_what_it_sent_then_the_status(channel: grpc.aio.Channel) -> None:
    call = channel.unary_stream("/test.Guarded/Stream")(b"x")
    got = []
    with pytest.raises(grpc.aio.AioRpcError) as err:
        async for item in call:
            got.append(item)
    assert got == [b"first"]
    assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION and reason_of(err.value) == "gone"


@given(st.text(max_size=2000), st.integers(min_value=4, max_value=800))
def test_a_bounded_text_fits_its_bytes_and_is_a_prefix(text: str, limit: int) -> None:
    out = bounded(text, limit)
    assert len(out.encode("utf-8", "replace")) <= limit
    assert out == text or (out.endswith("…") and text.startswith(out[:-1]))


async def test_a_refusal_echoing_wide_characters_keeps_its_status(channel: grpc.aio.Channel) -> None:
    """400 four-byte characters echoed once made 8.3 KB of trailers (gRPC percent-encodes each
    byte of ``grpc-message``): the client saw RESOURCE_EXHAUSTED, not the refusal (a fuzzed
    GetMonthlyRanking)."""
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await channel.unary_unary("/test.Guarded/Echo")(("\U0001f004" * 3000).encode())
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT and reason_of(err.value) == "unknown_game"
    details = err.value.details() or ""
    assert details.startswith("unknown_game: no game") and len(details.encode()) <= MAX_MESSAGE + 64 + 2
