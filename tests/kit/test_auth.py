"""Session tokens: signed, expiring, bound to one player."""

from __future__ import annotations

import pytest

from chieu.kit import auth
from chieu.kit.errors import ServiceError


def test_a_signed_token_verifies_to_its_player_and_roles() -> None:
    token = auth.sign("s3cret", "alice", ["player", "auditor"], now=1000)
    who = auth.verify("s3cret", token, now=1001)
    assert who.player_id == "alice" and who.roles == frozenset({"player", "auditor"})

FORGED = auth._b64(b'{"sub":"mallory","roles":["operator"],"exp":9e9}')


@pytest.mark.parametrize("mangle", [
    lambda t: t.replace("v1.", "v2.", 1),
    lambda t: t[:-2] + ("AA" if not t.endswith("AA") else "BB"),
    lambda t: "garbage",
    lambda t: ".".join([t.split(".")[0], FORGED, t.split(".")[2]]),
])
def test_tampered_tokens_are_unauthenticated(mangle: object) -> None:
    token = auth.sign("s3cret", "alice", now=1000)
    with pytest.raises(ServiceError) as err:
        auth.verify("s3cret", mangle(token), now=1001)  # type: ignore[operator]
    assert err.value.reason == "unauthenticated"


def test_another_secret_or_an_expired_token_is_refused() -> None:
    token = auth.sign("s3cret", "alice", ttl_s=10, now=1000)
    with pytest.raises(ServiceError):
        auth.verify("other", token, now=1001)
    with pytest.raises(ServiceError) as err:
        auth.verify("s3cret", token, now=1011)
    assert "expired" in err.value.message


def test_a_remembered_token_still_expires_and_binds_to_its_secret() -> None:
    token = auth.sign("s3cret", "carol", ttl_s=10, now=2000)
    assert auth.verify("s3cret", token, now=2001).player_id == "carol"  # verified and remembered
    assert auth.verify("s3cret", token, now=2002).player_id == "carol"  # from memory
    with pytest.raises(ServiceError):
        auth.verify("other", token, now=2003)  # remembered under its own secret only
    with pytest.raises(ServiceError) as err:
        auth.verify("s3cret", token, now=2011)
    assert "expired" in err.value.message
    assert ("s3cret", token) not in auth._verified  # forgotten once expired


def test_the_memory_of_verified_tokens_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(auth, "VERIFIED_CACHE", 3)
    tokens = [auth.sign("s3cret", f"p{i}", now=3000) for i in range(5)]
    for t in tokens:
        auth.verify("s3cret", t, now=3001)
    assert len(auth._verified) <= 3
    assert auth.verify("s3cret", tokens[0], now=3001).player_id == "p0"  # forgotten, verified again


def test_unknown_roles_cannot_be_signed() -> None:
    with pytest.raises(ValueError):
        auth.sign("s", "alice", ["god"])
