"""Revoked sessions, as every service that verifies tokens learns them: the one way a
signed-out or revoked session stops working everywhere.

A token is valid until its ``exp`` unless its session was revoked (sign-out, or an operator's
revoke-all). The lobby lists the revoked access tokens that have not yet expired (the SHA-256
of each token's exact text, with its expiry; ``ListRevocations``, for services only); a
:class:`RevocationList` polls that list every ``CHIEU_REVOCATION_POLL_S`` seconds, so a revoked
token is refused within that time (:func:`chieu.kit.auth.principal` asks it on every call), and
forgets each entry once its token has expired anyway. A long call (a ``Watch`` stream) does not
ask again and again: it subscribes its token (:meth:`RevocationList.subscribe`) and is told once,
by the poll that learns the revocation. :func:`from_lobby` is the list of the
table, the ledger and the ladder (each polling with its own credential); the lobby reads its own
table through the same class. If the lobby is away, what is known stays refused.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from chieu.kit import auth, channels, logs, tasks
from chieu.kit.settings import Settings

log = logs.get("chieu.revocations")

Fetch = Callable[[int], Awaitable[tuple[Sequence[tuple[bytes, int]], int]]]
"""``fetch(after_cursor)`` → ``([(token_sha256, expires_ms), ...], next_cursor)``."""


class RevocationList:
    """The revoked tokens this process refuses, kept current by polling."""

    def __init__(self, fetch: Fetch, every_s: float = 2.0,
                 on_stop: Callable[[], Awaitable[Any]] | None = None) -> None:
        self.fetch = fetch
        self.every_s = every_s
        self.cursor = 0
        self.revoked: dict[bytes, int] = {}
        """SHA-256 of a revoked token → its expiry (ms since the epoch)."""
        self._task: asyncio.Task[None] | None = None
        self._on_stop = on_stop
        self._ends: dict[bytes, set[Callable[[], None]]] = {}
        """SHA-256 of a subscribed token → what ends each of its open calls."""
        self._polling = asyncio.Lock()
        """One poll at a time (the loop's and one asked for at once, as the lobby's after a sign-out)."""

    def is_revoked(self, token: str) -> bool:
        return hashlib.sha256(token.encode()).digest() in self.revoked

    def subscribe(self, token: str, end: Callable[[], None]) -> Callable[[], None]:
        """Call ``end()`` once when ``token``'s session is revoked (at once if it already is);
        returns what unsubscribes (call it when the call ends, told or not)."""
        digest = hashlib.sha256(token.encode()).digest()
        if digest in self.revoked:
            end()
            return _nothing
        ends = self._ends.setdefault(digest, set())
        ends.add(end)

        def unsubscribe() -> None:
            ends.discard(end)
            if not ends and self._ends.get(digest) is ends:
                del self._ends[digest]

        return unsubscribe

    async def poll_once(self) -> int:
        """Take in what was revoked since the last poll; returns how many."""
        async with self._polling:
            return self._take(*await self.fetch(self.cursor))

    def _take(self, got: Sequence[tuple[bytes, int]], cursor: int) -> int:
        self.cursor = cursor
        for digest, expires_ms in got:
            self.revoked[bytes(digest)] = int(expires_ms)
            for end in list(self._ends.pop(bytes(digest), ())):
                end()
        now_ms = int(time.time() * 1000)
        for digest in [d for d, exp in self.revoked.items() if exp <= now_ms]:
            del self.revoked[digest]
        return len(got)

    async def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="revocations")

    async def stop(self) -> None:
        await tasks.cancel(self._task)
        self._task = None
        if self._on_stop is not None:
            await self._on_stop()

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


def _nothing() -> None:
    pass


LIST_REVOCATIONS = "/chieu.lobby.v1.LobbyService/ListRevocations"


def from_lobby(settings: Settings, request_type: Any, response_type: Any,
               credential: Callable[[], str] | None = None) -> RevocationList:
    """The revoked sessions as the lobby (``CHIEU_LOBBY_ADDR``) lists them, polled every
    ``CHIEU_REVOCATION_POLL_S`` with this service's own credential (``credential()``, default
    its own key's or ``CHIEU_SERVICE_TOKEN``). ``request_type`` and ``response_type`` are the lobby's generated
    ``ListRevocationsRequest`` and ``ListRevocationsResponse`` (the kit imports no service);
    the list closes its channel when it stops."""
    # its own subchannels: a lobby not up yet puts only this channel in connection backoff
    channel = channels.channel(settings, settings.lobby_addr, options=[("grpc.use_local_subchannel_pool", 1)])
    call = channel.unary_unary(LIST_REVOCATIONS, request_serializer=request_type.SerializeToString,
                               response_deserializer=response_type.FromString)
    token = credential or (lambda: auth.service_token(settings))

    async def fetch(after: int) -> tuple[list[tuple[bytes, int]], int]:
        bearer = token()
        got = await call(request_type(after_cursor=after, limit=1000), timeout=5,
                         metadata=(("authorization", f"Bearer {bearer}"),) if bearer else ())
        return [(r.token_sha256, r.expires_ms) for r in got.revocations], int(got.next_cursor)

    return RevocationList(fetch, settings.revocation_poll_s, on_stop=channel.close)
