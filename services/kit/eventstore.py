"""The JetStream event store: one stream, one subject per aggregate (``<prefix>.<key>``).

* ``append`` publishes one message with ``Nats-Expected-Last-Subject-Sequence`` (optimistic
  concurrency: a racing writer gets :class:`Conflict`, for JetStream's "wrong last sequence" in
  either form, 10071 or the clustered 10164) and ``Nats-Msg-Id`` (a repeated command
  id inside the duplicate window returns the first append);
* ``load`` reads the latest snapshot from a KV bucket and the messages after it;
* ``follow`` is a live subscription from a sequence on.

Nothing is ever deleted or rewritten. The stream is created with file storage and the
configured replicas; the server must run with ``jetstream { sync_interval: always }``.

Every request to JetStream (an append, a read, a snapshot) waits at most
:data:`REQUEST_TIMEOUT_S`: with NATS down or frozen a call fails with ``UNAVAILABLE``
(``log_unavailable``, :mod:`chieu.kit.outages`) rather than hanging; a store without room refuses
the append (``log_full``), since the stream discards nothing to make room.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncGenerator
from dataclasses import dataclass
from typing import Any

import nats
from nats.aio.client import Client
from nats.js import JetStreamContext, api
from nats.js.errors import APIError, BucketNotFoundError, KeyNotFoundError, NotFoundError

from chieu.kit import logs, metrics, outages, tracing
from chieu.kit.names import Stream
from chieu.kit.natsauth import connect_url, kv_stream

log = logs.get("chieu.kit.eventstore")

WRONG_LAST_SEQUENCE = 10071
"""JetStream's "wrong last sequence: N"; the clustered "wrong last sequence" (10164) means the same
here (:data:`chieu.kit.outages.JS_WRONG_LAST`)."""
REQUEST_TIMEOUT_S = 2.0
"""The longest a JetStream request (append, read, snapshot) waits for its answer."""
ACTIVE_SETTLE_S = 0.5
"""How long :meth:`EventStore.active_keys` reads on past its end while entries are still pending."""
MARKERS_DROPPED = 1_000
"""The most old purge markers one :meth:`EventStore.active_keys` drops (a request each; the rest
at the next listing)."""


class Conflict(Exception):
    """Another writer appended first, or another write to the subject is still in flight (10164):
    reload and decide again."""


@dataclass(frozen=True, slots=True)
class Stored:
    """One stored message: its stream sequence and its bytes."""

    seq: int
    data: bytes


@dataclass(frozen=True, slots=True)
class Appended:
    """An append's result; ``duplicate`` when the message id had been appended before."""

    seq: int
    duplicate: bool


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A saved state: the stream sequence it includes messages up to, a format tag, bytes."""

    seq: int
    tag: str
    data: bytes


class EventStore:
    """Append-only logs on one JetStream stream, with snapshots in a KV bucket."""

    def __init__(self, nc: Client, *, stream: Stream, replicas: int = 1, duplicate_window_s: int = 120) -> None:
        self.nc = nc
        self.js: JetStreamContext = nc.jetstream(timeout=REQUEST_TIMEOUT_S)
        self.names = stream
        self.stream = stream.name
        self.prefix = stream.prefix
        self.replicas = replicas
        self.duplicate_window_s = duplicate_window_s
        self._kv: Any = None
        self._active: Any = None

    @classmethod
    async def connect(cls, url: str, *, once: bool = False, creds: str = "", ca: str = "", ensure: bool = True,
                      **kw: object) -> EventStore:
        """Connect to NATS (as the user of the seed file ``creds``, over TLS checked against ``ca``
        when given) and make sure the stream and the snapshot bucket exist (``ensure``; a reader
        that may create nothing, the audit user, passes False and asks :meth:`exists`).

        A service reconnects for ever; ``once`` (a command line tool) tries each server once and
        raises, quietly, when none answers.
        """
        async def quiet(e: Exception) -> None:
            pass

        options: dict[str, Any] = {"max_reconnect_attempts": 1, "reconnect_time_wait": 0.2, "error_cb": quiet,
                                   "allow_reconnect": False, "connect_timeout": 3} if once else {
                                   "max_reconnect_attempts": -1}
        nc = await connect_url(url, str(kw.pop("name", "chieu")), creds=creds, ca=ca, **options)
        store = cls(nc, **kw)  # type: ignore[arg-type]
        if ensure:
            await store.ensure()
        return store

    async def exists(self) -> bool:
        """Whether the stream exists (no table service has run on a server without it)."""
        try:
            await self.js.stream_info(self.stream)
        except NotFoundError:
            return False
        return True

    def subject(self, key: str) -> str:
        return self.names.subject(key)

    async def ensure(self) -> None:
        """Create the stream and the snapshot bucket if missing (safe from many processes)."""
        config = api.StreamConfig(
            name=self.stream,
            subjects=[self.names.subjects],
            storage=api.StorageType.FILE,
            retention=api.RetentionPolicy.LIMITS,
            num_replicas=self.replicas,
            duplicate_window=float(self.duplicate_window_s),
            allow_direct=True,
            deny_delete=True,
            deny_purge=True,
        )
        try:
            await self.js.stream_info(self.stream)
        except NotFoundError:
            try:
                await self.js.add_stream(config)
            except APIError:
                await self.js.stream_info(self.stream)  # created by a racing process
        self._kv = await self._bucket(self.names.snapshots)
        self._active = await self._bucket(self.names.active)

    async def _bucket(self, bucket: str) -> Any:
        try:
            return await self.js.key_value(bucket)
        except BucketNotFoundError:
            try:
                return await self.js.create_key_value(
                    api.KeyValueConfig(bucket=bucket, history=1, storage=api.StorageType.FILE,
                                       replicas=self.replicas)
                )
            except APIError:
                return await self.js.key_value(bucket)

    async def mark_active(self, key: str, active: bool) -> None:
        """Remember (or forget) that ``key`` has work on a clock, so a restart resumes it.

        Forgotten by purging the key's subject from the bucket's stream, which leaves nothing: a
        KV delete or purge leaves a marker, one per table ever played, that every resume read
        and nats-server indexed for ever."""
        if active:
            await self._active.put(key, b"1")
        else:
            await self.js.purge_stream(kv_stream(self.names.active), subject=f"$KV.{self.names.active}.{key}")

    async def active_keys(self) -> list[str]:
        """Every key marked active (in the order they were marked).

        The last entry of each key of the bucket's stream, read by an ordered consumer up to the
        stream's last sequence when the call began (and on while more is pending, briefly): a key
        marked before the call and not forgotten during it is listed. Not nats-py's
        ``KeyValue.keys()``, which ends its listing at the first sign of nothing pending: the
        consumer info it asks for overtakes the entries already sent when the stream is busy,
        and it then lists nothing at all (nats-py issue 842; with the bucket written meanwhile, a
        quarter of the calls or more) — a restarted table service resumed no table.
        """
        stream, prefix = kv_stream(self.names.active), f"$KV.{self.names.active}."
        state = (await self.js.stream_info(stream)).state
        if not state.messages:
            return []
        last = state.last_seq  # (its message may be purged since: a forgotten key leaves nothing)
        keys: dict[str, None] = {}
        markers: dict[str, int] = {}
        sub = await self.js.subscribe(f"{prefix}>", stream=stream, ordered_consumer=True, headers_only=True,
                                      deliver_policy=api.DeliverPolicy.LAST_PER_SUBJECT,
                                      pending_msgs_limit=-1, pending_bytes_limit=-1)
        try:
            seq, settle = 0, 0.0
            while True:
                wait = REQUEST_TIMEOUT_S if seq < last else settle - time.monotonic()
                if wait <= 0:
                    break
                try:
                    msg = await sub.next_msg(timeout=wait)
                except nats.errors.TimeoutError:
                    if seq < last and (seq or (await self.js.stream_info(stream)).state.messages):
                        raise
                    break  # what was still counted pending was purged meanwhile
                key = msg.subject[len(prefix):]
                keys.pop(key, None)
                markers.pop(key, None)
                seq, pending = msg.metadata.sequence.stream, msg.metadata.num_pending
                if _forgotten(msg.headers):
                    markers[key] = seq
                else:
                    keys[key] = None
                if not pending:  # (counted by the server as it delivered this one: nothing after it now)
                    break
                if seq >= last:
                    settle = settle or time.monotonic() + ACTIVE_SETTLE_S
        finally:
            with contextlib.suppress(Exception):
                await sub.unsubscribe()
        await self._drop_markers(stream, prefix, markers)
        return list(keys)

    async def _drop_markers(self, stream: str, prefix: str, markers: dict[str, int]) -> None:
        """Purge the markers a KV purge left (before :meth:`mark_active` purged subjects), each only
        up to its own sequence: a key marked active again meanwhile keeps its mark."""
        for key, seq in list(markers.items())[:MARKERS_DROPPED]:
            try:
                await self.js.purge_stream(stream, seq=seq + 1, subject=f"{prefix}{key}")
            except Exception as exc:  # a marker left costs a read at the next resume, nothing more
                log.warning("marker not purged", key=key, error=str(exc))
                return

    async def append(self, key: str, data: bytes, *, expected_seq: int, msg_id: str) -> Appended:
        """Append ``data`` if the subject's last sequence is ``expected_seq`` (0: empty).

        Timed (``chieu_js_append_seconds``, conflicts and errors counted); when tracing, the
        record's headers also carry the W3C ``traceparent`` of the append's span."""
        headers = {
            "Nats-Expected-Last-Subject-Sequence": str(expected_seq),
            "Nats-Msg-Id": msg_id,
        }
        subject = self.subject(key)
        started = time.perf_counter()
        try:
            if tracing._tracer is None:
                ack = await self.js.publish(subject, data, headers=headers, stream=self.stream)
            else:
                with tracing.producing(self.stream, subject, headers):
                    ack = await self.js.publish(subject, data, headers=headers, stream=self.stream)
        except APIError as e:
            if e.err_code in outages.JS_WRONG_LAST:
                metrics.JS_APPEND_CONFLICTS.inc()
                raise Conflict(key) from None
            metrics.JS_APPEND_ERRORS.inc()
            raise
        except Exception:
            metrics.JS_APPEND_ERRORS.inc()
            raise
        finally:
            metrics.JS_APPEND.observe(time.perf_counter() - started)
        return Appended(ack.seq, bool(ack.duplicate))

    async def last_seq(self, key: str) -> int:
        """The stream sequence of the subject's last message; 0 when it has none. Asked of the
        stream's leader, not by direct get: any replica answers a direct get, and one that is
        catching up after a freeze answered a log 891 records short (a read then stopped there)."""
        try:
            msg = await self.js.get_last_msg(self.stream, self.subject(key), direct=False)
        except NotFoundError:
            return 0
        return int(msg.seq or 0)

    async def last(self, key: str) -> Stored | None:
        """The subject's last message; None when it has none (asked of the leader, as :meth:`last_seq`)."""
        try:
            msg = await self.js.get_last_msg(self.stream, self.subject(key), direct=False)
        except NotFoundError:
            return None
        return Stored(int(msg.seq or 0), msg.data or b"")

    async def read(self, key: str, after: int = 0, upto: int | None = None) -> list[Stored]:
        """The subject's messages with sequence in ``(after, upto]`` (``upto``: the last one)."""
        last = await self.last_seq(key) if upto is None else upto
        if last <= after:
            return []
        out: list[Stored] = []
        sub = await self.js.subscribe(
            self.subject(key), ordered_consumer=True,
            config=api.ConsumerConfig(deliver_policy=api.DeliverPolicy.BY_START_SEQUENCE,
                                      opt_start_seq=after + 1),
            pending_msgs_limit=-1, pending_bytes_limit=-1,
        )
        try:
            while True:
                msg = await sub.next_msg(timeout=REQUEST_TIMEOUT_S)
                seq = msg.metadata.sequence.stream
                if seq > last:
                    break
                out.append(Stored(seq, msg.data))
                if seq == last:
                    break
        finally:
            await sub.unsubscribe()
        return out

    async def _live(self, subject: str, config: api.ConsumerConfig,
                    ready: asyncio.Event | None = None) -> AsyncGenerator[Any, None]:
        """Messages of an ordered consumer on ``subject`` as they arrive (until cancelled);
        ``ready`` is set once the consumer exists."""
        sub = await self.js.subscribe(subject, ordered_consumer=True, config=config, idle_heartbeat=5.0,
                                      pending_msgs_limit=-1, pending_bytes_limit=-1)
        if ready is not None:
            ready.set()
        try:
            while True:
                try:
                    yield await sub.next_msg(timeout=None)
                except nats.errors.TimeoutError:
                    continue
        finally:
            with contextlib.suppress(Exception):  # the connection may be closing
                await asyncio.shield(sub.unsubscribe())

    async def follow(self, key: str, after: int) -> AsyncGenerator[Stored, None]:
        """Every message of the subject with sequence > ``after``, as it arrives (until cancelled)."""
        config = api.ConsumerConfig(deliver_policy=api.DeliverPolicy.BY_START_SEQUENCE, opt_start_seq=after + 1)
        async with contextlib.aclosing(self._live(self.subject(key), config)) as messages:
            async for msg in messages:
                yield Stored(msg.metadata.sequence.stream, msg.data)

    async def follow_all(self, ready: asyncio.Event | None = None) -> AsyncGenerator[tuple[str, Stored], None]:
        """Every message appended to any subject from now on, as ``(key, stored)`` (until cancelled).

        One ordered consumer for the whole stream: a process follows all the aggregates it
        caches with one subscription, however many they are. ``ready`` is set once the consumer
        exists: everything appended after that is delivered.
        """
        cut = len(self.prefix) + 1
        new = api.ConsumerConfig(deliver_policy=api.DeliverPolicy.NEW)
        # closed at once when the caller stops (the subscription must not outlive it)
        async with contextlib.aclosing(self._live(self.names.subjects, new, ready)) as messages:
            async for msg in messages:
                yield msg.subject[cut:], Stored(msg.metadata.sequence.stream, msg.data)

    async def save_snapshot(self, key: str, snap: Snapshot) -> None:
        """Save a snapshot (a cache: losing it only costs replay time)."""
        assert self._kv is not None
        header = f"{snap.seq}:{snap.tag}\n".encode()
        await self._kv.put(key, header + snap.data)

    async def load_snapshot(self, key: str) -> Snapshot | None:
        """The latest snapshot of ``key``, if any."""
        assert self._kv is not None
        try:
            entry = await self._kv.get(key)
        except KeyNotFoundError:
            return None
        raw: bytes = entry.value or b""
        head, _, data = raw.partition(b"\n")
        seq, _, tag = head.decode().partition(":")
        return Snapshot(int(seq), tag, data)

    async def close(self, timeout_s: float = 5.0) -> None:
        """Drain the connection (in-flight messages are delivered, then it closes); a drain that
        does not finish in ``timeout_s`` closes it at once."""
        if self.nc.is_closed:
            return
        try:
            await asyncio.wait_for(self.nc.drain(), timeout_s)
        except (TimeoutError, nats.errors.Error):
            await self.nc.close()


def _forgotten(headers: dict[str, str] | None) -> bool:
    """Whether a KV entry with ``headers`` is a delete or purge marker (or a server's marker)."""
    if not headers:
        return False
    return headers.get("KV-Operation") in ("DEL", "PURGE") or "Nats-Marker-Reason" in headers
