"""Small helpers for the benchmarks: percentiles and a uniform report line."""

from __future__ import annotations

import statistics


def pct(samples: list[float], q: float) -> float:
    """The q-quantile (0..1) of ``samples``."""
    s = sorted(samples)
    return s[min(len(s) - 1, int(q * len(s)))]


def line(name: str, value: float, unit: str, target: str, ok: bool, extra: str = "") -> None:
    print(f"  {name:<44} {value:>12.3f} {unit:<10} target {target:<14} {'MET' if ok else 'MISSED'} {extra}")


def median(samples: list[float]) -> float:
    return statistics.median(samples)
