"""Health while a dependency does not answer (issue 36): the readiness (the overall health and each
service's) is NOT_SERVING from the first unanswered round and stays so, without flapping, until
every dependency has answered three rounds in a row; the liveness (``chieu.Liveness``) stays
SERVING, so a liveness probe does not restart a process for its database's outage."""

from __future__ import annotations

import asyncio
import time

import pytest
from grpc_health.v1 import health, health_pb2

from chieu.kit import db
from chieu.kit.db import database_check
from chieu.kit.server import LIVENESS, Readiness
from tests.kit.test_fail_fast import frozen, own_postgres  # noqa: F401 (the fixture)

SERVING, NOT_SERVING = health_pb2.HealthCheckResponse.SERVING, health_pb2.HealthCheckResponse.NOT_SERVING


async def status(servicer: health.aio.HealthServicer, name: str = "") -> int:
    class Context:
        async def abort(self, *a: object) -> None:
            raise AssertionError(a)
    reply = await servicer.Check(health_pb2.HealthCheckRequest(service=name), Context())
    return int(reply.status)


async def serving(names: tuple[str, ...] = ("svc",)) -> health.aio.HealthServicer:
    servicer = health.aio.HealthServicer()
    for name in (*names, "", LIVENESS):
        await servicer.set(name, SERVING)
    return servicer


async def test_an_answer_now_and_then_does_not_make_it_ready_again() -> None:
    answers = iter([False, True, False, True, True, False, True, True, True, True])

    async def check() -> None:
        if not next(answers):
            raise ConnectionError("refused")

    servicer = await serving()
    ready = Readiness(servicer, ("svc",), {"database": check}, every_s=0.01)
    seen = []
    for _ in range(10):
        seen.append(await ready.round())
        assert await status(servicer) == await status(servicer, "svc")
        assert await status(servicer, LIVENESS) == SERVING
    assert seen == [False] * 8 + [True, True]  # three answers in a row, at last
    assert await status(servicer) == SERVING


@pytest.mark.integration
async def test_a_frozen_postgresql_is_not_ready_for_as_long_as_it_is_frozen(own_postgres: tuple[str, int]) -> None:  # noqa: F811
    url, postmaster = own_postgres
    pool = await db.create_pool(url, max_size=2)  # the service's pool: the check does not take from it
    servicer = await serving()
    ready = Readiness(servicer, ("svc",), {"database": database_check(url)}, every_s=0.3)
    ready.start()
    try:
        await asyncio.sleep(1.0)
        assert await status(servicer) == SERVING
        samples: list[tuple[float, int]] = []
        async with pool.acquire() as conn:
            assert await conn.fetchval("SELECT 1") == 1
        with frozen(postmaster):
            frozen_at = time.monotonic()
            while time.monotonic() - frozen_at < 8:
                samples.append((time.monotonic() - frozen_at, await status(servicer)))
                assert await status(servicer, LIVENESS) == SERVING
                assert pool.get_idle_size() == pool.get_size()  # no connection of the pool held by it
                await asyncio.sleep(0.2)
        freed_at = time.monotonic()
        while await status(servicer) != SERVING:
            assert time.monotonic() - freed_at < 15, "not ready again after PostgreSQL answered"
            await asyncio.sleep(0.2)
        back_s = time.monotonic() - freed_at
    finally:
        await ready.stop()
        pool.terminate()
    first = next(t for t, s in samples if s == NOT_SERVING)
    after = [s for t, s in samples if t >= first]
    print(f"not ready {first:.2f} s after the freeze; ready again {back_s:.2f} s after it ended; "
          f"{len(after)} samples while frozen, all NOT_SERVING")
    assert first < 4.0
    assert set(after) == {NOT_SERVING}  # no "healthy again" while it is frozen
    assert ready.failing == {}
