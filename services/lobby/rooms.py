"""Zones and rooms: a zone per game, rooms inside it by currency and stake.

A room is data an operator manages (``PutRoom`` / ``DeleteRoom``, each change audited with its
reason); a default set is loaded on first start, for every game of the registry:

- ``<game>.points`` — score points, stake 1;
- ``<game>.coins.<stake>`` — 金币 at stakes 1, 10 and 100 (GC-1: more than 3 金币 to sit);
- ``<game>.ladder.<from>-<to>`` — 过关斩将 points rooms whose tables have a level in the block
  1–5, 6–10 or 11–20 (ladder.md §5.2: a player sits only at levels up to their own).

A table the lobby did not create falls into the first room (by ``sort``) of its game, currency and
stake whose kind matches (a ladder table: the block holding its level).
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import asyncpg
from google.protobuf import json_format, struct_pb2

from chieu.games import registry
from chieu.kit import db
from chieu.kit.errors import Refusal, invalid, not_found
from chieu.lobby.v1 import lobby_service_pb2 as pb
from chieu.table.v1 import log_pb2

POINTS, COINS = log_pb2.CURRENCY_POINTS, log_pb2.CURRENCY_COINS
ROOM_ID = re.compile(r"^[a-z0-9][a-z0-9_.:-]{0,63}$")
MAX_STAKE = 1_000_000_000
MAX_LEVEL = 10_000
COIN_STAKES = (1, 10, 100)
LADDER_BLOCKS = ((1, 5), (6, 10), (11, 20))


@dataclass(frozen=True, slots=True)
class Room:
    room_id: str
    game: str
    name: str
    currency: int
    stake: int
    ladder_min_level: int = 0
    ladder_max_level: int = 0
    min_reputation: int = 0
    options: Mapping[str, Any] = field(default_factory=dict)
    sort: int = 0

    @property
    def ladder(self) -> bool:
        return self.ladder_min_level > 0

    def holds(self, game: str, currency: int, stake: int, level: int) -> bool:
        """Whether a table of this kind belongs in the room."""
        if (game, currency, stake) != (self.game, self.currency, self.stake):
            return False
        if self.ladder:
            return self.ladder_min_level <= level <= self.ladder_max_level
        return level == 0

    def message(self) -> pb.Room:
        opts = struct_pb2.Struct()
        opts.update(dict(self.options))
        return pb.Room(room_id=self.room_id, game=self.game, name=self.name, currency=self.currency,  # type: ignore[arg-type]
                       stake=self.stake, ladder_min_level=self.ladder_min_level,
                       ladder_max_level=self.ladder_max_level, min_reputation=self.min_reputation,
                       options=opts, sort=self.sort)

    def as_json(self) -> dict[str, Any]:
        return {"room_id": self.room_id, "game": self.game, "name": self.name, "currency": self.currency,
                "stake": self.stake, "ladder_min_level": self.ladder_min_level,
                "ladder_max_level": self.ladder_max_level, "min_reputation": self.min_reputation,
                "options": dict(self.options), "sort": self.sort}


def seat_need(room: Room) -> int:
    """What a player must have free to sit in a coin room (0 elsewhere): the most one seat of a
    hand at its tables reserves (``Descriptor.most_reserved`` at the room's options and stake; its
    tables have the game's most seats), the same the table's seat gate and reservation ask. Options
    the game refuses count as none here: the table refuses them itself."""
    if room.currency != COINS:
        return 0
    try:
        options = registry.get(room.game).parse_options(dict(room.options))
        return registry.descriptor(room.game).most_reserved(options, room.stake) or 0
    except (registry.UnknownGame, ValueError, TypeError):  # a RuleViolation is a ValueError
        return 0


def defaults(stakes: Iterable[int] = COIN_STAKES) -> list[Room]:
    """The default rooms of every registered game (its coin rooms at ``stakes``: CHIEU_COIN_STAKES)."""
    rooms: list[Room] = []
    for d in registry.descriptors():
        game, base = d.key, d.sort * 100
        rooms.append(Room(f"{game}.points", game, "Points", POINTS, 1, sort=base))
        for i, stake in enumerate(sorted(stakes), 1):
            rooms.append(Room(f"{game}.coins.{stake}", game, f"金币 ×{stake}", COINS, stake, sort=base + i))
        for i, (lo, hi) in enumerate(LADDER_BLOCKS, 10):
            rooms.append(Room(f"{game}.ladder.{lo}-{hi}", game, f"过关斩将 {lo}–{hi}", POINTS, 1, lo, hi,
                              sort=base + i))
    return rooms


def from_message(m: pb.Room, coin_stakes: Collection[int] = ()) -> Room:
    """A room from the API, validated (INVALID_ARGUMENT with a reason for each field); a coin room
    only at one of ``coin_stakes`` (CHIEU_COIN_STAKES: the table service plays coin tables at
    these only), ``stake_not_offered`` otherwise."""
    if not ROOM_ID.match(m.room_id):
        raise invalid("bad_room_id", "a room id has 1..64 of a-z 0-9 _ . : - (starting with a letter or digit)")
    if m.game not in registry.KEYS:
        raise not_found("unknown_game", f"no game {m.game!r}")
    name = m.name.strip()
    if not 1 <= len(name) <= 60 or not name.isprintable():
        raise invalid("bad_name", "a room name has 1..60 printable characters")
    if m.currency not in (POINTS, COINS):
        raise invalid("bad_currency", "a room plays for points or coins")
    if not 1 <= m.stake <= MAX_STAKE:
        raise invalid("bad_stake", f"the stake is 1..{MAX_STAKE}")
    if m.currency == COINS and coin_stakes and m.stake not in coin_stakes:
        raise invalid("stake_not_offered", f"coin rooms are at the stakes of CHIEU_COIN_STAKES "
                                           f"({', '.join(str(x) for x in sorted(coin_stakes))}) only")
    lo, hi = m.ladder_min_level, m.ladder_max_level
    if (lo, hi) != (0, 0) and not 1 <= lo <= hi <= MAX_LEVEL:
        raise invalid("bad_ladder_levels", f"ladder levels are both 0, or 1 <= min <= max <= {MAX_LEVEL}")
    if m.min_reputation < 0:
        raise invalid("bad_min_reputation", "min_reputation must not be negative")
    try:
        options = json_format.MessageToDict(m.options)
    except ValueError:
        raise invalid("bad_options", "options are JSON: a number is finite (no NaN, no Infinity)") from None
    try:
        registry.get(m.game).parse_options(options)
    except Exception as e:
        if isinstance(e, Refusal):
            raise invalid("bad_options", e.message) from None
        # not the rules' own refusal: say what is wrong, never the exception's text
        raise invalid("bad_options", f"these options are not valid for {m.game}") from None
    return Room(m.room_id, m.game, name, int(m.currency), int(m.stake), int(lo), int(hi), int(m.min_reputation),
                options, int(m.sort))


def _row(r: asyncpg.Record) -> Room:
    return Room(r["room_id"], r["game"], r["name"], r["currency"], r["stake"], r["ladder_min_level"],
                r["ladder_max_level"], r["min_reputation"], json.loads(r["options"]), r["sort"])


_COLUMNS = "room_id, game, name, currency, stake, ladder_min_level, ladder_max_level, min_reputation, options, sort"


class Rooms:
    """Rooms on PostgreSQL."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    async def load_defaults(self, stakes: Iterable[int] = COIN_STAKES) -> int:
        """Insert the default rooms when there is no room at all (first start); returns how many."""
        async with self.pool.acquire() as conn, conn.transaction():
            await conn.execute("LOCK TABLE lobby_rooms IN EXCLUSIVE MODE")
            if await conn.fetchval("SELECT count(*) FROM lobby_room_audit") > 0:
                return 0
            rooms = defaults(stakes)
            for room in rooms:
                await self._write(conn, room)
                await conn.execute("INSERT INTO lobby_room_audit (room_id, action, actor, reason, after)"
                                   " VALUES ($1, 'create', 'lobby', 'the default rooms', $2)",
                                   room.room_id, json.dumps(room.as_json()))
            return len(rooms)

    @staticmethod
    async def _write(conn: db.Conn, room: Room) -> None:
        await conn.execute(
            f"INSERT INTO lobby_rooms ({_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)"
            " ON CONFLICT (room_id) DO UPDATE SET game = $2, name = $3, currency = $4, stake = $5,"
            " ladder_min_level = $6, ladder_max_level = $7, min_reputation = $8, options = $9, sort = $10",
            room.room_id, room.game, room.name, room.currency, room.stake, room.ladder_min_level,
            room.ladder_max_level, room.min_reputation, json.dumps(dict(room.options)), room.sort)

    async def all(self, game: str = "") -> list[Room]:
        rows = await self.pool.fetch(f"SELECT {_COLUMNS} FROM lobby_rooms WHERE $1 = '' OR game = $1"
                                     " ORDER BY game, sort, room_id", game)
        return [_row(r) for r in rows]

    async def get(self, room_id: str) -> Room:
        if not room_id or len(room_id) > 64:
            raise invalid("bad_room_id", "room_id is 1..64 characters")
        r = await self.pool.fetchrow(f"SELECT {_COLUMNS} FROM lobby_rooms WHERE room_id = $1", room_id)
        if r is None:
            raise not_found("unknown_room", f"no room {room_id!r}")
        return _row(r)

    async def put(self, room: Room, actor: str, reason: str) -> bool:
        """Create or change a room, audited; returns whether it was created."""
        async with self.pool.acquire() as conn, conn.transaction():
            before = await conn.fetchrow(f"SELECT {_COLUMNS} FROM lobby_rooms WHERE room_id = $1 FOR UPDATE",
                                         room.room_id)
            await self._write(conn, room)
            await conn.execute(
                "INSERT INTO lobby_room_audit (room_id, action, actor, reason, before, after)"
                " VALUES ($1, $2, $3, $4, $5, $6)", room.room_id, "create" if before is None else "update", actor,
                reason, None if before is None else json.dumps(_row(before).as_json()), json.dumps(room.as_json()))
            # the tables of the room's kind that had no room join it; tables of a changed room stay
            await conn.execute(
                "UPDATE lobby_tables SET room_id = $1 WHERE room_id = '' AND game = $2 AND currency = $3"
                " AND stake = $4 AND (CASE WHEN $5 > 0 THEN ladder_level BETWEEN $5 AND $6 ELSE ladder_level = 0 END)",
                room.room_id, room.game, room.currency, room.stake, room.ladder_min_level, room.ladder_max_level)
            return before is None

    async def delete(self, room_id: str, actor: str, reason: str) -> None:
        async with self.pool.acquire() as conn, conn.transaction():
            before = await conn.fetchrow(f"DELETE FROM lobby_rooms WHERE room_id = $1 RETURNING {_COLUMNS}", room_id)
            if before is None:
                raise not_found("unknown_room", f"no room {room_id!r}")
            await conn.execute("INSERT INTO lobby_room_audit (room_id, action, actor, reason, before)"
                               " VALUES ($1, 'delete', $2, $3, $4)", room_id, actor, reason,
                               json.dumps(_row(before).as_json()))
            await conn.execute("UPDATE lobby_tables SET room_id = '' WHERE room_id = $1", room_id)

    async def audit(self, room_id: str, before: int | None, limit: int) -> list[asyncpg.Record]:
        return list(await self.pool.fetch(
            "SELECT id, room_id, action, actor, reason, before, after,"
            " (extract(epoch FROM at) * 1000)::bigint AS at_ms FROM lobby_room_audit"
            " WHERE ($1 = '' OR room_id = $1) AND ($2::bigint IS NULL OR id < $2) ORDER BY id DESC LIMIT $3",
            room_id, before, limit))


def room_json(text: str | None) -> pb.Room | None:
    """An audited room (JSON) as a message."""
    if text is None:
        return None
    d = json.loads(text)
    return replace(Room(**{**d, "options": d.get("options", {})})).message()


async def match(conn: db.Conn, game: str, currency: int, stake: int, level: int) -> str:
    """The room a table of this kind falls into ("" when none does)."""
    found = await conn.fetchval(
        "SELECT room_id FROM lobby_rooms WHERE game = $1 AND currency = $2 AND stake = $3"
        " AND (CASE WHEN ladder_min_level > 0 THEN $4 BETWEEN ladder_min_level AND ladder_max_level"
        " ELSE $4 = 0 END) ORDER BY sort, room_id LIMIT 1", game, currency, stake, level)
    return str(found or "")
