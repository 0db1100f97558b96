"""The monitoring agrees with the code and works: Prometheus scrapes every service on the port
its metrics are served on, every metric an alert or the dashboard reads is one the code exports
(chieu.kit.metrics), the rules are valid PromQL, and each alert fires on the series that must fire
it and not on the healthy ones beside them (promtool's unit tests, tests/deploy/alerts_test.yaml)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import prometheus_client
import yaml

from chieu.kit import metrics

from .tools import DEPLOY, promtool, render, validate_custom

MONITORING = DEPLOY / "monitoring"
EXTERNAL = {"up", "kube_pod_container_status_restarts_total",  # Prometheus' own and kube-state-metrics'
            "kube_pod_container_status_waiting_reason", "kube_statefulset_status_replicas_ready",
            "kube_statefulset_replicas",
            "kubelet_volume_stats_used_bytes", "kubelet_volume_stats_capacity_bytes",  # the kubelet's
            "cnpg_collector_up",  # CloudNativePG's exporter (scraped by the chieu-postgres PodMonitor)
            "envoy_server_live"}  # the gateway's Envoy (the chieu-gateway PodMonitor)
SERVICES = ("table", "ledger", "ladder", "lobby")
PROMQL_WORDS = {"sum", "max", "min", "avg", "by", "on", "or", "and", "unless", "rate", "increase", "deriv", "changes",
                "histogram_quantile", "time", "vector", "bool", "label_values", "count", "without", "ignoring"}


def _exported() -> set[str]:
    """Every sample name chieu.kit.metrics exports."""
    names: set[str] = set()
    for value in vars(metrics).values():
        if isinstance(value, prometheus_client.metrics.MetricWrapperBase):
            for family in value.describe():
                suffixes = {"counter": ("_total",), "histogram": ("_bucket", "_sum", "_count"),
                            "gauge": ("",)}[family.type]
                names |= {family.name + s for s in suffixes}
    return names


def _rule_groups() -> list[dict[str, Any]]:
    rule = yaml.safe_load((MONITORING / "alerts.yaml").read_text())
    groups: list[dict[str, Any]] = rule["spec"]["groups"]
    return groups


def _dashboard_exprs() -> list[str]:
    dash = json.loads((MONITORING / "dashboard.json").read_text())
    return [t["expr"] for p in dash["panels"] for t in p.get("targets", [])]


def _metric_names(expr: str) -> set[str]:
    expr = re.sub(r'"[^"]*"', '""', expr)  # label values
    expr = re.sub(r"\{[^}]*\}", "", expr)  # matchers
    expr = re.sub(r"\[[^\]]*\]", "", expr)  # ranges
    expr = re.sub(r"\b(by|without|on|ignoring)\s*\([^)]*\)", "", expr)  # grouping labels
    words = set(re.findall(r"\b[a-zA-Z_:][a-zA-Z0-9_:]*\b", expr))
    return {w for w in words if w not in PROMQL_WORDS and not w.startswith("__")}


def test_prometheus_scrapes_every_service_where_it_serves_metrics() -> None:
    docs = render("prod")
    (monitor,) = [d for d in docs if d["kind"] == "ServiceMonitor"]
    (expr,) = monitor["spec"]["selector"]["matchExpressions"]
    selected = [d for d in docs if d["kind"] == "Service" and expr["operator"] == "In"
                and d["metadata"].get("labels", {}).get(expr["key"]) in expr["values"]]
    (endpoint,) = monitor["spec"]["endpoints"]
    scraped = {s["metadata"]["name"] for s in selected if endpoint["port"] in {p["name"] for p in s["spec"]["ports"]}}
    assert scraped == {f"chieu-{s}" for s in SERVICES}
    for s in SERVICES:
        (deployment,) = [d for d in docs if d["kind"] == "Deployment" and d["metadata"]["name"] == f"chieu-{s}"]
        (c,) = deployment["spec"]["template"]["spec"]["containers"]
        port = {p["name"]: p["containerPort"] for p in c["ports"]}[endpoint["port"]]
        assert {e["name"]: e.get("value") for e in c["env"]}["CHIEU_METRICS_ADDR"].endswith(f":{port}")
    (pods,) = [d for d in docs if d["kind"] == "PodMonitor" and d["metadata"]["name"] == "chieu-postgres"]
    clusters = {d["metadata"]["name"] for d in docs if d["kind"] == "Cluster"}
    assert set(pods["spec"]["selector"]["matchExpressions"][0]["values"]) == clusters
    # the gateway's Envoy (issue 36): its stats listener, on the port the pod names metrics
    (gateway,) = [d for d in docs if d["kind"] == "PodMonitor" and d["metadata"]["name"] == "chieu-gateway"]
    (deployment,) = [d for d in docs if d["kind"] == "Deployment" and d["metadata"]["name"] == "chieu-gateway"]
    assert gateway["spec"]["selector"]["matchLabels"].items() <= deployment["spec"]["template"]["metadata"][
        "labels"].items()
    (endpoint,) = gateway["spec"]["podMetricsEndpoints"]
    (envoy_c,) = [c for c in deployment["spec"]["template"]["spec"]["containers"] if c["name"] == "envoy"]
    port = {p["name"]: p["containerPort"] for p in envoy_c["ports"]}[endpoint["port"]]
    config = yaml.safe_load(next(d for d in docs if d["kind"] == "ConfigMap"
                                 and d["metadata"]["name"].startswith("chieu-envoy"))["data"]["envoy.yaml"])
    (listener,) = [li for li in config["static_resources"]["listeners"] if li["name"] == "stats"]
    assert listener["address"]["socket_address"]["port_value"] == port
    assert endpoint["path"] == "/stats/prometheus"
    assert all(r["ok"] for r in validate_custom([monitor, pods, gateway])), "the monitors fit their CRDs"


def test_every_metric_read_is_one_the_code_exports() -> None:
    exported = _exported()
    assert {"chieu_consumer_lag", "chieu_ledger_audit_clean", "chieu_js_append_errors_total"} <= exported
    read = set()
    for group in _rule_groups():
        for rule in group["rules"]:
            read |= _metric_names(rule["expr"])
    for expr in _dashboard_exprs():
        read |= _metric_names(expr.replace("$__rate_interval", "5m"))
    assert read - exported - EXTERNAL == set()
    assert len(read & exported) >= 12


def test_the_rules_and_the_dashboards_queries_are_valid_promql(tmp_path: Path) -> None:
    rules = tmp_path / "rules.yaml"
    rules.write_text(yaml.safe_dump({"groups": _rule_groups()}, sort_keys=False))
    queries = [{"record": f"chieu:dashboard:{i}", "expr": e.replace("$__rate_interval", "5m")
                .replace("$namespace", "chieu")} for i, e in enumerate(_dashboard_exprs())]
    dashboard = tmp_path / "dashboard-rules.yaml"
    dashboard.write_text(yaml.safe_dump({"groups": [{"name": "dashboard", "rules": queries}]}))
    out = subprocess.run([promtool(), "check", "rules", str(rules), str(dashboard)], capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr
    broken = tmp_path / "broken.yaml"
    broken.write_text(yaml.safe_dump({"groups": [{"name": "x", "rules": [{"alert": "X", "expr": "sum(rate(x[5m])"}]}]}))
    assert subprocess.run([promtool(), "check", "rules", str(broken)], capture_output=True, timeout=60).returncode != 0


def test_each_alert_fires_when_it_must_and_not_otherwise(tmp_path: Path) -> None:
    (tmp_path / "rules.yaml").write_text(yaml.safe_dump({"groups": _rule_groups()}, sort_keys=False))
    tests = Path(__file__).with_name("alerts_test.yaml")
    shutil.copy(tests, tmp_path / tests.name)
    covered = set(re.findall(r"alertname: (\w+)", tests.read_text()))
    alerts = {r["alert"] for g in _rule_groups() for r in g["rules"]}
    assert covered == alerts, f"alerts with no test: {sorted(alerts - covered)}"
    out = subprocess.run([promtool(), "test", "rules", tests.name], capture_output=True, text=True, timeout=120,
                         cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    assert all(r["labels"]["severity"] in ("page", "ticket") for g in _rule_groups() for r in g["rules"])


def test_every_alert_has_its_runbook_in_the_operators_guide() -> None:
    guide = (DEPLOY.parent / "docs" / "operating.md").read_text()
    headings = {h.strip().lower() for h in re.findall(r"^### (\w+)$", guide, re.M)}
    for group in _rule_groups():
        for rule in group["rules"]:
            anchor = rule["annotations"]["runbook"].partition("#")[2]
            assert rule["annotations"]["runbook"].startswith("docs/operating.md#")
            assert anchor == rule["alert"].lower() and anchor in headings, rule["alert"]
