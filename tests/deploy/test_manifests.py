"""The Kubernetes manifests in deploy/ agree with the code they run: every variable is a real
setting and parses, each service listens where its Service, probes and peers look, secrets come
from the Secret, and a pod's stop fits in its grace period."""

from __future__ import annotations

import importlib.util
import inspect
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from chieu.kit import settings as settings_mod
from chieu.kit.eventstore import EventStore
from chieu.ledger.v1 import ledger_service_pb2
from chieu.table.v1 import table_service_pb2

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
SECRET_VARS = {"CHIEU_SERVICE_TOKEN", "CHIEU_TOKEN_PRIVATE_KEY", "DATABASE_URL"}
DRAIN_S = inspect.signature(EventStore.close).parameters["timeout_s"].default  # a hanging drain is cut then
SERVICES = {  # module → (the variable it listens on, the gRPC service its readiness names)
    "chieu.table": ("CHIEU_TABLE_ADDR", table_service_pb2.DESCRIPTOR.services_by_name["TableService"].full_name),
    "chieu.ledger": ("CHIEU_LEDGER_ADDR", ledger_service_pb2.DESCRIPTOR.services_by_name["LedgerService"].full_name),
}


def _docs() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for path in sorted(DEPLOY.glob("*.yaml")):
        out += [d for d in yaml.safe_load_all(path.read_text()) if d]
    return out


def _kind(kind: str) -> list[dict[str, Any]]:
    return [d for d in _docs() if d.get("kind") == kind]


def _config() -> dict[str, str]:
    (cm,) = _kind("ConfigMap")
    data: dict[str, str] = cm["data"]
    return data


def _containers() -> list[tuple[dict[str, Any], dict[str, Any]]]:
    return [(d, c) for d in _kind("Deployment") for c in d["spec"]["template"]["spec"]["containers"]]


def test_kustomization_lists_every_manifest() -> None:
    kust = yaml.safe_load((DEPLOY / "kustomization.yaml").read_text())
    files = {p.name for p in DEPLOY.glob("*.yaml")} - {"kustomization.yaml"}
    assert set(kust["resources"]) == files


def test_the_configuration_is_production_and_parses() -> None:
    config = _config()
    assert config["CHIEU_ENV"] == "prod" and config["CHIEU_LOG_FORMAT"] == "json"
    for _, c in _containers():
        env = dict(config)
        for e in c.get("env", []):
            env[e["name"]] = e.get("value", "from-the-cluster")
        known = set(settings_mod._ENV.values())
        assert set(env) <= known, f"not a setting: {sorted(set(env) - known)}"
        parsed = settings_mod.from_env(env)  # raises on a value that does not parse
        assert parsed.env == "prod"


def test_secrets_come_from_the_secret_only() -> None:
    assert not SECRET_VARS & set(_config())
    for _, c in _containers():
        for e in c.get("env", []):
            if e["name"] in SECRET_VARS:
                assert "value" not in e and e["valueFrom"]["secretKeyRef"]["name"] == "chieu-secrets"
    ledger = next(c for _, c in _containers() if c["args"] == ["chieu.ledger"])
    assert "DATABASE_URL" in {e["name"] for e in ledger["env"]}


@pytest.mark.parametrize("module", sorted(SERVICES))
def test_each_service_listens_where_it_is_probed_and_found(module: str) -> None:
    addr_var, service_name = SERVICES[module]
    ((deployment, c),) = [(d, c) for d, c in _containers() if c["args"] == [module]]
    assert importlib.util.find_spec(f"{module}.__main__") is not None
    (port,) = [p["containerPort"] for p in c["ports"] if p["name"] == "grpc"]
    listen = next(e["value"] for e in c["env"] if e["name"] == addr_var)
    assert listen == f"0.0.0.0:{port}"  # not the loopback default
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        assert c[probe]["grpc"]["port"] == port
    assert c["readinessProbe"]["grpc"]["service"] == service_name
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert deployment["spec"]["selector"]["matchLabels"].items() <= labels.items()
    (svc,) = [s for s in _kind("Service") if s["metadata"]["name"] == deployment["metadata"]["name"]]
    assert svc["spec"]["selector"].items() <= labels.items()
    assert [(p["port"], p["targetPort"]) for p in svc["spec"]["ports"]] == [(port, "grpc")]
    (pdb,) = [p for p in _kind("PodDisruptionBudget") if p["metadata"]["name"] == deployment["metadata"]["name"]]
    assert pdb["spec"]["selector"]["matchLabels"].items() <= labels.items()
    assert deployment["spec"]["replicas"] >= 2


def test_every_pod_verifies_with_the_public_keys_only_and_none_can_sign() -> None:
    path = Path(_config()["CHIEU_TOKEN_PUBLIC_KEYS"])
    for d, c in _containers():
        assert "CHIEU_TOKEN_PRIVATE_KEY" not in {e["name"] for e in c.get("env", [])}
        (mount,) = [m for m in c["volumeMounts"] if Path(m["mountPath"]) == path.parent]
        assert mount["readOnly"] is True
        (volume,) = [v for v in d["spec"]["template"]["spec"]["volumes"] if v["name"] == mount["name"]]
        assert volume["configMap"]["name"] == "chieu-token-keys"  # public: a ConfigMap, not a Secret
    table = next(c for _, c in _containers() if c["args"] == ["chieu.table"])
    (cred,) = [e for e in table["env"] if e["name"] == "CHIEU_SERVICE_TOKEN"]
    assert cred["valueFrom"]["secretKeyRef"] == {"name": "chieu-secrets", "key": "table-service-token"}


def test_peers_dial_the_ledger_service() -> None:
    host, _, port = _config()["CHIEU_LEDGER_ADDR"].partition(":")
    (svc,) = [s for s in _kind("Service") if s["metadata"]["name"] == host]
    assert [p["port"] for p in svc["spec"]["ports"]] == [int(port)]


def test_a_graceful_stop_fits_in_the_grace_period() -> None:
    grace_s = float(_config()["CHIEU_SHUTDOWN_GRACE_S"])
    for d, c in _containers():
        pre_stop = c["lifecycle"]["preStop"]["exec"]["command"]
        assert pre_stop[0] == "sleep"
        budget = d["spec"]["template"]["spec"]["terminationGracePeriodSeconds"]
        assert int(pre_stop[1]) + grace_s + DRAIN_S < budget


def test_the_image_runs_the_named_modules() -> None:
    text = (DEPLOY / "Dockerfile").read_text()
    assert re.search(r'^ENTRYPOINT \["python", "-m"\]$', text, re.M)
    (default,) = re.findall(r'^CMD \["([\w.]+)"\]$', text, re.M)
    assert default in SERVICES
    assert {c["image"] for _, c in _containers()} == {"chieu"}
    assert re.search(r"^USER 10001$", text, re.M)
    for _, c in _containers():
        assert c["securityContext"]["readOnlyRootFilesystem"] is True
