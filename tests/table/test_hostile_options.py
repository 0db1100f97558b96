"""Options that are no JSON — NaN or ±Infinity anywhere in the ``Struct`` — are refused as bad
options, not an internal error (found by the fuzzers, tests/fuzz: CreateTable answered INTERNAL),
and nothing is appended."""

from __future__ import annotations

import math

import grpc
import pytest
from google.protobuf import struct_pb2

from chieu.kit.settings import Settings
from chieu.table.v1 import table_service_pb2 as pb
from tests.table.helpers import client, refused

pytestmark = pytest.mark.integration

NOT_JSON = [{"turnSeconds": math.inf}, {"turnSeconds": -math.inf}, {"maxMoves": math.nan},
            {"unknownOption": [1, math.inf]}, {"nested": {"deeper": math.nan}}]


@pytest.mark.parametrize("options", NOT_JSON, ids=repr)
async def test_options_that_are_no_json_are_bad_options(settings: Settings, table_server: str,
                                                        options: dict[str, object]) -> None:
    host = client(settings, table_server, "nan-host")
    assert await refused(host.create("o_an_quan", options)) == (grpc.StatusCode.INVALID_ARGUMENT, "bad_options")
    view = await host.create("o_an_quan")
    before = (await host.get(view.table_id)).version
    patch = struct_pb2.Struct()
    patch.update(options)
    change = host.stub.ChangeSettings(pb.ChangeSettingsRequest(table_id=view.table_id, options=patch),
                                      metadata=host.metadata)
    assert await refused(change) == (grpc.StatusCode.INVALID_ARGUMENT, "bad_options")
    assert (await host.get(view.table_id)).version == before
    await host.close()
