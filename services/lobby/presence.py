"""Spectators (旁观) of every table, as the table-service processes announce them
(``chieu.table.presence``): each lobby process listens on ``chieu.presence.>`` and adds up the
processes' counts, and the seated players each says are absent (for the quick seat, :func:`seatable`).
Nothing is stored: a lobby that starts knows every count within one
announcement interval (5 s), and a table process not heard from for its ttl counts for nobody.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Iterable
from collections.abc import Set as AbstractSet
from typing import Any, TypeVar

from chieu.kit import logs, names, tasks
from chieu.table.v1 import presence_pb2

log = logs.get("chieu.lobby.presence")

T = TypeVar("T")

SWEEP_S = 1.0
"""How often processes past their ttl are forgotten."""


class Spectators:
    """The spectators of each table, summed over the table processes; ``on_change`` is called with
    the tables whose sum changed."""

    def __init__(self, on_change: Callable[[set[str]], None] | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.on_change = on_change
        self.clock = clock
        self._by: dict[str, tuple[dict[str, int], float]] = {}
        """Process → (its counts by table, when it counts for nobody any more)."""
        self._absent: dict[str, dict[str, frozenset[str]]] = {}
        """Process → the seated players it announced absent, by table (the table log's ``lost``)."""
        self._who: dict[str, dict[str, tuple[str, ...]]] = {}
        """Process → the player ids it announced per table (some of the spectators it counts)."""
        self._total: dict[str, int] = {}
        self._sub: Any = None
        self._task: asyncio.Task[None] | None = None

    def count(self, table_id: str) -> int:
        return self._total.get(table_id, 0)

    def ids(self, table_id: str, most: int = 20) -> list[str]:
        """Up to ``most`` of the table's signed-in spectators, by player id, sorted (every live
        process's)."""
        if table_id not in self._total:
            return []
        return sorted({p for who in self._who.values() for p in who.get(table_id, ())})[:most]

    def absent(self, table_id: str) -> frozenset[str]:
        """The table's seated players a live table process says are absent (no stream, not back)."""
        return frozenset(p for by in self._absent.values() for p in by.get(table_id, ()))

    async def start(self, nc: Any) -> None:
        self._sub = await nc.subscribe(f"{names.PRESENCE}.>", cb=self._heard)
        self._task = asyncio.create_task(self._sweep(), name="lobby-presence-sweep")

    async def stop(self) -> None:
        await tasks.cancel(self._task)
        self._task = None
        if self._sub is not None:
            with contextlib.suppress(Exception):
                await self._sub.unsubscribe()
            self._sub = None

    async def _heard(self, msg: Any) -> None:
        try:
            p = presence_pb2.Presence.FromString(msg.data)
        except Exception:
            log.warning("undecodable presence", subject=msg.subject)
            return
        self.heard(p)

    def heard(self, p: presence_pb2.Presence) -> None:
        """Take one process's announcement."""
        if not p.instance:
            return
        counts, _ = self._by.get(p.instance, ({}, 0.0))
        touched = set(p.spectators) | (set(counts) if p.full else set())
        counts = {} if p.full else dict(counts)
        who = {} if p.full else dict(self._who.get(p.instance, {}))
        for table_id, n in p.spectators.items():
            if n > 0:
                counts[table_id] = int(n)
                who[table_id] = tuple(p.watchers[table_id].player_ids) if table_id in p.watchers else ()
            else:
                counts.pop(table_id, None)
                who.pop(table_id, None)
        absent = {} if p.full else dict(self._absent.get(p.instance, {}))
        for table_id, players in p.absent.items():
            if players.player_ids:
                absent[table_id] = frozenset(players.player_ids)
            else:
                absent.pop(table_id, None)
        if p.ttl_ms <= 0 or (p.full and not counts and not absent):
            self._by.pop(p.instance, None)
            self._who.pop(p.instance, None)
            self._absent.pop(p.instance, None)
        else:
            self._by[p.instance] = (counts, self.clock() + p.ttl_ms / 1000)
            self._who[p.instance] = who
            self._absent[p.instance] = absent
        self._recount(touched)

    def sweep(self) -> None:
        """Forget the processes past their ttl."""
        now = self.clock()
        gone = [i for i, (_, until) in self._by.items() if until < now]
        touched: set[str] = set()
        for instance in gone:
            touched |= set(self._by.pop(instance)[0])
            self._who.pop(instance, None)
            self._absent.pop(instance, None)
        if touched:
            self._recount(touched)

    async def _sweep(self) -> None:
        while True:
            await asyncio.sleep(SWEEP_S)
            self.sweep()

    def _recount(self, tables: set[str]) -> None:
        changed = set()
        for table_id in tables:
            n = sum(c.get(table_id, 0) for c, _ in self._by.values())
            if n != self._total.get(table_id, 0):
                changed.add(table_id)
                if n:
                    self._total[table_id] = n
                else:
                    self._total.pop(table_id, None)
        if changed and self.on_change is not None:
            self.on_change(changed)


def seatable(lines: Iterable[T], seats: Callable[[T], Iterable[str]], absent: Callable[[str], AbstractSet[str]],
             table_of: Callable[[T], str]) -> list[T]:
    """The candidate tables for a quick seat, in their order, without those where a seated player
    is absent (a table held by people who are gone never starts)."""
    return [line for line in lines if not (set(seats(line)) & absent(table_of(line)))]
