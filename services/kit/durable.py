"""The plumbing of a durable JetStream pull consumer, shared by every service that reads a stream
it does not own (the ledger, the ladder and the lobby reading the table log; the ladder reading
the ledger's outbox).

What is alike in each: wait for the owner to create the stream (a consumer never creates it);
bind the durable, giving it this process's ack wait (the last process started sets it for all);
fetch batches in stream order, where a timeout is an empty batch and a failed fetch is logged and
tried again; ask the durable's ack floor; run in a background task and stop cleanly, with the
consumer's metrics (:class:`chieu.kit.metrics.ConsumerMetrics`); and the loop of a consumer that
handles its messages one at a time (:meth:`Durable.consume`: a message that fails is logged and
left for redelivery). What each consumer does with a message, and how it keeps order, stays in its
own module.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from nats.errors import TimeoutError as NatsTimeoutError
from nats.js import api
from nats.js.client import JetStreamContext
from nats.js.errors import FetchTimeoutError, NotFoundError

from chieu.kit import logs, metrics, tasks

log = logs.get("chieu.kit.durable")

STREAM_WAIT_S = 0.5
"""How often a consumer looks again for a stream that does not exist yet."""
FETCH_RETRY_S = 0.5
"""The pause after a failed fetch (NATS away, a leader being elected) before the next."""


def seq(msg: Any) -> int:
    """A delivered message's stream sequence."""
    return int(msg.metadata.sequence.stream)


class Durable:
    """One durable pull consumer of ``stream``, filtered on ``subjects``."""

    def __init__(self, js: JetStreamContext, *, stream: str, subjects: str, durable: str, ack_wait_s: float = 30.0,
                 max_ack_pending: int = 4096, metrics_every_s: float = 5.0) -> None:
        self.js = js
        self.stream = stream
        self.subjects = subjects
        self.durable = durable
        self.ack_wait_s = ack_wait_s
        self.max_ack_pending = max_ack_pending
        self.metrics = metrics.ConsumerMetrics(durable)
        self.metrics_every_s = metrics_every_s
        self._stopping = False
        self._task: asyncio.Task[None] | None = None
        self.floor = 0
        """A stream sequence up to which every message is done (acknowledged): this process's own
        finished messages (:meth:`done`) and the durable's ack floor (:meth:`refresh_floor`). A
        message right above it has nothing before it to wait for."""

    @property
    def stopping(self) -> bool:
        return self._stopping

    async def run(self, work: Coroutine[Any, Any, None], name: str) -> None:
        """Run ``work`` (the consumer's loop) in the background, and watch the consumer's lag."""
        self._stopping = False
        self._task = asyncio.create_task(work, name=name)
        await self.metrics.watch(self.js, self.stream, self.metrics_every_s)

    async def stop(self) -> None:
        """Idempotent: stop fetching; a message in flight is either committed or redelivered."""
        self._stopping = True
        await tasks.cancel(self._task)
        self._task = None
        await self.metrics.stop()

    async def consume(self, handle: Callable[[Any], Awaitable[object]], *, batch: int, what: str,
                      in_order: bool = False) -> None:
        """Subscribe, then until stopped fetch batches and ``handle`` each message in stream order. A
        message whose handling fails is logged (``what``: what was not applied) and not acknowledged,
        so it comes back by redelivery; ``in_order``: the rest of its batch waits for it (dropped
        from this fetch, redelivered after it)."""
        sub = await self.subscribe()
        while not self.stopping:
            for msg in await self.fetch(sub, batch):
                try:
                    await handle(msg)
                except asyncio.CancelledError:
                    raise
                except Exception:
                    log.exception(f"{what} not applied; it will be redelivered", durable=self.durable, seq=seq(msg))
                    if in_order:
                        break

    async def wait_for_stream(self) -> None:
        """Return once the stream exists (its owner creates it; a consumer never does)."""
        said = False
        while True:
            try:
                await self.js.stream_info(self.stream)
                return
            except NotFoundError:
                if not said:
                    log.info("waiting for the stream", stream=self.stream, durable=self.durable)
                    said = True
            await asyncio.sleep(STREAM_WAIT_S)

    async def subscribe(self) -> JetStreamContext.PullSubscription:
        """Wait for the stream, then bind the durable (created on first use) with this process's ack wait."""
        await self.wait_for_stream()
        config = api.ConsumerConfig(ack_policy=api.AckPolicy.EXPLICIT, ack_wait=self.ack_wait_s,
                                    max_ack_pending=self.max_ack_pending, deliver_policy=api.DeliverPolicy.ALL)
        with contextlib.suppress(NotFoundError):
            info = await self.js.consumer_info(self.stream, self.durable)
            if info.config.ack_wait is None or abs(info.config.ack_wait - self.ack_wait_s) > 1e-3:
                # the ack wait is the durable's: the last process started sets it for all
                await self.js.add_consumer(self.stream, config=info.config.evolve(ack_wait=self.ack_wait_s))
        return await self.js.pull_subscribe(self.subjects, durable=self.durable, stream=self.stream, config=config)

    async def fetch(self, sub: JetStreamContext.PullSubscription, batch: int, wait_s: float = 1.0, *,
                    retry_failures: bool = True) -> list[Any]:
        """The next batch, in stream order; empty when nothing came within ``wait_s``. A failed fetch
        is logged and, after a pause, an empty batch (``retry_failures``), or raised."""
        try:
            msgs = await sub.fetch(batch, timeout=wait_s)
        except (FetchTimeoutError, NatsTimeoutError, TimeoutError):
            return []
        except asyncio.CancelledError:
            raise
        except Exception:
            if not retry_failures:
                raise
            log.exception("fetch failed; retrying", durable=self.durable)
            await asyncio.sleep(FETCH_RETRY_S)
            return []
        msgs.sort(key=seq)
        return msgs

    def done(self, stream_seq: int) -> None:
        """A message finished (acknowledged): the floor follows it when it was right above it."""
        if stream_seq == self.floor + 1:
            self.floor = stream_seq

    async def refresh_floor(self) -> None:
        """Raise the floor to the durable's ack floor (unchanged when NATS does not answer)."""
        floor = await self.ack_floor()
        if floor:
            self.floor = max(self.floor, floor)

    async def ack_floor(self) -> int | None:
        """The durable's ack floor (every message up to it is acknowledged); ``None`` if NATS does not
        answer (the caller falls back on what it knows)."""
        try:
            info = await self.js.consumer_info(self.stream, self.durable)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.warning("consumer info failed", durable=self.durable)
            return None
        if info.ack_floor is not None and info.ack_floor.stream_seq:
            return int(info.ack_floor.stream_seq)
        return 0
