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

    def restart() -> None:  # what chieu up's supervisor does for a nats-server that stopped
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
