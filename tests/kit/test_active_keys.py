"""``EventStore.active_keys`` lists every key marked active — on a real nats-server, while another
connection writes the same bucket.

A restarted table service resumes (and excuses the outage to the lost players of) exactly the
tables this lists. nats-py's ``KeyValue.keys()``, which it used, ends its listing at the first
sign of nothing pending; the consumer info it asks for overtakes the entries already on their way
when the bucket's stream is busy, and the listing came back empty in a quarter to half of the
calls with the bucket written meanwhile (a CI run's restarted table server resumed no table, and
its lost players were not excused: tests/table/test_server_fault.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator

import pytest
from nats.js.errors import NotFoundError

from chieu.kit.eventstore import EventStore
from chieu.kit.names import TABLES, Stream
from tests.conftest import nats_creds

pytestmark = pytest.mark.integration

CALLS = 60


@pytest.fixture
async def stream(nats_url: str) -> AsyncIterator[Stream]:
    """A stream (and its buckets) of this test's own, removed afterwards."""
    tag = uuid.uuid4().hex[:8]
    s = Stream(f"TEST_ACTIVE_{tag}", f"test.active{tag}")
    yield s
    store = await EventStore.connect(nats_url, stream=s, creds=nats_creds("admin"))
    try:
        for name in (s.name, f"KV_{s.active}", f"KV_{s.snapshots}"):
            with contextlib.suppress(Exception):
                await store.js.delete_stream(name)
    finally:
        await store.close()


async def test_every_live_key_is_listed_while_the_bucket_is_written(nats_url: str, stream: Stream) -> None:
    store = await EventStore.connect(nats_url, stream=stream, creds=nats_creds("admin"))
    other = await EventStore.connect(nats_url, stream=stream, creds=nats_creds("admin"))
    stop = asyncio.Event()

    async def churn(n: int) -> None:
        """Other tables' hands start and end meanwhile (puts and purges of other keys)."""
        i = 0
        while not stop.is_set():
            await other.mark_active(f"churn-{n}-{i % 5}", i % 2 == 0)
            i += 1

    try:
        for i in range(90):
            await store.mark_active(f"t{i:03d}", True)
        for i in range(60, 90):  # hands that ended: purged keys, markers left in the stream
            await store.mark_active(f"t{i:03d}", False)
        live = {f"t{i:03d}" for i in range(60)}
        churners = [asyncio.create_task(churn(n)) for n in range(4)]
        try:
            for call in range(CALLS):
                keys = set(await asyncio.wait_for(store.active_keys(), 15))
                mine = {k for k in keys if k.startswith("t")}
                assert mine == live, (call, sorted(live - mine)[:5], sorted(mine - live)[:5])
        finally:
            stop.set()
            await asyncio.gather(*churners)
        assert set(await store.active_keys()) >= live  # and with nothing written meanwhile
    finally:
        await other.close()
        await store.close()


async def test_an_empty_bucket_and_one_of_only_purged_keys_list_nothing(nats_url: str, stream: Stream) -> None:
    store = await EventStore.connect(nats_url, stream=stream, creds=nats_creds("admin"))
    try:
        assert await store.active_keys() == []
        await store.mark_active("a", True)
        assert await store.active_keys() == ["a"]
        await store.mark_active("a", False)
        assert await store.active_keys() == []
        await store.mark_active("a", True)  # a table played again
        assert await store.active_keys() == ["a"]
    finally:
        await store.close()


async def test_a_forgotten_key_leaves_nothing_and_old_markers_are_dropped(nats_url: str, stream: Stream) -> None:
    """A table no longer active leaves nothing in the bucket (a KV purge left a marker per table
    ever played, read at every resume and indexed by nats-server for ever); markers a KV purge left
    before are dropped by the next listing, each only up to its own sequence."""
    store = await EventStore.connect(nats_url, stream=stream, creds=nats_creds("admin"))
    kv_name = f"KV_{stream.active}"

    async def subjects() -> int:  # (one message a key: the bucket keeps no history)
        return int((await store.js.stream_info(kv_name)).state.messages)

    try:
        for i in range(20):
            await store.mark_active(f"t{i}", True)
        for i in range(15):
            await store.mark_active(f"t{i}", False)
        assert await subjects() == 5 and set(await store.active_keys()) == {f"t{i}" for i in range(15, 20)}
        kv = await store.js.key_value(stream.active)
        for i in range(15, 20):  # markers as the old code left them
            await kv.purge(f"t{i}")
        await kv.put("t19", b"1")  # one marked active again after its marker
        assert await subjects() == 5
        assert await store.active_keys() == ["t19"]
        assert await subjects() == 1  # the four markers dropped, t19's mark kept
        assert await store.active_keys() == ["t19"]
    finally:
        await store.close()



async def test_the_table_user_may_forget_a_key_and_leaves_nothing(nats_url: str) -> None:
    """As the table service's NATS user, on its own bucket: the purge of a subject is allowed."""
    store = await EventStore.connect(nats_url, stream=TABLES, creds=nats_creds("table"))
    key = f"forget-{uuid.uuid4().hex[:8]}"
    subject = f"$KV.{TABLES.active}.{key}"
    try:
        await store.mark_active(key, True)
        assert (await store.js.get_last_msg(f"KV_{TABLES.active}", subject)).data == b"1"
        await asyncio.wait_for(store.mark_active(key, False), 5)
        with pytest.raises(NotFoundError):
            await store.js.get_last_msg(f"KV_{TABLES.active}", subject)
    finally:
        await store.close()
