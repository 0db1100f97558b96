"""Fuzzing every RPC of every service with requests built from their descriptors (issue 19).

For every call, hostile or not (``tests/fuzz/strategies.py``, ``tests/fuzz/tokens.py``):

- the answer is OK, or a documented status with a stable reason code: ``chieu-reason`` in the
  trailing metadata, the same reason in the ``google.rpc.ErrorInfo`` (domain ``chieu``), details
  ``"<reason>: <message>"`` at most 400 + 64 characters. The one status without a reason is
  ``RESOURCE_EXHAUSTED`` from gRPC itself, for a request over the receive limit;
- never a stack trace or a source path in what the client reads;
- the server stays up: its health check says SERVING after every call;
- a refused call changed nothing: no record a command made was appended to the table log, and the
  API-made state of the ledger, ladder and lobby is as it was (:data:`tests.fuzz.conftest.STATE_SQL`).

The number of examples per RPC is ``CHIEU_FUZZ_EXAMPLES`` (default 20: about 40 s for all of
them here); Hypothesis prints the failing example, and ``--hypothesis-seed`` replays a run.
"""

from __future__ import annotations

import asyncio
import os
import re
from collections import Counter
from collections.abc import Coroutine
from typing import Any, TypeVar

import grpc
import pytest
from google.protobuf.message import Message
from grpc_health.v1 import health_pb2, health_pb2_grpc
from hypothesis import HealthCheck, given
from hypothesis import settings as budget

from chieu.kit.errors import MAX_MESSAGE, MAX_REASON
from chieu.kit.settings import Settings
from tests.fuzz import strategies, tokens
from tests.fuzz.conftest import SESSION_STATE, World
from tests.security.rpcs import REASON, SERVICES, Answer, Rpc, call, service_rpcs

pytestmark = pytest.mark.integration

T = TypeVar("T")

EXAMPLES = int(os.environ.get("CHIEU_FUZZ_EXAMPLES", "20"))

DOCUMENTED = frozenset({
    grpc.StatusCode.OK, grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.NOT_FOUND,
    grpc.StatusCode.FAILED_PRECONDITION, grpc.StatusCode.PERMISSION_DENIED, grpc.StatusCode.UNAUTHENTICATED,
    grpc.StatusCode.ALREADY_EXISTS, grpc.StatusCode.ABORTED, grpc.StatusCode.RESOURCE_EXHAUSTED,
})
"""What a call may answer. INTERNAL (an unexpected failure), UNKNOWN, UNAVAILABLE (every peer is
up here) or a deadline are findings."""

LEAKS = re.compile(r"Traceback|File \"|\.py\b|/services/|/site-packages/|/home/|/work/|/tmp/|0x[0-9a-f]{6,}")
"""What a stack trace, a source path or an object's address looks like."""

RPCS = {r.id: r for r in service_rpcs()}
SEEN: Counter[str] = Counter()
"""Answers by RPC, status and reason over the session (printed by the last test)."""


def problems(a: Answer, request_size: int, settings: Settings) -> list[str]:
    """What is wrong with answer ``a`` (empty: nothing)."""
    out = []
    if a.code not in DOCUMENTED:
        out.append(f"undocumented status {a.code.name}: {a.details[:200]!r}")
    text = a.details + a.reason
    if LEAKS.search(text):
        out.append(f"leaks internals: {a.details[:300]!r}")
    if a.ok:
        return out
    if a.code is grpc.StatusCode.RESOURCE_EXHAUSTED and not a.reason:
        if request_size <= settings.max_message_bytes:
            out.append(f"RESOURCE_EXHAUSTED without a reason for a {request_size}-byte request: {a.details!r}")
        return out
    if not REASON.match(a.reason):
        out.append(f"no stable reason: chieu-reason {a.reason!r}, details {a.details[:200]!r}")
    if (a.info_reason, a.info_domain) != (a.reason, "chieu"):
        out.append(f"ErrorInfo {a.info_reason!r}/{a.info_domain!r} is not {a.reason!r}/'chieu'")
    if not a.details.startswith(f"{a.reason}: "):
        out.append(f"details do not start with the reason: {a.details[:200]!r}")
    if len(a.details) > MAX_MESSAGE + MAX_REASON + 2:
        out.append(f"details of {len(a.details)} characters")
    return out


@pytest.mark.parametrize("rpc_id", sorted(RPCS))
async def test_fuzz(rpc_id: str, world: World, settings: Settings) -> None:
    rpc: Rpc = RPCS[rpc_id]
    if rpc.service in ("table", "lobby"):
        await world.deal_tables()
    loop = asyncio.get_running_loop()
    channel = world.channels[rpc.service]
    health = health_pb2_grpc.HealthStub(channel)
    service_name = SERVICES[rpc.service].full_name

    async def serving() -> health_pb2.HealthCheckResponse:
        return await health.Check(health_pb2.HealthCheckRequest(service=service_name), timeout=10)

    def run(coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, loop).result(60)

    @budget(max_examples=EXAMPLES, deadline=None, derandomize=False, database=None,
              suppress_health_check=list(HealthCheck))
    @given(md=tokens.metadata(world.tokens, world.players[:2]),
           request=strategies.requests(rpc.method.input_type, world.pools))
    def example(md: tokens.Metadata, request: Message | bytes) -> None:
        seq, state = run(world.last_seq()), run(world.state())
        answer = run(call(channel, rpc, request, md))
        SEEN[f"{rpc_id} {answer.code.name} {answer.reason}"] += 1
        size = len(request) if isinstance(request, bytes) else request.ByteSize()
        wrong = problems(answer, size, settings)
        alive = run(serving())
        if alive.status != health_pb2.HealthCheckResponse.SERVING:
            wrong.append(f"the server is not serving after the call: {alive.status}")
        if not answer.ok:
            appended = run(world.commands_since(seq))
            if appended:
                wrong.append(f"a refused call appended {[(r.table_id, r.version, r.actor) for r in appended]}")
            after = run(world.state())
            if answer.reason == "refresh_reused":
                after.update({k: state[k] for k in SESSION_STATE})
            changed = {k: (state[k], after[k]) for k in state if state[k] != after[k]}
            if changed:
                wrong.append(f"a refused call changed {changed}")
        assert not wrong, f"{rpc_id} → {answer.code.name}/{answer.reason}: {wrong}"

    await asyncio.to_thread(example)


def test_what_the_fuzzers_saw() -> None:
    """A summary for whoever reads the log (``-s``): how many answers of each kind, per RPC."""
    for line, n in sorted(SEEN.items()):
        print(f"{n:5d} {line}")
    assert not SEEN or any(" OK " in k for k in SEEN), "no fuzzed call ever succeeded: the world is broken"


def test_the_answer_checks_catch_what_they_should(settings: Settings) -> None:
    """The oracle is not vacuous: an internal error, a missing or unstable reason, a leaked trace
    or an unbounded message are each reported."""
    ok_refusal = Answer(grpc.StatusCode.NOT_FOUND, "unknown_game", "unknown_game: no game 'x'", "unknown_game", "chieu")
    assert problems(ok_refusal, 10, settings) == []
    assert problems(Answer(grpc.StatusCode.OK), 10, settings) == []
    bad = [
        Answer(grpc.StatusCode.INTERNAL, "internal", "internal: an internal error occurred", "internal", "chieu"),
        Answer(grpc.StatusCode.UNKNOWN, "", "Unexpected <class 'DecodeError'>"),
        Answer(grpc.StatusCode.INVALID_ARGUMENT, "", "bad"),
        Answer(grpc.StatusCode.INVALID_ARGUMENT, "Bad Reason!", "Bad Reason!: x", "Bad Reason!", "chieu"),
        Answer(grpc.StatusCode.INVALID_ARGUMENT, "bad_x", "bad_x: x", None, None),
        Answer(grpc.StatusCode.INVALID_ARGUMENT, "bad_x", "bad_x: " + "x" * 500, "bad_x", "chieu"),
        Answer(grpc.StatusCode.INVALID_ARGUMENT, "bad_x", 'bad_x: Traceback File "/work/main/services/x.py"',
               "bad_x", "chieu"),
        Answer(grpc.StatusCode.RESOURCE_EXHAUSTED, "", "Received message larger than max"),
    ]
    for a in bad:
        assert problems(a, 10, settings), a
    assert problems(bad[-1], settings.max_message_bytes + 1, settings) == []


async def test_the_state_checks_see_a_change(world: World) -> None:
    """The fingerprints are not vacuous: an accepted command appears as a command record, an
    accepted operator adjustment in the ledger's state."""
    from chieu.ledger.v1 import ledger_service_pb2 as lpb
    from chieu.ledger.v1 import ledger_service_pb2_grpc as lpb_grpc
    from chieu.table.client import TableClient

    seq, state = await world.last_seq(), await world.state()
    player = world.players[2]
    host = TableClient("", world.tokens[player], world.channels["table"])
    await host.create("o_an_quan")
    assert [r.actor for r in await world.commands_since(seq)] == [player]
    ledger = lpb_grpc.LedgerServiceStub(world.channels["ledger"])
    await ledger.Adjust(lpb.AdjustRequest(adjustment_id=f"oracle-{seq}", player_id=player, currency="coins", delta=1,
                                          reason="oracle"),
                        metadata=(("authorization", f"Bearer {world.tokens['operator']}"),))
    after = await world.state()
    assert after["postings"] == state["postings"] + 1
