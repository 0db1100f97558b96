"""The chaos run's wait for quiet scales with the run: a 4-minute run with no violation once ran out
of a fixed 240 s wait while the stream was still moving (issue 28)."""

from __future__ import annotations

from pathlib import Path

from chieu_tools.chaos.run import Config, quiet_limit_s


def test_the_wait_for_quiet_grows_with_the_run_and_is_bounded() -> None:
    assert quiet_limit_s(4 * 60) == 480  # the run that failed: twice the old fixed 240 s
    assert quiet_limit_s(30 * 60) == 240 + 1800 > quiet_limit_s(4 * 60)
    assert quiet_limit_s(10 * 3600) == 3600
    assert Config(1, 4.0, Path(".")).quiet_s is None  # by default: from the run's length
