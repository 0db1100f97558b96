"""The tables' clocks: each cached table has one timer, armed for its earliest deadline (a
game's timeout or a lost player's reconnect grace); when it fires, the timeout or the disconnect
is appended like a command (a stale one is refused). After a restart, every table with a hand on
the clock or someone seated is loaded again (:meth:`Clocks.resume`): its lost players are not held
to the time no process served it, and a waiting table's seated players with no stream get their
idle stand."""

from __future__ import annotations

import asyncio
import time
from functools import partial
from typing import Any

from chieu.kit import logs
from chieu.kit.eventstore import EventStore
from chieu.table import decide, seeds
from chieu.table.background import Background
from chieu.table.cache import Cache, Live
from chieu.table.commands import Execute
from chieu.table.v1 import log_pb2

log = logs.get("chieu.table")


def now_ms() -> int:
    return int(time.time() * 1000)


class Clocks:
    def __init__(self, cache: Cache, store: EventStore, execute: Execute, background: Background,
                 idle_stand_s: float = 60.0) -> None:
        self.cache = cache
        self.idle_stand_s = idle_stand_s
        """Between hands, how long a seated player with no stream keeps the seat (:meth:`_stand_idle`)."""
        self.store = store
        self.execute = execute
        self.background = background
        self.closed = False

    def schedule(self, live: Live) -> None:
        """Arm the table's one timer for its earliest deadline (a game timeout or a reconnect grace)."""
        if live.timer is not None:
            live.timer.cancel()
            live.timer = None
        table = live.table
        due = table.due()
        if not due or self.closed:
            return
        at, action, arg = min(due, key=lambda d: d[0])
        delay = max(0.0, (at - now_ms() + 2) / 1000)
        version = table.version
        loop = asyncio.get_running_loop()
        live.timer = loop.call_later(
            delay, lambda: self.background.spawn(self._fire(table.table_id, action, arg, version))
        )

    async def _fire(self, table_id: str, action: str, arg: Any, version: int) -> None:
        """Append a timeout (or a disconnect) as a system command; stale ones are refused."""
        try:
            if action == "timeout":
                await self.execute(table_id, "system", f"timeout:{version}:{arg}",
                                   lambda t, now: decide.time_out(t, arg, now), timeout_seat=arg)
            elif action == "reveals":  # a commit–reveal round's deadline: withheld seeds, the deal
                keys = self.cache.keys
                await self.execute(table_id, "system", f"reveals:{version}:{arg}",
                                   lambda t, now: decide.reveals_due(
                                       t, now, partial(seeds.seeds_to_deal, keys),
                                       partial(keys.new_seed, t.table_id)))
            else:
                await self.execute(table_id, "system", f"disconnect:{version}:{arg}",
                                   lambda t, now: decide.disconnect(t, arg, now))
        except Exception as exc:
            log.info("timer not applied", table_id=table_id, action=action, arg=str(arg), reason=str(exc))
            return
        live = self.cache.live.get(table_id)
        if live is not None and live.table.version == version:
            # nothing was due yet (the timer fired a little early): wait for the deadline again
            due = live.table.due()
            if due and min(d[0] for d in due) > now_ms():
                self.schedule(live)

    async def resume(self) -> int:
        """Load every table with a hand on the clock, so no deadline is lost across a restart; then
        the players whose connection was lost are not held to the time no process served the table
        (:meth:`_excuse_absence`) — once every table is loaded, so a grace moved later is not spent
        loading the other tables (thousands, maybe) before this process serves anyone."""
        ids = await self.store.active_keys()
        lost: list[Live] = []
        waiting: list[Live] = []
        for table_id in ids:
            try:
                live = await self.cache.get(table_id)
            except Exception:
                log.exception("cannot resume table", table_id=table_id)
                continue
            if not live.table.playing and any(p and p not in live.table.lost for p in live.table.seats):
                waiting.append(live)
            if live.table.lost:
                if live.timer is not None:  # armed by the load, with no await since: not fired
                    live.timer.cancel()
                    live.timer = None
                lost.append(live)
        for live in lost:
            try:
                await self._excuse_absence(live)
            except Exception:
                log.exception("cannot resume table", table_id=live.table.table_id)
        for live in waiting:
            try:
                await self._stand_idle(live)
            except Exception:
                log.exception("cannot resume table", table_id=live.table.table_id)
        return len(ids)

    async def _stand_idle(self, live: Live) -> None:
        """A waiting table's seated players with no idle stand running (their streams closed by a
        server that stopped, which writes no ``ConnectionLost``) and no stream here get one: a
        player who watches again in time is back (``Reconnected``, from whichever process holds
        the stream), the others are stood up at its end. Processes that start together decide it
        once (the command id is the table's version)."""
        table = live.table
        absent = [p for p in table.seats if p and p not in table.lost and not live.present.get(p)]
        if absent:
            idle_s = self.idle_stand_s
            await self.execute(table.table_id, "system", f"idle:{table.version}",
                               lambda t, now: decide.idle_stands(
                                   t, [p for p in absent if not live.present.get(p)], now, idle_s))
            log.info("idle stands started on resume", table_id=table.table_id, players=sorted(absent))

    async def _excuse_absence(self, live: Live) -> None:
        """Move the lost players' reconnect graces later by the time since the table's last record:
        a server that is down writes nothing, and a player cannot come back to a server that is
        not there, so the outage is not counted against the grace (issue 28). The table's timer
        waits until the new deadlines are written (cancelled before the first ``await``)."""
        if live.timer is not None:
            live.timer.cancel()
            live.timer = None
        table_id = live.table.table_id
        try:
            last = await self.store.last(table_id)
            if last is None:
                return
            absent_ms = now_ms() - log_pb2.Record.FromString(last.data).server_time_ms
            if absent_ms > 0:
                version = live.table.version
                await self.execute(table_id, "system", f"resume:{version}",
                                   lambda t, now: decide.extend_graces(t, absent_ms))
                log.info("reconnect graces extended by the time the table was not served", table_id=table_id,
                         players=sorted(live.table.lost), by_s=round(absent_ms / 1000, 1))
        finally:
            self.schedule(live)
