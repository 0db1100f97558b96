"""Service credentials short-lived and renewed by the services themselves (issue 27: the ladder's
credential was good for a year). A service given its own key (``CHIEU_SERVICE_KEY``), whose public
half is in the keyset bound to it, signs its own credential for 15 minutes and makes a new one at
half its life; that key can sign nothing else — no player's token, no other service's, no longer
credential."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from chieu.kit import auth
from chieu.kit.errors import ServiceError
from chieu.kit.settings import Settings

LOBBY = auth.Signer.generate()
LADDER = auth.Signer.generate()
NOW = 1_800_000_000.0


def keyset(tmp_path: Path) -> Settings:
    keys = LOBBY.keyset().with_key(LADDER.public, "ladder")
    (tmp_path / "jwks.json").write_text(json.dumps(keys.to_jwks()))
    (tmp_path / "ladder.pem").write_bytes(LADDER.private_pem())
    return Settings(token_public_keys=str(tmp_path / "jwks.json"), service_key=str(tmp_path / "ladder.pem"))


def refused(keys: auth.KeySet, token: str) -> str:
    with pytest.raises(ServiceError) as err:
        auth.verify(keys, token, now=NOW + 1)
    return err.value.reason


def test_a_service_signs_its_own_short_credential_and_renews_it(tmp_path: Path) -> None:
    settings = keyset(tmp_path)
    own = auth.OwnCredential(settings.service_key, settings)
    first = own.token(now=NOW)
    who = auth.verify(auth.public_keys(settings), first, now=NOW + 1)
    assert (who.service, who.roles, who.exp) == ("ladder", {"service"}, int(NOW) + auth.SERVICE_TTL_S)
    assert own.token(now=NOW + 400) == first  # reused while more than half its life is left
    second = own.token(now=NOW + 451)
    assert second != first and auth.verify(auth.public_keys(settings), second, now=NOW + 452).exp == int(NOW) + 1351
    assert auth.service_token(replace(settings, service_key="", service_token="static")) == "static"
    auth.check_keys(settings)  # a service with its key starts


def test_a_services_key_signs_nothing_but_its_own_short_credential(tmp_path: Path) -> None:
    keys = auth.public_keys(keyset(tmp_path))
    assert refused(keys, LADDER.sign("someone", ("player",), 600, now=NOW)) == "bad_claims"
    assert refused(keys, LADDER.sign("ops", ("operator",), 600, now=NOW)) == "bad_claims"
    assert refused(keys, LADDER.service_credential("table", 600, now=NOW)) == "bad_claims"
    assert refused(keys, LADDER.service_credential("ladder", 365 * 86400, now=NOW)) == "bad_claims"
    assert auth.verify(keys, LADDER.service_credential("ladder", 900, now=NOW), now=NOW + 1).service == "ladder"
    assert auth.verify(keys, LOBBY.sign("someone", now=NOW), now=NOW + 1).player_id == "someone"  # the signer's key


def test_the_binding_is_kept_in_a_jwks_and_read_from_a_pem_directory(tmp_path: Path) -> None:
    keys = auth.KeySet.from_jwks(LOBBY.keyset().with_key(LADDER.public, "ladder").to_jwks())
    assert keys.bound_to(LADDER.kid) == "service:ladder" and keys.bound_to(LOBBY.kid) is None
    assert keys != LOBBY.keyset().with_key(LADDER.public)  # a binding is part of the set's content
    folder = tmp_path / "keys"
    folder.mkdir()
    (folder / "lobby.pem").write_bytes(LOBBY.public_pem())
    (folder / "service-ladder.pem").write_bytes(LADDER.public_pem())
    from_dir = auth.KeySet.load(folder)
    assert from_dir.bound_to(LADDER.kid) == "service:ladder" and from_dir.bound_to(LOBBY.kid) is None
    with pytest.raises(ValueError, match="service:<name>"):
        auth.KeySet.from_jwks({"keys": [{**LADDER.keyset().to_jwks()["keys"][0], "sub": "someone"}]})


def test_a_key_not_bound_in_the_keyset_does_not_start_the_service(tmp_path: Path) -> None:
    settings = keyset(tmp_path)
    stranger = auth.Signer.generate()
    (tmp_path / "stranger.pem").write_bytes(stranger.private_pem())
    with pytest.raises(ValueError, match="not in the keyset"):
        auth.check_keys(replace(settings, service_key=str(tmp_path / "stranger.pem")))


def test_chieu_service_key_makes_a_private_key_and_its_bound_public_key(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    out, public = tmp_path / "table.pem", tmp_path / "service-table.pem"
    done = subprocess.run([sys.executable, "-m", "chieu.cli", "service-key", "table", "--out", str(out),
                           "--public", str(public)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert os.stat(out).st_mode & 0o777 == 0o600
    jwk = json.loads(done.stdout)
    (tmp_path / "jwks.json").write_text(json.dumps({"keys": [jwk, *LOBBY.keyset().to_jwks()["keys"]]}))
    settings = Settings(token_public_keys=str(tmp_path / "jwks.json"), service_key=str(out))
    assert auth.verify(auth.public_keys(settings), auth.service_token(settings)).service == "table"
    pems = tmp_path / "pems"
    pems.mkdir()
    public.rename(pems / public.name)
    assert auth.KeySet.load(pems).bound_to(jwk["kid"]) == "service:table"
    again = subprocess.run([sys.executable, "-m", "chieu.cli", "service-key", "table", "--out", str(out)],
                           capture_output=True, text=True, timeout=60)
    assert again.returncode == 2  # never over an existing key
