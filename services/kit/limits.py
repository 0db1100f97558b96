"""Limits that cost microseconds: a rate per key (GCRA) held in memory, and the growing delay
after failures.

- :class:`Rate` lets at most ``limit`` events per ``window_s`` through for each key (an address,
  a device), as the generic cell rate algorithm counts them: one number per key (the theoretical
  arrival time), a burst of ``limit`` at once and then one every ``window_s / limit``. It is the
  same rule the lobby keeps in PostgreSQL for what must hold across processes
  (:mod:`chieu.lobby.sessions`); here it answers refusals without a round trip.
- :func:`backoff_s` is the wait after ``failures`` failures: none while they are fewer than
  ``free``, ``base_s`` after the ``free``-th, doubling with each further one, at most ``cap_s``
  — a delay that grows, never a lock.
"""

from __future__ import annotations

import time

MAX_KEYS = 100_000
"""Keys a :class:`Rate` remembers at most; the idle ones go first."""


class Rate:
    """At most ``limit`` events per ``window_s`` seconds for each key (``limit`` 0: no limit)."""

    __slots__ = ("interval", "limit", "max_keys", "tat", "tolerance", "window_s")

    def __init__(self, limit: int, window_s: float, max_keys: int = MAX_KEYS) -> None:
        if limit < 0 or window_s <= 0:
            raise ValueError("a rate needs a limit >= 0 and a positive window")
        self.limit, self.window_s, self.max_keys = limit, float(window_s), max_keys
        self.interval = self.window_s / limit if limit else 0.0
        """Seconds between two events once the burst is spent."""
        self.tolerance = self.window_s - self.interval
        self.tat: dict[str, float] = {}
        """Key → its theoretical arrival time (monotonic seconds): the next event is let through
        once the clock reaches ``tat - tolerance``."""

    def wait(self, key: str, now: float | None = None) -> float:
        """Seconds until ``key`` may have one more event (0: now); records nothing."""
        if not self.limit:
            return 0.0
        tat = self.tat.get(key)
        if tat is None:
            return 0.0
        left = tat - self.tolerance - (time.monotonic() if now is None else now)
        return left if left > 0 else 0.0

    def take(self, key: str, now: float | None = None) -> float:
        """Count one event of ``key`` if it may have one (returns 0), else the seconds to wait
        (and counts nothing)."""
        if not self.limit:
            return 0.0
        t = time.monotonic() if now is None else now
        tat = self.tat.get(key, t)
        left = tat - self.tolerance - t
        if left > 0:
            return left
        self.tat[key] = (tat if tat > t else t) + self.interval
        if len(self.tat) > self.max_keys:
            self._forget(t)
        return 0.0

    def hold(self, key: str, wait_s: float, now: float | None = None) -> None:
        """Refuse ``key`` for the next ``wait_s`` seconds (what a shared count said): later
        refusals are answered here."""
        if self.limit and wait_s > 0:
            t = time.monotonic() if now is None else now
            self.tat[key] = max(self.tat.get(key, t), t + wait_s + self.tolerance)

    def _forget(self, now: float) -> None:
        """Drop the keys back to a full burst; if all are live, the oldest half."""
        for k in [k for k, tat in self.tat.items() if tat <= now]:
            del self.tat[k]
        if len(self.tat) > self.max_keys:
            for k in list(self.tat)[: len(self.tat) // 2]:
                del self.tat[k]


def backoff_s(failures: int, free: int, base_s: float, cap_s: float) -> float:
    """The wait after ``failures`` failures: 0 while fewer than ``free``, ``base_s`` after the
    ``free``-th, doubling with each further failure, at most ``cap_s``."""
    over = failures - free
    if over < 0:
        return 0.0
    return min(cap_s, base_s * 2.0 ** min(over, 62))
