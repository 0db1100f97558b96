"""The seal keyset's making (issue 26): ``./chieu up`` gives it to the table processes alone, once
made it is kept (every table's next deal is sealed under it), and ``chieu seal-keys`` makes and
rotates one."""

from __future__ import annotations

import stat
import subprocess
import sys
from pathlib import Path

from chieu.kit import auth
from chieu.tablelog.sealing import SealKeys
from chieu_tools import up


def test_up_gives_the_seal_keyset_to_the_table_alone_and_keeps_it(tmp_path: Path) -> None:
    signer, private, public = up.ensure_keys(tmp_path)
    envs = up.service_envs({"CHIEU_SEAL_KEYS": "/leaked", "PATH": "/bin"}, signer, private, public)
    path = Path(envs["table"]["CHIEU_SEAL_KEYS"])
    assert path.parent == tmp_path / "keys" and stat.S_IMODE(path.stat().st_mode) == 0o600
    assert all("CHIEU_SEAL_KEYS" not in env for name, env in envs.items() if name != "table")
    first = SealKeys.load(path)
    again = up.service_envs({}, signer, private, public)
    assert SealKeys.load(again["table"]["CHIEU_SEAL_KEYS"]).keys == first.keys  # a restart keeps it
    assert isinstance(signer, auth.Signer)


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "chieu.cli", "seal-keys", *args], capture_output=True, text=True,
                          timeout=60, check=False)


def test_seal_keys_makes_rotates_and_retires(tmp_path: Path) -> None:
    made = _cli()
    assert made.returncode == 0
    path = tmp_path / "seal.jwks.json"
    path.write_text(made.stdout)
    old = SealKeys.load(path)
    rotated = _cli("--rotate", str(path))
    path.write_text(rotated.stdout)
    new = SealKeys.load(path)
    assert new.current != old.current and old.current in new.keys  # a fresh key seals; the old one opens
    retired = _cli("--rotate", str(path), "--retire", old.current)
    path.write_text(retired.stdout)
    assert SealKeys.load(path).keys == {new.current: new.keys[new.current]}
    refused = _cli("--rotate", str(path), "--retire", "no-such-key")
    assert refused.returncode == 2 and "no key no-such-key" in refused.stderr
