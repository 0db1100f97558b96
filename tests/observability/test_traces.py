"""One trace from a move to its consequences: the table, the ledger and the ladder run in this
process with an in-memory span exporter; a resignation at a 过关斩将 table is one trace from its
``Act`` server span through the append (whose ``traceparent`` rides in the record's NATS headers)
to the ledger's posting and the ladder's change. Log lines carry the trace id. With tracing off,
no span is made and the record carries no ``traceparent``."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import replace

import grpc
import nats
import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind
from structlog.testing import capture_logs

from chieu.games.xiangqi.v1 import xiangqi_pb2
from chieu.kit import logs, names, tracing
from chieu.kit.server import Server
from chieu.kit.settings import Settings
from chieu_tools import localnats
from tests.conftest import credential
from tests.ladder.helpers import act
from tests.observability.conftest import until
from tests.table.helpers import client, refused

pytestmark = pytest.mark.integration

ACT = "chieu.table.v1.TableService/Act"


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracing.use(provider)
    try:
        yield exporter
    finally:
        tracing.use(None)
        provider.shutdown()


@pytest.fixture(scope="module")
async def system(settings: Settings, private_nats: str, private_db: str) -> AsyncIterator[Settings]:
    """The table, the ledger and the ladder in this process, on the private NATS and database."""
    from chieu.ladder.app import build as ladder
    from chieu.ledger.app import build as ledger
    from chieu.table.app import build as table

    mine = replace(settings, nats_url=private_nats, database_url=private_db,
                   table_addr=f"127.0.0.1:{localnats.free_port()}", ledger_addr=f"127.0.0.1:{localnats.free_port()}",
                   ladder_addr=f"127.0.0.1:{localnats.free_port()}", lobby_addr=f"127.0.0.1:{localnats.free_port()}")
    servers: list[Server] = []
    try:
        for build, name in ((table, "table"), (ledger, "ledger"), (ladder, "ladder")):
            server = await build(replace(mine, service_token=credential(name)))
            await server.start()
            servers.append(server)
        yield mine
    finally:
        for server in reversed(servers):
            await server.shutdown()


def named(exporter: InMemorySpanExporter, name: str) -> list[ReadableSpan]:
    return [s for s in exporter.get_finished_spans() if s.name == name]


def outcome(span: ReadableSpan) -> str:
    return str((span.attributes or {}).get("chieu.outcome", ""))


async def test_a_move_is_one_trace_from_act_to_the_posting_and_the_ladder(
        system: Settings, spans: InMemorySpanExporter) -> None:
    ann, bob = f"ann-{uuid.uuid4().hex[:6]}", f"bob-{uuid.uuid4().hex[:6]}"
    a, b = client(system, system.table_addr, ann), client(system, system.table_addr, bob)
    try:
        view = await a.create("xiangqi", {}, ladder_level=1)
        table_id = view.table_id
        await b.sit(table_id)
        # the table's call to the ladder (the seat check) carries the TakeSeat span's context
        (sit,) = [s for s in named(spans, "chieu.table.v1.TableService/TakeSeat")]
        checks = [s for s in named(spans, "chieu.ladder.v1.LadderService/CheckSeat")
                  if s.context.trace_id == sit.context.trace_id]
        assert checks and all(c.parent is not None and c.parent.span_id == sit.context.span_id for c in checks)
        await a.start(table_id)
        with capture_logs(processors=[logs.add_trace]) as lines:
            assert await refused(act(a, "no-such-table", xiangqi_pb2.Resign())) == (
                grpc.StatusCode.NOT_FOUND, "unknown_table")
        spans.clear()
        await act(a, table_id, xiangqi_pb2.Resign())
    finally:
        await a.close()
        await b.close()

    def finished() -> bool:
        return any(outcome(s) == "posted" for s in named(spans, "ledger.post")) and \
            any(outcome(s) == "applied" for s in named(spans, "ladder.apply"))

    await until(finished)
    (move,) = named(spans, ACT)
    assert move.kind is SpanKind.SERVER and move.parent is None
    appends = sorted((s for s in named(spans, f"append {names.TABLES.name}")
                      if s.context.trace_id == move.context.trace_id), key=lambda s: s.start_time or 0)
    # the move's record first; the hand over, the idle stands of its players (they hold no stream)
    # follow in the same trace
    assert appends and all(a.parent is not None and a.parent.span_id == move.context.span_id for a in appends)
    append = appends[0]
    assert append.kind is SpanKind.PRODUCER and append.parent is not None
    assert append.parent.span_id == move.context.span_id
    (posting,) = [s for s in named(spans, "ledger.post") if outcome(s) == "posted"]
    (change,) = [s for s in named(spans, "ladder.apply") if outcome(s) == "applied"]
    for consumer in (posting, change):
        assert consumer.kind is SpanKind.CONSUMER
        assert consumer.context.trace_id == move.context.trace_id  # one trace: table → ledger, table → ladder
        assert consumer.parent is not None and consumer.parent.span_id == append.context.span_id

    # the refused move's log line carries the ids of its Act span
    (line,) = [e for e in lines if e["event"] == "refused"]
    assert line["reason"] == "unknown_table"
    assert len(line["trace_id"]) == 32 and len(line["span_id"]) == 16
    assert line["trace_id"] != format(move.context.trace_id, "032x")  # its own trace, not the resignation's


async def test_tracing_off_makes_no_span_and_no_traceparent(system: Settings) -> None:
    assert not tracing.on()
    a = client(system, system.table_addr, f"cai-{uuid.uuid4().hex[:6]}")
    try:
        view = await a.create("xiangqi", {})
    finally:
        await a.close()
    nc = await nats.connect(system.nats_url)
    try:
        msg = await nc.jetstream().get_last_msg(names.TABLES.name, names.TABLES.subject(view.table_id))
    finally:
        await nc.close()
    headers = msg.headers or {}
    assert "Nats-Msg-Id" in headers and "traceparent" not in headers


def test_configured_logs_carry_the_trace_id() -> None:
    """``logs.configure`` (JSON, as in production) puts the span's ids in each line written inside it."""
    script = """
import sys
from opentelemetry.sdk.trace import TracerProvider
from chieu.kit import logs, tracing
from chieu.kit.settings import Settings
logs.configure(Settings(log_format="json"), "table")
provider = TracerProvider()
tracing.use(provider)
log = logs.get("chieu.test")
log.info("outside")
with provider.get_tracer("t").start_as_current_span("inside") as span:
    log.info("inside")
    print(format(span.get_span_context().trace_id, "032x"))
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True)
    lines = {d["event"]: d for d in map(json.loads, done.stderr.splitlines())}
    assert "trace_id" not in lines["outside"]
    assert lines["inside"]["trace_id"] == done.stdout.strip() and len(lines["inside"]["span_id"]) == 16


def test_the_settings_choose_the_exporter() -> None:
    assert tracing.wanted(Settings()) == ""
    assert tracing.wanted(Settings(otlp_endpoint="http://collector:4317")) == "otlp"
    assert tracing.wanted(Settings(otlp_endpoint="http://collector:4317", tracing="off")) == ""
    assert tracing.wanted(Settings(tracing="console")) == "console"
