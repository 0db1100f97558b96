"""A waiting ``Watch`` stream costs nothing while nothing happens (issue 37): it wakes for a view,
for its token's expiry (one timer, at that time) and for its session's revocation (pushed by the
process's one revocation poll), for nothing else."""

from __future__ import annotations

import asyncio
import hashlib
import sys
import time
from collections.abc import AsyncIterator
from functools import partial
from types import FrameType

import grpc
import pytest

from chieu.kit.errors import ServiceError
from chieu.kit.eventstore import EventStore
from chieu.kit.names import TABLES
from chieu.kit.revocations import RevocationList
from chieu.kit.settings import Settings
from chieu.table import decide
from chieu.table.tables import Tables
from chieu.table.watch import Watch
from chieu.tablelog.sealing import SealKeys

pytestmark = pytest.mark.integration


@pytest.fixture
async def tables(settings: Settings) -> AsyncIterator[Tables]:
    store = await EventStore.connect(settings.nats_url, stream=TABLES, creds=settings.nats_creds)
    t = Tables(store, settings, SealKeys.load(settings.seal_keys))
    try:
        yield t
    finally:
        await t.close()
        await store.close()


async def _table(tables: Tables, name: str) -> str:
    table_id = f"{name}-{time.monotonic_ns()}"
    await tables.execute(table_id, "w-host", "c0", lambda t, now: decide.create(t, "o_an_quan", {}, "w-host"),
                         create=True)
    return table_id


class Revoker:
    """A revocation list whose lobby is this test: :meth:`revoke` lists a token for the next poll."""

    def __init__(self) -> None:
        self.pending: list[tuple[bytes, int]] = []
        self.list = RevocationList(self.fetch, every_s=3600)

    async def fetch(self, after: int) -> tuple[list[tuple[bytes, int]], int]:
        got, self.pending = self.pending, []
        return got, after + len(got)

    def revoke(self, token: str) -> None:
        self.pending.append((hashlib.sha256(token.encode()).digest(), int(time.time() * 1000) + 3_600_000))


async def _drain(stream: AsyncIterator[bytes], got: list[bytes]) -> None:
    async for view in stream:
        got.append(view)


async def test_a_watch_ends_at_its_tokens_expiry(tables: Tables) -> None:
    table_id = await _table(tables, "expiry")
    began = time.monotonic()
    got: list[bytes] = []
    with pytest.raises(ServiceError) as err:
        await asyncio.wait_for(_drain(tables.watch(table_id, "w-short", until_s=time.time() + 0.6), got), 10)
    took = time.monotonic() - began
    assert (err.value.status, err.value.reason) == (grpc.StatusCode.UNAUTHENTICATED, "token_expired")
    assert len(got) == 1 and 0.5 < took < 3
    # an expired token's stream ends before it begins
    with pytest.raises(ServiceError) as err:
        await _drain(tables.watch(table_id, "w-short", until_s=time.time() - 1), got)
    assert err.value.reason == "token_expired"
    assert not tables.cache.live[table_id].watchers


async def test_a_revoked_sessions_streams_end_and_no_other(tables: Tables) -> None:
    table_id = await _table(tables, "revoke")
    revoker = Revoker()
    on = partial(revoker.list.subscribe)
    got: dict[int, list[bytes]] = {}
    tasks: dict[int, tuple[str, asyncio.Task[None]]] = {}
    for i, tok in enumerate(["tok-a", "tok-a", "tok-b"]):  # two streams of session a, one of b
        got[i] = []
        tasks[i] = tok, asyncio.create_task(_drain(
            tables.watch(table_id, f"w-{tok}", until_s=time.time() + 3600, on_revoked=partial(on, tok)), got[i]))
    await asyncio.sleep(0.2)
    assert all(len(g) == 1 for g in got.values())
    revoker.revoke("tok-a")
    await revoker.list.poll_once()
    for i in (0, 1):
        with pytest.raises(ServiceError) as err:
            await asyncio.wait_for(tasks[i][1], 2)
        assert (err.value.status, err.value.reason) == (grpc.StatusCode.UNAUTHENTICATED, "session_revoked")
    other = tasks[2][1]
    assert not other.done()
    await tables.execute(table_id, "w-b2", "c1", lambda t, now: decide.take_seat(t, "w-b2", None))
    for _ in range(100):
        if len(got[2]) == 2:
            break
        await asyncio.sleep(0.02)
    assert len(got[2]) == 2 and not other.done()  # untouched: it still gets the next version
    assert list(revoker.list._ends) == [hashlib.sha256(b"tok-b").digest()]  # the ended ones unsubscribed
    # a stream of a session already revoked ends before it begins
    with pytest.raises(ServiceError) as err:
        await _drain(tables.watch(table_id, "w-a", on_revoked=partial(on, "tok-a")), [])
    assert err.value.reason == "session_revoked"
    other.cancel()
    await asyncio.gather(other, return_exceptions=True)
    assert revoker.list._ends == {}


async def test_idle_streams_do_not_wake(tables: Tables) -> None:
    """With 200 streams open and nothing happening, no stream's generator runs at all (the old
    watch: each woke once a second, through a ``wait_for`` that made a task and a timer). The
    wakes are counted by a profile hook: every resumption of a watch generator is a ``call``."""
    table_id = await _table(tables, "idle")
    revoker = Revoker()
    n = 200
    tasks = [asyncio.create_task(_drain(
        tables.watch(table_id, f"w-{i}", until_s=time.time() + 3600,
                     on_revoked=partial(revoker.list.subscribe, f"tok-{i}")), [])) for i in range(n)]
    await asyncio.sleep(0.3)
    assert len(tables.cache.live[table_id].watchers) == n
    code = Watch.watch.__code__
    wakes = 0

    def profile(frame: FrameType, event: str, arg: object) -> None:
        nonlocal wakes
        if event == "call" and frame.f_code is code:
            wakes += 1

    sys.setprofile(profile)
    try:
        await asyncio.sleep(2.5)
    finally:
        sys.setprofile(None)
    assert wakes == 0
    await tables.execute(table_id, "w-b2", "c1", lambda t, now: decide.take_seat(t, "w-b2", None))
    sys.setprofile(profile)
    try:
        await asyncio.sleep(0.5)  # the hook counts: a new version wakes each stream
    finally:
        sys.setprofile(None)
    assert wakes >= n
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    assert not tables.cache.live[table_id].watchers and revoker.list._ends == {}
