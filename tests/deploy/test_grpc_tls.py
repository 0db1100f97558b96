"""gRPC over TLS (deploy/components/grpc-tls): every service's certificate, key and CA are the
files cert-manager puts in its own Secret, the names its peers and its probes dial are in its
certificate, and the in-pod health check the probes run (the kubelet's gRPC probe speaks no TLS)
answers as the kubelet needs: run here against a real TLS health server."""

from __future__ import annotations

import datetime
import subprocess
import sys
from collections.abc import Iterator
from concurrent import futures
from pathlib import Path
from typing import Any

import grpc
import kubernetes_validate
import pytest
import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from chieu.kit import channels, natsauth
from chieu.kit import settings as settings_mod
from chieu_tools import localnats

from .tools import OVERLAYS, render, with_grpc_tls

SERVICES = ("table", "ledger", "ladder", "lobby")


def _service(docs: list[dict[str, Any]], s: str) -> tuple[dict[str, Any], dict[str, Any]]:
    (d,) = [d for d in docs if d["kind"] == "Deployment" and d["metadata"]["name"] == f"chieu-{s}"]
    (c,) = d["spec"]["template"]["spec"]["containers"]
    return d, c


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_each_service_serves_and_calls_with_its_own_certificate(overlay: str) -> None:
    docs = with_grpc_tls(overlay)
    certs = {c["spec"]["secretName"]: c["spec"] for c in docs if c["kind"] == "Certificate"}
    for s in SERVICES:
        d, c = _service(docs, s)
        kubernetes_validate.validate(d, kubernetes_validate.latest_version(), strict=True)
        env = {e["name"]: e.get("value", "from-the-cluster") for e in c["env"]}
        settings_mod.from_env(env)  # every variable is a setting and they parse together
        mounts = {m["mountPath"]: m["name"] for m in c["volumeMounts"]}
        volumes = {v["name"]: v for v in d["spec"]["template"]["spec"]["volumes"]}
        for var, file in (("CHIEU_TLS_CERT", "tls.crt"), ("CHIEU_TLS_KEY", "tls.key"), ("CHIEU_TLS_CA", "ca.crt")):
            path = Path(env[var])
            assert path.name == file
            assert volumes[mounts[str(path.parent)]]["secret"]["secretName"] == f"chieu-{s}-tls"
        spec = certs[f"chieu-{s}-tls"]
        port = next(p["containerPort"] for p in c["ports"] if p["name"] == "grpc")
        for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
            command = c[probe]["exec"]["command"]
            assert command[3:6] == [f"127.0.0.1:{port}", env["CHIEU_TLS_CA"], f"chieu-{s}"]
            assert command[5] in spec["dnsNames"]
        assert c["readinessProbe"]["exec"]["command"][6] == f"chieu.{s}.v1.{s.capitalize()}Service"
        assert c["livenessProbe"]["exec"]["command"][6] == "chieu.Liveness"  # the process answers (issue 36)
        (config,) = [x for x in docs if x["kind"] == "ConfigMap" and x["metadata"]["name"].startswith("chieu-config-")]
        peer_host = config["data"][f"CHIEU_{s.upper()}_ADDR"].partition(":")[0]
        assert peer_host in spec["dnsNames"]  # the name the others dial is in its certificate


def _pki(folder: Path, name: str) -> None:
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.UTC)

    def cert(subject: str, public: Any, issuer: str, signer: Any, ca: bool) -> x509.Certificate:
        b = (x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
             .issuer_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, issuer)])).public_key(public)
             .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=1))
             .not_valid_after(now + datetime.timedelta(hours=1))
             .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
        if not ca:
            b = b.add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
        return b.sign(signer, hashes.SHA256())

    pem = serialization.Encoding.PEM
    (folder / "ca.crt").write_bytes(cert("chieu-ca", ca_key.public_key(), "chieu-ca", ca_key, True).public_bytes(pem))
    (folder / "tls.crt").write_bytes(cert(name, key.public_key(), "chieu-ca", ca_key, False).public_bytes(pem))
    (folder / "tls.key").write_bytes(key.private_bytes(pem, serialization.PrivateFormat.PKCS8,
                                                       serialization.NoEncryption()))


@pytest.fixture
def tls_health(tmp_path: Path) -> Iterator[tuple[int, Path, health.HealthServicer]]:
    _pki(tmp_path, "chieu-ledger")
    server = grpc.server(futures.ThreadPoolExecutor(2))
    servicer = health.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(servicer, server)
    port = localnats.free_port()
    creds = grpc.ssl_server_credentials([((tmp_path / "tls.key").read_bytes(), (tmp_path / "tls.crt").read_bytes())])
    server.add_secure_port(f"127.0.0.1:{port}", creds)
    server.start()
    try:
        yield port, tmp_path, servicer
    finally:
        server.stop(0)


def test_the_in_pod_probe_answers_as_the_kubelet_needs(tls_health: tuple[int, Path, health.HealthServicer]) -> None:
    port, certs, servicer = tls_health
    _, c = _service(with_grpc_tls("prod"), "ledger")
    command = c["readinessProbe"]["exec"]["command"]
    assert command[0] == "python"

    def probe(ca: Path) -> int:
        args = [sys.executable, *command[1:3], f"127.0.0.1:{port}", str(ca), *command[5:]]
        return subprocess.run(args, capture_output=True, timeout=30).returncode

    name = command[6]
    servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
    assert probe(certs / "ca.crt") == 0
    servicer.set(name, health_pb2.HealthCheckResponse.NOT_SERVING)  # a graceful stop has begun
    assert probe(certs / "ca.crt") != 0
    servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
    other = certs / "other"
    other.mkdir()
    _pki(other, "chieu-ledger")
    assert probe(other / "ca.crt") != 0  # a server whose certificate is not the namespace CA's


def test_production_runs_every_grpc_port_with_tls_and_the_gateway_checks_the_services() -> None:
    docs = render("prod")
    (config,) = [x for x in docs if x["kind"] == "ConfigMap" and x["metadata"]["name"].startswith("chieu-config-")]
    for s in SERVICES:
        _, c = _service(docs, s)
        env = {e["name"] for e in c["env"]}
        assert {"CHIEU_TLS_CERT", "CHIEU_TLS_KEY", "CHIEU_TLS_CA"} <= env, s
        # what the pod's process reads: it passes production's refusals to run in plaintext
        settings = settings_mod.from_env(config["data"] | {e["name"]: e.get("value", "from-the-cluster")
                                                           for e in c["env"]})
        assert settings.env == "prod"
        channels.check(settings)
        natsauth.check(settings)
    (gateway,) = [d for d in docs if d["kind"] == "Deployment" and d["metadata"]["name"] == "chieu-gateway"]
    pod = gateway["spec"]["template"]["spec"]
    (tls,) = [v for v in pod["volumes"] if v["name"] == "tls"]
    assert tls["secret"] == {"secretName": "chieu-gateway-tls", "items": [{"key": "ca.crt", "path": "ca.crt"}]}
    (envoy_cm,) = [d for d in docs if d["kind"] == "ConfigMap" and d["metadata"]["name"].startswith("chieu-envoy")]
    config = yaml.safe_load(envoy_cm["data"]["envoy.yaml"])
    clusters = {c["name"]: c for c in config["static_resources"]["clusters"]}
    for s in SERVICES:
        ctx = clusters[s]["transport_socket"]["typed_config"]["common_tls_context"]["validation_context"]
        assert ctx["trusted_ca"]["filename"] == "/etc/chieu/tls/ca.crt"
        (san,) = ctx["match_typed_subject_alt_names"]
        host = clusters[s]["load_assignment"]["endpoints"][0]["lb_endpoints"][0]["endpoint"]["address"]
        assert san["matcher"]["exact"] == host["socket_address"]["address"]
    dev = render("dev")
    assert not any(e["name"] == "CHIEU_TLS_CERT" for e in _service(dev, "table")[1]["env"])  # dev: plaintext
