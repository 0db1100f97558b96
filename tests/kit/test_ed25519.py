"""One implementation of the Ed25519 key files and keysets for every signer: the token signer
(:mod:`chieu.kit.auth`) and the archive signer (:mod:`chieu.audit.signing`) are the kit's
:class:`~chieu.kit.ed25519.PrivateKey`, each with its own kids and ``use``."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from chieu.audit import signing
from chieu.kit import auth, ed25519


def test_both_signers_are_the_kits_key() -> None:
    for cls in (auth.Signer, signing.ArchiveSigner):
        assert issubclass(cls, ed25519.PrivateKey)
        assert "load" not in vars(cls) and "private_pem" not in vars(cls) and "generate" not in vars(cls)
    token, archive = auth.Signer.generate(), signing.ArchiveSigner.generate()
    assert token.kid == ed25519.thumbprint(token.public) == auth.thumbprint(token.public)
    assert archive.kid == "archive-" + ed25519.thumbprint(archive.public)


def test_ensure_makes_a_private_key_once_and_keeps_it_private(tmp_path: Path) -> None:
    path = tmp_path / "k.pem"
    made, fresh = auth.Signer.ensure(path)
    assert fresh and stat.S_IMODE(path.stat().st_mode) == 0o600
    path.chmod(0o644)
    again, fresh = auth.Signer.ensure(path)
    assert not fresh and again.kid == made.kid and stat.S_IMODE(path.stat().st_mode) == 0o600
    archive, _ = signing.ArchiveSigner.ensure(path)  # the same file read as an archive key: its own kid
    assert archive.kid == "archive-" + made.kid


def test_each_keyset_refuses_the_others_keys() -> None:
    token, archive = auth.Signer.generate(), signing.ArchiveSigner.generate()
    with pytest.raises(ValueError, match="not a token key"):
        auth.KeySet.from_jwks(archive.keyset().to_jwks())
    with pytest.raises(ValueError, match="not an archive key"):
        signing.ArchiveKeys.from_jwks(token.keyset().to_jwks())


@pytest.mark.parametrize(("entry", "error"), [
    ({"kty": "RSA"}, "only Ed25519"),
    ({"kty": "OKP", "crv": "Ed25519", "d": "x", "x": "x"}, "private key"),
    ({"kty": "OKP", "crv": "Ed25519", "alg": "ES256", "x": "x"}, "not for EdDSA"),
    ({"kty": "OKP", "crv": "Ed25519", "x": "AAAA"}, "no valid x"),
])
def test_a_bad_jwk_is_refused_alike_by_both(entry: dict[str, str], error: str) -> None:
    for read in (auth.KeySet.from_jwks, signing.ArchiveKeys.from_jwks):
        with pytest.raises(ValueError, match=error):
            read({"keys": [{**entry, "use": "sig" if read is auth.KeySet.from_jwks else signing.USE}]})


def test_an_unreadable_key_file_says_which_key(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="cannot read the archive key"):
        signing.ArchiveSigner.load(tmp_path / "missing.pem")
    with pytest.raises(ValueError, match="cannot read the token key"):
        auth.Signer.load(tmp_path / "missing.pem")
