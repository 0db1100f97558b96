"""The operator's archive keys: the Ed25519 key ``chieu export`` signs an archive with, and the
published keyset ``chieu audit --archive`` verifies it with.

- **Format.** The token keys' (:mod:`chieu.kit.auth`): a PKCS #8 PEM private key, a JWKS
  (RFC 7517) of public keys, a key id derived from the key's RFC 7638 thumbprint. An archive JWK
  is ``{"kty": "OKP", "crv": "Ed25519", "x": …, "kid": "archive-<thumbprint>", "alg": "EdDSA",
  "use": "chieu-archive"}``.
- **Apart from the token keys.** An archive key is its own key in its own keyset
  (``CHIEU_ARCHIVE_PRIVATE_KEY``, ``CHIEU_ARCHIVE_PUBLIC_KEYS``), its kid in its own namespace
  (``archive-``). :meth:`ArchiveKeys.from_jwks` refuses a key without ``"use": "chieu-archive"``
  or whose kid is not ``archive-`` and its own thumbprint — a token keyset (``"use": "sig"``)
  given for archives is refused, so the token key (held by the lobby) signs no archive — and what
  an archive key signs begins with :data:`CONTEXT` (a space and a NUL: never the base64url
  ``header.payload`` a JWT signs).
- **Rotation.** Verification takes any key of the set: add the new public key to the published
  keyset, switch ``chieu export`` to the new private key, and keep the old public key in the set
  for as long as archives signed with it are to be checked (removing it is revoking them).

Self-contained (``cryptography`` only): the auditor imports no service runtime, the token
machinery included.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

USE = "chieu-archive"
"""The JWK ``use`` of an archive key (a token key's is ``sig``)."""
KID_PREFIX = "archive-"
ALGORITHM = "EdDSA"
CONTEXT = b"chieu-archive-v2 signature\x00"
"""What every signed byte string begins with (domain separation)."""


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _raw(public: Ed25519PublicKey) -> bytes:
    return public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def kid_of(public: Ed25519PublicKey) -> str:
    """``archive-`` and the key's RFC 7638 JWK thumbprint (SHA-256, base64url)."""
    canonical = json.dumps({"crv": "Ed25519", "kty": "OKP", "x": _b64(_raw(public))},
                           separators=(",", ":"), sort_keys=True)
    return KID_PREFIX + _b64(hashlib.sha256(canonical.encode()).digest())


def signed_bytes(kid: str, manifest_frame: bytes, head: bytes) -> bytes:
    """The byte string an archive's signature is over: :data:`CONTEXT`, the kid's UTF-8 length
    (4 bytes big-endian), the kid, the manifest's whole frame as in the file (its varint length
    and its serialized ``Frame``), the chain head."""
    k = kid.encode()
    return b"".join((CONTEXT, len(k).to_bytes(4, "big"), k, manifest_frame, head))


class ArchiveSigner:
    """An archive private key and its kid: what ``chieu export`` signs with."""

    __slots__ = ("_private", "kid", "public")

    def __init__(self, private: Ed25519PrivateKey) -> None:
        self._private = private
        self.public = private.public_key()
        self.kid = kid_of(self.public)

    @classmethod
    def generate(cls) -> ArchiveSigner:
        return cls(Ed25519PrivateKey.generate())

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> ArchiveSigner:
        """The signer of a PEM (PKCS #8, unencrypted) Ed25519 private key file (``ValueError``
        otherwise)."""
        try:
            private = serialization.load_pem_private_key(Path(path).read_bytes(), password=None)
        except (OSError, ValueError, TypeError) as e:
            raise ValueError(f"cannot read the archive key {path}: {e}") from None
        if not isinstance(private, Ed25519PrivateKey):
            raise ValueError(f"{path} is not an Ed25519 private key")
        return cls(private)

    def private_pem(self) -> bytes:
        return self._private.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption())

    def sign(self, manifest_frame: bytes, head: bytes) -> bytes:
        """The 64-byte Ed25519 signature of :func:`signed_bytes` under this key's kid."""
        return self._private.sign(signed_bytes(self.kid, manifest_frame, head))

    def keyset(self) -> ArchiveKeys:
        return ArchiveKeys({self.kid: self.public})


class ArchiveKeys:
    """The archive keyset: public keys by kid (it can never sign)."""

    __slots__ = ("_keys",)

    def __init__(self, keys: Mapping[str, Ed25519PublicKey]) -> None:
        self._keys = dict(keys)

    @property
    def kids(self) -> tuple[str, ...]:
        return tuple(sorted(self._keys))

    def get(self, kid: str) -> Ed25519PublicKey | None:
        return self._keys.get(kid)

    def __len__(self) -> int:
        return len(self._keys)

    def __repr__(self) -> str:
        return f"ArchiveKeys({', '.join(self.kids)})"

    def verify(self, kid: str, signature: bytes, manifest_frame: bytes, head: bytes) -> bool | None:
        """True: the signature verifies; False: it does not; None: ``kid`` is not in the set."""
        key = self._keys.get(kid)
        if key is None:
            return None
        try:
            key.verify(signature, signed_bytes(kid, manifest_frame, head))
        except InvalidSignature:
            return False
        return True

    def with_key(self, public: Ed25519PublicKey) -> ArchiveKeys:
        """This set and ``public``: the first step of a rotation."""
        return ArchiveKeys({**self._keys, kid_of(public): public})

    def without(self, kid: str) -> ArchiveKeys:
        """This set without ``kid``: the archives it signed no longer verify."""
        return ArchiveKeys({k: v for k, v in self._keys.items() if k != kid})

    def to_jwks(self) -> dict[str, Any]:
        """The set as a JWKS document (RFC 7517), each key marked ``"use": "chieu-archive"``."""
        return {"keys": [{"kty": "OKP", "crv": "Ed25519", "x": _b64(_raw(k)), "kid": kid, "alg": ALGORITHM,
                          "use": USE} for kid, k in sorted(self._keys.items())]}

    @classmethod
    def from_jwks(cls, doc: Any) -> ArchiveKeys:
        """A set from a JWKS document of Ed25519 archive keys; ``ValueError`` on anything else (a
        private key, a token key — no ``"use": "chieu-archive"`` — or a kid not its thumbprint's)."""
        entries = doc.get("keys") if isinstance(doc, Mapping) else None
        if not isinstance(entries, list):
            raise ValueError("a JWKS is {\"keys\": [...]}")
        keys: dict[str, Ed25519PublicKey] = {}
        for jwk in entries:
            if not isinstance(jwk, Mapping) or jwk.get("kty") != "OKP" or jwk.get("crv") != "Ed25519":
                raise ValueError("only Ed25519 keys (kty OKP, crv Ed25519) are accepted")
            if "d" in jwk:
                raise ValueError("a private key has no place in a public keyset")
            if jwk.get("use") != USE:
                raise ValueError(f"key {jwk.get('kid')!r} is not an archive key (its use is {jwk.get('use')!r}, "
                                 f"not {USE!r}): a token keyset is not an archive keyset")
            if jwk.get("alg", ALGORITHM) != ALGORITHM:
                raise ValueError(f"key {jwk.get('kid')!r} is not for {ALGORITHM}")
            x = str(jwk.get("x", ""))
            try:
                public = Ed25519PublicKey.from_public_bytes(base64.urlsafe_b64decode(x + "=" * (-len(x) % 4)))
            except ValueError:
                raise ValueError(f"key {jwk.get('kid')!r} has no valid x") from None
            kid = kid_of(public)
            if jwk.get("kid", kid) != kid:
                raise ValueError(f"key {jwk.get('kid')!r}: an archive key's kid is {kid} (archive- and its "
                                 "RFC 7638 thumbprint)")
            keys[kid] = public
        return cls(keys)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> ArchiveKeys:
        """A set from a JWKS JSON file (``ValueError`` if it cannot be read as one)."""
        try:
            doc = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise ValueError(f"cannot read the archive keyset {path}: {e}") from None
        try:
            return cls.from_jwks(doc)
        except ValueError as e:
            raise ValueError(f"the archive keyset {path}: {e}") from None


def ensure_key(private: Path, keyset: Path) -> tuple[ArchiveSigner, bool]:
    """The signer of the key file ``private`` — generated when missing (mode 0600; an existing
    one is set to 0600) — and whether it was generated; its public key is added to the JWKS file
    ``keyset`` (made when missing; the keys already there stay, so older archives still verify)."""
    if private.exists():
        signer = ArchiveSigner.load(private)
        os.chmod(private, 0o600)
        made = False
    else:
        signer = ArchiveSigner.generate()
        fd = os.open(private, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(signer.private_pem())
        made = True
    keys = ArchiveKeys.load(keyset).with_key(signer.public) if keyset.exists() else signer.keyset()
    document = json.dumps(keys.to_jwks(), indent=2) + "\n"
    if not keyset.exists() or keyset.read_text(encoding="utf-8") != document:
        tmp = keyset.with_name(keyset.name + ".part")
        tmp.write_text(document, encoding="utf-8")
        tmp.replace(keyset)
    return signer, made
