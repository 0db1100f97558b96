"""Bad tokens of every kind, and the valid ones, as the ``authorization`` metadata of a call.

Forgeries are made with the test session's real private key where the attack needs it (claims of
the wrong shape, a service role on a player's id, ...), so only the check under test refuses them.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from collections.abc import Mapping, Sequence
from typing import Any

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hypothesis import strategies as st

from chieu.kit import auth
from tests.conftest import PRIVATE_KEY, SIGNER
from tests.fuzz.strategies import WEIRD, weighted

Metadata = tuple[tuple[str, str], ...]

_KEY = serialization.load_pem_private_key(PRIVATE_KEY.read_bytes(), password=None)
assert isinstance(_KEY, Ed25519PrivateKey)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _claims(**over: Any) -> dict[str, Any]:
    t = int(time.time())
    base: dict[str, Any] = {"iss": "chieu", "aud": "chieu", "sub": "mallory", "roles": ["operator"], "iat": t,
                            "exp": t + 3600, "jti": "fz"}
    base.update(over)
    return {k: v for k, v in base.items() if v is not None}


def signed(claims: Mapping[str, Any], key: Ed25519PrivateKey = _KEY, kid: str = SIGNER.kid) -> str:
    """``claims`` signed as the lobby would sign them (or with ``key``), whatever they say."""
    return jwt.encode(dict(claims), key, algorithm="EdDSA", headers={"kid": kid})


def _hs256() -> str:
    header = _b64(json.dumps({"alg": "HS256", "typ": "JWT", "kid": SIGNER.kid}).encode())
    body = _b64(json.dumps(_claims()).encode())
    sig = _b64(hmac.new(SIGNER.public_pem(), f"{header}.{body}".encode(), hashlib.sha256).digest())
    return f"{header}.{body}.{sig}"


def _none() -> str:
    header = _b64(json.dumps({"alg": "none", "typ": "JWT", "kid": SIGNER.kid}).encode())
    return f"{header}.{_b64(json.dumps(_claims()).encode())}."


def forged() -> dict[str, str]:
    """Bad tokens by the attack they are (each must be refused UNAUTHENTICATED)."""
    t = int(time.time())
    stranger = Ed25519PrivateKey.generate()
    return {
        "alg_none": _none(),
        "hs256_public_key": _hs256(),
        "unknown_key": signed(_claims(), stranger, kid=auth.thumbprint(stranger.public_key())),
        "bad_signature": signed(_claims(), stranger),
        "expired": signed(_claims(exp=t - 1, iat=t - 100)),
        "issued_in_future": signed(_claims(iat=t + 3600, exp=t + 7200)),
        "wrong_audience": signed(_claims(aud="other")),
        "wrong_issuer": signed(_claims(iss="mallory")),
        "unknown_role": signed(_claims(roles=["god"])),
        "roles_a_string": signed(_claims(roles="operator")),
        "no_roles": signed(_claims(roles=[])),
        "empty_subject": signed(_claims(sub="")),
        "long_subject": signed(_claims(sub="s" * 201)),
        "subject_a_number": signed(_claims(sub=7)),
        "service_role_player_subject": signed(_claims(roles=["service"], sub="mallory")),
        "service_subject_player_role": signed(_claims(roles=["player"], sub="service:table")),
        "service_and_operator": signed(_claims(roles=["service", "operator"], sub="service:table")),
        "exp_a_float": signed(_claims(exp=t + 3600.5)),
        "exp_a_string": signed(_claims(exp=str(t + 3600))),
        "no_jti": signed(_claims(jti=None)),
        "no_exp": signed(_claims(exp=None)),
        "too_long": signed(_claims(pad="x" * 5000)),
        "two_parts": "eyJhbGciOiJFZERTQSJ9.eyJzdWIiOiJ4In0",
        "four_parts": "a.b.c.d",
        "garbage_parts": "!!!.???.***",
        "header_not_json": f"{_b64(b'not json')}.{_b64(b'{}')}.{_b64(b'sig')}",
    }


def metadata(valid: Mapping[str, str], players: Sequence[str] = ()) -> st.SearchStrategy[Metadata]:
    """The ``authorization`` metadata of a call: a valid token (often: so that calls get past the
    door; the seated ``players``' most often), a forgery, a malformed header, random printable
    junk, or none."""
    good = sorted(valid.values())
    seated = st.sampled_from([valid[p] for p in players] or good).map(lambda tok: (("authorization", f"Bearer {tok}"),))
    printable = st.text(alphabet=st.characters(min_codepoint=0x21, max_codepoint=0x7E), max_size=80)
    weird_subjects = st.sampled_from([w for w in WEIRD if w] + ["a" * 200])
    valid = st.sampled_from(good).map(lambda tok: (("authorization", f"Bearer {tok}"),))
    hostile = st.one_of(
        st.sampled_from(sorted(forged().values())).map(lambda tok: (("authorization", f"Bearer {tok}"),)),
        st.just(()),
        st.sampled_from(good).flatmap(lambda tok: st.sampled_from([
            (("authorization", tok),), (("authorization", f"bearer {tok}"),), (("authorization", f"Basic {tok}"),),
            (("authorization", "Bearer "),), (("authorization", ""),), (("authorization", f"Bearer   {tok}  "),),
            (("authorization", "Bearer x"), ("authorization", f"Bearer {tok}")),
            (("authorization", f"Bearer {tok}"), ("authorization", "Bearer x")),
        ])),
        printable.map(lambda junk: (("authorization", f"Bearer {junk}"),)),
        st.tuples(weird_subjects, st.sets(st.sampled_from(auth.ROLES), min_size=1)).map(
            lambda sr: (("authorization", f"Bearer {signed(_claims(sub=sr[0], roles=sorted(sr[1])))}"),)),
    )
    return weighted((1, valid), (1, seated), (1, hostile))
