"""A request body that does not parse as its message (corrupt wire format, a string that is not
UTF-8) is INVALID_ARGUMENT / ``malformed_request`` with the usual reason code, not gRPC's UNKNOWN
"Unexpected <class 'google.protobuf.message.DecodeError'>: ..." (found by the fuzzers, tests/fuzz,
sending raw bytes): unary calls and streams alike, on every service."""

from __future__ import annotations

import grpc
import pytest

from chieu.kit.settings import Settings
from tests.conftest import token
from tests.table.helpers import reason_of

pytestmark = pytest.mark.integration

BODIES = [b"\x0a\x02\xff\xfe", b"\xff\xff\xff", b"\x0a\x80"]
"""A string field of bad UTF-8; a varint that never ends; a length with no bytes after it."""


@pytest.mark.parametrize("body", BODIES, ids=["bad_utf8", "corrupt", "truncated"])
async def test_a_body_that_does_not_parse_is_malformed_request(settings: Settings, table_server: str,
                                                              ledger_server: str, body: bytes) -> None:
    md = (("authorization", f"Bearer {token(settings, 'raw-ops', 'operator')}"),)
    for addr, path, stream in ((table_server, "/chieu.table.v1.TableService/CreateTable", False),
                               (table_server, "/chieu.table.v1.TableService/Watch", True),
                               (ledger_server, "/chieu.ledger.v1.LedgerService/Adjust", False)):
        async with grpc.aio.insecure_channel(addr) as ch:
            with pytest.raises(grpc.aio.AioRpcError) as err:
                if stream:
                    async for _ in ch.unary_stream(path)(body, metadata=md):
                        pass
                else:
                    await ch.unary_unary(path)(body, metadata=md)
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT, (path, err.value.details())
        assert reason_of(err.value) == "malformed_request"
        assert "DecodeError" not in (err.value.details() or "") and "<class" not in (err.value.details() or "")
