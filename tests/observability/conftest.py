"""Fixtures of the observability tests: a private nats-server and a private database, so the
services started here own their durables and inbox cursors (the session's services share the
session's), and a scraper of Prometheus endpoints."""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from urllib.request import urlopen

import pytest
from prometheus_client.parser import text_string_to_metric_families

from chieu_tools import localnats
from tests.conftest import new_database
from tests.ledger.conftest import books, pool, tlog  # noqa: F401 (the ledger's fixtures, for the consumer metrics)


@pytest.fixture(scope="module")
def private_nats(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    proc, url = localnats.start(Path(tmp_path_factory.mktemp("obs-nats")), quiet=True)
    try:
        yield url
    finally:
        localnats.stop(proc)


@pytest.fixture(scope="module")
async def private_db(database_url: str) -> AsyncIterator[str]:
    """A fresh database on the session's PostgreSQL server (its URL)."""
    yield await new_database(database_url, f"obs_{uuid.uuid4().hex[:10]}")


Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def scrape(port: int) -> Samples:
    """Every sample of ``http://127.0.0.1:<port>/metrics`` by name and labels."""
    with urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
        text = r.read().decode()
    out: Samples = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def value(samples: Samples, name: str, **labels: str) -> float:
    """One sample (0 when absent: a labelled counter not used yet)."""
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def total(samples: Samples, name: str, **labels: str) -> float:
    """The sum of the samples of ``name`` whose labels include ``labels``."""
    want = set(labels.items())
    return sum(v for (n, ls), v in samples.items() if n == name and want <= set(ls))


async def until(check: Callable[[], Awaitable[bool]] | Callable[[], bool], within_s: float = 30.0) -> None:
    """Wait (polling) until ``check`` holds; fail after ``within_s``."""
    import asyncio
    import inspect

    deadline = time.monotonic() + within_s
    while True:
        got = check()
        if inspect.isawaitable(got):
            got = await got
        if got:
            return
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting")
        await asyncio.sleep(0.1)
