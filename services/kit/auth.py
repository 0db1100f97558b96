"""Signed session tokens: ``v1.<payload>.<signature>``, HMAC-SHA256 over the payload.

The payload is base64url JSON ``{"sub": player_id, "roles": [...], "exp": unix_seconds}``.
The lobby issues them; until it exists, ``chieu token`` signs developer tokens. Roles:
``player`` (default), ``operator``, ``auditor``.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass

import grpc

from chieu.kit.errors import ServiceError

ROLES = ("player", "operator", "auditor")


@dataclass(frozen=True, slots=True)
class Principal:
    """Who is calling: a player id and its roles."""

    player_id: str
    roles: frozenset[str]


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def sign(secret: str, player_id: str, roles: Iterable[str] = ("player",), ttl_s: int = 86400,
         now: float | None = None) -> str:
    """A token for ``player_id`` valid for ``ttl_s`` seconds."""
    bad = set(roles) - set(ROLES)
    if bad or not player_id:
        raise ValueError(f"bad player id or roles {sorted(bad)}")
    payload = {"sub": player_id, "roles": sorted(set(roles)), "exp": int((now or time.time()) + ttl_s)}
    body = _b64(json.dumps(payload, separators=(",", ":")).encode())
    sig = _b64(hmac.new(secret.encode(), body.encode(), hashlib.sha256).digest())
    return f"v1.{body}.{sig}"


def _unauthenticated(message: str) -> ServiceError:
    return ServiceError(grpc.StatusCode.UNAUTHENTICATED, "unauthenticated", message)


VERIFIED_CACHE = 65_536
"""How many verified tokens a process remembers (a session's token is checked once, not per call)."""

_verified: OrderedDict[tuple[str, str], tuple[Principal, int]] = OrderedDict()


def verify(secret: str, token: str, now: float | None = None) -> Principal:
    """The principal of a valid token; otherwise an UNAUTHENTICATED ServiceError.

    A token already verified with the same secret is not checked again, only its expiry.
    """
    t = now or time.time()
    hit = _verified.get((secret, token))
    if hit is not None:
        if hit[1] < t:
            del _verified[(secret, token)]
            raise _unauthenticated("token expired")
        return hit[0]
    who, exp = _check(secret, token)
    if exp < t:
        raise _unauthenticated("token expired")
    _verified[(secret, token)] = (who, exp)
    while len(_verified) > VERIFIED_CACHE:
        _verified.popitem(last=False)
    return who


def _check(secret: str, token: str) -> tuple[Principal, int]:
    """The signed principal and expiry of ``token``; UNAUTHENTICATED if it is not ours."""
    parts = token.split(".")
    if len(parts) != 3 or parts[0] != "v1":
        raise _unauthenticated("malformed token")
    expected = _b64(hmac.new(secret.encode(), parts[1].encode(), hashlib.sha256).digest())
    if not hmac.compare_digest(expected, parts[2]):
        raise _unauthenticated("bad token signature")
    try:
        payload = json.loads(_unb64(parts[1]))
        player, roles, exp = str(payload["sub"]), frozenset(payload["roles"]), int(payload["exp"])
    except (ValueError, KeyError, TypeError):
        raise _unauthenticated("malformed token payload") from None
    return Principal(player, roles), exp


def principal(context: grpc.aio.ServicerContext[object, object], secret: str) -> Principal:
    """The caller of an RPC, from ``authorization: Bearer <token>`` metadata."""
    for key, value in context.invocation_metadata() or ():
        if key == "authorization":
            text = value.decode() if isinstance(value, bytes) else value
            if not text.startswith("Bearer "):
                raise _unauthenticated("authorization must be 'Bearer <token>'")
            return verify(secret, text[len("Bearer "):].strip())
    raise _unauthenticated("no session token: send 'authorization: Bearer <token>'")


def require_role(who: Principal, role: str) -> None:
    """PERMISSION_DENIED unless ``who`` has ``role``."""
    if role not in who.roles:
        raise ServiceError(grpc.StatusCode.PERMISSION_DENIED, "role_required", f"this call needs the {role} role")
