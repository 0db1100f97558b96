"""Envoy's configuration, generated from the settings, and a local Envoy process.

One listener speaks HTTP/1.1 and HTTP/2 to browsers; the ``grpc_web`` filter turns gRPC-Web
requests into gRPC (and gRPC responses, server streams included, back into gRPC-Web); ``cors``
answers preflights for the origins allowed; the router sends each service's path prefix
(``/chieu.table.v1.TableService/`` …) to that service over HTTP/2, and every other path to the
front-end's static files. Every answer carries the portal's security headers
(:data:`SECURITY_HEADERS`: a CSP without ``unsafe-inline`` and with ``frame-ancestors 'none'``,
``nosniff``, a referrer policy). Routes have no timeout and streams no idle timeout, so a ``Watch`` or a
``WatchRoom`` stays open as long as the client keeps it.

Requests to the services are limited per client address (``local_ratelimit``, issue 27): a token
bucket per browser address (the peer Envoy sees), ``rate_per_address`` requests a second and
``rate × burst`` at once (:data:`WEB_RATE_PER_ADDRESS`, :data:`WEB_BURST_S`), the portal's files
not counted; over it Envoy itself answers HTTP 429 with ``grpc-status: 8`` (``RESOURCE_EXHAUSTED``),
``chieu-reason: rate_limited`` and ``retry-after-ms``, and the request never reaches a service.
The services' own limits (per player, per address through ``X-Forwarded-For``) apply behind it.
The buckets are per Envoy process.
"""

from __future__ import annotations

import ipaddress
import sys
from typing import Any

import yaml

from chieu.kit.settings import Settings

DEFAULT_PORT = 8080
"""Where ``chieu up`` serves the portal (Envoy's one listener)."""

SERVICES = {  # cluster → the gRPC services behind it (the path prefixes routed there)
    "table": ("chieu.table.v1.TableService",),
    "ledger": ("chieu.ledger.v1.LedgerService",),
    "ladder": ("chieu.ladder.v1.LadderService",),
    "lobby": ("chieu.lobby.v1.LobbyService",),
}
EXPOSED_HEADERS = "grpc-status,grpc-message,grpc-status-details-bin,chieu-reason,retry-after-ms"
ALLOWED_HEADERS = ("content-type,x-grpc-web,x-user-agent,authorization,grpc-timeout,"
                   "connect-protocol-version,connect-timeout-ms")

CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; "
       "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
"""The portal's Content-Security-Policy: its own files only, no inline script or style, never framed."""
SECURITY_HEADERS = {
    "content-security-policy": CSP,
    "x-content-type-options": "nosniff",
    "referrer-policy": "strict-origin-when-cross-origin",
    "x-frame-options": "DENY",
    "cross-origin-opener-policy": "same-origin",
}
"""Headers on every answer of the gateway (the portal's files and the services' answers alike)."""


WEB_RATE_PER_ADDRESS = Settings().web_rate_per_address
"""Requests a second one browser address may send to the services through the gateway (the
default of ``CHIEU_WEB_RATE_PER_ADDRESS``; the Kubernetes configuration is written with it)."""
WEB_BURST_S = 4.0
"""Seconds of requests a browser address may send at once (a page load's burst)."""
MAX_ADDRESSES = 100_000
"""Browser addresses the gateway keeps a bucket for at most (the least recently seen go first)."""


def rate_limit(per_s: float, burst_s: float) -> dict[str, Any]:
    """The ``local_ratelimit`` filter: one token bucket per client address (a dynamic descriptor
    on ``remote_address``), refusing as gRPC ``RESOURCE_EXHAUSTED`` with the reason and the wait."""
    fill_ms = max(100, round(1000 / per_s))  # Envoy fills at most every 50 ms; a refusal waits one fill
    bucket = {"max_tokens": max(1, round(per_s * burst_s)), "tokens_per_fill": max(1, round(per_s * fill_ms / 1000)),
              "fill_interval": f"{fill_ms / 1000}s"}
    everyone = {"default_value": {"numerator": 100, "denominator": "HUNDRED"}}
    return {"name": "envoy.filters.http.local_ratelimit", "typed_config": {
        "@type": "type.googleapis.com/envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit",
        "stat_prefix": "web_rate",
        "token_bucket": {"max_tokens": 1_000_000, "tokens_per_fill": 1_000_000, "fill_interval": "1s"},
        "filter_enabled": {**everyone, "runtime_key": "web_rate_enabled"},
        "filter_enforced": {**everyone, "runtime_key": "web_rate_enforced"},
        "rate_limited_as_resource_exhausted": True,
        "response_headers_to_add": [
            {"append_action": "OVERWRITE_IF_EXISTS_OR_ADD", "header": {"key": "chieu-reason", "value": "rate_limited"}},
            {"append_action": "OVERWRITE_IF_EXISTS_OR_ADD", "header": {"key": "retry-after-ms", "value": str(fill_ms)}},
            # the status is RESOURCE_EXHAUSTED, as the services say (Envoy would say 14, UNAVAILABLE, for the 429)
            {"append_action": "OVERWRITE_IF_EXISTS_OR_ADD", "header": {"key": "grpc-status", "value": "8"}},
            {"append_action": "OVERWRITE_IF_EXISTS_OR_ADD", "header": {
                "key": "grpc-message", "value": "rate_limited: too many requests from this address"}},
        ],
        "descriptors": [{"entries": [{"key": "remote_address"}], "token_bucket": bucket}],
        "max_dynamic_descriptors": MAX_ADDRESSES,
        "rate_limits": [{"actions": [{"remote_address": {}}]}],
    }}


def upstreams(settings: Settings) -> dict[str, str]:
    """Each cluster's ``host:port``, from the settings the services themselves listen by."""
    return {"table": settings.table_addr, "ledger": settings.ledger_addr,
            "ladder": settings.ladder_addr, "lobby": settings.lobby_addr}


def _split(addr: str) -> tuple[str, int]:
    host, port = addr.rsplit(":", 1)
    return ("127.0.0.1" if host in ("", "0.0.0.0", "[::]") else host), int(port)


def _upstream_tls(host: str, ca: str) -> dict[str, Any]:
    """TLS to an upstream: its certificate must chain to ``ca`` and name ``host``; HTTP/2 by ALPN."""
    try:
        ipaddress.ip_address(host)
        san, sni = "IP_ADDRESS", {}
    except ValueError:
        san, sni = "DNS", {"sni": host}
    return {"name": "envoy.transport_sockets.tls", "typed_config": {
        "@type": "type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext", **sni,
        "common_tls_context": {"alpn_protocols": ["h2"], "validation_context": {
            "trusted_ca": {"filename": ca},
            "match_typed_subject_alt_names": [{"san_type": san, "matcher": {"exact": host}}]}}}}


def _cluster(name: str, addr: str, *, http2: bool, dns: bool, ca: str | None = None) -> dict[str, Any]:
    host, port = _split(addr)
    cluster: dict[str, Any] = {
        "name": name,
        "type": "STRICT_DNS" if dns else "STATIC",
        "connect_timeout": "1s",
        "load_assignment": {"cluster_name": name, "endpoints": [{"lb_endpoints": [
            {"endpoint": {"address": {"socket_address": {"address": host, "port_value": port}}}}]}]},
    }
    if dns:  # a headless Service: every pod's address, balanced per request, re-resolved
        cluster["lb_policy"] = "ROUND_ROBIN"
        cluster["dns_refresh_rate"] = "5s"
        cluster["respect_dns_ttl"] = True
    if http2:
        cluster["typed_extension_protocol_options"] = {
            "envoy.extensions.upstreams.http.v3.HttpProtocolOptions": {
                "@type": "type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions",
                "explicit_http_config": {"http2_protocol_options": {}},
            }}
    if ca is not None:
        cluster["transport_socket"] = _upstream_tls(host, ca)
    return cluster


def config(listen: str, upstream: dict[str, str], static: str | None, *,
           cors_origins: tuple[str, ...] = (), dns: bool = False, admin: str | None = None,
           upstream_ca: str | None = None, rate_per_address: float | None = None,
           burst_s: float = WEB_BURST_S, stats: str | None = None) -> dict[str, Any]:
    """Envoy's bootstrap: a listener on ``listen`` (``host:port``), the services of ``upstream``
    (cluster name → ``host:port``) over HTTP/2, and ``static`` (``host:port`` of a plain HTTP file
    server; None: no front-end files). ``cors_origins``: exact origins allowed cross-origin (the
    portal's own pages are same-origin and need none). ``dns``: resolve upstream names (Kubernetes).
    ``upstream_ca``: the services listen with TLS, their certificates checked against this CA file.
    ``rate_per_address``: requests a second per browser address (``burst_s`` seconds of them at
    once) before Envoy refuses; 0: no limit; None: ``CHIEU_WEB_RATE_PER_ADDRESS``. ``stats``
    (``host:port``, with ``admin``): a listener that serves the admin's ``/stats/prometheus`` and
    ``/ready`` and nothing else of it (the admin itself stays on loopback: it can stop Envoy)."""
    if rate_per_address is None:
        from chieu.kit.settings import from_env

        rate_per_address = from_env().web_rate_per_address
    host, port = _split(listen)
    routes: list[dict[str, Any]] = []
    for cluster, services in SERVICES.items():
        if cluster not in upstream:
            continue
        for service in services:
            routes.append({"match": {"prefix": f"/{service}/"},
                           "route": {"cluster": cluster, "timeout": "0s",
                                     "max_stream_duration": {"grpc_timeout_header_max": "0s"}}})
    if static is not None:  # the portal's files are not counted: a page's burst of files is not a player's calls
        routes.append({"match": {"prefix": "/"}, "route": {"cluster": "static"}, "typed_per_filter_config": {
            "envoy.filters.http.local_ratelimit": {
                "@type": "type.googleapis.com/envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit",
                "stat_prefix": "web_files", "filter_enabled": {"default_value": {"numerator": 0}},
                "token_bucket": {"max_tokens": 1, "tokens_per_fill": 1, "fill_interval": "1s"}}}})
    secure = [{"append_action": "OVERWRITE_IF_EXISTS_OR_ADD", "header": {"key": k, "value": v}}
              for k, v in SECURITY_HEADERS.items()]
    virtual_host: dict[str, Any] = {"name": "chieu", "domains": ["*"], "routes": routes,
                                    "response_headers_to_add": secure}
    if cors_origins:
        virtual_host["typed_per_filter_config"] = {"envoy.filters.http.cors": {
            "@type": "type.googleapis.com/envoy.extensions.filters.http.cors.v3.CorsPolicy",
            "allow_origin_string_match": [{"exact": o} for o in cors_origins],
            "allow_methods": "GET,POST,OPTIONS",
            "allow_headers": ALLOWED_HEADERS,
            "expose_headers": EXPOSED_HEADERS,
            "max_age": "86400",
        }}
    manager = {
        "@type": "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3"
                 ".HttpConnectionManager",
        "stat_prefix": "web",
        "codec_type": "AUTO",
        "stream_idle_timeout": "0s",  # a quiet Watch is not idle: it waits for the next move
        # the browser's address (the peer Envoy sees) appended to X-Forwarded-For: what the services
        # count a client by when they trust this gateway (CHIEU_TRUSTED_PROXIES)
        "use_remote_address": True,
        "route_config": {"name": "chieu", "virtual_hosts": [virtual_host]},
        "http_filters": [  # cors first (its headers on every answer), the rate limit before grpc_web
            # (whose encoder would rewrite the limit's gRPC status), the router last
            {"name": "envoy.filters.http.cors", "typed_config": {
                "@type": "type.googleapis.com/envoy.extensions.filters.http.cors.v3.Cors"}},
            *([rate_limit(rate_per_address, burst_s)] if rate_per_address > 0 else []),
            {"name": "envoy.filters.http.grpc_web", "typed_config": {
                "@type": "type.googleapis.com/envoy.extensions.filters.http.grpc_web.v3.GrpcWeb"}},
            {"name": "envoy.filters.http.router", "typed_config": {
                "@type": "type.googleapis.com/envoy.extensions.filters.http.router.v3.Router"}},
        ],
    }
    clusters = [_cluster(name, addr, http2=True, dns=dns, ca=upstream_ca) for name, addr in upstream.items()]
    if static is not None:
        clusters.append(_cluster("static", static, http2=False, dns=dns))
    boot: dict[str, Any] = {"static_resources": {
        "listeners": [{
            "name": "web",
            "address": {"socket_address": {"address": host, "port_value": port}},
            "filter_chains": [{"filters": [{"name": "envoy.filters.network.http_connection_manager",
                                            "typed_config": manager}]}],
        }],
        "clusters": clusters,
    }}
    if admin is not None:
        a_host, a_port = _split(admin)
        boot["admin"] = {"address": {"socket_address": {"address": a_host, "port_value": a_port}}}
        if stats is not None:
            s_host, s_port = _split(stats)
            boot["static_resources"]["listeners"].append(_stats_listener(s_host, s_port))
            clusters.append(_cluster("admin", admin, http2=False, dns=False))
    return boot


def _stats_listener(host: str, port: int) -> dict[str, Any]:
    """A listener that passes ``GET /stats/prometheus`` and ``/ready`` to the admin, and no other path."""
    routes = [{"match": {"path": path}, "route": {"cluster": "admin"}} for path in ("/stats/prometheus", "/ready")]
    manager = {
        "@type": "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3"
                 ".HttpConnectionManager",
        "stat_prefix": "stats",
        "codec_type": "AUTO",
        "route_config": {"name": "stats", "virtual_hosts": [{"name": "stats", "domains": ["*"], "routes": routes}]},
        "http_filters": [{"name": "envoy.filters.http.router", "typed_config": {
            "@type": "type.googleapis.com/envoy.extensions.filters.http.router.v3.Router"}}],
    }
    return {"name": "stats", "address": {"socket_address": {"address": host, "port_value": port}},
            "filter_chains": [{"filters": [{"name": "envoy.filters.network.http_connection_manager",
                                            "typed_config": manager}]}]}


def render(boot: dict[str, Any]) -> str:
    return yaml.safe_dump(boot, sort_keys=False, allow_unicode=True)


KUBERNETES_UPSTREAMS = {
    # headless Services (deploy/gateway/services.yaml): every pod's address, so Envoy balances
    # each request over the replicas instead of pinning one HTTP/2 connection to one pod
    "table": "chieu-table-pods:50051",
    "ledger": "chieu-ledger-pods:50052",
    "ladder": "chieu-ladder:50053",
    "lobby": "chieu-lobby:50054",
}
KUBERNETES_LISTEN = "0.0.0.0:8080"
KUBERNETES_STATIC = "127.0.0.1:8081"  # the pod's files container
KUBERNETES_ADMIN = "127.0.0.1:9901"  # in-pod only: readiness (/ready) from the probe's exec, stats
KUBERNETES_STATS = "0.0.0.0:9902"  # the admin's /stats/prometheus (and /ready) for Prometheus, nothing else


KUBERNETES_UPSTREAM_CA = "/etc/chieu/tls/ca.crt"
"""With deploy/components/grpc-tls: the CA that signed the services' certificates, in the gateway pod."""


def kubernetes(tls: bool = False) -> str:
    """deploy/gateway/envoy.yaml, as committed (tests/web/test_gateway.py checks it); with ``tls``,
    deploy/components/grpc-tls/envoy.yaml: the services spoken to over TLS, checked against the CA."""
    out = "deploy/components/grpc-tls/envoy.yaml" if tls else "deploy/gateway/envoy.yaml"
    flags = "--kubernetes --tls" if tls else "--kubernetes"
    head = (f"# Generated by `python -m chieu.gateway.envoy {flags} > {out}`\n"
            "# (services/gateway/envoy.py); tests/web/test_gateway.py fails when it differs.\n")
    return head + render(config(KUBERNETES_LISTEN, KUBERNETES_UPSTREAMS, KUBERNETES_STATIC, dns=True,
                                admin=KUBERNETES_ADMIN, upstream_ca=KUBERNETES_UPSTREAM_CA if tls else None,
                                rate_per_address=WEB_RATE_PER_ADDRESS, stats=KUBERNETES_STATS))


if __name__ == "__main__":
    if sys.argv[1:2] == ["--kubernetes"] and set(sys.argv[2:]) <= {"--tls"}:
        sys.stdout.write(kubernetes(tls="--tls" in sys.argv[2:]))
    else:
        from chieu.kit.settings import from_env

        sys.stdout.write(render(config(f"127.0.0.1:{DEFAULT_PORT}", upstreams(from_env()), None)))
