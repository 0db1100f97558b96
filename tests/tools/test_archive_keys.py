"""The archive signing key ``./chieu up`` makes on its first run (``up.ensure_archive_keys``): a
private key of mode 0600 and a public keyset under ``<data>/keys/``, kept by later runs, apart from
the token keys; and what the commands do without one (no NATS, no stack: unit tests)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from chieu.audit import archive, signing
from chieu.audit.v1 import archive_pb2 as pb
from chieu.kit import auth
from chieu_tools import up


def test_up_makes_the_archive_key_once_mode_0600_and_publishes_its_keyset(tmp_path: Path) -> None:
    signer, private, public = up.ensure_archive_keys(tmp_path)
    assert private == tmp_path / "keys" / "archive.pem" and public == tmp_path / "keys" / "archive.jwks.json"
    assert private.stat().st_mode & 0o777 == 0o600
    assert (tmp_path / "keys").stat().st_mode & 0o777 == 0o700
    doc = json.loads(public.read_text())
    assert doc == {"keys": [{"kty": "OKP", "crv": "Ed25519", "x": doc["keys"][0]["x"], "kid": signer.kid,
                             "alg": "EdDSA", "use": "chieu-archive"}]}
    assert "PRIVATE" not in public.read_text() and "d" not in doc["keys"][0]
    assert signer.kid.startswith("archive-") and signing.ArchiveSigner.load(private).kid == signer.kid
    assert signer.kid == "archive-" + auth.thumbprint(signer.public)  # the token keys' kid scheme, namespaced
    os.chmod(private, 0o644)
    again, _, _ = up.ensure_archive_keys(tmp_path)  # a second run keeps the key (and its mode)
    assert again.kid == signer.kid and private.stat().st_mode & 0o777 == 0o600
    assert json.loads(public.read_text()) == doc
    token_signer, token_private, token_public = up.ensure_keys(tmp_path)  # beside the token key, not it
    assert token_private != private and token_public != public and token_signer.kid not in signer.kid


def test_a_key_added_to_the_archive_keyset_stays(tmp_path: Path) -> None:
    signer, _, public = up.ensure_archive_keys(tmp_path)
    older = signing.ArchiveSigner.generate()
    public.write_text(json.dumps(signer.keyset().with_key(older.public).to_jwks()))
    up.ensure_archive_keys(tmp_path)
    assert signing.ArchiveKeys.load(public).kids == tuple(sorted((signer.kid, older.kid)))


def test_up_writes_the_archive_key_and_keyset_into_local_env(tmp_path: Path) -> None:
    _, private, public = up.ensure_archive_keys(tmp_path)
    env = tmp_path / "local.env"
    up.write_local_env(env, {"NATS_URL": "nats://127.0.0.1:1", "CHIEU_ARCHIVE_PRIVATE_KEY": str(private),
                             "CHIEU_ARCHIVE_PUBLIC_KEYS": str(public)})
    from chieu import cli

    assert {"CHIEU_ARCHIVE_PRIVATE_KEY", "CHIEU_ARCHIVE_PUBLIC_KEYS"} <= set(cli.LOCAL_KEYS)
    assert f"CHIEU_ARCHIVE_PRIVATE_KEY={private}" in env.read_text()


def test_token_keys_and_archive_keys_do_not_mix(tmp_path: Path) -> None:
    token = auth.Signer.generate()
    with pytest.raises(ValueError, match="not an archive key"):  # the lobby's key signs no archive
        signing.ArchiveKeys.from_jwks(token.keyset().to_jwks())
    archive_key = signing.ArchiveSigner.generate()
    doc = archive_key.keyset().to_jwks()
    doc["keys"][0]["kid"] = auth.thumbprint(archive_key.public)  # a kid out of the archive namespace
    with pytest.raises(ValueError, match="kid"):
        signing.ArchiveKeys.from_jwks(doc)
    with pytest.raises(ValueError, match="private key"):
        signing.ArchiveKeys.from_jwks({"keys": [{**archive_key.keyset().to_jwks()["keys"][0], "d": "x"}]})
    # what an archive key signs can never be a JWT's signing input (base64url header.payload)
    assert b" " in signing.CONTEXT and b"\x00" in signing.CONTEXT


def test_an_archive_round_trips_in_memory(tmp_path: Path) -> None:
    signer = signing.ArchiveSigner.generate()
    msgs = [archive.Message(i, f"chieu.table.t{i % 2}", 1000 + i, bytes([i]) * 7) for i in range(1, 6)]
    path = tmp_path / "a.chieu"
    manifest = archive.save(path, pb.Header(stream="CHIEU_TABLES", created_ms=1), msgs, signer)
    a = archive.read(path, signer.keyset())
    assert a.messages == msgs and a.kid == signer.kid and a.manifest == manifest and manifest.tables == 2
    empty = tmp_path / "empty.chieu"
    archive.save(empty, pb.Header(stream="CHIEU_TABLES", created_ms=1), [], signer)
    assert archive.read(empty, signer.keyset()).messages == []
    with pytest.raises(archive.NoKeys):
        archive.read(path, signing.ArchiveKeys({}))


def _chieu(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("CHIEU_ARCHIVE_")}
    return subprocess.run([sys.executable, "-m", "chieu.cli", *args], capture_output=True, text=True, timeout=120,
                          env={**base, "CHIEU_LOCAL_ENV": os.devnull, **env}, cwd=cwd)


def test_export_without_a_key_refuses_and_writes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "x.chieu"
    proc = _chieu("export", str(out), "--nats", "nats://127.0.0.1:1", env={}, cwd=tmp_path)
    assert proc.returncode == 2 and "no archive signing key" in proc.stderr and "unsigned" in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and not out.exists()
    bad = _chieu("export", str(out), "--key", str(tmp_path / "missing.pem"), env={}, cwd=tmp_path)
    assert bad.returncode == 2 and "cannot read the archive key" in bad.stderr and not out.exists(), bad.stderr
