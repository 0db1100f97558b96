"""Ed25519 keys as Chiếu writes them, for every signer: the token keys (:mod:`chieu.kit.auth`) and
the archive keys (:mod:`chieu.audit.signing`).

One implementation of what they share: a private key is a PKCS #8 PEM file (unencrypted, mode
0600 when this code makes it), a public key is a JWK ``{"kty": "OKP", "crv": "Ed25519", "x": …,
"alg": "EdDSA", "use": …}`` in a JWKS (RFC 7517), and a key's id is derived from its RFC 7638
thumbprint. What each signer signs, the ``use`` of its keys and the prefix of its kids stay in its
own module.

Pure: ``cryptography`` and the standard library only (the auditor imports it; an import contract
keeps it so).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar, Self

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

ALGORITHM = "EdDSA"
"""The JWK ``alg`` (and the JWT ``alg``) of every key."""


def b64(data: bytes) -> str:
    """base64url without padding (JOSE's)."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def raw(public: Ed25519PublicKey) -> bytes:
    """The public key's 32 raw bytes."""
    return public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def thumbprint(public: Ed25519PublicKey) -> str:
    """The key's RFC 7638 JWK thumbprint (SHA-256, base64url)."""
    canonical = json.dumps({"crv": "Ed25519", "kty": "OKP", "x": b64(raw(public))}, separators=(",", ":"),
                           sort_keys=True)
    return b64(hashlib.sha256(canonical.encode()).digest())


def jwk(public: Ed25519PublicKey, kid: str, use: str, **extra: str) -> dict[str, str]:
    """The public key as a JWK."""
    return {"kty": "OKP", "crv": "Ed25519", "x": b64(raw(public)), "kid": kid, "alg": ALGORITHM, "use": use, **extra}


def entries(doc: Any) -> list[Any]:
    """The keys of a JWKS document (``ValueError`` if it is not one)."""
    found = doc.get("keys") if isinstance(doc, Mapping) else None
    if not isinstance(found, list):
        raise ValueError("a JWKS is {\"keys\": [...]}")
    return found


def public_of(entry: Any) -> Ed25519PublicKey:
    """The Ed25519 public key of a JWK (``ValueError`` for another kind of key, a private key, another
    algorithm, or no valid ``x``). Its ``use`` and ``kid`` are the caller's to check."""
    if not isinstance(entry, Mapping) or entry.get("kty") != "OKP" or entry.get("crv") != "Ed25519":
        raise ValueError("only Ed25519 keys (kty OKP, crv Ed25519) are accepted")
    if "d" in entry:
        raise ValueError("a private key has no place in a public keyset")
    if entry.get("alg", ALGORITHM) != ALGORITHM:
        raise ValueError(f"key {entry.get('kid')!r} is not for {ALGORITHM}")
    x = str(entry.get("x", ""))
    try:
        return Ed25519PublicKey.from_public_bytes(base64.urlsafe_b64decode(x + "=" * (-len(x) % 4)))
    except ValueError:
        raise ValueError(f"key {entry.get('kid')!r} has no valid x") from None


class PrivateKey:
    """An Ed25519 private key and its kid (``KID_PREFIX`` and the thumbprint): the base of every signer."""

    __slots__ = ("_private", "kid", "public")
    KID_PREFIX: ClassVar[str] = ""
    WHAT: ClassVar[str] = "key"
    """What the key is called in an error (``archive key``)."""

    def __init__(self, private: Ed25519PrivateKey) -> None:
        self._private = private
        self.public = private.public_key()
        self.kid = self.kid_of(self.public)

    @classmethod
    def kid_of(cls, public: Ed25519PublicKey) -> str:
        return cls.KID_PREFIX + thumbprint(public)

    @classmethod
    def generate(cls) -> Self:
        return cls(Ed25519PrivateKey.generate())

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Self:
        """The key of a PEM (PKCS #8, unencrypted) Ed25519 private key file (``ValueError`` otherwise)."""
        try:
            private = serialization.load_pem_private_key(Path(path).read_bytes(), password=None)
        except (OSError, ValueError, TypeError) as e:
            raise ValueError(f"cannot read the {cls.WHAT} {path}: {e}") from None
        if not isinstance(private, Ed25519PrivateKey):
            raise ValueError(f"{path} is not an Ed25519 private key")
        return cls(private)

    @classmethod
    def ensure(cls, path: Path) -> tuple[Self, bool]:
        """The key of the file ``path`` — generated when missing (mode 0600; an existing one is set to
        0600) — and whether it was generated."""
        if path.exists():
            os.chmod(path, 0o600)
            return cls.load(path), False
        key = cls.generate()
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(key.private_pem())
        return key, True

    def private_pem(self) -> bytes:
        return self._private.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption())

    def public_pem(self) -> bytes:
        return self.public.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)

    def _sign(self, data: bytes) -> bytes:
        """The 64-byte Ed25519 signature of ``data``."""
        return self._private.sign(data)
