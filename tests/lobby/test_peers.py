"""How the lobby passes on what its peers (ledger, ladder, table) answer: a refusal of the
request itself keeps its status and reason (retrying cannot help); a peer that cannot answer is
UNAVAILABLE with ``<peer>_unavailable`` (retrying may)."""

from __future__ import annotations

import grpc
from grpc.aio import AioRpcError, Metadata

from chieu.lobby.peers import unavailable


def _error(code: grpc.StatusCode, details: str, reason: str = "") -> AioRpcError:
    trailing = Metadata(("chieu-reason", reason)) if reason else Metadata()
    return AioRpcError(code, Metadata(), trailing, details)


def test_a_refused_request_is_passed_on_with_its_reason() -> None:
    why = "the player id is not printable"
    e = unavailable("ledger", _error(grpc.StatusCode.INVALID_ARGUMENT, f"bad_id: {why}", "bad_id"))
    assert (e.status, e.reason, e.message) == (grpc.StatusCode.INVALID_ARGUMENT, "bad_id", why)
    e = unavailable("ladder", _error(grpc.StatusCode.OUT_OF_RANGE, "too far"))
    assert (e.status, e.reason) == (grpc.StatusCode.OUT_OF_RANGE, "ladder_refused")


def test_a_peer_that_cannot_answer_is_unavailable() -> None:
    for code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.INTERNAL,
                 grpc.StatusCode.PERMISSION_DENIED):
        e = unavailable("ladder", _error(code, "whatever it says", "some_reason"))
        assert (e.status, e.reason) == (grpc.StatusCode.UNAVAILABLE, "ladder_unavailable"), code
        assert code.name in e.message and "whatever" not in e.message
    e = unavailable("ledger", "no ledger is configured")
    assert (e.status, e.reason) == (grpc.StatusCode.UNAVAILABLE, "ledger_unavailable")
