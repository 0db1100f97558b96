"""The background work of the tables of a process (timers' commands, presence, bookkeeping):
each task referenced until it is done; at the close, the active marks are waited for briefly and
the rest cancelled."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any


class Background:
    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[Any]] = set()
        self._marks: set[asyncio.Task[Any]] = set()

    def spawn(self, coro: Coroutine[Any, Any, Any], *, mark: bool = False) -> None:
        """Run ``coro`` in the background, keeping a reference until it is done (``mark``: an
        active mark, which :meth:`close` waits for instead of cancelling it)."""
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        if mark:
            self._marks.add(task)
            task.add_done_callback(self._marks.discard)

    async def close(self, mark_wait_s: float) -> None:
        """Let the active marks land (at most ``mark_wait_s``: a table's active mark is what a
        restart resumes by), then cancel what still runs (it would race the connection's drain)."""
        if self._marks:
            await asyncio.wait(list(self._marks), timeout=mark_wait_s)
        pending = list(self._tasks)
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
