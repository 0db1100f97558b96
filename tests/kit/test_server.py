"""The server bootstrap: reflection as v1 and v1alpha (what grpcurl and buf curl ask for first),
and none at all when switched off."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import replace

import grpc
import pytest
from grpc_reflection.v1alpha import reflection_pb2

from chieu.kit.server import REFLECTION_V1, Server
from chieu.kit.settings import Settings
from chieu_tools import localnats


async def _list_services(addr: str, service: str) -> set[str]:
    channel = grpc.aio.insecure_channel(addr)
    call = channel.stream_stream(
        f"/{service}/ServerReflectionInfo",
        request_serializer=reflection_pb2.ServerReflectionRequest.SerializeToString,
        response_deserializer=reflection_pb2.ServerReflectionResponse.FromString)

    async def ask() -> AsyncIterator[reflection_pb2.ServerReflectionRequest]:
        yield reflection_pb2.ServerReflectionRequest(list_services="")

    try:
        async for resp in call(ask()):
            return {s.name for s in resp.list_services_response.service}
        return set()
    finally:
        await channel.close()


async def _serving(settings: Settings, service: str = "test.Nothing") -> Server:
    addr = f"127.0.0.1:{localnats.free_port()}"
    server = Server(replace(settings, shutdown_grace_s=0.1), addr=addr, services=[service], register=[])
    await server.start()
    return server


@pytest.mark.parametrize("version", [REFLECTION_V1, "grpc.reflection.v1alpha.ServerReflection"])
async def test_reflection_answers_both_versions(version: str) -> None:
    server = await _serving(Settings())
    try:
        names = await _list_services(server.addr, version)
        assert {"test.Nothing", "grpc.health.v1.Health", REFLECTION_V1,
                "grpc.reflection.v1alpha.ServerReflection"} <= names
    finally:
        await server.shutdown()


async def test_reflection_can_be_switched_off() -> None:
    server = await _serving(Settings(reflection=0))
    try:
        for version in (REFLECTION_V1, "grpc.reflection.v1alpha.ServerReflection"):
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await _list_services(server.addr, version)
            assert err.value.code() == grpc.StatusCode.UNIMPLEMENTED
    finally:
        await server.shutdown()


async def test_buf_curl_lists_every_method_through_reflection() -> None:
    """A real client: buf curl asks for reflection v1 and resolves its schema too."""
    import asyncio
    import shutil
    import sys
    from pathlib import Path

    from chieu.ledger.v1 import ledger_service_pb2

    buf = shutil.which("buf") or str(Path(sys.executable).parent / "buf")
    ledger = ledger_service_pb2.DESCRIPTOR.services_by_name["LedgerService"].full_name
    server = await _serving(Settings(), ledger)  # a service whose schema reflection can serve
    try:
        proc = await asyncio.create_subprocess_exec(
            buf, "curl", "--protocol", "grpc", "--http2-prior-knowledge", "--list-methods", f"http://{server.addr}",
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        out, err = await asyncio.wait_for(proc.communicate(), 60)
        assert proc.returncode == 0, err.decode()[-500:]
        methods = set(out.decode().split())
        assert {f"{REFLECTION_V1}/ServerReflectionInfo", "grpc.health.v1.Health/Check",
                f"{ledger}/GetBalances"} <= methods
    finally:
        await server.shutdown()


async def test_a_burst_of_streams_is_served_not_cancelled() -> None:
    """Streams opened all at once, more than gRPC's default 1,000 pending calls, while the loop is
    busy (the client shares it here): each gets its first message (none CANCELLED before its
    handler ran, as 668 of 3,000 table watches were; :data:`chieu.kit.server.PENDING_CALLS`)."""
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    server = await _serving(Settings())
    channel = grpc.aio.insecure_channel(server.addr)
    calls = [health_pb2_grpc.HealthStub(channel).Watch(health_pb2.HealthCheckRequest(service=""))
             for _ in range(2_500)]
    try:
        async def first(call: object) -> str:
            try:
                async for _ in call:  # type: ignore[attr-defined]
                    return "served"
                return "ended"
            except grpc.aio.AioRpcError as e:
                return e.code().name

        got = await asyncio.gather(*(first(c) for c in calls))
        assert got.count("served") == len(calls), {g: got.count(g) for g in set(got)}
    finally:
        for c in calls:
            c.cancel()
        await channel.close()
        await server.shutdown()


async def test_a_server_stop_that_never_ends_does_not_hold_the_shutdown() -> None:
    """grpc.aio's stop can wait for ever on a call task that ignores its cancellation
    (grpc/grpc#28999): the shutdown goes on after the grace and the slack, and says so."""
    import asyncio

    from chieu.kit.server import stop_within

    released = asyncio.Event()

    class Stuck:
        async def stop(self, grace: float | None) -> None:
            while not released.is_set():
                try:
                    await released.wait()
                except asyncio.CancelledError:
                    continue  # as the stuck request loop: cancelled, it goes on waiting

    class Stops:
        async def stop(self, grace: float | None) -> None:
            await asyncio.sleep(0.01)

    began = asyncio.get_running_loop().time()
    assert await stop_within(Stuck(), 0.1, 0.2) is False
    assert asyncio.get_running_loop().time() - began < 5
    assert await stop_within(Stops(), 0.1, 0.2) is True
    released.set()  # the abandoned stop ends (the session's loop waits for every task at its close)
    await asyncio.sleep(0.05)
