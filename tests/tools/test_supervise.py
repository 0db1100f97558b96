"""The supervisor of ``chieu up`` on real processes: a process that keeps dying is restarted alone,
then given up after N deaths in M seconds, and said so, while the others keep running; stop ends
every one of them."""

from __future__ import annotations

import os
import signal
import sys
import time

from chieu_tools import supervise


def child(name: str, code: str) -> supervise.Child:
    return supervise.Child(name, supervise.popen([sys.executable, "-c", code], {**os.environ}), lambda: True,
                           ready_timeout=5)


def test_a_process_dying_again_and_again_is_given_up_and_the_others_keep_running() -> None:
    lines: list[str] = []
    crashy = child("crashy", "import time, sys; time.sleep(0.2); sys.exit(3)")
    steady = child("steady", "import time; time.sleep(60)")
    sup = supervise.Supervisor([crashy, steady], max_deaths=3, window_s=30, backoff_s=(0.05, 0.2),
                               say=lines.append)
    try:
        sup.start([["crashy", "steady"]])
        assert steady.handle is not None
        steady_pid = steady.handle.pid
        deadline = time.monotonic() + 15
        while crashy.state != "gave up" and time.monotonic() < deadline:
            time.sleep(0.05)
        assert crashy.state == "gave up", lines
        assert crashy.starts == 3  # the first start and two restarts: the third death gives it up
        deaths = [line for line in lines if line.startswith("chieu up: DIED crashy")]
        assert len(deaths) == 3 and "exit code 3" in deaths[0] and "death 3 of 3 allowed in 30 s" in deaths[-1]
        assert sum(line.startswith("chieu up: RESTART crashy") for line in lines) == 2
        assert any(line.startswith("chieu up: GAVE UP on crashy: 3 deaths in 30 s") for line in lines)
        time.sleep(0.5)  # given up: not started again
        assert crashy.starts == 3
        assert steady.handle.poll() is None and steady.handle.pid == steady_pid and steady.state == "serving"
    finally:
        sup.stop([["crashy", "steady"]])
    assert steady.handle.poll() is not None and steady.state == "stopped"


def test_a_killed_process_is_restarted_alone_and_stop_ends_even_a_restarted_one() -> None:
    lines: list[str] = []
    a = child("a", "import time; time.sleep(60)")
    b = child("b", "import time; time.sleep(60)")
    sup = supervise.Supervisor([a, b], backoff_s=(0.05, 0.2), say=lines.append)
    try:
        sup.start([["a"], ["b"]])
        assert a.handle is not None and b.handle is not None
        first, b_pid = a.handle.pid, b.handle.pid
        os.kill(first, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while (a.handle.pid == first or a.state != "serving") and time.monotonic() < deadline:
            time.sleep(0.05)
        assert a.handle.pid != first and a.state == "serving" and a.starts == 2, lines
        assert any(f"DIED a (pid {first}): killed by SIGKILL" in line for line in lines)
        assert any(line.startswith("chieu up: BACK a (pid ") for line in lines)
        assert b.handle.pid == b_pid and b.handle.poll() is None and b.starts == 1
    finally:
        sup.stop([["b"], ["a"]])
    assert a.handle.poll() is not None and b.handle.poll() is not None


def test_a_process_not_our_child_is_watched_by_its_pid_and_a_zombie_is_dead() -> None:
    proc = supervise.popen([sys.executable, "-c", "import time; time.sleep(60)"], {**os.environ})()
    watched = supervise.Pid(proc.pid)
    assert watched.poll() is None
    os.kill(proc.pid, signal.SIGKILL)
    deadline = time.monotonic() + 5
    while watched.poll() is None and time.monotonic() < deadline:  # a zombie (not reaped yet) counts as dead
        time.sleep(0.02)
    assert watched.poll() == -1 and supervise.describe(-1) == "gone"
    proc.poll()  # reap it


def test_a_planned_restart_is_said_and_not_counted_as_a_death() -> None:
    lines: list[str] = []
    a = child("a", "import time; time.sleep(60)")
    sup = supervise.Supervisor([a], max_deaths=1, say=lines.append)
    try:
        sup.start([["a"]])
        assert a.handle is not None
        first = a.handle.pid
        sup.restart("a", "to take a new limit")
        deadline = time.monotonic() + 10
        while (a.handle.pid == first or a.state != "serving") and time.monotonic() < deadline:
            time.sleep(0.05)
        assert a.handle.pid != first and a.state == "serving" and not a.deaths, lines  # max_deaths=1: not given up
        assert "chieu up: RESTART a: to take a new limit" in lines and not any("DIED" in line for line in lines)
    finally:
        sup.stop([["a"]])


def test_a_health_that_answers_now_and_then_is_not_said_healthy_again() -> None:
    """Issue 36: ``up`` said "healthy again" five times while PostgreSQL was frozen (a check that
    passed now and then). Healthy again only after three checks in a row pass."""
    lines: list[str] = []
    answers = iter([True, False, True, False, True, True, False, True, True, True] + [True] * 100)
    checks: list[float] = []

    def healthy() -> bool:
        checks.append(time.monotonic())
        return next(answers)

    a = supervise.Child("a", supervise.popen([sys.executable, "-c", "import time; time.sleep(60)"], {**os.environ}),
                        healthy, ready_timeout=5)
    sup = supervise.Supervisor([a], say=lines.append)
    try:
        sup.start([["a"]])  # the first answer: ready
        deadline = time.monotonic() + 20
        while not any("healthy again" in line for line in lines) and time.monotonic() < deadline:
            time.sleep(0.1)
        said = [line for line in lines if "healthy" in line]
        assert a.handle is not None
        assert said == [f"chieu up: WARNING a (pid {a.handle.pid}) is alive but not healthy",
                        "chieu up: a is healthy again"], lines
        assert len(checks) >= 10  # said after the tenth check: the first three in a row
    finally:
        sup.stop([["a"]])
