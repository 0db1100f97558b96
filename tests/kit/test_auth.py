"""Session tokens: JWT signed with Ed25519, verified with public keys only; expiring, bound to one
player; forgeries of every kind refused with a stable reason."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from pathlib import Path

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from chieu.kit import auth, ed25519
from chieu.kit.errors import ServiceError

SIGNER = auth.Signer.generate()
KEYS = SIGNER.keyset()


def refused(token: str, reason: str, keys: auth.KeySet = KEYS, now: float = 1001) -> ServiceError:
    with pytest.raises(ServiceError) as err:
        auth.verify(keys, token, now=now)
    assert err.value.reason == reason, err.value.message
    assert err.value.status.name == "UNAUTHENTICATED" and len(err.value.message) <= 400
    return err.value


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def test_a_signed_token_verifies_to_its_player_roles_session_and_expiry() -> None:
    token = SIGNER.sign("alice", ["player", "auditor"], ttl_s=60, sid="s-1", jti="j-1", now=1000)
    who = auth.verify(KEYS, token, now=1001)
    assert who == auth.Principal("alice", frozenset({"player", "auditor"}), "s-1", 1060, "j-1")
    header = jwt.get_unverified_header(token)
    assert header == {"alg": "EdDSA", "typ": "JWT", "kid": SIGNER.kid}
    claims = jwt.decode(token, options={"verify_signature": False})
    assert claims["iss"] == claims["aud"] == "chieu" and claims["iat"] == 1000 and claims["exp"] == 1060


def test_every_token_has_its_own_id() -> None:
    a, b = SIGNER.sign("alice", now=1000), SIGNER.sign("alice", now=1000)
    assert a != b and auth.verify(KEYS, a, now=1001).jti != auth.verify(KEYS, b, now=1001).jti


def test_a_token_signed_by_an_unknown_key_is_refused() -> None:
    other = auth.Signer.generate()
    refused(other.sign("mallory", ["operator"], now=1000), "unknown_key")


def test_a_token_naming_a_trusted_kid_but_signed_by_another_key_is_refused() -> None:
    forged = jwt.encode({"iss": "chieu", "aud": "chieu", "sub": "mallory", "roles": ["operator"], "iat": 1000,
                         "exp": 9_999_999_999, "jti": "x"}, Ed25519PrivateKey.generate(), algorithm="EdDSA",
                        headers={"kid": SIGNER.kid})
    refused(forged, "bad_signature")


def test_alg_none_is_refused() -> None:
    header = b64(json.dumps({"alg": "none", "typ": "JWT", "kid": SIGNER.kid}).encode())
    body = b64(json.dumps({"iss": "chieu", "aud": "chieu", "sub": "mallory", "roles": ["operator"], "iat": 1000,
                           "exp": 9_999_999_999, "jti": "x"}).encode())
    refused(f"{header}.{body}.", "bad_algorithm")


def test_hs256_with_the_public_key_as_secret_is_refused() -> None:
    """The algorithm-confusion forgery: HMAC keyed with what every service can read."""
    claims = {"iss": "chieu", "aud": "chieu", "sub": "mallory", "roles": ["operator"], "iat": 1000,
              "exp": 9_999_999_999, "jti": "x"}
    for secret in (SIGNER.public_pem(), json.dumps(KEYS.to_jwks()).encode(), b64(ed25519.raw(SIGNER.public)).encode()):
        header = b64(json.dumps({"alg": "HS256", "typ": "JWT", "kid": SIGNER.kid}).encode())
        body = b64(json.dumps(claims).encode())
        sig = b64(hmac.new(secret, f"{header}.{body}".encode(), hashlib.sha256).digest())
        refused(f"{header}.{body}.{sig}", "bad_algorithm")


def test_an_expired_token_is_refused() -> None:
    token = SIGNER.sign("alice", ttl_s=10, now=1000)
    assert auth.verify(KEYS, token, now=1009).player_id == "alice"
    assert "expired" in refused(token, "token_expired", now=1010).message


@pytest.mark.parametrize("token", [
    "", "garbage", "a.b", "a.b.c", "v1.eyJzdWIiOiJ4In0.sig", "x" * 5000,
    b64(b'{"alg":"EdDSA"') + ".e30.sig",
])
def test_malformed_tokens_are_refused(token: str) -> None:
    refused(token, "malformed_token")


def test_a_tampered_payload_is_refused() -> None:
    token = SIGNER.sign("alice", now=1000)
    h, _, s = token.split(".")
    body = b64(json.dumps({"iss": "chieu", "aud": "chieu", "sub": "mallory", "roles": ["operator"], "iat": 1000,
                           "exp": 9_999_999_999, "jti": "x"}).encode())
    refused(f"{h}.{body}.{s}", "bad_signature")


def _signed(claims: dict[str, object]) -> str:
    return jwt.encode(claims, SIGNER._private, algorithm="EdDSA", headers={"kid": SIGNER.kid})


@pytest.mark.parametrize("change", [
    {"iss": "someone-else"}, {"aud": "another-app"}, {"roles": ["god"]}, {"roles": []}, {"roles": "operator"},
    {"sub": ""}, {"exp": "never"}, {"jti": None}, {"iat": 99_999_999_999},
    {"sub": "service:table", "roles": ["operator"]}, {"sub": "alice", "roles": ["service"]},
    {"sub": "service:table", "roles": ["service", "operator"]},
])
def test_bad_claims_are_refused(change: dict[str, object]) -> None:
    claims: dict[str, object] = {"iss": "chieu", "aud": "chieu", "sub": "alice", "roles": ["player"], "iat": 1000,
                                 "exp": 9_999_999_999, "jti": "j"}
    refused(_signed({**claims, **change}), "bad_claims")


@pytest.mark.parametrize("missing", ["iss", "aud", "sub", "iat", "exp", "jti"])
def test_a_missing_claim_is_refused(missing: str) -> None:
    claims: dict[str, object] = {"iss": "chieu", "aud": "chieu", "sub": "alice", "roles": ["player"], "iat": 1000,
                                 "exp": 9_999_999_999, "jti": "j"}
    del claims[missing]
    refused(_signed(claims), "bad_claims")


def test_no_keys_refuses_everything() -> None:
    refused(SIGNER.sign("alice", now=1000), "no_keys", keys=auth.EMPTY)


def test_a_rotated_keyset_accepts_old_and_new_kids_until_the_old_one_is_removed() -> None:
    old, new = SIGNER, auth.Signer.generate()
    before, after = old.sign("alice", now=1000), new.sign("bob", now=1000)
    rotating = old.keyset().with_key(new.public)  # step 1: the new public key everywhere
    assert set(rotating.kids) == {old.kid, new.kid}
    assert auth.verify(rotating, before, now=1001).player_id == "alice"  # step 2: both verify
    assert auth.verify(rotating, after, now=1001).player_id == "bob"
    done = rotating.without(old.kid)  # step 3: the old key gone after the longest lifetime
    refused(before, "unknown_key", keys=done)  # even though it was remembered under the other set
    assert auth.verify(done, after, now=1001).player_id == "bob"


def test_keysets_load_from_a_jwks_file_or_a_directory_of_pems(tmp_path: Path) -> None:
    other = auth.Signer.generate()
    both = KEYS.with_key(other.public)
    (tmp_path / "keys.json").write_text(json.dumps(both.to_jwks()))
    assert auth.KeySet.load(tmp_path / "keys.json") == both
    pems = tmp_path / "pems"
    pems.mkdir()
    (pems / "a.pem").write_bytes(SIGNER.public_pem())
    (pems / "b.pem").write_bytes(other.public_pem())
    assert auth.KeySet.load(pems) == both
    (pems / "c.pem").write_bytes(other.private_pem())
    with pytest.raises(ValueError, match="private"):
        auth.KeySet.load(pems)
    private_jwk = {"keys": [{**both.to_jwks()["keys"][0], "d": "AAAA"}]}
    with pytest.raises(ValueError, match="private"):
        auth.KeySet.from_jwks(private_jwk)
    with pytest.raises(ValueError):
        auth.KeySet.from_jwks({"keys": [{"kty": "oct", "k": "c2VjcmV0"}]})
    archive_jwk = {"keys": [{**both.to_jwks()["keys"][0], "use": "chieu-archive"}]}
    with pytest.raises(ValueError, match="not a token key"):  # an archive keyset put in the token's place
        auth.KeySet.from_jwks(archive_jwk)


def test_a_signer_round_trips_through_its_pem_and_its_kid_is_the_thumbprint(tmp_path: Path) -> None:
    (tmp_path / "k.pem").write_bytes(SIGNER.private_pem())
    again = auth.Signer.load(tmp_path / "k.pem")
    assert again.kid == SIGNER.kid == auth.thumbprint(SIGNER.public)
    assert auth.verify(KEYS, again.sign("alice", now=1000), now=1001).player_id == "alice"
    # RFC 8037 appendix A.3: the thumbprint of its example key
    jwk = {"keys": [{"kty": "OKP", "crv": "Ed25519", "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}]}
    (kid,) = auth.KeySet.from_jwks(jwk).kids
    assert kid == "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k"


def test_a_public_keyset_file_is_read_again_when_it_changes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from chieu.kit.settings import Settings

    monkeypatch.setattr(auth, "RELOAD_S", 0.0)
    path = tmp_path / "keys.json"
    path.write_text(json.dumps(KEYS.to_jwks()))
    settings = Settings(token_public_keys=str(path))
    assert auth.public_keys(settings) == KEYS
    new = auth.Signer.generate()
    path.write_text(json.dumps(KEYS.with_key(new.public).to_jwks(), indent=1))
    assert new.kid in auth.public_keys(settings).kids
    path.write_text("not json")  # a broken file keeps the last good set
    assert new.kid in auth.public_keys(settings).kids


def test_a_remembered_token_still_expires_and_binds_to_its_keyset() -> None:
    token = SIGNER.sign("carol", ttl_s=10, now=2000)
    assert auth.verify(KEYS, token, now=2001).player_id == "carol"  # verified and remembered
    assert auth.verify(KEYS, token, now=2002).player_id == "carol"  # from memory
    refused(token, "unknown_key", keys=auth.Signer.generate().keyset(), now=2003)  # remembered per keyset only
    refused(token, "token_expired", now=2010)
    assert (KEYS.ident, token) not in auth._verified  # forgotten once expired


def test_the_memory_of_verified_tokens_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(auth, "VERIFIED_CACHE", 3)
    tokens = [SIGNER.sign(f"p{i}", now=3000) for i in range(5)]
    for t in tokens:
        auth.verify(KEYS, t, now=3001)
    assert len(auth._verified) <= 3
    assert auth.verify(KEYS, tokens[0], now=3001).player_id == "p0"  # forgotten, verified again


def test_unknown_roles_and_misused_service_roles_cannot_be_signed() -> None:
    for player, roles in (("alice", ["god"]), ("alice", ["service"]), ("service:x", ["operator"]), ("", ["player"]),
                          ("service:x", ["service", "operator"])):
        with pytest.raises(ValueError):
            SIGNER.sign(player, roles)


def test_a_service_credential_names_its_service() -> None:
    who = auth.verify(KEYS, SIGNER.service_credential("ladder", now=1000), now=1001)
    assert (who.player_id, who.roles, who.service) == ("service:ladder", frozenset({"service"}), "ladder")
    assert auth.permits(who, ["service:ladder"]) and auth.permits(who, ["service"])
    assert not auth.permits(who, ["operator", "service:table"])
    with pytest.raises(ServiceError) as err:
        auth.require_role(who, "operator")
    assert err.value.reason == "role_required"
    with pytest.raises(ServiceError) as err:
        auth.require_person(who)
    assert err.value.reason == "not_a_player"
    player = auth.verify(KEYS, SIGNER.sign("alice", now=1000), now=1001)
    assert player.service == "" and auth.require_person(player) is player
