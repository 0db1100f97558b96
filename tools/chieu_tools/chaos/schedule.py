"""The fault schedule: a list of faults derived from the seed alone (``random.Random(seed)``), so
the same seed gives the same schedule whatever happens during the run.

Faults come one after another, never overlapping: a calm phase first (no fault: the run's own
baseline of throughput), then each fault at its time, lasting its duration, followed by a gap;
the last seconds are calm again so every process is back before the checks.

Kinds:

- ``kill_service``: SIGKILL of one service process, started again after ``duration_s``;
- ``pause_service``: SIGSTOP of one service process, SIGCONT after ``duration_s``;
- ``kill_nats``: SIGKILL of one NATS node, started again after ``duration_s``;
- ``restart_pg``: PostgreSQL stopped (``fast`` or ``immediate``: as after a crash), started
  again after ``duration_s``;
- ``slow_nats``: the latency proxy in front of one NATS node delays every byte by
  ``delay_ms`` each way for ``duration_s``.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

KINDS: dict[str, float] = {"kill_service": 0.35, "pause_service": 0.2, "kill_nats": 0.2, "restart_pg": 0.1,
                           "slow_nats": 0.15}
"""Each kind's share of the faults."""
DURATIONS: dict[str, tuple[float, float]] = {"kill_service": (0.5, 4.0), "pause_service": (0.5, 4.0),
                                             "kill_nats": (1.0, 8.0), "restart_pg": (0.5, 3.0),
                                             "slow_nats": (4.0, 12.0)}
"""Each kind's duration range (seconds): down, paused, or slow."""
GAP_S = (4.0, 10.0)
"""Seconds between the end of a fault and the next one."""


@dataclass(frozen=True, slots=True)
class Fault:
    """One planned fault: when (seconds after the run's start), what, on which process, how long."""

    at_s: float
    kind: str
    target: str
    duration_s: float
    detail: str = ""
    """``fast`` / ``immediate`` for a PostgreSQL restart, the delay for a slow network."""

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class Targets:
    """What the faults may hit."""

    services: Sequence[str]
    """Service processes (``table-1``, ``ledger-2``, …)."""
    nodes: Sequence[str]
    """NATS nodes (``n1``..``n3``)."""
    slow: str = ""
    """The node behind the latency proxy (empty: no ``slow_nats`` faults)."""
    pg: bool = True
    """Whether PostgreSQL may be restarted (the embedded one)."""


def calm_seconds(total_s: float) -> float:
    """The fault-free phase at the start: a sixth of the run, at least 20 s and at most 120 s."""
    return min(120.0, max(20.0, total_s / 6))


def plan(seed: int, minutes: float, targets: Targets, *, settle_s: float = 15.0) -> list[Fault]:
    """The faults of a run of ``minutes`` with ``seed``: a pure function of its arguments."""
    rng = random.Random(seed)
    total = minutes * 60.0
    kinds = {k: w for k, w in KINDS.items()
             if (k != "slow_nats" or targets.slow) and (k != "restart_pg" or targets.pg)
             and (k not in ("kill_service", "pause_service") or targets.services)
             and (k != "kill_nats" or targets.nodes)}
    names, weights = list(kinds), list(kinds.values())
    out: list[Fault] = []
    at = calm_seconds(total)
    while True:
        kind = rng.choices(names, weights)[0]
        lo, hi = DURATIONS[kind]
        duration = round(rng.uniform(lo, hi), 2)
        if at + duration > total - settle_s:
            return out
        detail = ""
        if kind in ("kill_service", "pause_service"):
            target = rng.choice(list(targets.services))
        elif kind == "kill_nats":
            target = rng.choice(list(targets.nodes))
        elif kind == "slow_nats":
            target, detail = targets.slow, f"{rng.choice((50, 100, 200, 400))}ms"
        else:
            target, detail = "postgres", rng.choice(("fast", "immediate"))
        out.append(Fault(round(at, 2), kind, target, duration, detail))
        at += duration + rng.uniform(*GAP_S)


def by_kind(faults: Sequence[Fault]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for f in faults:
        counts[f.kind] = counts.get(f.kind, 0) + 1
    return counts
