"""Fixtures of the end-to-end tests."""

from __future__ import annotations

import pytest

from chieu_tools import localnats


@pytest.fixture
def port() -> int:
    """A free loopback port for a service process."""
    return localnats.free_port()
