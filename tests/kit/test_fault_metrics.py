"""The metrics of faults that do not show otherwise (issue 36): when the process started (a crash
shows as a new start, not only as counters starting again), and unary calls the client stopped
waiting for (CANCELLED: a fault it saw, counted apart from a watch stream's normal end)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time

import grpc
from prometheus_client import REGISTRY

from chieu.kit import metrics


def test_the_start_time_is_the_processes_own() -> None:
    mine = REGISTRY.get_sample_value("chieu_process_start_time_seconds")
    assert mine is not None and mine <= time.time()
    with open("/proc/uptime") as f:
        boot = time.time() - float(f.read().split()[0])
    assert mine >= boot - 1
    script = ("import time; time.sleep(1.2); from prometheus_client import REGISTRY; import chieu.kit.metrics; "
              "print(REGISTRY.get_sample_value('chieu_process_start_time_seconds'))")
    started = time.time()
    child = float(subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                                 timeout=60).stdout)
    assert started - 1 <= child < started + 1.1  # its start, not when its metrics module loaded
    assert child > mine


async def test_a_unary_call_the_client_gave_up_on_is_counted_as_abandoned() -> None:
    async def slow(request: bytes, context: grpc.aio.ServicerContext[bytes, bytes]) -> bytes:
        await asyncio.sleep(5)
        return b""

    handler = grpc.unary_unary_rpc_method_handler(slow)
    server = grpc.aio.server()
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(
        "test.Slow", {"Call": metrics.instrument("test.Slow", "Call", handler)}),))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    labels = {"service": "test.Slow", "method": "Call"}
    before = REGISTRY.get_sample_value("chieu_rpc_abandoned_total", labels) or 0
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            call = channel.unary_unary("/test.Slow/Call")
            try:
                await call(b"", timeout=0.3)
            except grpc.aio.AioRpcError as e:
                assert e.code() == grpc.StatusCode.DEADLINE_EXCEEDED
        for _ in range(50):
            if (REGISTRY.get_sample_value("chieu_rpc_abandoned_total", labels) or 0) > before:
                break
            await asyncio.sleep(0.1)
    finally:
        await server.stop(0)
    assert REGISTRY.get_sample_value("chieu_rpc_abandoned_total", labels) == before + 1
