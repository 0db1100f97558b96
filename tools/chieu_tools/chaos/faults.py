"""The fault schedule applied to the local cluster, one fault after another at its planned time
(or as soon as the previous one is over), each journaled with its real start and end."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import time
from pathlib import Path
from typing import Any

from chieu.kit import logs, names, natsauth
from chieu_tools.chaos.records import AppliedFault, Journal
from chieu_tools.chaos.schedule import Fault
from chieu_tools.cluster import Cluster, Process

log = logs.get("chieu_tools.chaos.faults")


def now_ms() -> int:
    return int(time.time() * 1000)


class Injector:
    """Applies a schedule to ``cluster``; ``delay_file`` is the latency proxy's control file."""

    def __init__(self, cluster: Cluster, journal: Journal, delay_file: Path | None,
                 say: Any = None) -> None:
        self.cluster = cluster
        self.journal = journal
        self.delay_file = delay_file
        self.applied: list[AppliedFault] = []
        self.say = say or (lambda text: None)

    async def run(self, faults: list[Fault], started: float) -> None:
        """Apply each fault at ``started`` (monotonic) + its time, until the list ends or cancelled."""
        for f in faults:
            wait = started + f.at_s - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            await self.apply(f)

    async def apply(self, f: Fault) -> AppliedFault:
        start, note = now_ms(), ""
        self.say(f"fault: {f.kind} {f.target} {f.detail} for {f.duration_s:.1f} s")
        try:
            if f.kind == "kill_service":
                p = self.cluster.process(f.target)
                p.kill()
                await asyncio.sleep(f.duration_s)
                note = await self._start(p)
            elif f.kind == "pause_service":
                p = self.cluster.process(f.target)
                p.pause()
                try:
                    await asyncio.sleep(f.duration_s)
                finally:
                    p.resume()
            elif f.kind == "kill_nats":
                leader = await self.stream_leader()
                note = f"table stream leader {leader}" + (" (killed)" if leader == f.target else "")
                node = self.cluster.process(f.target)
                node.kill()
                await asyncio.sleep(f.duration_s)
                note += await self._start(node)
                await asyncio.to_thread(self.cluster.wait_jetstream, 60.0, [node])
            elif f.kind == "restart_pg":
                await asyncio.to_thread(self.cluster.stop_pg, f.detail or "fast")
                await asyncio.sleep(f.duration_s)
                await asyncio.to_thread(self.cluster.start_pg)
            elif f.kind == "slow_nats":
                assert self.delay_file is not None
                self.delay_file.write_text(f.detail.removesuffix("ms"))
                try:
                    await asyncio.sleep(f.duration_s)
                finally:
                    self.delay_file.write_text("0")
            else:
                raise ValueError(f"unknown fault kind {f.kind}")
        except Exception as e:
            note = f"{note} FAILED: {type(e).__name__}: {e}".strip()
            log.warning("fault not applied as planned", kind=f.kind, target=f.target, error=str(e))
        applied = AppliedFault(f.kind, f.target, f.detail, f.at_s, start, now_ms(), note)
        self.applied.append(applied)
        self.journal.fault(applied)
        return applied

    async def _start(self, p: Process, tries: int = 5) -> str:
        """Start a killed process again (a few tries: a port can be slow to free)."""
        for i in range(tries):
            try:
                await asyncio.to_thread(p.start)
                return "" if i == 0 else f" (started on try {i + 1})"
            except Exception as e:
                log.warning("restart failed", process=p.name, error=str(e))
                with contextlib.suppress(Exception):
                    p.kill()
                await asyncio.sleep(1.0)
        raise RuntimeError(f"{p.name} did not start again")

    async def stream_leader(self) -> str:
        """The node leading the table stream now ("" if none answers within 2 s)."""
        try:
            nc = await natsauth.connect_url(self.cluster.nats_url, "chieu-chaos", creds=self.cluster.audit_creds,
                                            connect_timeout=2, max_reconnect_attempts=1, allow_reconnect=False)
        except Exception:
            return ""
        try:
            info = await nc.jetstream(timeout=2).stream_info(names.TABLES.name)
            return str(info.cluster.leader) if info.cluster is not None else ""
        except Exception:
            return ""
        finally:
            with contextlib.suppress(Exception):
                await nc.close()

    def heal(self) -> None:
        """After the run: every paused process resumed, every dead one started, the network fast."""
        if self.delay_file is not None:
            self.delay_file.write_text("0")
        for p in (*self.cluster.nodes, *self.cluster.services):
            if p.paused:
                p.signal(signal.SIGCONT)
                p.paused = False
            if not p.alive:
                p.start()
        if self.cluster.pg is not None:
            self.cluster.start_pg()
