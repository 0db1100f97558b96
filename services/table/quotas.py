"""What one player may hold of a table-service process (issue 27: one token created 2,000 tables
in 6.5 s and held 500 ``Watch`` streams open), and the stakes a coin table may be played at.

- **Coin stakes** (``CHIEU_COIN_STAKES``, the lobby's coin rooms' stakes): a coin (金币) table at
  any other stake is refused at ``CreateTable`` and ``ChangeSettings`` (INVALID_ARGUMENT /
  ``stake_not_offered``), so 金币 cannot be moved in one hand at a stake no room offers. The
  setting, not a call to the lobby: a table is created without another service having to answer,
  and both services read the same operators' list (give them the same value).
- **Tables never played** (``CHIEU_UNPLAYED_TABLES``): the tables a player created here at which
  no hand has started yet; one more ``CreateTable`` is refused (RESOURCE_EXHAUSTED /
  ``too_many_unplayed_tables``, with the time until the oldest is closed as idle). A table whose
  first hand starts, or that leaves this process's memory, no longer counts.
- **Watch streams** (``CHIEU_WATCHES_PER_SESSION``): the streams one session (a token's ``sid``;
  the player when the token has none) holds open here; one more is refused (RESOURCE_EXHAUSTED
  / ``too_many_watches``) until one ends.

The counts are this process's: a player whose calls are spread over N processes may hold N
times as much, each process bounded. Nothing is appended for a refusal.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import grpc

from chieu.kit.errors import ServiceError, invalid
from chieu.kit.settings import Settings, coin_stakes
from chieu.table.v1 import log_pb2

RETRY_WATCH_MS = 5_000
"""The wait a refused ``Watch`` is told: one of the session's streams must end first."""


class Quotas:
    """The counts of one table-service process."""

    def __init__(self, settings: Settings) -> None:
        self.stakes = coin_stakes(settings)
        self.unplayed = settings.unplayed_tables
        self.watches = settings.watches_per_session
        self.idle_s = settings.table_idle_expiry_s
        self._created: dict[str, dict[str, float]] = {}
        """Player → the tables they created here that have not started a hand → when (monotonic)."""
        self._watching: dict[str, int] = {}

    def check_stake(self, currency: int, stake: int) -> None:
        """INVALID_ARGUMENT / ``stake_not_offered`` for a coin table at a stake no room offers."""
        if currency == log_pb2.CURRENCY_COINS and stake not in self.stakes:
            offered = ", ".join(str(s) for s in sorted(self.stakes))
            raise invalid("stake_not_offered", f"a coin table is played at the rooms' stakes only ({offered}), "
                                               f"not {stake}")

    def check_create(self, player: str, played: Callable[[str], bool | None]) -> None:
        """RESOURCE_EXHAUSTED / ``too_many_unplayed_tables`` when ``player`` already has the most
        tables never played. ``played(table_id)``: whether its first hand started (None: the table
        is no longer in this process's memory)."""
        if not self.unplayed:
            return
        mine = self._created.get(player)
        if not mine:
            return
        for table_id in [t for t in mine if played(t) is not False]:
            del mine[table_id]
        if not mine:
            del self._created[player]
        elif len(mine) >= self.unplayed:
            oldest = min(mine.values())
            wait_s = max(1.0, oldest + self.idle_s - time.monotonic()) if self.idle_s else 60.0
            raise ServiceError(grpc.StatusCode.RESOURCE_EXHAUSTED, "too_many_unplayed_tables",
                               f"you have {len(mine)} tables where no hand was played: play at one, or leave one "
                               f"(an empty table is closed after {self.idle_s:g} s idle)",
                               retry_after_ms=int(wait_s * 1000))

    def created(self, player: str, table_id: str) -> None:
        """Count a table ``player`` created (a repeated create of the same table counts once)."""
        if self.unplayed:
            self._created.setdefault(player, {}).setdefault(table_id, time.monotonic())

    @contextmanager
    def watching(self, session: str) -> Iterator[None]:
        """Hold one of ``session``'s ``Watch`` streams while the block runs; RESOURCE_EXHAUSTED /
        ``too_many_watches`` when it holds the most already."""
        if not self.watches:
            yield
            return
        held = self._watching.get(session, 0)
        if held >= self.watches:
            raise ServiceError(grpc.StatusCode.RESOURCE_EXHAUSTED, "too_many_watches",
                               f"this session already watches {held} tables here: close one first",
                               retry_after_ms=RETRY_WATCH_MS)
        self._watching[session] = held + 1
        try:
            yield
        finally:
            left = self._watching[session] - 1
            if left:
                self._watching[session] = left
            else:
                del self._watching[session]
