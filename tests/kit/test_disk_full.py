"""A full disk fails cleanly and recovers (issue 28): with the table log's volume filling up,
JetStream refuses new records (``log_full``, a clean refusal: the server stays healthy and reads
go on) rather than meeting "no space left on device" (which fails the stream until a restart);
once space is freed, writes resume with no restart.

Needs a small volume of its own: a 24 MiB tmpfs (``mount -t tmpfs``, root only); skipped where
mounting is not allowed.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from chieu.kit import names, natsauth, outages
from chieu.kit.eventstore import EventStore
from chieu_tools import localnats
from tests.conftest import NATS_CREDS, nats_connect

pytestmark = pytest.mark.integration

MIB = 1 << 20


@pytest.fixture
def small_volume(tmp_path: Path) -> Iterator[Path]:
    """A 24 MiB tmpfs of this test's own."""
    where = tmp_path / "volume"
    where.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=24m", "tmpfs", str(where)],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def healthy(monitor: int) -> bool:
    """nats-server's full health check (it fails for a stream that met a write error)."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{monitor}/healthz", timeout=2) as r:
            return bool(r.status == 200)
    except (urllib.error.URLError, OSError):
        return False


async def test_a_full_disk_refuses_cleanly_and_recovers(small_volume: Path) -> None:
    data = small_volume / "nats"
    port, monitor = localnats.free_port(), localnats.free_port()
    headroom = 4 * MIB
    conf = localnats.write_config(data, port, monitor_port=monitor, extra=natsauth.server_block(NATS_CREDS.folder),
                                  max_file_store=localnats.store_limit(data, headroom=headroom))
    log = small_volume.parent / "nats.log"
    procs = [localnats.start_node(conf, port, log=log)]

    def restart(why: str) -> None:  # what chieu up's supervisor does for a nats-server that stopped
        localnats.stop(procs[-1])
        procs.append(localnats.start_node(conf, port, log=log))

    said: list[str] = []
    guard = localnats.DiskGuard(conf, lambda: procs[-1].pid, every_s=0.3, headroom=headroom, restart=restart,
                                say=said.append).start()
    nc = await nats_connect(f"nats://127.0.0.1:{port}")
    store = EventStore(nc, stream=names.TABLES)
    try:
        await store.ensure()
        # another file takes most of the volume, as PostgreSQL or logs beside the store would
        filler = small_volume / "filler"
        with filler.open("wb") as f:
            f.write(b"\0" * 14 * MIB)
        await asyncio.sleep(1.5)  # the guard lowers the limit (a restart of nats-server)
        assert guard.restarts == 1, said
        payload = os.urandom(50_000)
        appended, refused = 0, None
        started = time.monotonic()
        while refused is None and time.monotonic() - started < 30:
            try:
                await store.append(f"t{appended % 7}", payload, expected_seq=await store.last_seq(f"t{appended % 7}"),
                                   msg_id=f"m{appended}")
                appended += 1
            except Exception as e:  # the refusal
                refused = e
        assert refused is not None, "the store never refused a record"
        assert outages.reason(refused) == outages.LOG_FULL, repr(refused)
        for _ in range(20):  # the guard's next look
            if any("nearly full" in line for line in said):
                break
            await asyncio.sleep(0.1)
        assert any("nearly full" in line for line in said), said
        assert healthy(monitor), "the stream met the full disk (a write error) instead of refusing cleanly"
        assert await store.last_seq("t0") > 0  # reads go on
        proc = procs[-1]
        filler.unlink()
        # space freed: writes resume by themselves, the same nats-server process
        deadline = time.monotonic() + 10
        while True:
            try:
                await store.append("t-after", b"x", expected_seq=0, msg_id="after")
                break
            except Exception as e:
                assert outages.reason(e) == outages.LOG_FULL, repr(e)
                assert time.monotonic() < deadline, "writes did not resume after the space was freed"
                await asyncio.sleep(0.2)
        assert procs[-1] is proc and proc.poll() is None and healthy(monitor)  # a reload, no restart
        assert any("room again" in line for line in said), said
        assert "critical write error" not in log.read_text()
        print(f"{appended} records of 50 kB before the refusal; {guard.reloads} reloads of the limit")
    finally:
        guard.stop()
        with contextlib.suppress(Exception):
            await nc.close()
        localnats.stop(procs[-1])


def fill(path: Path) -> int:
    """Write ``path`` until the volume has not a byte left; the bytes written."""
    written = 0
    with path.open("wb", buffering=0) as f:
        for chunk in (MIB, 64 << 10, 4 << 10, 512):
            while True:
                try:
                    f.write(b"\0" * chunk)
                except OSError:
                    break
                written += chunk
    return written


@pytest.mark.parametrize("met_the_disk", [False, True], ids=["guard-first", "server-met-the-disk-first"])
async def test_a_volume_filled_to_the_last_byte_refuses_with_log_full_and_heals_alone(
        small_volume: Path, met_the_disk: bool) -> None:
    """Issue 36: another file takes the volume to its last byte at once. The guard never restarts
    nats-server onto the full volume: it gives up its reserve first, so the restart has room and the
    new limit refuses every write with ``log_full``. ``met_the_disk``: the guard looks only after
    nats-server's write met the full disk (its stream failed: appends time out, ``/healthz`` names
    the write error), and heals it the same way. Once the file is gone, moves are acknowledged
    again within 30 s with no operator."""
    data = small_volume / "nats"
    port, monitor = localnats.free_port(), localnats.free_port()
    headroom = 4 * MIB
    conf = localnats.write_config(data, port, monitor_port=monitor, extra=natsauth.server_block(NATS_CREDS.folder),
                                  max_file_store=localnats.store_limit(data, headroom=headroom))
    log = small_volume.parent / "nats.log"
    procs = [localnats.start_node(conf, port, log=log)]
    why: list[str] = []

    def restart(reason: str) -> None:  # chieu up's supervisor: stop, start again (fails on a full volume)
        why.append(reason)
        localnats.stop(procs[-1])
        procs.append(localnats.start_node(conf, port, log=log))

    said: list[str] = []
    guard = localnats.DiskGuard(conf, lambda: procs[-1].pid, every_s=0.3, headroom=headroom, restart=restart,
                                health=lambda: localnats.health_error(monitor), say=said.append)
    nc = await nats_connect(f"nats://127.0.0.1:{port}")
    store = EventStore(nc, stream=names.TABLES)
    filler = small_volume / "filler"
    try:
        await store.ensure()
        guard.check()  # the reserve is made
        assert guard.reserve.exists(), said
        if not met_the_disk:
            guard.start()
        await store.append("before", b"x", expected_seq=0, msg_id="before")

        written = await asyncio.to_thread(fill, filler)
        full_at = time.monotonic()
        if met_the_disk:
            for n in range(200):  # until a write meets the full disk (the guard not looking)
                try:
                    await store.append(f"m{n}", os.urandom(20_000), expected_seq=0, msg_id=f"met-{n}")
                except Exception as e:
                    assert outages.reason(e) == outages.LOG, repr(e)
                    break
            error = localnats.health_error(monitor)
            assert error is not None and "no space left on device" in error, error
            guard.start()
            full_at = time.monotonic()
        reasons: list[str | None] = []
        n = 0
        while time.monotonic() - full_at < 8 or reasons[-3:] != [outages.LOG_FULL] * 3:
            assert time.monotonic() - full_at < 40, f"never log_full while full: {reasons} {said}"
            n += 1
            try:
                await store.append(f"t{n}", os.urandom(20_000), expected_seq=0, msg_id=f"full-{n}")
                reasons.append("acked")
            except Exception as e:
                reasons.append(outages.reason(e))
                assert reasons[-1] in (outages.LOG_FULL, outages.LOG), repr(e)
            await asyncio.sleep(0.1)
        print(f"volume full ({written // MIB} MiB written by another file): {len(reasons)} appends, "
              f"{reasons.count(outages.LOG_FULL)} log_full, {reasons.count(outages.LOG)} log_unavailable, "
              f"{reasons.count('acked')} acknowledged; guard restarts onto "
              f"{[f // 1024 for f in guard.restarted_onto]} KiB free, {guard.heals} heals; {why}")
        assert guard.restarts >= 1 and all(f >= localnats.START_ROOM_MIN for f in guard.restarted_onto)
        assert not met_the_disk or "no space left on device" in log.read_text()  # met, and healed
        assert reasons[-3:] == [outages.LOG_FULL] * 3  # a clean refusal while the volume is full

        filler.unlink()
        freed_at = time.monotonic()
        while True:
            try:
                await store.append("after", b"x", expected_seq=0, msg_id="after")
                break
            except Exception as e:
                assert outages.reason(e) in (outages.LOG_FULL, outages.LOG), repr(e)
                assert time.monotonic() - freed_at < 30, f"writes did not resume within 30 s: {said}"
                await asyncio.sleep(0.2)
        resumed_s = time.monotonic() - freed_at
        print(f"writes acknowledged again {resumed_s:.2f} s after the space was freed")
        assert localnats.health_error(monitor) is None
        assert await store.last_seq("before") > 0  # nothing acknowledged lost
        for _ in range(50):  # the reserve is made again
            if guard.reserve.exists():
                break
            await asyncio.sleep(0.1)
        assert guard.reserve.exists()
    finally:
        guard.stop()
        with contextlib.suppress(Exception):
            await nc.close()
        localnats.stop(procs[-1])


def test_the_guard_heals_a_server_whose_health_names_a_write_error(tmp_path: Path) -> None:
    """A nats-server that met the full disk while its limit needs no lowering: restarted once (with
    room: a temporary folder has plenty), then not again within :data:`localnats.HEAL_EVERY_S`; a
    server healthy, or unhealthy for another reason, is left alone."""
    conf = localnats.write_config(tmp_path / "nats", localnats.free_port(), max_file_store=MIB)
    health: list[str | None] = [None]
    why: list[str] = []
    stand_in = subprocess.Popen(["sleep", "60"])  # a process to be told of reloads (SIGHUP ends it: no matter)
    try:
        guard = localnats.DiskGuard(conf, lambda: stand_in.pid, headroom=4 * MIB, restart=why.append,
                                    health=lambda: health[0], say=lambda line: None)
        guard.check()
        health[0] = "JetStream has not established contact with a meta leader"
        guard.check()
        assert why == []
        health[0] = "JetStream stream '$G > CHIEU_TABLES' write error: write …/1.blk: no space left on device"
        guard.check()
        guard.check()
        assert guard.heals == 1 and len(why) == 1 and "full disk" in why[0]
    finally:
        stand_in.kill()
        stand_in.wait()
