"""The in-memory rate per key (GCRA) and the growing sign-in delay."""

from __future__ import annotations

import pytest

from chieu.kit.limits import Rate, backoff_s


def test_a_rate_lets_its_burst_through_then_one_per_interval() -> None:
    r = Rate(3, 60.0)
    assert [r.take("a", now=100.0) for _ in range(3)] == [0.0, 0.0, 0.0]
    assert r.take("a", now=100.0) == pytest.approx(20.0)  # the next in 20 s (60 / 3)
    assert r.wait("a", now=110.0) == pytest.approx(10.0) and r.take("b", now=100.0) == 0.0  # keys apart
    assert r.take("a", now=120.0) == 0.0 and r.take("a", now=120.0) == pytest.approx(20.0)
    assert r.take("a", now=1000.0) == 0.0  # a long quiet: the whole burst again
    assert [r.take("a", now=1000.0) for _ in range(2)] == [0.0, 0.0] and r.take("a", now=1000.0) > 0


def test_a_refusal_counts_nothing_and_no_limit_is_no_limit() -> None:
    r = Rate(1, 10.0)
    assert r.take("a", now=0.0) == 0.0
    for _ in range(100):
        assert r.take("a", now=5.0) == pytest.approx(5.0)  # hammering does not push the wait out
    assert r.take("a", now=10.0) == 0.0
    free = Rate(0, 10.0)
    assert all(free.take("a") == 0.0 for _ in range(1000))


def test_hold_refuses_for_what_a_shared_count_said() -> None:
    r = Rate(2, 10.0)
    r.hold("a", 7.0, now=0.0)
    assert r.wait("a", now=0.0) == pytest.approx(7.0) and r.take("a", now=7.0) == 0.0


def test_memory_is_bounded() -> None:
    r = Rate(1, 1.0, max_keys=100)
    for i in range(1000):
        r.take(f"k{i}", now=float(i))
    assert len(r.tat) <= 101


def test_the_delay_grows_and_stops_at_its_cap() -> None:
    waits = [backoff_s(n, 5, 1.0, 60.0) for n in range(13)]
    assert waits == [0, 0, 0, 0, 0, 1, 2, 4, 8, 16, 32, 60, 60]
    assert backoff_s(10_000, 5, 1.0, 900.0) == 900.0
