"""The JetStream event store against a real nats-server."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator

import pytest

from chieu.kit.eventstore import Conflict, EventStore, Snapshot
from chieu.kit.names import Stream
from tests.conftest import nats_creds

pytestmark = pytest.mark.integration


@pytest.fixture
async def store(nats_url: str) -> AsyncIterator[EventStore]:
    s = await EventStore.connect(nats_url, stream=Stream("TEST_STORE", "test.store"), creds=nats_creds("admin"))
    yield s
    await s.close()


def key() -> str:
    return uuid.uuid4().hex


async def test_append_then_read_in_order(store: EventStore) -> None:
    k = key()
    first = await store.append(k, b"a", expected_seq=0, msg_id=f"{k}:1")
    second = await store.append(k, b"b", expected_seq=first.seq, msg_id=f"{k}:2")
    assert second.seq > first.seq and not second.duplicate
    assert [s.data for s in await store.read(k)] == [b"a", b"b"]
    assert [s.data for s in await store.read(k, after=first.seq)] == [b"b"]
    assert await store.last_seq(k) == second.seq


async def test_a_stale_expected_sequence_is_a_conflict_and_appends_nothing(store: EventStore) -> None:
    k = key()
    first = await store.append(k, b"a", expected_seq=0, msg_id=f"{k}:1")
    with pytest.raises(Conflict):
        await store.append(k, b"x", expected_seq=0, msg_id=f"{k}:x")
    assert [s.data for s in await store.read(k)] == [b"a"]
    assert await store.last_seq(k) == first.seq


async def test_a_repeated_message_id_is_appended_once(store: EventStore) -> None:
    k = key()
    first = await store.append(k, b"a", expected_seq=0, msg_id=f"{k}:1")
    # a retry that still expects the old end is a conflict (the table service then reloads
    # and finds its command in the log) ...
    with pytest.raises(Conflict):
        await store.append(k, b"a", expected_seq=0, msg_id=f"{k}:1")
    # ... and one that expects the new end is a duplicate inside the window
    again = await store.append(k, b"a", expected_seq=first.seq, msg_id=f"{k}:1")
    assert again.duplicate and again.seq == first.seq
    assert len(await store.read(k)) == 1


async def test_two_racing_writers_never_fork_the_log(store: EventStore) -> None:
    k = key()
    results = await asyncio.gather(
        *(store.append(k, str(i).encode(), expected_seq=0, msg_id=f"{k}:{i}") for i in range(8)),
        return_exceptions=True,
    )
    assert sum(not isinstance(r, BaseException) for r in results) == 1
    assert all(isinstance(r, Conflict) for r in results if isinstance(r, BaseException))
    assert len(await store.read(k)) == 1


async def test_reading_an_empty_subject_returns_nothing(store: EventStore) -> None:
    assert await store.read(key()) == []
    assert await store.last_seq(key()) == 0


async def test_snapshots_round_trip_and_are_per_key(store: EventStore) -> None:
    k = key()
    assert await store.load_snapshot(k) is None
    await store.save_snapshot(k, Snapshot(42, "tag-1", b"\x00state\n"))
    assert await store.load_snapshot(k) == Snapshot(42, "tag-1", b"\x00state\n")
    assert await store.load_snapshot(key()) is None


async def test_follow_delivers_new_messages_after_a_sequence(store: EventStore) -> None:
    k = key()
    a = await store.append(k, b"a", expected_seq=0, msg_id=f"{k}:1")
    got: list[bytes] = []

    async def consume() -> None:
        async for stored in store.follow(k, after=a.seq):
            got.append(stored.data)
            if len(got) == 2:
                return

    task = asyncio.create_task(consume())
    b = await store.append(k, b"b", expected_seq=a.seq, msg_id=f"{k}:2")
    await store.append(k, b"c", expected_seq=b.seq, msg_id=f"{k}:3")
    await asyncio.wait_for(task, 5)
    assert got == [b"b", b"c"]
