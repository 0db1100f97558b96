"""NATS in the manifests enforces what chieu.kit.natsauth defines: the server's users come from the
code's own permission table (`chieu nats-auth` writes the operator's nats-auth ConfigMap; the
rendered config includes it), each service pod holds its own NKEY seed and nothing else, and the
rendered config, run by a real nats-server with a throwaway CA, refuses a client without a
credential or without TLS and lets each user do only what its row says."""

from __future__ import annotations

import asyncio
import datetime
import ipaddress
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import nats
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from nats.errors import Error as NatsError

from chieu.kit import names, natsauth
from chieu_tools import localnats

from .tools import OVERLAYS, render

SERVICES = ("table", "ledger", "ladder", "lobby")


def _deployment(docs: list[dict[str, Any]], name: str) -> dict[str, Any]:
    (d,) = [d for d in docs if d["kind"] in ("Deployment", "StatefulSet") and d["metadata"]["name"] == name]
    return d


def _files(docs: list[dict[str, Any]]) -> dict[str, str]:
    (cm,) = [d for d in docs if d["kind"] == "ConfigMap" and d["metadata"]["name"].startswith("nats-config-")]
    files: dict[str, str] = cm["data"]
    return files


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_each_service_holds_its_own_nats_user_only(overlay: str) -> None:
    docs = render(overlay)
    for s in SERVICES:
        d = _deployment(docs, f"chieu-{s}")
        pod = d["spec"]["template"]["spec"]
        (c,) = pod["containers"]
        env = {e["name"]: e.get("value") for e in c["env"]}
        mounts = {m["name"]: m for m in c["volumeMounts"]}
        volumes = {v["name"]: v for v in pod["volumes"]}
        seed = Path(env["CHIEU_NATS_CREDS"])
        (mount,) = [m for m in mounts.values() if Path(m["mountPath"]) == seed.parent]
        secret = volumes[mount["name"]]["secret"]
        assert secret["secretName"] == "chieu-nats-creds" and mount["readOnly"] is True
        own = natsauth.Credentials(Path("x")).seed(s).name  # the file name chieu nats-auth gives it
        assert secret["items"] == [{"key": own, "path": seed.name}] and seed.name == own
        ca = Path(env["CHIEU_NATS_CA"])
        (tls,) = [m for m in mounts.values() if Path(m["mountPath"]) == ca.parent]
        assert volumes[tls["name"]]["secret"]["secretName"] == f"chieu-{s}-tls" and ca.name == "ca.crt"
    assert set(SERVICES) < set(natsauth.PERMISSIONS)  # and audit, for the audit commands only


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_the_server_includes_the_users_the_operator_generates(overlay: str) -> None:
    docs = render(overlay)
    sts = _deployment(docs, "nats")
    (server,) = [c for c in sts["spec"]["template"]["spec"]["containers"] if c["name"] == "nats"]
    conf = Path(server["args"][server["args"].index("--config") + 1])
    included = re.findall(r"^include \./([\w.]+)$", _files(docs)[conf.name], re.M)
    assert included == ["auth.conf"] and "auth.conf" not in _files(docs)  # the operator's, not ours
    (config,) = [m for m in server["volumeMounts"] if Path(m["mountPath"]) == conf.parent]
    (volume,) = [v for v in sts["spec"]["template"]["spec"]["volumes"] if v["name"] == config["name"]]
    sources = [s["configMap"]["name"] for s in volume["projected"]["sources"]]
    assert sources[1:] == ["nats-auth"] and sources[0].startswith("nats-config-")


def _cert(subject: str, key: ec.EllipticCurvePrivateKey, issuer: tuple[x509.Name, ec.EllipticCurvePrivateKey] | None,
          *, ca: bool) -> x509.Certificate:
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)])
    now = datetime.datetime.now(datetime.UTC)
    b = (x509.CertificateBuilder().subject_name(name).issuer_name(issuer[0] if issuer else name)
         .public_key(key.public_key()).serial_number(x509.random_serial_number())
         .not_valid_before(now - datetime.timedelta(minutes=1)).not_valid_after(now + datetime.timedelta(hours=1))
         .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
    if not ca:
        b = b.add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost"),
                                                         x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                            critical=False)
    return b.sign(issuer[1] if issuer else key, hashes.SHA256())


def _pki(folder: Path) -> None:
    """cert-manager's Secret layout: tls.crt, tls.key, ca.crt."""
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca = _cert("chieu-ca", ca_key, None, ca=True)
    leaf = _cert("nats", key, (ca.subject, ca_key), ca=False)
    pem = serialization.Encoding.PEM
    (folder / "ca.crt").write_bytes(ca.public_bytes(pem))
    (folder / "tls.crt").write_bytes(leaf.public_bytes(pem))
    (folder / "tls.key").write_bytes(key.private_bytes(pem, serialization.PrivateFormat.PKCS8,
                                                       serialization.NoEncryption()))


@pytest.fixture(scope="module")
def dev_nats(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The dev overlay's nats-server config, as its pod would run it (paths under a temporary
    folder, free ports), with the users `chieu nats-auth` makes; yields (url, creds, ca)."""
    tmp = tmp_path_factory.mktemp("nats")
    docs = render("dev")
    sts = _deployment(docs, "nats")
    (server,) = [c for c in sts["spec"]["template"]["spec"]["containers"] if c["name"] == "nats"]
    mounts = {m["name"]: m["mountPath"] for m in server["volumeMounts"]}
    certs, config = tmp / "certs", tmp / "config"
    certs.mkdir()
    config.mkdir()
    _pki(certs)
    port, monitor = localnats.free_port(), localnats.free_port()
    text = _files(docs)["nats.conf"]
    for old, new in ((mounts["nats-tls"], str(certs)), ("/data", str(tmp / "data")), ("/var/run/nats", str(tmp))):
        text = text.replace(old, new)
    text = re.sub(r"^port: 4222$", f"host: 127.0.0.1\nport: {port}", text, flags=re.M)
    text = re.sub(r"^http_port: 8222$", f"http: 127.0.0.1:{monitor}", text, flags=re.M)
    assert f"port: {port}" in text and f":{monitor}" in text
    (config / "nats.conf").write_text(text)
    creds = natsauth.ensure(tmp / "creds", admin=False)
    (config / "auth.conf").write_text(natsauth.server_block(creds.folder))  # what `chieu nats-auth` prints
    env = {**os.environ, "POD_NAME": "nats-0"}
    proc = subprocess.Popen([localnats.binary(), "-c", str(config / "nats.conf")], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    localnats.wait_for_port(port, proc=proc)
    try:
        yield f"nats://127.0.0.1:{port}", creds, str(certs / "ca.crt")
    finally:
        localnats.stop(proc)


async def test_the_rendered_server_refuses_strangers_and_plaintext(dev_nats: Any) -> None:
    url, creds, ca = dev_nats
    with pytest.raises((NatsError, OSError, asyncio.TimeoutError)):  # no credential
        await nats.connect(url, tls=natsauth.client_options(ca=ca)["tls"], connect_timeout=2,
                           max_reconnect_attempts=0, allow_reconnect=False)
    with pytest.raises((NatsError, OSError, asyncio.TimeoutError)):  # a credential, but no TLS
        await nats.connect(url, connect_timeout=2, allow_reconnect=False, max_reconnect_attempts=0,
                           **natsauth.client_options(creds=str(creds.seed("table"))))


async def test_each_user_may_do_only_what_its_row_says(dev_nats: Any) -> None:
    url, creds, ca = dev_nats
    errors: dict[str, list[str]] = {"table": [], "ledger": []}
    conns = {}
    for user in errors:
        async def on_error(e: Exception, user: str = user) -> None:
            errors[user].append(str(e))
        conns[user] = await natsauth.connect_url(url, f"test-{user}", creds=str(creds.seed(user)), ca=ca,
                                                 error_cb=on_error, allow_reconnect=False)
    try:
        subject = names.TABLES.subject("deploy-test")
        for nc in conns.values():
            await nc.publish(subject, b"a forged record")
            await nc.flush(timeout=2)
        for _ in range(50):  # the server's -ERR is asynchronous: wait for it (5 s at most)
            if errors["ledger"]:
                break
            await conns["ledger"].flush(timeout=2)
            await asyncio.sleep(0.1)
        await conns["table"].flush(timeout=2)
        assert not errors["table"], errors["table"]  # the table service alone writes the table log
        assert any("permissions violation" in e.lower() for e in errors["ledger"]), errors["ledger"]
    finally:
        for nc in conns.values():
            await nc.close()
