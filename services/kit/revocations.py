"""Revoked sessions, as every service that verifies tokens learns them.

A token is valid until its ``exp`` unless its session was revoked (sign-out, or an operator's
revoke-all). The lobby lists the revoked access tokens that have not yet expired (the SHA-256
of each token's exact text, with its expiry); a :class:`RevocationList` polls that list every
``every_s`` seconds through a ``fetch`` the service wires to the lobby, so a revoked token is
refused within that time, and forgets each entry once its token has expired anyway.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import Awaitable, Callable, Sequence

from chieu.kit import logs, tasks

log = logs.get("chieu.revocations")

Fetch = Callable[[int], Awaitable[tuple[Sequence[tuple[bytes, int]], int]]]
"""``fetch(after_cursor)`` → ``([(token_sha256, expires_ms), ...], next_cursor)``."""


class RevocationList:
    """The revoked tokens this process refuses, kept current by polling."""

    def __init__(self, fetch: Fetch, every_s: float = 2.0) -> None:
        self.fetch = fetch
        self.every_s = every_s
        self.cursor = 0
        self.revoked: dict[bytes, int] = {}
        """SHA-256 of a revoked token → its expiry (ms since the epoch)."""
        self._task: asyncio.Task[None] | None = None

    def is_revoked(self, token: str) -> bool:
        return hashlib.sha256(token.encode()).digest() in self.revoked

    async def poll_once(self) -> int:
        """Take in what was revoked since the last poll; returns how many."""
        got, self.cursor = await self.fetch(self.cursor)
        for digest, expires_ms in got:
            self.revoked[bytes(digest)] = int(expires_ms)
        now_ms = int(time.time() * 1000)
        for digest in [d for d, exp in self.revoked.items() if exp <= now_ms]:
            del self.revoked[digest]
        return len(got)

    async def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="revocations")

    async def stop(self) -> None:
        await tasks.cancel(self._task)
        self._task = None

    async def _run(self) -> None:
        said = False
        while True:
            try:
                while await self.poll_once():
                    pass
                said = False
            except asyncio.CancelledError:
                raise
            except Exception as e:  # the lobby is away: what is known stays refused
                if not said:
                    log.warning("revocations not polled", error=f"{type(e).__name__}: {e}")
                    said = True
            await asyncio.sleep(self.every_s)
