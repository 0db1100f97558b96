"""Every RPC every service serves, enumerated from the generated descriptors, and one way to call
any of them and read what came back (status, stable reason, first message).

Shared by the role matrix (``tests/security``) and the fuzzers (``tests/fuzz``): a new RPC in a
``.proto`` appears here with no change, so neither can forget it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import grpc
from google.protobuf import message_factory
from google.protobuf.descriptor import MethodDescriptor, ServiceDescriptor
from google.protobuf.message import Message
from google.rpc import error_details_pb2, status_pb2
from grpc_health.v1 import health_pb2
from grpc_reflection.v1alpha import reflection_pb2

from chieu.ladder.v1 import ladder_service_pb2
from chieu.ledger.v1 import ledger_service_pb2
from chieu.lobby.v1 import lobby_service_pb2
from chieu.table.v1 import table_service_pb2

SERVICES: dict[str, ServiceDescriptor] = {
    "table": table_service_pb2.DESCRIPTOR.services_by_name["TableService"],
    "ledger": ledger_service_pb2.DESCRIPTOR.services_by_name["LedgerService"],
    "ladder": ladder_service_pb2.DESCRIPTOR.services_by_name["LadderService"],
    "lobby": lobby_service_pb2.DESCRIPTOR.services_by_name["LobbyService"],
}
"""Each service by its short name (the README's "service" column)."""

STANDARD: dict[str, ServiceDescriptor] = {
    "health": health_pb2.DESCRIPTOR.services_by_name["Health"],
    "reflection": reflection_pb2.DESCRIPTOR.services_by_name["ServerReflection"],
}
"""What every server also serves (kit/server.py): health, and reflection when switched on."""


@dataclass(frozen=True, slots=True)
class Rpc:
    service: str
    """``table``, ``ledger``, ``ladder``, ``lobby``, ``health`` or ``reflection``."""
    method: MethodDescriptor

    @property
    def name(self) -> str:
        return self.method.name

    @property
    def path(self) -> str:
        return f"/{self.method.containing_service.full_name}/{self.method.name}"

    @property
    def id(self) -> str:
        return f"{self.service}.{self.name}"

    def request(self, **fields: Any) -> Message:
        msg: Message = message_factory.GetMessageClass(self.method.input_type)(**fields)
        return msg


def service_rpcs() -> Iterator[Rpc]:
    """Every RPC of the four services, from their descriptors."""
    for short, svc in SERVICES.items():
        for m in svc.methods:
            yield Rpc(short, m)


def standard_rpcs() -> Iterator[Rpc]:
    for short, svc in STANDARD.items():
        for m in svc.methods:
            yield Rpc(short, m)


@dataclass(frozen=True, slots=True)
class Answer:
    """What a call got: OK (with the first message, for a stream) or a status with its reason."""

    code: grpc.StatusCode
    reason: str = ""
    """``chieu-reason`` of the trailing metadata (empty when the server sent none)."""
    details: str = ""
    info_reason: str | None = None
    """The reason of the ``google.rpc.ErrorInfo`` in ``grpc-status-details-bin`` (None: absent)."""
    info_domain: str | None = None
    first: Message | None = None

    @property
    def ok(self) -> bool:
        return self.code is grpc.StatusCode.OK


def _answer(err: grpc.aio.AioRpcError) -> Answer:
    reason, info_reason, info_domain = "", None, None
    for key, value in err.trailing_metadata() or ():
        if key == "chieu-reason":
            reason = value if isinstance(value, str) else value.decode()
        elif key == "grpc-status-details-bin" and isinstance(value, bytes):
            status = status_pb2.Status.FromString(value)
            for detail in status.details:
                info = error_details_pb2.ErrorInfo()
                if detail.Unpack(info):
                    info_reason, info_domain = info.reason, info.domain
    return Answer(err.code(), reason, err.details() or "", info_reason, info_domain)


def _out_class(rpc: Rpc) -> Any:
    return message_factory.GetMessageClass(rpc.method.output_type)


async def call(channel: grpc.aio.Channel, rpc: Rpc, request: Message | bytes,
               metadata: tuple[tuple[str, str], ...] = (), deadline_s: float = 15.0) -> Answer:
    """Call ``rpc`` with ``request`` (a message, or raw bytes sent as they are): a unary call's
    answer, or a stream's first message (then the stream is cancelled) or its status.

    A client-streaming call (reflection) sends the one request and reads one answer.
    """
    ser = (lambda b: b) if isinstance(request, bytes) else (lambda m: m.SerializeToString())
    out = _out_class(rpc).FromString
    m = rpc.method
    try:
        if not m.client_streaming and not m.server_streaming:
            first = await channel.unary_unary(rpc.path, request_serializer=ser, response_deserializer=out)(
                request, metadata=metadata, timeout=deadline_s)
            return Answer(grpc.StatusCode.OK, first=first)
        if m.client_streaming:
            stream: Any = channel.stream_stream(rpc.path, request_serializer=ser, response_deserializer=out)(
                metadata=metadata, timeout=deadline_s)
            await stream.write(request)
            await stream.done_writing()
        else:
            stream = channel.unary_stream(rpc.path, request_serializer=ser, response_deserializer=out)(
                request, metadata=metadata, timeout=deadline_s)
        try:
            first = await stream.read()
            if first is grpc.aio.EOF:
                return Answer(await stream.code(), details=await stream.details() or "")
            return Answer(grpc.StatusCode.OK, first=first)
        finally:
            stream.cancel()
    except grpc.aio.AioRpcError as e:
        return _answer(e)


def bearer(tok: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {tok}"),)


AUTH_REASONS = frozenset({"no_token", "malformed_token", "bad_algorithm", "unknown_key", "bad_signature",
                          "bad_claims", "token_expired", "no_keys", "session_revoked"})
"""The reasons of an UNAUTHENTICATED refusal of the bearer token (kit/auth.py)."""
ROLE_REASONS = frozenset({"role_required", "not_yours", "not_a_player"})
"""The reasons of a PERMISSION_DENIED refusal of the caller's role or identity."""

REASON = re.compile(r"^[a-z][a-z0-9_]{1,63}$")
"""What a stable reason code looks like."""


def past_auth(a: Answer) -> bool:
    """Whether the call got past authentication and the role check (whatever came after)."""
    return not ((a.code is grpc.StatusCode.UNAUTHENTICATED and a.reason in AUTH_REASONS)
                or (a.code is grpc.StatusCode.PERMISSION_DENIED and a.reason in ROLE_REASONS))
