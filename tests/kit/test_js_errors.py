"""Every JetStream error a write can meet gives the client a status it can act on (issue 36):
a lost race in either form (10071, and the clustered 10164 "wrong last sequence" a write gets
while another one with an expected sequence for the same subject is in flight, as after a
failover) is a :class:`Conflict` the table service reloads on; a log that cannot take the write now
is ``UNAVAILABLE`` (``log_unavailable``), one without room ``log_full``; never ``INTERNAL``.

The 10164 is provoked on a real three-node JetStream cluster (an R3 stream): many appends to one
subject at once, each expecting the same last sequence.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import subprocess
import time
import urllib.request
import uuid
from collections.abc import AsyncIterator, Iterator

import grpc
import pytest
from nats.js import api
from nats.js.errors import APIError

from chieu.kit import errors, natsauth, outages
from chieu.kit.eventstore import Conflict, EventStore
from chieu.kit.names import Stream
from chieu_tools import localnats
from tests.conftest import NATS_CREDS, nats_connect

CODES_OF_A_WRITE = {
    # what a publish to a stream can be answered with (nats-server's errors.json): code -> what it means here
    10071: "conflict", 10164: "conflict",
    10002: outages.LOG_FULL, 10023: outages.LOG_FULL, 10028: outages.LOG_FULL, 10047: outages.LOG_FULL,
    10054: outages.LOG_FULL,
    10004: outages.LOG, 10007: outages.LOG, 10008: outages.LOG, 10009: outages.LOG, 10035: outages.LOG,
    10039: outages.LOG, 10059: outages.LOG, 10063: outages.LOG, 10075: outages.LOG, 10076: outages.LOG,
    10077: outages.LOG, 10118: outages.LOG, 10158: outages.LOG, 10163: outages.LOG, 10167: outages.LOG,
    10194: outages.LOG, 10202: outages.LOG,
}
STATUS = {10002: 400, 10054: 400, 10071: 400, 10164: 400, 10059: 404, 10158: 409, 10167: 429, 10202: 400}


def api_error(err_code: int, description: str = "") -> APIError:
    return APIError(code=STATUS.get(err_code, 503), err_code=err_code, description=description or f"e{err_code}")


@pytest.mark.parametrize("err_code", sorted(CODES_OF_A_WRITE))
def test_every_error_a_write_meets_has_a_status_a_client_acts_on(err_code: int) -> None:
    meant = CODES_OF_A_WRITE[err_code]
    err = errors.from_exception(api_error(err_code))
    assert err.status is grpc.StatusCode.UNAVAILABLE and err.retry_after_ms > 0
    assert err.reason == (outages.LOG if meant == "conflict" else meant)


def test_a_store_failure_for_want_of_space_is_log_full() -> None:
    exc = api_error(10077, "write /data/jetstream/x/msgs/1.blk: no space left on device")
    assert outages.reason(exc) == outages.LOG_FULL


def test_an_unknown_server_error_of_jetstream_is_unavailable_not_internal() -> None:
    assert errors.from_exception(APIError(code=500, err_code=19999, description="?")).reason == outages.LOG


class _Wrong:
    """A stand-in publish that answers with JetStream's error ``err_code``."""

    def __init__(self, err_code: int) -> None:
        self.err_code = err_code

    async def publish(self, *args: object, **kw: object) -> object:
        raise api_error(self.err_code)


@pytest.mark.parametrize("err_code", sorted(outages.JS_WRONG_LAST))
async def test_both_wrong_last_sequences_are_a_conflict(err_code: int) -> None:
    store = EventStore.__new__(EventStore)
    store.js = _Wrong(err_code)  # type: ignore[assignment]
    store.names, store.stream = Stream("T", "t"), "T"
    with pytest.raises(Conflict):
        await store.append("k", b"x", expected_seq=3, msg_id="m")


@pytest.fixture(scope="module")
def js_nodes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, list[subprocess.Popen[bytes]]]]:
    """Three nats-server nodes with JetStream in one cluster, admitting the test session's users."""
    root = tmp_path_factory.mktemp("js-cluster")
    ports = [localnats.free_port() for _ in range(9)]
    client, route, monitor = ports[0:3], ports[3:6], ports[6:9]
    users = natsauth.server_block(NATS_CREDS.folder)
    procs: list[subprocess.Popen[bytes]] = []
    try:
        for i in range(3):
            conf = localnats.write_cluster_config(root / f"n{i + 1}", f"n{i + 1}", client[i], route[i],
                                                  [p for j, p in enumerate(route) if j != i], monitor[i],
                                                  extra=users)
            procs.append(localnats.start_node(conf, client[i], log=root / f"n{i + 1}.log"))
        _wait_meta_leader(monitor)
        yield ",".join(f"nats://127.0.0.1:{p}" for p in client), procs
    finally:
        for p in procs:
            localnats.stop(p)


def _wait_meta_leader(monitor: list[int], timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for port in monitor:
            with contextlib.suppress(OSError, ValueError), \
                    urllib.request.urlopen(f"http://127.0.0.1:{port}/jsz", timeout=2) as r:
                if json.load(r).get("meta_cluster", {}).get("leader"):
                    return
        time.sleep(0.3)
    raise TimeoutError("the JetStream cluster elected no meta leader")


@pytest.fixture
def js_cluster(js_nodes: tuple[str, list[subprocess.Popen[bytes]]]) -> str:
    return js_nodes[0]


@pytest.fixture
async def r3_store(js_cluster: str) -> AsyncIterator[EventStore]:
    stream = Stream(f"R3_{uuid.uuid4().hex[:8].upper()}", f"r3.{uuid.uuid4().hex[:8]}")
    nc = await nats_connect(js_cluster)
    store = EventStore(nc, stream=stream, replicas=3)
    deadline = time.monotonic() + 60
    while True:  # the cluster may still be settling its first assignments
        try:
            await store.ensure()
            break
        except Exception:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.5)
    yield store
    await store.close()


@pytest.mark.integration
async def test_racing_writes_on_a_clustered_stream_meet_10164_and_each_is_a_conflict(r3_store: EventStore) -> None:
    """The raw answers first (10164 does occur for appends racing on one subject of an R3 stream),
    then the same race through :meth:`EventStore.append`: one append wins, every other one is a
    :class:`Conflict`, never another error, and the log holds one record per round."""
    store = r3_store
    seen: dict[int, int] = {}
    rounds = 0
    while 10164 not in seen and rounds < 30:
        rounds += 1
        k = uuid.uuid4().hex
        raw = await asyncio.gather(*(store.js.publish(
            store.subject(k), b"x", stream=store.stream,
            headers={"Nats-Expected-Last-Subject-Sequence": "0", "Nats-Msg-Id": f"{k}:{i}"}) for i in range(12)),
            return_exceptions=True)
        for r in raw:
            if isinstance(r, APIError):
                seen[r.err_code or 0] = seen.get(r.err_code or 0, 0) + 1
            else:
                assert isinstance(r, api.PubAck), repr(r)
    print(f"raw error codes over {rounds} rounds of 12 racing appends: {seen}")
    assert 10164 in seen, f"no 10164 in {rounds} rounds: {seen}"
    assert set(seen) <= outages.JS_WRONG_LAST, seen

    conflicts = 0
    for _ in range(10):
        k = uuid.uuid4().hex
        results = await asyncio.gather(
            *(store.append(k, str(i).encode(), expected_seq=0, msg_id=f"{k}:{i}") for i in range(12)),
            return_exceptions=True)
        assert sum(not isinstance(r, BaseException) for r in results) == 1, results
        assert all(isinstance(r, Conflict) for r in results if isinstance(r, BaseException)), results
        conflicts += sum(isinstance(r, Conflict) for r in results)
        assert len(await store.read(k)) == 1
    assert conflicts == 110


@pytest.mark.integration
async def test_the_stream_health_metrics_follow_a_lost_node(
        r3_store: EventStore, js_nodes: tuple[str, list[subprocess.Popen[bytes]]]) -> None:
    """``chieu_js_stream_leader`` / ``_replicas_current`` (what the quorum alerts read): 1 and 3 with
    every node up; a follower frozen (SIGSTOP): the replicas current fall to 2 (a leader still); let
    go: 3 again."""
    from prometheus_client import REGISTRY

    from chieu.kit import metrics

    def sample(name: str) -> float | None:
        return REGISTRY.get_sample_value(name, {"stream": store.stream})
    store = r3_store
    await store.append("k", b"x", expected_seq=0, msg_id="health")
    health = metrics.StreamHealth(store.js, store.stream, 60)

    async def until(current: int, within_s: float = 60) -> None:
        deadline = time.monotonic() + within_s
        while True:
            await health.refresh()
            leader, now = sample("chieu_js_stream_leader"), sample("chieu_js_stream_replicas_current")
            if now == current and leader == 1:
                return
            assert time.monotonic() < deadline, (leader, now)
            await asyncio.sleep(0.5)

    await until(3)
    assert sample("chieu_js_stream_replicas") == 3
    info = await store.js.stream_info(store.stream)
    assert info.cluster is not None
    follower = next(r.name for r in info.cluster.replicas or ())
    node = js_nodes[1][int(follower[1:]) - 1]
    node.send_signal(signal.SIGSTOP)
    try:
        await until(2)
    finally:
        node.send_signal(signal.SIGCONT)
    await until(3)
