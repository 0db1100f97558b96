"""The gateway's configuration: what the module generates is a configuration Envoy accepts, every
service is routed, and deploy/gateway agrees with the code (the committed envoy.yaml is the
generated one, every manifest is listed, the Services it names exist or are documented)."""

from __future__ import annotations

import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import yaml

from chieu.gateway import envoy
from chieu.kit.settings import Settings
from chieu_tools import localnats
from chieu_tools.gateway import envoyproc

DEPLOY = Path(__file__).resolve().parents[2] / "deploy" / "gateway"


def _validate(path: Path) -> None:
    out = subprocess.run([envoyproc.binary(), "--mode", "validate", "-c", str(path), "--disable-hot-restart"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]


def test_the_local_configuration_is_valid_and_routes_every_service(tmp_path: Path) -> None:
    boot = envoy.config("127.0.0.1:8080", envoy.upstreams(Settings()), "127.0.0.1:8081",
                        cors_origins=("http://localhost:5173",))
    routes = boot["static_resources"]["listeners"][0]["filter_chains"][0]["filters"][0]["typed_config"][
        "route_config"]["virtual_hosts"][0]["routes"]
    prefixes = [r["match"]["prefix"] for r in routes]
    assert prefixes[-1] == "/" and routes[-1]["route"]["cluster"] == "static"
    for services in envoy.SERVICES.values():
        for s in services:
            assert f"/{s}/" in prefixes
    assert all(r["route"]["timeout"] == "0s" for r in routes[:-1]), "streams have no route timeout"
    path = tmp_path / "envoy.yaml"
    path.write_text(envoy.render(boot))
    _validate(path)


def test_the_kubernetes_configuration_is_the_generated_one_and_valid() -> None:
    committed = DEPLOY / "envoy.yaml"
    assert committed.read_text() == envoy.kubernetes(), \
        "deploy/gateway/envoy.yaml is stale: python -m chieu.gateway.envoy --kubernetes > deploy/gateway/envoy.yaml"
    _validate(committed)


def test_the_kubernetes_tls_configuration_is_the_generated_one_and_valid(tmp_path: Path) -> None:
    committed = DEPLOY.parent / "components" / "grpc-tls" / "envoy.yaml"
    assert committed.read_text() == envoy.kubernetes(tls=True), \
        "deploy/components/grpc-tls/envoy.yaml is stale: python -m chieu.gateway.envoy --kubernetes --tls > it"
    from chieu_tools import tlsgen

    ca = tlsgen.ensure(tmp_path / "tls").ca  # Envoy's validation reads the CA file: a real one here
    copy = tmp_path / "envoy.yaml"
    copy.write_text(committed.read_text().replace(envoy.KUBERNETES_UPSTREAM_CA, str(ca)))
    _validate(copy)


def _docs() -> list[dict[str, Any]]:
    return [d for p in sorted(DEPLOY.glob("*.yaml")) if p.name not in ("envoy.yaml", "kustomization.yaml")
            for d in yaml.safe_load_all(p.read_text()) if d]


def test_the_manifests_agree() -> None:
    kust = yaml.safe_load((DEPLOY / "kustomization.yaml").read_text())
    files = {p.name for p in DEPLOY.glob("*.yaml")} - {"kustomization.yaml", "envoy.yaml"}
    assert set(kust["resources"]) == files
    assert kust["configMapGenerator"][0]["files"] == ["envoy.yaml"]
    services = {d["metadata"]["name"]: d for d in _docs() if d["kind"] == "Service"}
    for name, addr in envoy.KUBERNETES_UPSTREAMS.items():
        host, port = addr.rsplit(":", 1)
        if host in services:  # the headless ones are here; the others are the services' own
            assert services[host]["spec"]["clusterIP"] == "None"
            assert services[host]["spec"]["ports"][0]["port"] == int(port)
            assert services[host]["spec"]["selector"] == {"app.kubernetes.io/name": f"chieu-{name}"}
    (deployment,) = [d for d in _docs() if d["kind"] == "Deployment"]
    containers = {c["name"]: c for c in deployment["spec"]["template"]["spec"]["containers"]}
    listen = int(envoy.KUBERNETES_LISTEN.rsplit(":", 1)[1])
    assert containers["envoy"]["ports"][0]["containerPort"] == listen
    assert envoy.KUBERNETES_STATIC.rsplit(":", 1)[1] in containers["files"]["command"]
    (ingress,) = [d for d in _docs() if d["kind"] == "Ingress"]
    backend = ingress["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]
    assert backend["name"] == "chieu-gateway" and services["chieu-gateway"]["spec"]["ports"][0]["port"] == listen


def test_every_service_route_is_rate_limited_per_browser_address() -> None:
    """Issue 27: the web path has Envoy's local rate limit, one bucket per client address."""
    boot = envoy.config("127.0.0.1:8080", envoy.upstreams(Settings()), None, rate_per_address=10, burst_s=3)
    filters = boot["static_resources"]["listeners"][0]["filter_chains"][0]["filters"][0]["typed_config"][
        "http_filters"]
    names = [f["name"] for f in filters]
    assert names.index("envoy.filters.http.local_ratelimit") < names.index("envoy.filters.http.router")
    limit = filters[names.index("envoy.filters.http.local_ratelimit")]["typed_config"]
    assert limit["rate_limits"] == [{"actions": [{"remote_address": {}}]}]
    (per_address,) = limit["descriptors"]
    assert per_address["entries"] == [{"key": "remote_address"}]  # no value: a bucket per address
    assert per_address["token_bucket"] == {"max_tokens": 30, "tokens_per_fill": 1, "fill_interval": "0.1s"}
    assert limit["rate_limited_as_resource_exhausted"] is True
    off = envoy.config("127.0.0.1:8080", envoy.upstreams(Settings()), None, rate_per_address=0)
    assert "local_ratelimit" not in str(off)
    assert "local_ratelimit" in (DEPLOY / "envoy.yaml").read_text()


def test_a_live_envoy_refuses_an_address_over_its_rate_with_the_reason_and_the_wait(tmp_path: Path) -> None:
    import os
    import urllib.error
    import urllib.request

    from chieu_tools import localnats

    listen = f"127.0.0.1:{localnats.free_port()}"
    nowhere = {"table": f"127.0.0.1:{localnats.free_port()}"}  # nothing listens: a passed request fails upstream
    files = f"127.0.0.1:{localnats.free_port()}"
    path = tmp_path / "envoy.yaml"
    path.write_text(envoy.render(envoy.config(listen, nowhere, files, rate_per_address=2, burst_s=1)))
    proc = subprocess.Popen(envoyproc.argv(path, concurrency=1), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env={**os.environ})
    try:
        localnats.wait_for_port(int(listen.rsplit(":", 1)[1]), timeout=30, proc=proc)
        answers = []
        for _ in range(4):
            req = urllib.request.Request(f"http://{listen}/chieu.table.v1.TableService/GetTable", data=b"\0\0\0\0\0",
                                         headers={"content-type": "application/grpc-web+proto", "x-grpc-web": "1"})
            try:
                with urllib.request.urlopen(req, timeout=10) as r:
                    answers.append((r.status, r.headers.get("grpc-status"), r.headers.get("chieu-reason"),
                                    r.headers.get("retry-after-ms")))
            except urllib.error.HTTPError as e:
                answers.append((e.code, e.headers.get("grpc-status"), e.headers.get("chieu-reason"),
                                e.headers.get("retry-after-ms")))
        assert [a[2] for a in answers[:2]] == [None, None], answers  # passed on (and failed upstream)
        for answer in answers[2:]:  # refused by Envoy: RESOURCE_EXHAUSTED, the reason and the wait
            assert answer == (429, "8", "rate_limited", "500"), answers
        for _ in range(3):  # the portal's files are not counted
            try:
                urllib.request.urlopen(f"http://{listen}/index.html", timeout=10)
            except urllib.error.HTTPError as e:
                assert e.code == 503 and e.headers.get("chieu-reason") is None  # no file server: upstream fails
    finally:
        envoyproc.stop(proc)


def test_every_answer_carries_the_security_headers() -> None:
    for boot in (envoy.config("127.0.0.1:8080", envoy.upstreams(Settings()), "127.0.0.1:8081"),
                 yaml.safe_load((DEPLOY / "envoy.yaml").read_text())):
        host = boot["static_resources"]["listeners"][0]["filter_chains"][0]["filters"][0]["typed_config"][
            "route_config"]["virtual_hosts"][0]
        headers = {h["header"]["key"]: h["header"]["value"] for h in host["response_headers_to_add"]}
        csp = headers["content-security-policy"]
        assert "unsafe-inline" not in csp and "unsafe-eval" not in csp
        assert "frame-ancestors 'none'" in csp and "script-src 'self'" in csp and "style-src 'self'" in csp
        assert headers["x-content-type-options"] == "nosniff"
        assert headers["referrer-policy"] and headers["x-frame-options"] == "DENY"


def test_the_stats_listener_serves_prometheus_and_the_readiness_and_nothing_else_of_the_admin(
        tmp_path: Path) -> None:
    """Issue 36: Prometheus scrapes the gateway's own stats (an Envoy death shows: its target down,
    ``envoy_server_live``) through a listener that passes only ``/stats/prometheus`` and ``/ready`` to
    the admin, which stays on loopback (it could stop Envoy: ``/quitquitquit``)."""
    web, admin, stats = (localnats.free_port() for _ in range(3))
    boot = envoy.config(f"127.0.0.1:{web}", {}, None, admin=f"127.0.0.1:{admin}", rate_per_address=0,
                        stats=f"127.0.0.1:{stats}")
    path = tmp_path / "envoy.yaml"
    path.write_text(envoy.render(boot))
    _validate(path)
    proc = subprocess.Popen(envoyproc.argv(path), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        localnats.wait_for_port(stats, timeout=60, proc=proc)
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{stats}/ready", timeout=3) as r:
                    assert r.read().strip() == b"LIVE"
                    break
            except (urllib.error.URLError, OSError):
                assert time.monotonic() < deadline
                time.sleep(0.3)
        with urllib.request.urlopen(f"http://127.0.0.1:{stats}/stats/prometheus", timeout=5) as r:
            text = r.read().decode()
        assert "envoy_server_live" in text and "envoy_http_downstream_rq_total" in text
        for other in ("/quitquitquit", "/config_dump", "/stats"):
            request = urllib.request.Request(f"http://127.0.0.1:{stats}{other}", method="POST")
            try:
                urllib.request.urlopen(request, timeout=5)
                raise AssertionError(f"{other} answered through the stats listener")
            except urllib.error.HTTPError as e:
                assert e.code == 404, other
        assert proc.poll() is None  # still running
    finally:
        envoyproc.stop(proc)
