"""TLS (issue 16): a service with a certificate listens with TLS only; a client that trusts its CA
is served, a plaintext client and a client trusting another CA are not; the services call each
other over TLS; a renewed certificate is taken with no restart; NATS with a ``tls`` block serves
clients with the CA and refuses the others. Certificates come from :mod:`chieu_tools.tlsgen`."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import ssl
import stat
import urllib.error
import urllib.request
import uuid
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

import grpc
import pytest
from cryptography import x509
from grpc_health.v1 import health_pb2, health_pb2_grpc

from chieu.kit import channels, names, natsauth
from chieu.kit.eventstore import EventStore
from chieu.kit.server import Server
from chieu.kit.settings import Settings, SettingsError, from_env
from chieu.ledger.v1 import ledger_service_pb2 as gpb
from chieu.ledger.v1 import ledger_service_pb2_grpc as gpb_grpc
from chieu.table.client import TableClient
from chieu.table.v1 import log_pb2
from chieu_tools import localnats, tlsgen
from tests.conftest import NATS_CREDS, nats_creds, token


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> tuple[tlsgen.Files, tlsgen.Files]:
    """Two unrelated local CAs, each with a certificate for localhost and 127.0.0.1."""
    return tlsgen.ensure(tmp_path_factory.mktemp("pki-one")), tlsgen.ensure(tmp_path_factory.mktemp("pki-other"))


def tls(settings: Settings, files: tlsgen.Files) -> Settings:
    return replace(settings, tls_cert=str(files.cert), tls_key=str(files.key), tls_ca=str(files.ca))


async def health(addr: str, *, ca: str = "") -> grpc.StatusCode:
    """The status of a health check of ``addr`` (plaintext, or TLS trusting ``ca``)."""
    async with channels.open_channel(addr, ca=ca) as ch:
        try:
            r = await health_pb2_grpc.HealthStub(ch).Check(health_pb2.HealthCheckRequest(), timeout=5)
        except grpc.aio.AioRpcError as e:
            return e.code()
        assert r.status == health_pb2.HealthCheckResponse.SERVING
        return grpc.StatusCode.OK


def test_the_local_ca_makes_private_keys_and_keeps_them(tmp_path: Path) -> None:
    one = tlsgen.ensure(tmp_path / "a")
    again = tlsgen.ensure(tmp_path / "a")
    other = tlsgen.ensure(tmp_path / "b")
    assert stat.S_IMODE(os.stat(one.key).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(tmp_path / "a" / "ca.key").st_mode) == 0o600
    assert again.cert.read_bytes() == one.cert.read_bytes()  # kept while valid
    assert other.ca.read_bytes() != one.ca.read_bytes()  # fresh per folder
    cert = x509.load_pem_x509_certificate(one.cert.read_bytes())
    san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert "localhost" in san.get_values_for_type(x509.DNSName)
    assert {str(a) for a in san.get_values_for_type(x509.IPAddress)} == {"127.0.0.1"}
    first, ca = one.cert.read_bytes(), one.ca.read_bytes()
    more = tlsgen.ensure(tmp_path / "a", ("localhost", "127.0.0.1", "chieu-table"))  # a new name: a new certificate
    assert more.cert.read_bytes() != first and more.ca.read_bytes() == ca  # by the same CA


def test_a_certificate_needs_its_key() -> None:
    with pytest.raises(SettingsError):
        from_env({"CHIEU_TLS_CERT": "/c.pem"})


def test_production_refuses_to_serve_or_call_in_plaintext(settings: Settings,
                                                          pki: tuple[tlsgen.Files, tlsgen.Files]) -> None:
    prod = replace(settings, env="prod")
    addr = f"127.0.0.1:{localnats.free_port()}"
    with pytest.raises(SettingsError, match="CHIEU_TLS_CERT, CHIEU_TLS_KEY, CHIEU_TLS_CA must be set in production"):
        Server(prod, addr=addr, services=[], register=[])
    with pytest.raises(SettingsError, match=r"^CHIEU_TLS_CA must be set"):  # TLS served, plaintext calls
        channels.check(replace(tls(prod, pki[0]), tls_ca=""))
    channels.check(tls(prod, pki[0]))
    channels.check(settings)  # development: plaintext on loopback


@pytest.mark.integration
async def test_a_tls_service_refuses_plaintext_and_other_cas_and_takes_a_renewed_certificate(
        settings: Settings, pki: tuple[tlsgen.Files, tlsgen.Files], tmp_path: Path) -> None:
    one, other = pki
    live = tmp_path / "live"  # the files the server reads, renewed in place below
    live.mkdir()
    shutil.copy(one.cert, live / "server.pem")
    shutil.copy(one.key, live / "server.key")
    s = replace(settings, tls_cert=str(live / "server.pem"), tls_key=str(live / "server.key"), tls_ca=str(one.ca))
    addr = f"127.0.0.1:{localnats.free_port()}"
    server = Server(s, addr=addr, services=[], register=[])
    await server.start()
    try:
        assert await health(addr, ca=str(one.ca)) == grpc.StatusCode.OK
        assert await health(addr) == grpc.StatusCode.UNAVAILABLE  # plaintext: no answer
        assert await health(addr, ca=str(other.ca)) == grpc.StatusCode.UNAVAILABLE  # an unknown CA
        async with channels.channel(s, addr) as ch:  # a service's own channel: TLS with the CA
            await health_pb2_grpc.HealthStub(ch).Check(health_pb2.HealthCheckRequest(), timeout=5)
        # cert-manager renews the files in place (here: a certificate of the other CA)
        for name, src in (("server.key", other.key), ("server.pem", other.cert)):
            shutil.copy(src, live / f"{name}.new")
            os.replace(live / f"{name}.new", live / name)
        assert await health(addr, ca=str(other.ca)) == grpc.StatusCode.OK
        assert await health(addr, ca=str(one.ca)) == grpc.StatusCode.UNAVAILABLE
    finally:
        await server.shutdown()


@pytest.mark.integration
async def test_the_services_call_each_other_over_tls(
        settings: Settings, database_url: str, pki: tuple[tlsgen.Files, tlsgen.Files]) -> None:
    """A coin table asks the ledger (CheckEligibility) over TLS: it is created only if that works."""
    from chieu.ledger.app import build as build_ledger
    from chieu.table.app import build as build_table

    one, _ = pki
    base = tls(settings, one)
    ledger_s = replace(base, ledger_addr=f"127.0.0.1:{localnats.free_port()}", database_url=database_url,
                       nats_creds=nats_creds("ledger"), instance="tls-ledger")
    table_s = replace(base, table_addr=f"127.0.0.1:{localnats.free_port()}", ledger_addr=ledger_s.ledger_addr,
                      instance="tls-table")
    ledger = await build_ledger(ledger_s)
    await ledger.start()
    table = await build_table(table_s)
    await table.start()
    host = f"tls-host-{uuid.uuid4().hex[:8]}"
    operator = (("authorization", f"Bearer {token(settings, 'op', 'operator')}"),)
    player = TableClient(table_s.table_addr, token(settings, host), ca=str(one.ca))
    try:
        async with channels.channel(base, ledger_s.ledger_addr) as ch:
            await gpb_grpc.LedgerServiceStub(ch).Adjust(
                gpb.AdjustRequest(adjustment_id=uuid.uuid4().hex, player_id=host, currency="coins", delta=100,
                                  reason="tls test"), metadata=operator, timeout=10)
        view = await player.create("o_an_quan", {}, currency=log_pb2.CURRENCY_COINS)
        assert view.table_id and [s.player_id for s in view.seats] == [host]
        plain = TableClient(table_s.table_addr, token(settings, host))
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await plain.get(view.table_id)
        assert refused.value.code() == grpc.StatusCode.UNAVAILABLE
        await plain.close()
    finally:
        await player.close()
        await table.shutdown()
        await ledger.shutdown()


@pytest.fixture(scope="module")
async def tls_nats(tmp_path_factory: pytest.TempPathFactory,
                   pki: tuple[tlsgen.Files, tlsgen.Files]) -> AsyncIterator[str]:
    """A nats-server with the test session's users and TLS (the first CA's certificate)."""
    one, _ = pki
    extra = natsauth.server_block(NATS_CREDS.folder) + natsauth.tls_block(one.cert, one.key)
    proc, url = localnats.start(tmp_path_factory.mktemp("tls-nats"), quiet=True, extra=extra)
    try:
        yield url
    finally:
        localnats.stop(proc)


@pytest.mark.integration
async def test_nats_with_tls_serves_clients_with_the_ca_and_refuses_the_others(
        tls_nats: str, pki: tuple[tlsgen.Files, tlsgen.Files]) -> None:
    one, other = pki
    store = await EventStore.connect(tls_nats, stream=names.TABLES, creds=str(NATS_CREDS.seed("table")),
                                     ca=str(one.ca))
    try:
        assert store.nc.connected_url is not None
        appended = await store.append("tls-1", b"over tls", expected_seq=0, msg_id=uuid.uuid4().hex)
        assert [s.data for s in await store.read("tls-1")] == [b"over tls"]
        assert appended.seq >= 1
    finally:
        await store.close()
    # plaintext: the server says TLS is required and answers nothing else
    host, port = tls_nats.removeprefix("nats://").rsplit(":", 1)
    reader, writer = await asyncio.open_connection(host, int(port))
    try:
        info = await asyncio.wait_for(reader.readline(), 5)
        assert info.startswith(b"INFO ") and json.loads(info[5:])["tls_required"] is True
        writer.write(b'CONNECT {"verbose":false}\r\nPING\r\n')
        await writer.drain()
        answer = await asyncio.wait_for(reader.read(4096), 10)
        assert b"PONG" not in answer
    finally:
        writer.close()
    # a client trusting another CA (nats-py goes to TLS itself): the server's certificate is refused
    with pytest.raises(ssl.SSLCertVerificationError):
        await natsauth.connect_url(tls_nats, "other-ca", creds=str(NATS_CREDS.seed("table")), ca=str(other.ca),
                                   allow_reconnect=False, max_reconnect_attempts=1, connect_timeout=3)


def grpc_web_status(url: str, method: str, body: bytes) -> str:
    """The ``grpc-status`` of one unary gRPC-Web call (from the headers, or the trailer frame)."""
    req = urllib.request.Request(f"{url}{method}", data=b"\x00" + len(body).to_bytes(4, "big") + body, method="POST",
                                 headers={"content-type": "application/grpc-web+proto", "x-grpc-web": "1"})
    try:
        with urllib.request.urlopen(req, timeout=15) as r:
            status, data = r.headers.get("grpc-status"), r.read()
    except urllib.error.HTTPError as e:
        return f"http {e.code}"
    if status is not None:
        return str(status)
    pos = 0
    while pos + 5 <= len(data):
        flag, size = data[pos], int.from_bytes(data[pos + 1:pos + 5], "big")
        frame = data[pos + 5:pos + 5 + size]
        if flag & 0x80:
            for line in frame.decode().split("\r\n"):
                if line.lower().startswith("grpc-status:"):
                    return line.split(":", 1)[1].strip()
        pos += 5 + size
    return "none"


@pytest.mark.integration
async def test_envoy_reaches_the_services_over_tls(settings: Settings, pki: tuple[tlsgen.Files, tlsgen.Files],
                                                   tmp_path: Path) -> None:
    """Through Envoy with the CA, a call reaches the TLS table service (which answers it: no token,
    UNAUTHENTICATED = 16); Envoy without the CA cannot reach it (UNAVAILABLE = 14, or a 503)."""
    from chieu.table.app import build as build_table
    from chieu.table.v1 import table_service_pb2 as pb
    from chieu_tools.gateway import envoyproc

    one, _ = pki
    table_s = replace(tls(settings, one), table_addr=f"127.0.0.1:{localnats.free_port()}", instance="tls-envoy")
    table = await build_table(table_s)
    await table.start()
    method = "/chieu.table.v1.TableService/GetTable"
    body = pb.GetTableRequest(table_id="any").SerializeToString()
    try:
        for ca, expected in ((str(one.ca), {"16"}), (None, {"14", "http 503"})):
            listen = f"127.0.0.1:{localnats.free_port()}"
            proc = await asyncio.to_thread(envoyproc.start, tmp_path / f"envoy-{ca is not None}", listen,
                                           {"table": table_s.table_addr}, None, quiet=True, upstream_ca=ca)
            try:
                got = await asyncio.to_thread(grpc_web_status, f"http://{listen}", method, body)
                assert got in expected, (ca, got)
            finally:
                envoyproc.stop(proc)
    finally:
        await table.shutdown()
