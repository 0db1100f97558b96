"""What one player may hold of the table service (issue 27: one token created 2,000 tables in
6.5 s and held 500 ``Watch`` streams open), and the stakes a coin table may be played at.

- **Coin stakes** (``CHIEU_COIN_STAKES``, the lobby's coin rooms' stakes): a coin (金币) table at
  any other stake is refused at ``CreateTable`` and ``ChangeSettings`` (INVALID_ARGUMENT /
  ``stake_not_offered``), so 金币 cannot be moved in one hand at a stake no room offers. The
  setting, not a call to the lobby: a table is created without another service having to answer,
  and both services read the same operators' list (give them the same value).
- **Tables never played** (``CHIEU_UNPLAYED_TABLES``): the tables a player created, through any
  table process, at which no hand has started yet; one more ``CreateTable`` is refused
  (RESOURCE_EXHAUSTED / ``too_many_unplayed_tables``, with the time until one of them may stop
  counting). Counted in one place for every process (:class:`Unplayed`, a JetStream KV bucket),
  so N processes hold no more than one. A table stops counting when its first hand starts, or
  once it is empty (nobody seated) and its log has had nothing new for
  ``CHIEU_TABLE_IDLE_EXPIRY_S`` — the time a process closes such a table.
- **Watch streams** (``CHIEU_WATCHES_PER_SESSION``): the streams one session (a token's ``sid``;
  the player when the token has none) holds open on *this process*; one more is refused
  (RESOURCE_EXHAUSTED / ``too_many_watches``) until one ends. Per process on purpose: the quota
  bounds what a session costs a process's memory (28.5 KiB a stream: ``bench_quotas``), which N
  processes do not change; counting streams in one place would put two replicated writes on
  every stream's open and close, and leases so a killed process's streams stop counting
  (docs/security.md).

Nothing is appended for a refusal. A request the rules refuse is refused before it is counted (it
writes nothing to the bucket); a create refused or failing after it was counted (a gate, a peer
unavailable) gives its place back at once.
"""

from __future__ import annotations

import asyncio
import base64
import json
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any, Protocol

import grpc
from nats.js import api
from nats.js.errors import BucketNotFoundError, KeyNotFoundError, KeyWrongLastSequenceError
from nats.js.errors import Error as JetStreamError

from chieu.kit import logs, names
from chieu.kit.errors import ServiceError, invalid
from chieu.kit.settings import Settings, coin_stakes
from chieu.table.v1 import log_pb2

log = logs.get("chieu.table.quotas")

RETRY_WATCH_MS = 5_000
"""The wait a refused ``Watch`` is told: one of the session's streams must end first."""

RESERVED_S = 60.0
"""How long a reservation whose table is not in the log counts: a create in flight on some process
(its gates asked, its append retried: :data:`chieu.table.pipeline.CONFLICT_DEADLINE_S`), or one whose
process was killed before it appended (then it stops counting after this)."""

KEEP_S = 7 * 86_400.0
"""How long a player's entry outlives its last write (the bucket's ``max_age``): the entries of
players who no longer create tables leave the bucket. A table held seated and unplayed for longer
stops counting then (its creator may then create one more)."""

CAS_ATTEMPTS = 20
"""Compare-and-set attempts of one reservation before it is ABORTED / ``busy`` (each failed one means
another process wrote the same player's entry meanwhile)."""

SEATED_WAIT_S = 60.0
"""The wait told when the tables never played have someone seated and empty tables never close
(``CHIEU_TABLE_IDLE_EXPIRY_S`` = 0)."""


class Store(Protocol):
    async def last(self, key: str) -> Any: ...

    async def last_seq(self, key: str) -> int: ...


class TablesLike(Protocol):
    """What the count reads of the table processes' tables (:class:`chieu.table.tables.Tables`)."""

    @property
    def store(self) -> Store: ...

    async def get(self, table_id: str, *, must_exist: bool = True) -> Any: ...

    def played(self, table_id: str) -> bool | None: ...


def key_of(player: str) -> str:
    """The bucket key of ``player`` (a player id may hold any printable character; a key may not)."""
    return base64.urlsafe_b64encode(player.encode()).decode().rstrip("=")


async def bucket(js: Any, replicas: int = 1) -> Any:
    """The bucket of tables never played (made if missing; safe from many processes)."""
    try:
        return await js.key_value(names.UNPLAYED)
    except BucketNotFoundError:
        try:
            return await js.create_key_value(api.KeyValueConfig(
                bucket=names.UNPLAYED, history=1, ttl=KEEP_S, storage=api.StorageType.FILE, replicas=replicas,
                direct=True, description="chieu: the tables each player created and never played"))
        except JetStreamError:
            return await js.key_value(names.UNPLAYED)  # made by a racing process


class Unplayed:
    """The tables each player created and never played, shared by every table process.

    One key per player (:func:`key_of`) in the KV bucket :data:`chieu.kit.names.UNPLAYED`, its
    value ``{table_id: reserved (unix ms)}``. A create *reserves* its table before its record is
    appended: it reads the entry, and writes it back with the table added only if the entry is
    still at the revision it read (compare-and-set); a process that lost the race reads again and
    decides again. So two processes creating at once for one player never hold more than
    ``limit`` between them. An entry is not trusted to be current: when it holds ``limit`` tables,
    each is looked at in the log (played? empty and idle past the expiry? a reservation whose table
    never came?) and those that no longer count are dropped in the same write. Nothing needs to
    remove a table when its hand starts or when it closes, so no process has to be alive for it.
    """

    def __init__(self, kv: Any, limit: int, idle_s: float) -> None:
        self.kv = kv
        self.limit = limit
        self.idle_s = idle_s
        self._serial: dict[str, tuple[asyncio.Lock, int]] = {}
        """Player → a lock and its users: this process's creates of one player take turns (their
        compare-and-set would only collide)."""

    @asynccontextmanager
    async def _turn(self, player: str) -> AsyncIterator[None]:
        lock, users = self._serial.get(player, (None, 0))
        if lock is None:
            lock = asyncio.Lock()
        self._serial[player] = (lock, users + 1)
        try:
            async with lock:
                yield
        finally:
            lock, users = self._serial[player]
            if users <= 1:
                del self._serial[player]
            else:
                self._serial[player] = (lock, users - 1)

    async def read(self, player: str) -> tuple[int, dict[str, int]]:
        """``player``'s entry: its revision (0: none) and its tables."""
        try:
            entry = await self.kv.get(key_of(player))
        except KeyNotFoundError:
            return 0, {}
        try:
            held = json.loads(entry.value or b"{}")
        except ValueError:
            held = {}
        if not isinstance(held, dict):
            held = {}
        return int(entry.revision or 0), {str(t): int(ms) for t, ms in held.items() if isinstance(ms, int)}

    async def _write(self, player: str, revision: int, held: dict[str, int]) -> None:
        """Write ``held`` if the entry is still at ``revision`` (else KeyWrongLastSequenceError)."""
        data = json.dumps(held, separators=(",", ":")).encode()
        if revision:
            await self.kv.update(key_of(player), data, last=revision)
        else:
            await self.kv.create(key_of(player), data)

    async def left_s(self, table_id: str, reserved_ms: int, tables: TablesLike, now: float) -> float | None:
        """Whether the table counts: None if not, else the seconds until it may stop counting."""
        live = await tables.get(table_id, must_exist=False)
        table = live.table
        if not table.exists:  # a create in flight, or one that never came
            left = reserved_ms / 1000 + RESERVED_S - now
            return left if left > 0 else None
        if table.hand_no > 0 or table.playing:
            return None
        if any(p is not None for p in table.seats) or not self.idle_s:
            return self.idle_s or SEATED_WAIT_S  # one must leave, then the table must stay empty that long
        last = await tables.store.last(table_id)  # the log's time, not this process's: any process appended
        at_ms = log_pb2.Record.FromString(last.data).server_time_ms if last is not None else reserved_ms
        left = at_ms / 1000 + self.idle_s - now
        return left if left > 0 else None

    async def reserve(self, player: str, table_id: str, tables: TablesLike) -> None:
        """Count ``table_id`` among ``player``'s tables before it is created, or refuse it
        (RESOURCE_EXHAUSTED / ``too_many_unplayed_tables`` with the wait). A table already
        counted is counted once (a repeated create)."""
        async with self._turn(player):
            for _ in range(CAS_ATTEMPTS):
                revision, held = await self.read(player)
                if table_id in held:
                    return
                # what this process knows to be played goes without asking anyone
                held = {t: ms for t, ms in held.items() if tables.played(t) is not True}
                if len(held) >= self.limit:
                    now = time.time()
                    lefts = await asyncio.gather(*(self.left_s(t, ms, tables, now) for t, ms in held.items()))
                    counting = {t: left for t, left in zip(held, lefts, strict=True) if left is not None}
                    if len(counting) >= self.limit:
                        wait_s = max(1.0, min(counting.values()))
                        raise ServiceError(
                            grpc.StatusCode.RESOURCE_EXHAUSTED, "too_many_unplayed_tables",
                            f"you have {len(counting)} tables where no hand was played: play at one, or leave one "
                            f"(an empty table is closed after {self.idle_s:g} s idle)",
                            retry_after_ms=int(wait_s * 1000))
                    held = {t: held[t] for t in counting}
                held[table_id] = int(time.time() * 1000)
                try:
                    await self._write(player, revision, held)
                    return
                except KeyWrongLastSequenceError:
                    continue  # another process wrote the entry meanwhile: read it again
        raise ServiceError(grpc.StatusCode.ABORTED, "busy", "too many tables created at once; try again")

    async def release(self, player: str, table_id: str, tables: TablesLike) -> None:
        """Uncount a reservation whose create failed (a refusal after the reservation, an error):
        kept if the table is in the log after all. A release that fails is logged; the
        reservation then stops counting after :data:`RESERVED_S`."""
        try:
            if await tables.store.last_seq(table_id):
                return
            async with self._turn(player):
                for _ in range(CAS_ATTEMPTS):
                    revision, held = await self.read(player)
                    if held.pop(table_id, None) is None:
                        return
                    try:
                        await self._write(player, revision, held)
                        return
                    except KeyWrongLastSequenceError:
                        continue
        except Exception as exc:
            log.warning("unplayed-table reservation not released", player=player, table_id=table_id, error=str(exc))


class Quotas:
    """The coin stakes, the tables never played (shared by every process, once :meth:`connect`
    is awaited) and the watch streams (this process's)."""

    def __init__(self, settings: Settings) -> None:
        self.stakes = coin_stakes(settings)
        self.unplayed = settings.unplayed_tables
        self.watches = settings.watches_per_session
        self.idle_s = settings.table_idle_expiry_s
        self.shared: Unplayed | None = None
        """The count of tables never played, in the bucket (None until :meth:`connect`)."""
        self._watching: dict[str, int] = {}

    async def connect(self, js: Any, replicas: int = 1) -> None:
        """Open the bucket of tables never played (made if missing), when the quota is on."""
        if self.unplayed:
            self.shared = Unplayed(await bucket(js, replicas), self.unplayed, self.idle_s)

    def check_stake(self, currency: int, stake: int) -> None:
        """INVALID_ARGUMENT / ``stake_not_offered`` for a coin table at a stake no room offers."""
        if currency == log_pb2.CURRENCY_COINS and stake not in self.stakes:
            offered = ", ".join(str(s) for s in sorted(self.stakes))
            raise invalid("stake_not_offered", f"a coin table is played at the rooms' stakes only ({offered}), "
                                               f"not {stake}")

    async def reserve(self, player: str, table_id: str, tables: TablesLike) -> bool:
        """Count the table ``player`` is about to create, or refuse it (``too_many_unplayed_tables``);
        True when it was counted (then :meth:`release` it if the create fails)."""
        if not self.unplayed:
            return False
        if self.shared is None:
            raise RuntimeError("the unplayed-table quota is on but its bucket is not open (Quotas.connect)")
        await self.shared.reserve(player, table_id, tables)
        return True

    async def release(self, player: str, table_id: str, tables: TablesLike) -> None:
        """Uncount a reservation whose create did not happen."""
        if self.shared is not None:
            await self.shared.release(player, table_id, tables)

    @contextmanager
    def watching(self, session: str) -> Iterator[None]:
        """Hold one of ``session``'s ``Watch`` streams on this process while the block runs;
        RESOURCE_EXHAUSTED / ``too_many_watches`` when it holds the most already."""
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
