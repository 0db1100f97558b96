"""``chieu soak``: a long run with bots and no faults, to find what grows.

The chaos run's local cluster (:mod:`chieu_tools.cluster`: 3 NATS nodes at R3, PostgreSQL, two
processes of every service) and its bots (players, spectators and probes of
:mod:`chieu_tools.chaos.bots`), without a fault. Every ``every_s`` seconds it samples each
process's resident memory (``VmRSS``), the hands ended and the moves acknowledged so far, and the
latency of the moves and of the probes' commands since the last sample. The report gives, per
process, its memory after the warm-up and at the end, its growth per 1,000 hands (a least-squares
slope over the samples after the warm-up), and that slope in the run's first and last thirds, so
a growth that levels off shows as a last third flatter than the first. ``soak.json`` in the
run's folder keeps every sample.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from chieu.tablelog.sealing import SealKeys
from chieu_tools.chaos import client as calls
from chieu_tools.chaos.bots import Behaviour, Group, Player, Probe, Shared, Spectator
from chieu_tools.chaos.oracle import Oracle
from chieu_tools.chaos.records import Journal
from chieu_tools.chaos.run import _put_rooms, percentile, service_env
from chieu_tools.chaos.run import groups as chaos_groups
from chieu_tools.cluster import Cluster

MIB = 1 << 20
WARM_UP_S = 120.0
"""Samples before this are left out of the slopes (imports, first tables, caches filling)."""
CALM = Behaviour(timeout=0.0, disconnect=0.0, quit=0.0, leave=0.05)
"""Players who neither time out, disconnect nor quit: the soak measures steady play."""


def say(text: str) -> None:
    print(f"chieu soak: {text}", file=sys.stderr, flush=True)


def rss(pid: int) -> int:
    """The resident memory of process ``pid`` in bytes (0 if it is gone)."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


@dataclass
class Sample:
    t_s: float
    hands: int
    moves: int
    rss: dict[str, int]
    move_ms: dict[str, float] = field(default_factory=dict)
    """p50, p99 and the count of acknowledged moves since the previous sample."""
    probe_ms: dict[str, float] = field(default_factory=dict)


def slope(points: list[tuple[float, float]]) -> float:
    """The least-squares slope of ``points`` (x, y); 0 with fewer than two distinct x."""
    n = len(points)
    if n < 2:
        return 0.0
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    if sxx == 0:
        return 0.0
    return sum((x - mx) * (y - my) for x, y in points) / sxx


def growth(samples: list[Sample], name: str) -> dict[str, float]:
    """Process ``name``'s memory after the warm-up and at the end (MiB), and its growth in MiB per
    1,000 hands: over the whole run after the warm-up, and in its first and last thirds."""
    steady = [s for s in samples if s.t_s >= WARM_UP_S and s.rss.get(name)] or [s for s in samples if s.rss.get(name)]
    if not steady:
        return {}
    points = [(s.hands / 1000, s.rss[name] / MIB) for s in steady]
    third = max(2, len(points) // 3)
    return {"start_mib": round(points[0][1], 1), "end_mib": round(points[-1][1], 1),
            "per_1000_hands_mib": round(slope(points), 1),
            "first_third_per_1000_mib": round(slope(points[:third]), 1),
            "last_third_per_1000_mib": round(slope(points[-third:]), 1)}


def _latencies(commands: list[Any], since_ms: int, until_ms: int, probe: bool) -> dict[str, float]:
    took = [c.settled_ms - c.sent_ms for c in commands
            if c.outcome == calls.ACKED and c.probe == probe and since_ms <= c.settled_ms < until_ms
            and (probe or c.method == "Act")]
    if not took:
        return {"n": 0}
    return {"n": len(took), "p50": percentile(took, 50), "p99": percentile(took, 99)}


async def run(minutes: float, folder: Path, *, every_s: float = 30.0, full: bool = False,
              groups: list[Group] | None = None) -> dict[str, Any]:
    """The soak in ``folder`` (made, absolute); returns its summary."""
    groups = groups or chaos_groups(full, minutes)
    cluster = Cluster(folder / "cluster", env=service_env(groups))
    journal = Journal(folder)
    oracle: Oracle | None = None
    samples: list[Sample] = []
    players: list[Player] = []
    summary: dict[str, Any] = {}
    try:
        started = time.monotonic()
        await asyncio.to_thread(cluster.start)
        say(f"cluster up in {time.monotonic() - started:.1f} s; {sum(g.players for g in groups)} players in "
            f"{len(groups)} rooms for {minutes:g} min, a sample every {every_s:g} s; folder {folder}")
        operator = cluster.signer.sign("soak-operator", ("operator",), 24 * 3600)
        await _put_rooms(cluster.target("lobby"), operator, groups)
        os.environ["CHIEU_NATS_CREDS"] = cluster.audit_creds
        oracle = Oracle(cluster.nats_url, cluster.audit_creds, SealKeys.load(cluster.seal_keys))
        await oracle.start()
        shared = Shared(cluster.target("table"), cluster.target("lobby"), journal, oracle)
        players = [Player(shared, g, i, 1, CALM) for g in groups for i in range(g.players)]
        clients: list[Any] = [*players, *(Spectator(shared, i, 1, sorted({g.game for g in groups})) for i in range(2)),
                              *(Probe(shared, i, cluster.signer.sign(f"soak-probe-{i}", ("player",), 24 * 3600),
                                      every_s=1.0) for i in range(2))]
        tasks = [asyncio.create_task(c.run()) for c in clients]
        t0 = time.monotonic()
        last_ms = int(time.time() * 1000)
        processes = [*cluster.nodes, *cluster.services]
        while True:
            elapsed = time.monotonic() - t0
            now_ms = int(time.time() * 1000)
            commands = journal.commands
            hands = len(set().union(*(p.hands_seen for p in players)))
            moves = sum(1 for c in commands if c.method == "Act" and c.outcome == calls.ACKED and not c.probe)
            sample = Sample(round(elapsed, 1), hands, moves, {p.name: rss(p.pid) for p in processes},
                            _latencies(commands, last_ms, now_ms, False), _latencies(commands, last_ms, now_ms, True))
            samples.append(sample)
            last_ms = now_ms
            table = max((v for k, v in sample.rss.items() if k.startswith("table-")), default=0)
            nats = max((v for k, v in sample.rss.items() if k.startswith("n")), default=0)
            say(f"+{elapsed:.0f} s: {hands} hands, {moves} moves; move p50 {sample.move_ms.get('p50', 0):.0f} ms "
                f"p99 {sample.move_ms.get('p99', 0):.0f} ms; largest table process {table / MIB:.0f} MiB, "
                f"nats-server {nats / MIB:.0f} MiB")
            if elapsed >= minutes * 60:
                break
            await asyncio.sleep(min(every_s, max(0.1, minutes * 60 - elapsed)))
        shared.stop.set()
        await asyncio.wait(tasks, timeout=60)
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        summary = {"minutes": minutes, "players": len(players), "hands": samples[-1].hands,
                   "moves": samples[-1].moves, "warm_up_s": WARM_UP_S,
                   "growth": {p.name: growth(samples, p.name) for p in processes},
                   "samples": [asdict(s) for s in samples]}
    finally:
        journal.close()
        if oracle is not None:
            await oracle.stop()
        await asyncio.to_thread(cluster.stop)
    return summary


def report(summary: dict[str, Any]) -> list[str]:
    """The readable report of a soak's summary."""
    if not summary:
        return ["no summary: the soak did not finish"]
    lines = [f"{summary['minutes']:g} min, {summary['players']} players: {summary['hands']:,} hands, "
             f"{summary['moves']:,} moves (slopes after the first {summary['warm_up_s']:.0f} s)",
             f"{'process':<10} {'start MiB':>9} {'end MiB':>8} {'MiB/1000 hands':>15} {'first third':>12} "
             f"{'last third':>11}"]
    for name, g in summary["growth"].items():
        if g:
            lines.append(f"{name:<10} {g['start_mib']:>9} {g['end_mib']:>8} {g['per_1000_hands_mib']:>15} "
                         f"{g['first_third_per_1000_mib']:>12} {g['last_third_per_1000_mib']:>11}")
    lines.append("latency over time (acknowledged moves; the probes' SetReady):")
    for s in summary["samples"]:
        m, p = s["move_ms"], s["probe_ms"]
        lines.append(f"  +{s['t_s']:>6.0f} s {s['hands']:>6} hands  moves p50 {m.get('p50', 0):>5.0f} ms "
                     f"p99 {m.get('p99', 0):>5.0f} ms (n={m.get('n', 0)})  probes p50 {p.get('p50', 0):>5.0f} ms "
                     f"p99 {p.get('p99', 0):>5.0f} ms")
    return lines


def main(minutes: float, folder: str, every_s: float = 30.0, full: bool = False) -> int:
    """Run and print the report; 0 once done, 2 if the soak could not be made."""
    base = (Path(folder) / time.strftime("%Y%m%d-%H%M%S")).resolve()
    base.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("CHIEU_LOG_FORMAT", "json")
    try:
        summary = asyncio.run(run(minutes, base, every_s=every_s, full=full))
    except Exception as e:
        say(f"the soak failed: {type(e).__name__}: {e}")
        return 2
    (base / "soak.json").write_text(json.dumps(summary, indent=1))
    with contextlib.suppress(BrokenPipeError):
        for line in report(summary):
            print(line)
    return 0
