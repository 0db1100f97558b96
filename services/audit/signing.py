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

The key files and documents are the kit's one implementation (:mod:`chieu.kit.ed25519`, pure:
``cryptography`` only), shared with the token keys; the auditor imports no service runtime, the
token machinery included.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from chieu.kit import ed25519

USE = "chieu-archive"
"""The JWK ``use`` of an archive key (a token key's is ``sig``)."""
KID_PREFIX = "archive-"
ALGORITHM = ed25519.ALGORITHM
CONTEXT = b"chieu-archive-v2 signature\x00"
"""What every signed byte string begins with (domain separation)."""


def kid_of(public: Ed25519PublicKey) -> str:
    """``archive-`` and the key's RFC 7638 JWK thumbprint (SHA-256, base64url)."""
    return KID_PREFIX + ed25519.thumbprint(public)


def signed_bytes(kid: str, manifest_frame: bytes, head: bytes) -> bytes:
    """The byte string an archive's signature is over: :data:`CONTEXT`, the kid's UTF-8 length
    (4 bytes big-endian), the kid, the manifest's whole frame as in the file (its varint length
    and its serialized ``Frame``), the chain head."""
    k = kid.encode()
    return b"".join((CONTEXT, len(k).to_bytes(4, "big"), k, manifest_frame, head))


class ArchiveSigner(ed25519.PrivateKey):
    """An archive private key and its kid (``archive-`` and its thumbprint): what ``chieu export``
    signs with."""

    __slots__ = ()
    KID_PREFIX = KID_PREFIX
    WHAT = "archive key"

    def sign(self, manifest_frame: bytes, head: bytes) -> bytes:
        """The 64-byte Ed25519 signature of :func:`signed_bytes` under this key's kid."""
        return self._sign(signed_bytes(self.kid, manifest_frame, head))

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
        return {"keys": [ed25519.jwk(k, kid, USE) for kid, k in sorted(self._keys.items())]}

    @classmethod
    def from_jwks(cls, doc: Any) -> ArchiveKeys:
        """A set from a JWKS document of Ed25519 archive keys; ``ValueError`` on anything else (a
        private key, a token key — no ``"use": "chieu-archive"`` — or a kid not its thumbprint's)."""
        keys: dict[str, Ed25519PublicKey] = {}
        for jwk in ed25519.entries(doc):
            public = ed25519.public_of(jwk)
            if jwk.get("use") != USE:
                raise ValueError(f"key {jwk.get('kid')!r} is not an archive key (its use is {jwk.get('use')!r}, "
                                 f"not {USE!r}): a token keyset is not an archive keyset")
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
    signer, made = ArchiveSigner.ensure(private)
    keys = ArchiveKeys.load(keyset).with_key(signer.public) if keyset.exists() else signer.keyset()
    document = json.dumps(keys.to_jwks(), indent=2) + "\n"
    if not keyset.exists() or keyset.read_text(encoding="utf-8") != document:
        tmp = keyset.with_name(keyset.name + ".part")
        tmp.write_text(document, encoding="utf-8")
        tmp.replace(keyset)
    return signer, made
