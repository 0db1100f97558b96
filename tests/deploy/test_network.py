"""The NetworkPolicies let exactly what must talk talk, and nothing else: evaluated here as
Kubernetes does (a pod selected by any policy of a direction allows only what one of them
allows; a connection needs the source's egress and the destination's ingress) over every pair
of the system's pods, the outside components they meet, and a stranger."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import product
from typing import Any

import pytest

from .tools import OVERLAYS, render

NS = "chieu"
PORTS = {"table": 50051, "ledger": 50052, "ladder": 50053, "lobby": 50054}
CALLS = {  # who calls whom over gRPC (services/*/app.py, peers.py): the table asks the ledger, the
    # ladder and the lobby (revocations); the ledger and the ladder ask the lobby (revocations); the
    # ledger asks the ladder before a paid reputation reset; the ladder pays a month's rewards
    # through the ledger (the operator's token); the lobby reaches the table, the ledger and the ladder
    "table": ("ledger", "ladder", "lobby"),
    "ledger": ("ladder", "lobby"),
    "ladder": ("ledger", "lobby"),
    "lobby": ("table", "ledger", "ladder"),
}
DATA_OWNERS = ("ledger", "ladder", "lobby")
METRICS_PORT = 9464  # every service's CHIEU_METRICS_ADDR in the manifests


@dataclass(frozen=True)
class Pod:
    name: str
    namespace: str
    labels: tuple[tuple[str, str], ...]


def _pod(name: str, namespace: str = NS, **labels: str) -> Pod:
    return Pod(name, namespace, tuple(sorted(labels.items())))


def _pods(docs: list[dict[str, Any]]) -> dict[str, Pod]:
    pods = {d["metadata"]["name"]: Pod(d["metadata"]["name"], NS,
                                       tuple(sorted(d["spec"]["template"]["metadata"]["labels"].items())))
            for d in docs if d["kind"] in ("Deployment", "StatefulSet")}
    for cluster in (d for d in docs if d["kind"] == "Cluster"):  # CloudNativePG labels its instances so
        name = cluster["metadata"]["name"]
        pods[name] = _pod(name, **{"cnpg.io/cluster": name, "cnpg.io/podRole": "instance"})
    pods["prometheus"] = _pod("prometheus", "monitoring", **{"app.kubernetes.io/name": "prometheus"})
    pods["ingress"] = _pod("ingress", "ingress-nginx", **{"app.kubernetes.io/name": "ingress-nginx"})
    pods["cnpg-operator"] = _pod("cnpg-operator", "cnpg-system", **{"app.kubernetes.io/name": "cloudnative-pg"})
    pods["dns"] = _pod("dns", "kube-system", **{"k8s-app": "kube-dns"})
    pods["stranger"] = _pod("stranger", **{"app.kubernetes.io/name": "debug"})  # any other pod of the namespace
    pods["outsider"] = _pod("outsider", "default", **{"app.kubernetes.io/name": "chieu-table"})  # a look-alike
    return pods


NAMESPACE_LABELS = {ns: {"kubernetes.io/metadata.name": ns}
                    for ns in (NS, "monitoring", "ingress-nginx", "cnpg-system", "kube-system", "default")}


def _matches(selector: dict[str, Any] | None, labels: dict[str, str]) -> bool:
    if selector is None:
        return True
    for key, value in selector.get("matchLabels", {}).items():
        if labels.get(key) != value:
            return False
    for expr in selector.get("matchExpressions", []):
        raise NotImplementedError(f"matchExpressions are not evaluated here: {expr}")
    return True


def _peer_matches(peer: dict[str, Any], policy_ns: str, pod: Pod) -> bool:
    if "ipBlock" in peer:  # only outside addresses (the API server, the object store): no pod here
        return False
    if "namespaceSelector" in peer:
        if not _matches(peer["namespaceSelector"], NAMESPACE_LABELS[pod.namespace]):
            return False
    elif pod.namespace != policy_ns:
        return False
    return _matches(peer.get("podSelector"), dict(pod.labels))


def _port_matches(rule: dict[str, Any], port: int) -> bool:
    ports = rule.get("ports")
    return ports is None or any(p.get("port") == port and p.get("protocol", "TCP") == "TCP" for p in ports)


def _allowed(policies: list[dict[str, Any]], direction: str, pod: Pod, peer: Pod, port: int) -> bool:
    """Whether ``pod``'s policies let it receive from (Ingress) or send to (Egress) ``peer`` on ``port``."""
    selecting = [p for p in policies if p["metadata"]["namespace"] == pod.namespace
                 and _matches(p["spec"]["podSelector"], dict(pod.labels))
                 and direction in p["spec"].get("policyTypes", ["Ingress"])]
    if not selecting:
        return True  # no policy selects it in that direction: everything is allowed
    key, peers = ("ingress", "from") if direction == "Ingress" else ("egress", "to")
    for policy in selecting:
        for rule in policy["spec"].get(key, []):
            if _port_matches(rule, port) and any(_peer_matches(x, policy["metadata"]["namespace"], peer)
                                                 for x in rule.get(peers, [{}])):
                return True
    return False


def _connects(policies: list[dict[str, Any]], src: Pod, dst: Pod, port: int) -> bool:
    return _allowed(policies, "Egress", src, dst, port) and _allowed(policies, "Ingress", dst, src, port)


GATEWAY_STATS_PORT = 9902
"""Envoy's own stats (the gateway's stats listener), for Prometheus."""


def _expected() -> set[tuple[str, str, int]]:
    edges = {("ingress", "chieu-gateway", 8080), ("prometheus", "chieu-gateway", GATEWAY_STATS_PORT)}
    for s, port in PORTS.items():
        edges |= {("chieu-gateway", f"chieu-{s}", port), (f"chieu-{s}", "nats", 4222),
                  ("prometheus", f"chieu-{s}", METRICS_PORT)}
        edges |= {(f"chieu-{s}", f"chieu-{callee}", PORTS[callee]) for callee in CALLS[s]}
    for s in DATA_OWNERS:
        db = f"chieu-{s}-db"
        edges |= {(f"chieu-{s}", db, 5432), (db, db, 5432), (db, db, 8000), ("cnpg-operator", db, 8000),
                  ("cnpg-operator", db, 5432), ("prometheus", db, 9187)}
    edges |= {("nats", "nats", 6222), ("prometheus", "nats", 8222)}
    return edges


PROBED_PORTS = sorted({8080, GATEWAY_STATS_PORT, 4222, 6222, 8222, 5432, 8000, 9187, METRICS_PORT, *PORTS.values()})


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_exactly_what_must_talk_can(overlay: str) -> None:
    docs = render(overlay)
    policies = [d for d in docs if d["kind"] == "NetworkPolicy"]
    pods = _pods(docs)
    allowed = {(a, b, port) for (a, src), (b, dst), port in product(pods.items(), pods.items(), PROBED_PORTS)
               if _connects(policies, src, dst, port) and (src.namespace == NS or dst.namespace == NS)}
    expected = _expected()
    assert expected - allowed == set(), "needed but blocked"
    assert allowed - expected == set(), "allowed but not needed"


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_every_pod_can_resolve_names_and_nothing_else_leaves(overlay: str) -> None:
    docs = render(overlay)
    policies = [d for d in docs if d["kind"] == "NetworkPolicy"]
    pods = _pods(docs)
    for name, pod in pods.items():
        if pod.namespace == NS:
            assert _allowed(policies, "Egress", pod, pods["dns"], 53), name
            assert not _allowed(policies, "Egress", pod, pods["outsider"], 443), name
    default_deny = [p for p in policies if p["spec"]["podSelector"] == {}
                    and set(p["spec"]["policyTypes"]) == {"Ingress", "Egress"}]
    assert default_deny and not any(default_deny[0]["spec"].get(k) for k in ("ingress", "egress"))


def test_the_evaluator_sees_a_hole() -> None:
    """A policy letting every pod of the namespace reach the ledger's database is caught."""
    docs = render("prod")
    docs.append({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
                 "metadata": {"name": "hole", "namespace": NS},
                 "spec": {"podSelector": {}, "policyTypes": ["Egress", "Ingress"],
                          "egress": [{"to": [{"podSelector": {}}]}], "ingress": [{"from": [{"podSelector": {}}]}]}})
    policies = [d for d in docs if d["kind"] == "NetworkPolicy"]
    pods = _pods(docs)
    assert _connects(policies, pods["chieu-table"], pods["chieu-ledger-db"], 5432)
    assert not _connects([p for p in policies if p["metadata"]["name"] != "hole"], pods["chieu-table"],
                         pods["chieu-ledger-db"], 5432)
