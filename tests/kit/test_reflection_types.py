"""Reflection serves the google.rpc types a refusal carries (ErrorInfo, RetryInfo, Status), over
reflection v1 and v1alpha, so a reflection client (grpcurl) decodes a refusal's details: the
types are in the pool of every service, whatever it imports itself (issue 24)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace

import grpc
import pytest
from google.protobuf import descriptor_pb2
from grpc_reflection.v1alpha import reflection_pb2

from chieu.kit.server import REFLECTION_V1, Server
from chieu.kit.settings import Settings
from chieu_tools import localnats


async def _file_of(addr: str, service: str, symbol: str) -> list[str]:
    """The files reflection sends for ``symbol`` (its own and the ones it needs)."""
    async with grpc.aio.insecure_channel(addr) as channel:
        call = channel.stream_stream(
            f"/{service}/ServerReflectionInfo",
            request_serializer=reflection_pb2.ServerReflectionRequest.SerializeToString,
            response_deserializer=reflection_pb2.ServerReflectionResponse.FromString)

        async def ask() -> AsyncIterator[reflection_pb2.ServerReflectionRequest]:
            yield reflection_pb2.ServerReflectionRequest(file_containing_symbol=symbol)

        async for resp in call(ask()):
            assert not resp.HasField("error_response"), resp.error_response.error_message
            return [descriptor_pb2.FileDescriptorProto.FromString(f).name
                    for f in resp.file_descriptor_response.file_descriptor_proto]
    return []


@pytest.mark.parametrize("version", [REFLECTION_V1, "grpc.reflection.v1alpha.ServerReflection"])
async def test_reflection_serves_the_google_rpc_types_of_a_refusal(version: str) -> None:
    addr = f"127.0.0.1:{localnats.free_port()}"
    server = Server(replace(Settings(), shutdown_grace_s=0.1), addr=addr, services=["test.Nothing"], register=[])
    await server.start()
    try:
        for symbol in ("google.rpc.ErrorInfo", "google.rpc.RetryInfo"):
            assert "google/rpc/error_details.proto" in await _file_of(addr, version, symbol)
        assert "google/rpc/status.proto" in await _file_of(addr, version, "google.rpc.Status")
    finally:
        await server.shutdown()
