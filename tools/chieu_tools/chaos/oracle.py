"""The bots' oracle: the whole table stream followed from NATS and folded, table by table, so a bot
picks its move with the rules core's ``legal()`` on the true state (a bot is a test harness, not a
player: it reads the log with the table processes' seal keys, hands in play opened). The checker does
not use it: it reads the stores again, as an auditor.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import nats
from nats.js import api

from chieu.kit import logs, names, natsauth, tasks
from chieu.table.v1 import log_pb2
from chieu.tablelog.fold import Table
from chieu.tablelog.sealing import Opener, SealKeys

log = logs.get("chieu_tools.chaos.oracle")

STALL_S = 5.0
"""A follower that has delivered nothing for this long while a bot waits for a newer version is
started again from where it was (an ordered consumer lost on a NATS node)."""


class Oracle:
    """Every table of the stream, folded as its records arrive."""

    def __init__(self, nats_url: str, creds: str, keys: SealKeys) -> None:
        self.nats_url = nats_url
        self.opener = Opener(keys)
        self.creds = creds
        """The NATS user's seed (the read-only ``audit`` user)."""
        self.tables: dict[str, Table] = {}
        self.last_seq = 0
        self.anomalies: list[str] = []
        """Records that did not follow on their table (the checker reports the log itself)."""
        self._changed = asyncio.Condition()
        self._nc: Any = None
        self._task: asyncio.Task[None] | None = None
        self._heard = 0.0
        self._kick = asyncio.Event()
        """Set while a bot waits for a version the follower has not delivered yet."""
        self._waiting = 0

    async def start(self) -> None:
        async def quiet(e: Exception) -> None:
            pass

        self._nc = await natsauth.connect_url(self.nats_url, "chieu-chaos-oracle", creds=self.creds,
                                              max_reconnect_attempts=-1, reconnect_time_wait=0.2, error_cb=quiet)
        self._task = asyncio.create_task(self._follow())

    async def stop(self) -> None:
        await tasks.cancel(self._task)
        if self._nc is not None:
            with contextlib.suppress(Exception):
                await self._nc.close()

    async def _follow(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            sub = None
            try:
                config = api.ConsumerConfig(deliver_policy=api.DeliverPolicy.BY_START_SEQUENCE,
                                            opt_start_seq=self.last_seq + 1)
                sub = await self._nc.jetstream().subscribe(names.TABLES.subjects, ordered_consumer=True,
                                                           config=config, idle_heartbeat=2.0,
                                                           pending_msgs_limit=-1, pending_bytes_limit=-1)
                self._heard = loop.time()
                while True:
                    try:
                        msg = await sub.next_msg(timeout=1.0)
                    except nats.errors.TimeoutError:
                        if self._kick.is_set() and loop.time() - self._heard > STALL_S:
                            raise RuntimeError("the follower stalled") from None
                        continue
                    self._heard = loop.time()
                    await self._fold(int(msg.metadata.sequence.stream), msg.data)
            except asyncio.CancelledError:
                raise
            except Exception as e:
                log.info("oracle follows again", after=self.last_seq, reason=str(e))
                self._kick.clear()
                await asyncio.sleep(0.5)
            finally:
                if sub is not None:
                    with contextlib.suppress(Exception):
                        await sub.unsubscribe()

    async def _fold(self, seq: int, data: bytes) -> None:
        if seq <= self.last_seq:
            return
        self.last_seq = seq
        record = log_pb2.Record.FromString(data)
        table = self.tables.get(record.table_id)
        if table is None:
            table = self.tables[record.table_id] = Table(record.table_id)
        if record.version != table.version + 1:
            self.anomalies.append(f"{record.table_id}: version {record.version} after {table.version} (seq {seq})")
            return
        try:
            table.apply(self.opener.open(record, table), seq)
        except Exception as e:  # the checker's replay reports it against the log
            self.anomalies.append(f"{record.table_id}: version {record.version} does not fold ({e})")
            return
        async with self._changed:
            self._changed.notify_all()

    async def at(self, table_id: str, version: int, wait_s: float = 5.0) -> Table | None:
        """The table once folded to at least ``version`` (``None`` if that takes over ``wait_s``)."""
        table = self.tables.get(table_id)
        if table is not None and table.version >= version:
            return table
        self._waiting += 1
        self._kick.set()
        try:
            async with self._changed:
                await asyncio.wait_for(self._changed.wait_for(
                    lambda: (t := self.tables.get(table_id)) is not None and t.version >= version), wait_s)
        except TimeoutError:
            return None
        finally:
            self._waiting -= 1
            if not self._waiting:
                self._kick.clear()
        return self.tables.get(table_id)
