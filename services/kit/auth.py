"""Session tokens: JWT (RFC 7519) signed with Ed25519 (``EdDSA``, RFC 8037), through PyJWT.

- **Format.** Header ``{"alg": "EdDSA", "typ": "JWT", "kid": <key id>}``; claims ``iss`` and
  ``aud`` (both ``chieu``), ``sub`` (the player id, or ``service:<name>`` for a service
  credential), ``roles`` (``player``, ``operator``, ``auditor``, or ``service`` alone), ``iat``,
  ``exp`` (unix seconds), ``jti`` (unique per token) and, for a lobby session, ``sid``.
- **Who signs.** Only a holder of the private key (:class:`Signer`): the lobby and the
  ``chieu token`` command. Every service verifies with a :class:`KeySet` of public keys only.
- **Key ids.** A key's ``kid`` is its RFC 7638 JWK thumbprint (SHA-256, base64url). Verification
  accepts any key of the set, so a key rotates with no downtime: add the new public key to every
  service's set, switch the signer, remove the old key once the longest token signed with it has
  expired. :func:`public_keys` re-reads ``CHIEU_TOKEN_PUBLIC_KEYS`` when the file changes.
- **Refusals** are ``UNAUTHENTICATED`` with a stable reason: ``no_token``, ``malformed_token``,
  ``bad_algorithm`` (anything but EdDSA: no ``none``, no HS*), ``unknown_key``, ``bad_signature``,
  ``bad_claims``, ``token_expired``, ``no_keys`` (this process was given no public keys).
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import time
from collections import OrderedDict
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import grpc
import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from chieu.kit import ed25519, logs
from chieu.kit.errors import ServiceError
from chieu.kit.settings import Settings

log = logs.get("chieu.auth")

ROLES = ("player", "operator", "auditor", "service")
SERVICE = "service"
"""The role of a service's own credential; its subject is ``service:<name>``."""
SERVICE_PREFIX = "service:"
ALGORITHM = ed25519.ALGORITHM
ISSUER = "chieu"
AUDIENCE = "chieu"
MAX_TOKEN = 4096
"""The longest token looked at (characters)."""
MAX_SUBJECT = 128
"""The longest subject (player id) a token may carry: ids the services build from a player id
(the ladder's reward ids) then stay within the 200 characters every id field takes."""
CLOCK_SKEW_S = 300
"""A token issued at most this far in the future (another host's clock) is still accepted."""
SERVICE_TTL_S = 900
"""The longest life of a credential a service signs for itself with its own key (15 minutes); it
renews it at half its life (:func:`service_token`)."""


@dataclass(frozen=True, slots=True)
class Principal:
    """Who is calling: a player id (or ``service:<name>``), its roles, its session id (empty for
    a token made outside a lobby session), its expiry (unix seconds) and its token id."""

    player_id: str
    roles: frozenset[str]
    sid: str = ""
    exp: int = 0
    jti: str = ""

    @property
    def service(self) -> str:
        """The service name of a service credential (``table`` for ``service:table``), else ``""``."""
        if SERVICE in self.roles and self.player_id.startswith(SERVICE_PREFIX):
            return self.player_id[len(SERVICE_PREFIX):]
        return ""


def _unauthenticated(reason: str, message: str) -> ServiceError:
    return ServiceError(grpc.StatusCode.UNAUTHENTICATED, reason, message)


# -- keys -------------------------------------------------------------------------------------

thumbprint = ed25519.thumbprint
"""A token key's RFC 7638 JWK thumbprint: its ``kid``."""


class KeySet:
    """Public keys by key id: what a service verifies with (it can never sign)."""

    __slots__ = ("_bound", "_keys", "ident")

    def __init__(self, keys: Mapping[str, Ed25519PublicKey], bound: Mapping[str, str] | None = None) -> None:
        self._keys = dict(keys)
        self._bound = {k: v for k, v in (bound or {}).items() if k in self._keys}
        """Key id → the one service whose own short-lived credential that key may sign."""
        self.ident = hashlib.sha256(b"".join(
            kid.encode() + b"\0" + ed25519.raw(k) + b"\0" + self._bound.get(kid, "").encode()
            for kid, k in sorted(self._keys.items()))).hexdigest()
        """Names this set's content: verified tokens are remembered per set."""

    def bound_to(self, kid: str) -> str | None:
        """The subject (``service:<name>``) a service's own key signs for; None for a signer's key."""
        return self._bound.get(kid)

    @property
    def kids(self) -> tuple[str, ...]:
        return tuple(sorted(self._keys))

    def get(self, kid: str) -> Ed25519PublicKey | None:
        return self._keys.get(kid)

    def __len__(self) -> int:
        return len(self._keys)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, KeySet) and other.ident == self.ident

    def __hash__(self) -> int:
        return hash(self.ident)

    def __repr__(self) -> str:
        return f"KeySet({', '.join(self.kids)})"

    def with_key(self, public: Ed25519PublicKey, service: str = "") -> KeySet:
        """This set and ``public`` (under its thumbprint): the first step of a rotation; with
        ``service``, the key of that service alone (it signs only its own short-lived credential)."""
        kid = thumbprint(public)
        bound = {**self._bound, kid: SERVICE_PREFIX + service} if service else self._bound
        return KeySet({**self._keys, kid: public}, bound)

    def without(self, kid: str) -> KeySet:
        """This set without ``kid``: the last step of a rotation."""
        return KeySet({k: v for k, v in self._keys.items() if k != kid}, self._bound)

    def to_jwks(self) -> dict[str, Any]:
        """The set as a JWKS document (RFC 7517); a service's own key carries its ``sub``."""
        return {"keys": [ed25519.jwk(k, kid, "sig", **({"sub": self._bound[kid]} if kid in self._bound else {}))
                         for kid, k in sorted(self._keys.items())]}

    @classmethod
    def from_jwks(cls, doc: Mapping[str, Any]) -> KeySet:
        """A set from a JWKS document of Ed25519 public keys (``ValueError`` on anything else,
        a private key included)."""
        found: dict[str, Ed25519PublicKey] = {}
        bound: dict[str, str] = {}
        for jwk in ed25519.entries(doc):
            public = ed25519.public_of(jwk)
            if jwk.get("use", "sig") != "sig":  # an archive key ("use": "chieu-archive") verifies no token
                raise ValueError(f"key {jwk.get('kid')!r} is not a token key (use {jwk.get('use')!r})")
            kid = str(jwk.get("kid") or thumbprint(public))
            found[kid] = public
            if "sub" in jwk:
                bound[kid] = _service_subject(jwk["sub"], f"key {kid!r}")
        return cls(found, bound)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> KeySet:
        """A set from a JWKS JSON file, or from a directory of PEM public keys (``*.pem``, each
        under its thumbprint). ``ValueError`` if it cannot be read as one."""
        p = Path(path)
        if p.is_dir():
            keys: dict[str, Ed25519PublicKey] = {}
            bound: dict[str, str] = {}
            for f in sorted(p.glob("*.pem")):
                data = f.read_bytes()
                if b"PRIVATE KEY" in data:
                    raise ValueError(f"{f} is a private key: a public keyset holds public keys only")
                public = serialization.load_pem_public_key(data)
                if not isinstance(public, Ed25519PublicKey):
                    raise ValueError(f"{f} is not an Ed25519 public key")
                keys[thumbprint(public)] = public
                if f.stem.startswith("service-"):  # service-<name>.pem: that service's own key
                    bound[thumbprint(public)] = _service_subject(SERVICE_PREFIX + f.stem[8:], str(f))
            return cls(keys, bound)
        try:
            doc = json.loads(p.read_text())
        except (OSError, json.JSONDecodeError) as e:
            raise ValueError(f"cannot read the keyset {p}: {e}") from None
        return cls.from_jwks(doc)


EMPTY = KeySet({})


def _service_subject(sub: Any, where: str) -> str:
    """``service:<name>`` as a key's binding (``ValueError`` for anything else)."""
    if not (isinstance(sub, str) and sub.startswith(SERVICE_PREFIX) and sub[len(SERVICE_PREFIX):].replace("-", "")
            .isalnum()):
        raise ValueError(f"{where}: a key's sub is service:<name>")
    return sub


class Signer(ed25519.PrivateKey):
    """A private key and its key id (its thumbprint): what the lobby and ``chieu token`` sign with."""

    __slots__ = ()
    WHAT = "token key"

    def keyset(self) -> KeySet:
        """The set of this signer's public key alone."""
        return KeySet({self.kid: self.public})

    def sign(self, player_id: str, roles: Iterable[str] = ("player",), ttl_s: int = 86400, *, sid: str = "",
             jti: str | None = None, now: float | None = None) -> str:
        """A token for ``player_id`` valid for ``ttl_s`` seconds (``ValueError`` for an unknown
        role, an empty, overlong or unprintable id, or a service role that does not go with a
        ``service:`` id)."""
        role_set = set(roles)
        bad = role_set - set(ROLES)
        if bad or not role_set or not player_id or len(player_id) > MAX_SUBJECT or not player_id.isprintable():
            raise ValueError(f"bad player id or roles {sorted(bad) or sorted(role_set)}")
        _check_service_shape(player_id, role_set, ValueError)
        t = int(time.time() if now is None else now)
        claims: dict[str, Any] = {"iss": ISSUER, "aud": AUDIENCE, "sub": player_id, "roles": sorted(role_set),
                                  "iat": t, "exp": t + int(ttl_s), "jti": jti or secrets.token_urlsafe(12)}
        if sid:
            claims["sid"] = sid
        return jwt.encode(claims, self._private, algorithm=ALGORITHM, headers={"kid": self.kid})

    def service_credential(self, name: str, ttl_s: int = 365 * 86400, now: float | None = None) -> str:
        """The credential of service ``name`` for its calls to other services (``CHIEU_SERVICE_TOKEN``)."""
        if not name or not name.replace("-", "").isalnum():
            raise ValueError(f"bad service name {name!r}")
        return self.sign(SERVICE_PREFIX + name, (SERVICE,), ttl_s, now=now)


def _check_service_shape(sub: str, roles: Collection[str], error: Any) -> None:
    """A service credential has the ``service`` role alone and a ``service:<name>`` subject; no
    other token has either."""
    if (SERVICE in roles) != sub.startswith(SERVICE_PREFIX) or (SERVICE in roles and len(roles) != 1):
        raise error("the service role goes alone, with a service:<name> subject, and only there")


# -- verification ------------------------------------------------------------------------------

VERIFIED_CACHE = 65_536
"""How many verified tokens a process remembers (a session's token is checked once, not per call)."""

_verified: OrderedDict[tuple[str, str], Principal] = OrderedDict()

_DECODE_OPTIONS: Any = {"require": ["iss", "aud", "sub", "iat", "exp", "jti"],
                        "verify_exp": False, "verify_iat": False, "verify_nbf": True}


def verify(keys: KeySet, token: str, now: float | None = None) -> Principal:
    """The principal of a valid token; otherwise an UNAUTHENTICATED ServiceError.

    A token already verified with the same keyset is not checked again, only its expiry.
    """
    t = time.time() if now is None else now
    hit = _verified.get((keys.ident, token))
    if hit is not None:
        if hit.exp <= t:
            del _verified[(keys.ident, token)]
            raise _unauthenticated("token_expired", "token expired")
        return hit
    who = _check(keys, token, t)
    if who.exp <= t:
        raise _unauthenticated("token_expired", "token expired")
    _verified[(keys.ident, token)] = who
    while len(_verified) > VERIFIED_CACHE:
        _verified.popitem(last=False)
    return who


def _check(keys: KeySet, token: str, now: float) -> Principal:
    """The signed principal of ``token``; UNAUTHENTICATED if it is not ours."""
    if not keys:
        raise _unauthenticated("no_keys", "this service has no public keys to verify tokens (CHIEU_TOKEN_PUBLIC_KEYS)")
    if len(token) > MAX_TOKEN or token.count(".") != 2:
        raise _unauthenticated("malformed_token", "not a JWT")
    try:
        header = jwt.get_unverified_header(token)
    except jwt.InvalidTokenError:
        raise _unauthenticated("malformed_token", "the token's header does not parse") from None
    if header.get("alg") != ALGORITHM:
        raise _unauthenticated("bad_algorithm", f"tokens are signed with {ALGORITHM} only")
    kid = header.get("kid")
    key = keys.get(kid) if isinstance(kid, str) else None
    if key is None:
        raise _unauthenticated("unknown_key", "the token's key id is not one this service trusts")
    try:
        claims = jwt.decode(token, key, algorithms=[ALGORITHM], audience=AUDIENCE, issuer=ISSUER,
                            options=_DECODE_OPTIONS)
    except jwt.InvalidSignatureError:
        raise _unauthenticated("bad_signature", "bad token signature") from None
    except jwt.DecodeError:
        raise _unauthenticated("malformed_token", "the token does not parse") from None
    except jwt.InvalidTokenError as e:
        raise _unauthenticated("bad_claims", f"bad token claims: {type(e).__name__}") from None
    try:
        sub, roles, exp, iat = claims["sub"], claims["roles"], claims["exp"], claims["iat"]
        sid, jti = claims.get("sid", ""), claims["jti"]
        if not (isinstance(sub, str) and 0 < len(sub) <= MAX_SUBJECT and sub.isprintable()
                and isinstance(roles, list) and roles
                and all(isinstance(r, str) and r in ROLES for r in roles) and type(exp) is int
                and type(iat) is int and isinstance(sid, str) and isinstance(jti, str)):
            raise ValueError("claims of the wrong shape")
        _check_service_shape(sub, roles, ValueError)
    except (KeyError, ValueError):
        raise _unauthenticated("bad_claims", "bad token claims: sub, roles, iat, exp, jti") from None
    if iat > now + CLOCK_SKEW_S:
        raise _unauthenticated("bad_claims", "the token is issued in the future")
    bound = keys.bound_to(str(kid))
    if bound is not None and (sub != bound or exp - iat > SERVICE_TTL_S):
        raise _unauthenticated("bad_claims", "a service's own key signs that service's short-lived credential only")
    return Principal(sub, frozenset(roles), sid, exp, jti)


def bearer(context: grpc.aio.ServicerContext[Any, Any]) -> str:
    """The token of ``authorization: Bearer <token>`` metadata (UNAUTHENTICATED without one)."""
    for key, value in context.invocation_metadata() or ():
        if key == "authorization":
            text = value.decode() if isinstance(value, bytes) else value
            if not text.startswith("Bearer "):
                raise _unauthenticated("no_token", "authorization must be 'Bearer <token>'")
            return text[len("Bearer "):].strip()
    raise _unauthenticated("no_token", "no session token: send 'authorization: Bearer <token>'")


def principal(context: grpc.aio.ServicerContext[Any, Any], keys: KeySet,
              revocations: Revoked | None = None) -> Principal:
    """The caller of an RPC, from ``authorization: Bearer <token>`` metadata; a token whose
    session was revoked is refused (``session_revoked``) once ``revocations`` knows it."""
    token = bearer(context)
    who = verify(keys, token)
    if revocations is not None:
        check_revoked(revocations, token)
    return who


class Revoked(Protocol):
    """What tells a revoked session's token (:class:`chieu.kit.revocations.RevocationList`, which
    imports this module for the service's own credential)."""

    def is_revoked(self, token: str) -> bool: ...


def check_revoked(revocations: Revoked, token: str) -> None:
    """UNAUTHENTICATED / ``session_revoked`` if ``token``'s session was signed out or revoked."""
    if revocations.is_revoked(token):
        raise _unauthenticated("session_revoked", "this session was signed out or revoked: sign in again")


# -- who may call -------------------------------------------------------------------------------

def permits(who: Principal, allowed: Iterable[str]) -> bool:
    """Whether ``who`` is one of ``allowed``: a role (``operator``, ``service`` for any service)
    or one service's identity (``service:ladder``)."""
    for a in allowed:
        if a.startswith(SERVICE_PREFIX):
            if SERVICE in who.roles and who.player_id == a:
                return True
        elif a in who.roles:
            return True
    return False


def require(who: Principal, *allowed: str, player_id: str | None = None) -> None:
    """PERMISSION_DENIED unless ``who`` is ``player_id`` itself or one of ``allowed``."""
    if player_id is not None and who.player_id == player_id and not who.service:
        return
    if not permits(who, allowed):
        raise ServiceError(grpc.StatusCode.PERMISSION_DENIED, "role_required",
                           f"this call needs one of: {', '.join(allowed)}")


def require_role(who: Principal, role: str) -> None:
    """PERMISSION_DENIED unless ``who`` has ``role``."""
    if role not in who.roles:
        raise ServiceError(grpc.StatusCode.PERMISSION_DENIED, "role_required", f"this call needs the {role} role")


def require_person(who: Principal) -> Principal:
    """PERMISSION_DENIED for a service credential: it calls services, it does not play."""
    if who.service:
        raise ServiceError(grpc.StatusCode.PERMISSION_DENIED, "not_a_player",
                           "a service credential cannot act as a player")
    return who


# -- keys from settings -------------------------------------------------------------------------

RELOAD_S = 5.0
"""How often a process looks whether its public keyset file changed."""


class _KeyFile:
    """``CHIEU_TOKEN_PUBLIC_KEYS`` read once, and again when the file (or the directory) changes."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.stamp = self._stamp()
        self.keys = KeySet.load(path)
        self.next_check = time.monotonic() + RELOAD_S

    def _stamp(self) -> tuple[Any, ...]:
        p = Path(self.path)
        try:
            if p.is_dir():
                return tuple((f.name, f.stat().st_mtime_ns, f.stat().st_size) for f in sorted(p.glob("*.pem")))
            st = p.stat()
            return (st.st_mtime_ns, st.st_size, st.st_ino)
        except OSError:
            return ()

    def current(self) -> KeySet:
        t = time.monotonic()
        if t >= self.next_check:
            self.next_check = t + RELOAD_S
            stamp = self._stamp()
            if stamp != self.stamp:
                try:
                    keys = KeySet.load(self.path)
                except (OSError, ValueError) as e:
                    log.warning("public keyset not reloaded; keeping the previous one", path=self.path,
                                error=str(e)[:200])
                else:
                    self.stamp = stamp
                    if keys != self.keys:
                        log.info("public keyset reloaded", path=self.path, kids=list(keys.kids))
                    self.keys = keys
        return self.keys


_files: dict[str, _KeyFile] = {}


def public_keys(settings: Settings) -> KeySet:
    """The public keyset of ``CHIEU_TOKEN_PUBLIC_KEYS`` (empty when it is not set: every token is
    then refused with ``no_keys``); ``ValueError`` if it cannot be read the first time."""
    path = settings.token_public_keys
    if not path:
        return EMPTY
    f = _files.get(path)
    if f is None:
        f = _files[path] = _KeyFile(path)
    return f.current()


def signer(settings: Settings) -> Signer:
    """The signer of ``CHIEU_TOKEN_PRIVATE_KEY`` (``ValueError`` when this process has none)."""
    if not settings.token_private_key:
        raise ValueError("this process holds no private key (CHIEU_TOKEN_PRIVATE_KEY): it cannot sign tokens")
    return Signer.load(settings.token_private_key)


class OwnCredential:
    """A service's credential signed by itself with its own key (``CHIEU_SERVICE_KEY``), for
    :data:`SERVICE_TTL_S`, made again at half its life. The key's public half is in every
    service's keyset bound to the service (``"sub": "service:<name>"`` in the JWKS, or
    ``service-<name>.pem`` in a directory), so it can sign nothing else: a leaked credential is
    good for minutes, a leaked key for that service's calls only, until it is taken out of the set."""

    def __init__(self, key_path: str, settings: Settings) -> None:
        self.signer = Signer.load(key_path)
        self.settings = settings
        self._token, self._renew_at = "", 0.0

    def token(self, now: float | None = None) -> str:
        t = time.time() if now is None else now
        if t >= self._renew_at:
            subject = public_keys(self.settings).bound_to(self.signer.kid)
            if subject is None:
                raise ValueError("CHIEU_SERVICE_KEY's public key is not in the keyset as a service's own key")
            self._token = self.signer.sign(subject, (SERVICE,), SERVICE_TTL_S, now=t)
            self._renew_at = t + SERVICE_TTL_S / 2
        return self._token


_own: dict[str, OwnCredential] = {}


def service_token(settings: Settings) -> str:
    """This service's credential for its calls to the others: signed by itself for 15 minutes
    with ``CHIEU_SERVICE_KEY`` when it has one (renewed as it goes), else ``CHIEU_SERVICE_TOKEN``."""
    if not settings.service_key:
        return settings.service_token
    own = _own.get(settings.service_key)
    if own is None:
        own = _own[settings.service_key] = OwnCredential(settings.service_key, settings)
    return own.token()


def check_keys(settings: Settings) -> None:
    """At start: the public keyset loads (``ValueError`` otherwise); in dev, say when there is none."""
    keys = public_keys(settings)
    if not keys:
        log.warning("no public keys (CHIEU_TOKEN_PUBLIC_KEYS): every token will be refused")
    if settings.service_key:
        service_token(settings)  # its key loads and is in the keyset as this service's own, or no start
