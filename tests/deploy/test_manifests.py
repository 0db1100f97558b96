"""The Kubernetes manifests, as each overlay renders them, agree with the code they run: every
variable is a real setting and parses, each service listens where its Service, probes and peers
look, secrets come from Secrets only (the databases' from CloudNativePG's own), a pod's stop fits
in its grace period, every container is locked down, and prod is replicated where dev is not."""

from __future__ import annotations

import importlib.util
import inspect
import re
from pathlib import Path
from typing import Any

import pytest

from chieu.kit import settings as settings_mod
from chieu.kit.eventstore import EventStore
from chieu.kit.server import LIVENESS
from chieu.ladder.v1 import ladder_service_pb2
from chieu.ledger.v1 import ledger_service_pb2
from chieu.lobby.v1 import lobby_service_pb2
from chieu.table.v1 import table_service_pb2

from .tools import DEPLOY, OVERLAYS, render

SECRET_VARS = {"CHIEU_SERVICE_TOKEN", "CHIEU_TOKEN_PRIVATE_KEY", "DATABASE_URL"}
DRAIN_S = inspect.signature(EventStore.close).parameters["timeout_s"].default  # a hanging drain is cut then
SERVICES = {  # name → (the variable it listens on, its port, the gRPC service its readiness names)
    "table": ("CHIEU_TABLE_ADDR", table_service_pb2.DESCRIPTOR.services_by_name["TableService"].full_name),
    "ledger": ("CHIEU_LEDGER_ADDR", ledger_service_pb2.DESCRIPTOR.services_by_name["LedgerService"].full_name),
    "ladder": ("CHIEU_LADDER_ADDR", ladder_service_pb2.DESCRIPTOR.services_by_name["LadderService"].full_name),
    "lobby": ("CHIEU_LOBBY_ADDR", lobby_service_pb2.DESCRIPTOR.services_by_name["LobbyService"].full_name),
}
DATA_OWNERS = ("ledger", "ladder", "lobby")  # the services with a PostgreSQL database of their own
CALLERS = ("table", "ladder", "lobby")  # the services that call others, with their own credential
SIGNERS = ("lobby",)  # the only pod given the token signing key


def _kind(docs: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [d for d in docs if d["kind"] == kind]


def _named(docs: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    (found,) = [d for d in docs if d["kind"] == kind and d["metadata"]["name"] == name]
    return found


def _config(docs: list[dict[str, Any]]) -> dict[str, str]:
    (cm,) = [d for d in _kind(docs, "ConfigMap") if d["metadata"]["name"].startswith("chieu-config-")]
    data: dict[str, str] = cm["data"]
    return data


def _service(docs: list[dict[str, Any]], name: str) -> tuple[dict[str, Any], dict[str, Any]]:
    deployment = _named(docs, "Deployment", f"chieu-{name}")
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    return deployment, container


def _env(container: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {e["name"]: e for e in container.get("env", [])}


def _workloads(docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [d for d in docs if d["kind"] in ("Deployment", "StatefulSet")]


@pytest.fixture(scope="module", params=OVERLAYS)
def overlay(request: pytest.FixtureRequest) -> tuple[str, list[dict[str, Any]]]:
    return request.param, render(request.param)


def test_every_overlay_builds_the_whole_system(overlay: tuple[str, list[dict[str, Any]]]) -> None:
    _, docs = overlay
    assert {d["metadata"]["name"] for d in _kind(docs, "Deployment")} == {
        *(f"chieu-{s}" for s in SERVICES), "chieu-gateway"}
    assert [d["metadata"]["name"] for d in _kind(docs, "StatefulSet")] == ["nats"]
    assert {d["metadata"]["name"] for d in _kind(docs, "Cluster")} == {f"chieu-{s}-db" for s in DATA_OWNERS}
    assert {d["metadata"].get("namespace") for d in docs if d["kind"] != "Namespace"} == {"chieu"}


def test_the_configuration_is_settings_and_parses(overlay: tuple[str, list[dict[str, Any]]]) -> None:
    name, docs = overlay
    config = _config(docs)
    known = set(settings_mod._ENV.values())
    for s in SERVICES:
        _, c = _service(docs, s)
        env = dict(config)
        for e in c.get("env", []):
            env[e["name"]] = e.get("value", "from-the-cluster")
        assert set(env) <= known, f"not a setting: {sorted(set(env) - known)}"
        parsed = settings_mod.from_env(env)  # raises on a value that does not parse
        assert parsed.env == ("prod" if name == "prod" else "dev")
    if name == "prod":
        assert (config["CHIEU_LOG_FORMAT"], config["CHIEU_REFLECTION"]) == ("json", "0")


def test_secrets_come_from_secrets_only(overlay: tuple[str, list[dict[str, Any]]]) -> None:
    _, docs = overlay
    assert not SECRET_VARS & set(_config(docs))
    for d in _workloads(docs):
        for c in d["spec"]["template"]["spec"]["containers"]:
            for e in c.get("env", []):
                if e["name"] in SECRET_VARS - {"CHIEU_TOKEN_PRIVATE_KEY"}:
                    assert "value" not in e and "secretKeyRef" in e["valueFrom"], (d["metadata"]["name"], e)
    for s in DATA_OWNERS:  # its own database, with the credentials the operator generated
        _, c = _service(docs, s)
        ref = _env(c)["DATABASE_URL"]["valueFrom"]["secretKeyRef"]
        assert ref == {"name": f"chieu-{s}-db-app", "key": "uri"}
        cluster = _named(docs, "Cluster", f"chieu-{s}-db")
        assert cluster["spec"]["bootstrap"]["initdb"] == {"database": s, "owner": s}
    assert "DATABASE_URL" not in _env(_service(docs, "table")[1])
    for s in CALLERS:  # each signs its own short-lived credential with its own key, and has no other's
        d, c = _service(docs, s)
        assert "CHIEU_SERVICE_TOKEN" not in _env(c)
        assert _env(c)["CHIEU_SERVICE_KEY"]["value"] == f"/etc/chieu/own/{s}.pem"
        (own,) = [v for v in d["spec"]["template"]["spec"]["volumes"] if v["name"] == "own-key"]
        assert own["secret"]["secretName"] == "chieu-service-keys"
        assert own["secret"]["items"] == [{"key": f"{s}.pem", "path": f"{s}.pem"}]
    assert "CHIEU_SERVICE_KEY" not in _env(_service(docs, "ledger")[1])  # it calls no one


@pytest.mark.parametrize("service", sorted(SERVICES))
def test_each_service_listens_where_it_is_probed_and_found(overlay: tuple[str, list[dict[str, Any]]],
                                                           service: str) -> None:
    name, docs = overlay
    addr_var, grpc_service = SERVICES[service]
    deployment, c = _service(docs, service)
    assert importlib.util.find_spec(f"chieu.{service}.__main__") is not None
    assert c["args"] == [f"chieu.{service}"]
    (port,) = [p["containerPort"] for p in c["ports"] if p["name"] == "grpc"]
    assert _env(c)[addr_var]["value"] == f"0.0.0.0:{port}"  # not the loopback default
    if "CHIEU_TLS_CERT" in _env(c):  # TLS (prod): the health checks run in the pod, over TLS
        for probe in ("startupProbe", "readinessProbe"):
            assert c[probe]["exec"]["command"][3] == f"127.0.0.1:{port}"
        assert c["readinessProbe"]["exec"]["command"][6] == grpc_service
        # liveness asks the process itself over gRPC (a TCP connect passes for a wedged process)
        assert c["livenessProbe"]["exec"]["command"][3] == f"127.0.0.1:{port}"
        assert c["livenessProbe"]["exec"]["command"][6] == LIVENESS
        assert c["livenessProbe"]["exec"]["command"][:3] == c["readinessProbe"]["exec"]["command"][:3]
        assert "tcpSocket" not in c["livenessProbe"]
    else:
        for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
            assert c[probe]["grpc"]["port"] == port
        assert c["readinessProbe"]["grpc"]["service"] == grpc_service
        assert c["livenessProbe"]["grpc"]["service"] == LIVENESS
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert deployment["spec"]["selector"]["matchLabels"].items() <= labels.items()
    svc = _named(docs, "Service", f"chieu-{service}")
    assert svc["spec"]["selector"].items() <= labels.items()
    (metrics,) = [p["containerPort"] for p in c["ports"] if p["name"] == "metrics"]
    assert _env(c)["CHIEU_METRICS_ADDR"]["value"] == f"0.0.0.0:{metrics}"
    assert [(p["name"], p["port"], p["targetPort"]) for p in svc["spec"]["ports"]] == [
        ("grpc", port, "grpc"), ("metrics", metrics, "metrics")]
    host, _, peer_port = _config(docs)[addr_var].partition(":")  # where the others dial it
    assert (host, int(peer_port)) == (f"chieu-{service}", port)
    replicas = deployment["spec"]["replicas"]
    if name == "prod":
        assert replicas >= 2
        pdb = _named(docs, "PodDisruptionBudget", f"chieu-{service}")
        assert pdb["spec"]["selector"]["matchLabels"].items() <= labels.items()
        assert pdb["spec"]["maxUnavailable"] == 1
        anti = deployment["spec"]["template"]["spec"]["affinity"]["podAntiAffinity"]
        (term,) = anti["preferredDuringSchedulingIgnoredDuringExecution"]
        assert term["podAffinityTerm"]["labelSelector"]["matchLabels"].items() <= labels.items()
    else:
        assert replicas == 1
    assert {"requests", "limits"} <= c["resources"].keys()


def test_every_pod_verifies_with_the_public_keys_and_only_the_lobby_signs(
        overlay: tuple[str, list[dict[str, Any]]]) -> None:
    _, docs = overlay
    path = Path(_config(docs)["CHIEU_TOKEN_PUBLIC_KEYS"])
    for s in SERVICES:
        d, c = _service(docs, s)
        volumes = {v["name"]: v for v in d["spec"]["template"]["spec"]["volumes"]}
        (mount,) = [m for m in c["volumeMounts"] if Path(m["mountPath"]) == path.parent]
        assert mount["readOnly"] is True
        assert volumes[mount["name"]]["configMap"]["name"] == "chieu-token-keys"  # public: a ConfigMap
        signing = [v for v in volumes.values() if v.get("secret", {}).get("secretName") == "chieu-token-signing"]
        if s in SIGNERS:
            key = Path(_env(c)["CHIEU_TOKEN_PRIVATE_KEY"]["value"])
            (m,) = [m for m in c["volumeMounts"] if Path(m["mountPath"]) == key.parent]
            assert m["readOnly"] is True and signing and m["name"] == signing[0]["name"]
        else:
            assert "CHIEU_TOKEN_PRIVATE_KEY" not in _env(c) and not signing


def test_a_graceful_stop_fits_in_the_grace_period(overlay: tuple[str, list[dict[str, Any]]]) -> None:
    _, docs = overlay
    grace_s = float(_config(docs)["CHIEU_SHUTDOWN_GRACE_S"])
    for s in SERVICES:
        d, c = _service(docs, s)
        pre_stop = c["lifecycle"]["preStop"]["exec"]["command"]
        assert pre_stop[0] == "sleep"
        budget = d["spec"]["template"]["spec"]["terminationGracePeriodSeconds"]
        assert int(pre_stop[1]) + grace_s + DRAIN_S < budget


def test_every_container_is_locked_down(overlay: tuple[str, list[dict[str, Any]]]) -> None:
    _, docs = overlay
    for d in _workloads(docs):
        pod = d["spec"]["template"]["spec"]
        where = d["metadata"]["name"]
        assert pod["securityContext"]["runAsNonRoot"] is True, where
        assert pod["securityContext"]["runAsUser"] >= 10000, where
        assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}, where
        assert pod["automountServiceAccountToken"] is False, where
        for c in pod["containers"]:
            sc = c["securityContext"]
            assert sc["readOnlyRootFilesystem"] is True, (where, c["name"])
            assert sc["allowPrivilegeEscalation"] is False, (where, c["name"])
            assert sc["capabilities"]["drop"] == ["ALL"] and "add" not in sc["capabilities"], (where, c["name"])
            assert {"cpu", "memory"} <= c["resources"]["limits"].keys(), (where, c["name"])
            assert re.search(r":[\w.-]+$", c["image"]), f"{where}/{c['name']}: the image has no pinned tag"


def test_the_image_runs_the_named_modules(overlay: tuple[str, list[dict[str, Any]]]) -> None:
    _, docs = overlay
    text = (DEPLOY / "Dockerfile").read_text()
    assert re.search(r'^ENTRYPOINT \["python", "-m"\]$', text, re.M)
    (default,) = re.findall(r'^CMD \["([\w.]+)"\]$', text, re.M)
    assert default in {f"chieu.{s}" for s in SERVICES}
    assert re.search(r"^USER 10001$", text, re.M)
    assert {_service(docs, s)[1]["image"] for s in SERVICES} == {"registry.example.com/chieu:0.1.0"}
    for s in SERVICES:
        d, _ = _service(docs, s)
        assert d["spec"]["template"]["spec"]["securityContext"]["runAsUser"] == 10001  # the image's USER


def test_each_database_is_replicated_and_backed_up_in_prod(overlay: tuple[str, list[dict[str, Any]]]) -> None:
    name, docs = overlay
    backups = {b["spec"]["cluster"]["name"]: b for b in _kind(docs, "ScheduledBackup")}
    for s in DATA_OWNERS:
        spec = _named(docs, "Cluster", f"chieu-{s}-db")["spec"]
        assert spec["enableSuperuserAccess"] is False
        if name == "prod":
            assert spec["instances"] == 3
            assert spec["postgresql"]["synchronous"]["number"] >= 1
            assert spec["postgresql"]["synchronous"]["dataDurability"] == "required"
            assert spec["affinity"]["podAntiAffinityType"] == "required"
            store = spec["backup"]["barmanObjectStore"]
            assert store["destinationPath"].endswith(f"/{s}")
            assert {store["s3Credentials"][k]["name"] for k in store["s3Credentials"]} == {"chieu-backup-s3"}
            assert backups[f"chieu-{s}-db"]["spec"]["method"] == "barmanObjectStore"
        else:
            assert spec["instances"] == 1 and "backup" not in spec
    assert (set(backups) == {f"chieu-{s}-db" for s in DATA_OWNERS}) is (name == "prod")


def test_every_grpc_and_nats_endpoint_has_a_certificate_for_its_names(
        overlay: tuple[str, list[dict[str, Any]]]) -> None:
    _, docs = overlay
    certs = {c["metadata"]["name"]: c["spec"] for c in _kind(docs, "Certificate")}
    issuers = {i["metadata"]["name"]: i["spec"] for i in _kind(docs, "Issuer")}
    services = {s["metadata"]["name"] for s in _kind(docs, "Service")}
    for s in SERVICES:
        spec = certs[f"chieu-{s}-tls"]
        assert spec["secretName"] == f"chieu-{s}-tls" and spec["issuerRef"]["name"] in issuers
        names = {n for n in services if n in (f"chieu-{s}", f"chieu-{s}-pods")}
        assert names and names <= set(spec["dnsNames"])
        assert f"chieu-{s}.chieu.svc" in spec["dnsNames"]
        assert "server auth" in spec["usages"]
    nats = certs["nats-tls"]
    assert {"nats", "*.nats-headless"} <= set(nats["dnsNames"]) and {"server auth", "client auth"} <= set(
        nats["usages"])
    assert issuers["chieu-ca"]["ca"]["secretName"] == certs["chieu-ca"]["secretName"] and certs["chieu-ca"]["isCA"]


def test_each_service_knows_how_many_processes_share_its_rates(overlay: tuple[str, list[dict[str, Any]]]) -> None:
    """``CHIEU_REPLICAS`` is the Deployment's replica count (issue 27: each pod holds 1/N of the
    service's request rates), or unset (1) where it runs one pod."""
    _, docs = overlay
    for s in ("table", "ledger", "ladder", "lobby"):
        d, c = _service(docs, s)
        count = int(d["spec"].get("replicas", 1))
        given = _env(c).get("CHIEU_REPLICAS")
        assert (int(given["value"]) if given else 1) == count, (s, count, given)


def test_every_container_is_probed_and_no_liveness_is_a_bare_tcp_connect(
        overlay: tuple[str, list[dict[str, Any]]]) -> None:
    """Issue 36: probes on every container (the NATS config reloader too); no liveness that a wedged
    process would pass (a TCP connect); NATS's liveness is its full health, which fails on a node
    whose write met a full disk (``js-enabled-only`` stays OK there)."""
    name, docs = overlay
    for workload in _workloads(docs):
        for c in workload["spec"]["template"]["spec"]["containers"]:
            where = f"{workload['metadata']['name']}/{c['name']}"
            assert "livenessProbe" in c and "readinessProbe" in c, where
            assert "tcpSocket" not in c["livenessProbe"], where
            assert c["livenessProbe"].get("timeoutSeconds", 1) >= 3, where  # a loaded node answers slowly
    nats = _named(docs, "StatefulSet", "nats")
    (server,) = [c for c in nats["spec"]["template"]["spec"]["containers"] if c["name"] == "nats"]
    assert server["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert server["livenessProbe"]["periodSeconds"] * server["livenessProbe"]["failureThreshold"] >= 300
    if name == "prod":
        gateway = _named(docs, "Deployment", "chieu-gateway")["spec"]["template"]["spec"]
        (spread,) = gateway["topologySpreadConstraints"]
        assert spread["topologyKey"] == "topology.kubernetes.io/zone"
        assert spread["labelSelector"]["matchLabels"] == {"app.kubernetes.io/name": "chieu-gateway"}
