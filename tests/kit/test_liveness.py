"""Liveness asks the process, not its port (issue 36): a service whose event loop is wedged still
accepts TCP connections (its kernel does), which is all a TCP probe saw; its gRPC health
``chieu.Liveness`` (what deploy/'s liveness probes ask) goes unanswered, so the kubelet restarts it.
And a dependency's outage does not touch the liveness: only the readiness."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from chieu.kit.server import LIVENESS
from chieu_tools import localnats

SCRIPT = """
import asyncio, signal, sys, time
from chieu.kit.server import Server
from chieu.kit.settings import Settings

async def main():
    server = Server(Settings(), addr=sys.argv[1], services=["test.Nothing"], register=[])
    await server.start()
    asyncio.get_running_loop().add_signal_handler(signal.SIGUSR1, lambda: time.sleep(120))  # the wedge
    print("serving", flush=True)
    await asyncio.sleep(300)

asyncio.run(main())
"""


def check(addr: str, service: str, timeout: float = 3.0) -> str:
    """What a probe of ``service``'s health on ``addr`` sees (the deploy/ liveness probe's own call)."""
    with grpc.insecure_channel(addr) as channel:
        try:
            reply = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(service=service),
                                                              timeout=timeout)
        except grpc.RpcError as e:
            return str(e.code().name)
    return str(health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status))


def test_a_wedged_process_fails_its_grpc_liveness_while_its_port_still_accepts() -> None:
    port = localnats.free_port()
    addr = f"127.0.0.1:{port}"
    proc = subprocess.Popen([sys.executable, "-c", SCRIPT, addr], stdout=subprocess.PIPE, env={**os.environ})
    try:
        assert proc.stdout is not None
        while (line := proc.stdout.readline()) and line.strip() != b"serving":  # (its log lines first)
            pass
        assert line, "the server did not start"
        assert check(addr, LIVENESS) == "SERVING"
        assert check(addr, "") == "SERVING"
        proc.send_signal(signal.SIGUSR1)
        assert check(addr, LIVENESS) == "DEADLINE_EXCEEDED"  # the liveness probe fails: restarted
        with socket.create_connection(("127.0.0.1", port), timeout=2):  # what a TCP probe saw: fine
            pass
    finally:
        proc.kill()
        proc.wait()
