"""Background tasks of a process: stopped the one way."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any


async def cancel(task: asyncio.Task[Any] | None) -> None:
    """Cancel ``task`` (if any) and wait for it to end; whatever it raises on the way out is its own
    (it was stopping)."""
    if task is None:
        return
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError, Exception):
        await task
