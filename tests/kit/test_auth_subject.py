"""A token's subject is a printable id: a validly signed token whose ``sub`` holds a NUL, a line
break or another control character is refused (``bad_claims``), and no signer makes one (found by
the fuzzers, tests/fuzz: the lobby took ``sub`` "\\0" as a player, asked the ledger about it, and
answered UNAVAILABLE / ledger_unavailable)."""

from __future__ import annotations

import time

import grpc
import jwt
import pytest
from cryptography.hazmat.primitives import serialization

from chieu.kit import auth
from chieu.kit.errors import ServiceError
from chieu.lobby.v1 import lobby_service_pb2 as pb
from chieu.lobby.v1 import lobby_service_pb2_grpc as pb_grpc
from tests.conftest import PRIVATE_KEY, SIGNER
from tests.table.helpers import refused

BAD = ["\x00", "alice\x00", "a\nb", "tab\there", "\u202e", "bell\x07"]


def forged(sub: str) -> str:
    """A token the real key signed, with whatever subject (as a buggy or careless signer might)."""
    t = int(time.time())
    key = serialization.load_pem_private_key(PRIVATE_KEY.read_bytes(), password=None)
    return jwt.encode({"iss": "chieu", "aud": "chieu", "sub": sub, "roles": ["player"], "iat": t, "exp": t + 60,
                       "jti": "x"}, key, algorithm="EdDSA", headers={"kid": SIGNER.kid})


@pytest.mark.parametrize("sub", BAD, ids=repr)
def test_a_subject_that_is_not_printable_is_refused(sub: str) -> None:
    with pytest.raises(ServiceError) as err:
        auth.verify(SIGNER.keyset(), forged(sub))
    assert (err.value.status, err.value.reason) == (grpc.StatusCode.UNAUTHENTICATED, "bad_claims")
    with pytest.raises(ValueError):
        SIGNER.sign(sub)


def test_printable_subjects_still_verify() -> None:
    for sub in ("alice", "Nguyễn Văn A", "guest-1f2e", "service:table"):
        roles = ("service",) if sub.startswith("service:") else ("player",)
        assert auth.verify(SIGNER.keyset(), SIGNER.sign(sub, roles)).player_id == sub


@pytest.mark.integration
async def test_the_lobby_refuses_it_at_the_door(lobby_server: str, ledger_server: str) -> None:
    async with grpc.aio.insecure_channel(lobby_server) as ch:
        stub = pb_grpc.LobbyServiceStub(ch)
        md = (("authorization", f"Bearer {forged(chr(0))}"),)
        assert await refused(stub.GetHome(pb.GetHomeRequest(), metadata=md)) == (
            grpc.StatusCode.UNAUTHENTICATED, "bad_claims")
