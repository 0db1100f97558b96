"""A full disk under ``chieu up --cluster`` (issue 36): the three nodes share one volume, each with
its disk guard (:func:`chieu_tools.cluster.disk_guards`). Another file takes the volume to its last
byte: the guards lower every node's limit (a restart onto the room of its reserve: never a node
restarted onto the full volume; a node whose write met the full disk before the guard looked is
restarted too), every write is refused while it is full
(``log_full`` or ``log_unavailable``, never another error, once what fits below the lowered limits
is written: at least 1 MiB a node, within its reserve's room), and once the file is
gone moves are acknowledged again within 30 s with no operator, nothing acknowledged lost.

Not ``log_full`` throughout, as under ``chieu up``: a clustered nats-server over its
``max_file_store`` refuses the write that reaches it cleanly (``insufficient resources``, 10023),
then its stream leader steps down and no node over its limit campaigns (raft's "out of
resources"), so the next writes find no leader (``log_unavailable``) until the limit is raised
(docs/operating.md).

Needs a small volume of its own: a tmpfs (``mount -t tmpfs``, root only); skipped where mounting is
not allowed. Only the NATS nodes run (the guards watch nothing else).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from chieu.kit import names, natsauth, outages
from chieu.kit.eventstore import EventStore
from chieu_tools import cluster as local_cluster
from chieu_tools import localnats, supervise
from chieu_tools.cluster import REPLICAS, Cluster
from tests.kit.test_disk_full import fill

pytestmark = [pytest.mark.integration, pytest.mark.e2e]

MIB = 1 << 20
VOLUME_MIB = 96
HEADROOM = 12 * MIB
"""The room JetStream leaves free on the small volume (the default, 64 MiB, is more than it has)."""
FULL_BOUND_S = 60.0
"""From the volume full to ``log_full`` on every write: the three nodes restart onto their reserves'
room (a few seconds each, the cluster without quorum while two are down), on a busy 2-core machine."""
RESUME_BOUND_S = 30.0
"""The issue's bound: moves acknowledged again within 30 s of the space freed."""


@pytest.fixture
def small_volume() -> Iterator[Path]:
    """A tmpfs of :data:`VOLUME_MIB` of this test's own."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    where = Path(tempfile.mkdtemp(prefix="chieu-cluster-disk-"))
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={VOLUME_MIB}m", "tmpfs", str(where)],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        shutil.rmtree(where, ignore_errors=True)
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)
        shutil.rmtree(where, ignore_errors=True)


async def append(store: EventStore, subject: str, payload: bytes, msg_id: str) -> str:
    """``acked``, or the outage's reason of the refusal (``None``: not an outage)."""
    try:
        await store.append(subject, payload, expected_seq=0, msg_id=msg_id)
    except Exception as e:
        return str(outages.reason(e))
    return "acked"


async def test_a_full_volume_refuses_with_log_full_and_the_cluster_heals_alone(small_volume: Path) -> None:
    cluster = Cluster(small_volume / "cluster", headroom=HEADROOM)
    said: list[str] = []
    sup = local_cluster.supervisor(cluster, say=said.append)  # its lines and the guards', kept
    guards: list[localnats.DiskGuard] = []
    nc = None
    try:
        for n in cluster.nodes:
            n.start()
        cluster.wait_jetstream()
        for n in cluster.nodes:
            assert n.popen is not None
            sup.adopt(n.name, n.popen)
        guards = local_cluster.disk_guards(cluster, sup, every_s=0.3)
        for g in guards:
            g.check()  # the reserves are made
        assert all(g.reserve.exists() for g in guards), said
        for g in guards:
            g.start()
        nc = await natsauth.connect_url(cluster.nats_url, "test-disk", creds=str(cluster.creds.seed("table")))
        store = EventStore(nc, stream=names.TABLES, replicas=REPLICAS)
        await store.ensure()
        await store.append("before", b"x", expected_seq=0, msg_id="before")

        filler = small_volume / "filler"
        written = await asyncio.to_thread(fill, filler)
        full_at = time.monotonic()
        reasons: list[str] = []
        n = 0
        lowered_at = None
        js_up = [supervise.http_ok(f"http://127.0.0.1:{p}/healthz?js-enabled-only=true") for p in cluster.monitor_ports]
        while lowered_at is None or time.monotonic() - lowered_at < 10 or "acked" in reasons[-5:]:
            assert time.monotonic() - full_at < FULL_BOUND_S, f"the guards never lowered the limits: {said}"
            if lowered_at is None and all(g.restarts for g in guards) and all(up() for up in js_up):
                lowered_at = time.monotonic()  # every node restarted onto its lower limit, and up
            n += 1
            reasons.append(await append(store, f"t{n}", os.urandom(20_000), f"full-{n}"))
            assert reasons[-1] in ("acked", outages.LOG_FULL, outages.LOG), reasons[-1]
            await asyncio.sleep(0.1)
        lowered_s = lowered_at - full_at
        restarted_onto = [f for g in guards for f in g.restarted_onto]
        print(f"volume full ({written // MIB} MiB written by another file): {len(reasons)} appends, "
              f"{reasons.count(outages.LOG_FULL)} log_full, {reasons.count(outages.LOG)} log_unavailable, "
              f"{reasons.count('acked')} acknowledged; every node on its lower limit after {lowered_s:.1f} s; "
              f"restarts onto {[f // 1024 for f in restarted_onto]} KiB free; heals {[g.heals for g in guards]}")
        assert restarted_onto and all(f >= localnats.START_ROOM_MIN for f in restarted_onto), said
        assert any("nearly full" in line for line in said), said

        filler.unlink()
        freed_at = time.monotonic()
        while (reason := await append(store, "after", b"x", "after")) != "acked":
            assert reason in (outages.LOG_FULL, outages.LOG), reason
            assert time.monotonic() - freed_at < RESUME_BOUND_S, f"writes did not resume within 30 s: {said}"
            await asyncio.sleep(0.2)
        resumed_s = time.monotonic() - freed_at
        print(f"writes acknowledged again {resumed_s:.2f} s after the space was freed")
        assert await store.last_seq("before") > 0  # nothing acknowledged lost
        assert any("room again" in line for line in said), said
        for _ in range(100):  # every node healthy, every reserve made again
            if all(localnats.health_error(p) is None for p in cluster.monitor_ports) and \
                    all(g.reserve.exists() for g in guards):
                break
            await asyncio.sleep(0.1)
        assert [localnats.health_error(p) for p in cluster.monitor_ports] == [None] * 3
        assert all(g.reserve.exists() for g in guards)
        for n in cluster.nodes:  # a node whose write met the full disk (a write racing the guard's look)
            assert n.log is not None  # was restarted after: it stays healthy only so
            text = n.log.read_text().lower()
            if "critical write error" in text:
                assert text.rindex("critical write error") < text.rindex("starting nats-server"), n.name
    finally:
        for g in guards:
            g.stop()
        if nc is not None:
            with contextlib.suppress(Exception):
                await nc.close()
        sup.stop([])
        cluster.stop()
