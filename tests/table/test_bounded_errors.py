"""What a refusal echoes of a request is bounded: a huge game name or option value still gets its
own status and reason, never RESOURCE_EXHAUSTED "Stream removed" from an oversized trailer."""

from __future__ import annotations

import grpc
import pytest

from chieu.kit.errors import MAX_MESSAGE, ServiceError
from chieu.kit.settings import Settings
from tests.table.helpers import client, refused


def test_a_service_error_is_bounded() -> None:
    err = ServiceError(grpc.StatusCode.NOT_FOUND, "r" * 500, "x" * 20_000)
    assert len(err.message.encode()) == MAX_MESSAGE and err.message.endswith("…")  # bytes: see MAX_MESSAGE
    assert len(err.reason.encode()) == 64
    short = ServiceError(grpc.StatusCode.NOT_FOUND, "unknown_game", "no game 'chess'")
    assert short.message == "no game 'chess'"


@pytest.mark.parametrize(("game", "options", "status", "reason"), [
    ("g" * 20_000, {}, grpc.StatusCode.NOT_FOUND, "unknown_game"),
    ("o_an_quan", {"payout": "p" * 20_000}, grpc.StatusCode.INVALID_ARGUMENT, "bad_options"),
    ("o_an_quan", {"o" * 20_000: 1}, grpc.StatusCode.INVALID_ARGUMENT, "bad_options"),
])
async def test_a_huge_echo_keeps_its_status(settings: Settings, table_server: str, game: str,
                                            options: dict[str, object], status: grpc.StatusCode,
                                            reason: str) -> None:
    player = client(settings, table_server, "echo")
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await player.create(game, options)
    assert len(err.value.details() or "") <= MAX_MESSAGE + len(reason) + 2
    assert await refused(player.create(game, options)) == (status, reason)
    await player.close()
