"""The table list's reads, for the lobby's servicer: the lines of ``lobby_tables`` (written by the
projection, :mod:`chieu.lobby.projection`) a list, a room's watch, a quick seat or the home screen
shows, and the room of a table the lobby created. Only lines with a seat taken are listed."""

from __future__ import annotations

import asyncpg

from chieu.lobby import projection
from chieu.lobby.projection import COLUMNS, Line, line_of


async def listed(pool: asyncpg.Pool, table_ids: list[str]) -> list[Line]:
    """The listed lines of some tables."""
    rows = await pool.fetch(f"SELECT {COLUMNS} FROM lobby_tables WHERE table_id = ANY($1) AND taken > 0", table_ids)
    return [line_of(r) for r in rows]


async def room_counts(pool: asyncpg.Pool, game: str = "") -> dict[str, tuple[int, int]]:
    """Per room, its listed tables and the players seated at them (of one game, or of all: ``""``)."""
    rows = await pool.fetch("SELECT room_id, count(*) AS n, sum(taken) AS p FROM lobby_tables"
                            " WHERE taken > 0 AND ($1 = '' OR game = $1) GROUP BY room_id", game)
    return {r["room_id"]: (int(r["n"]), int(r["p"])) for r in rows}


async def page(pool: asyncpg.Pool, *, room_id: str = "", game: str = "", status: int = 0, free_seat: bool = False,
               ladder_level: int = 0, after: tuple[int, str] | None = None, size: int) -> list[Line]:
    """A page of a room's (or a game's) lines, fullest first, after ``after`` (seats taken, table id)."""
    key, value = ("room_id", room_id) if room_id else ("game", game)
    rows = await pool.fetch(
        f"SELECT {COLUMNS} FROM lobby_tables WHERE {key} = $1 AND taken > 0"
        " AND ($2 = 0 OR status = $2) AND (NOT $3 OR taken < cardinality(seats)) AND ($4 = 0 OR ladder_level = $4)"
        " AND ($5::int IS NULL OR taken < $5 OR (taken = $5 AND table_id > $6))"
        " ORDER BY taken DESC, table_id LIMIT $7",
        value, status, free_seat, ladder_level, None if after is None else after[0],
        "" if after is None else after[1], size)
    return [line_of(r) for r in rows]


async def room(pool: asyncpg.Pool, room_id: str) -> list[Line]:
    """Every listed line of a room, fullest first."""
    rows = await pool.fetch(f"SELECT {COLUMNS} FROM lobby_tables WHERE room_id = $1 AND taken > 0"
                            " ORDER BY taken DESC, table_id", room_id)
    return [line_of(r) for r in rows]


async def seat_in_room(pool: asyncpg.Pool, room_id: str, player_id: str) -> Line | None:
    """A listed table of the room where the player already sits."""
    row = await pool.fetchrow(
        f"SELECT {COLUMNS} FROM lobby_tables WHERE room_id = $1 AND taken > 0 AND $2 = ANY(seats) LIMIT 1",
        room_id, player_id)
    return None if row is None else line_of(row)


async def open_seats(pool: asyncpg.Pool, room_id: str, status: int, player_id: str, level: int,
                     limit: int) -> list[Line]:
    """Tables of the room in ``status`` with a free seat the player does not already hold, at most
    ``level`` (0: any), fullest and longest waiting first."""
    rows = await pool.fetch(
        f"SELECT {COLUMNS} FROM lobby_tables WHERE room_id = $1 AND taken > 0 AND status = $2"
        " AND taken < cardinality(seats) AND NOT ($3 = ANY(seats)) AND ($4 = 0 OR ladder_level <= $4)"
        " ORDER BY taken DESC, seated_ms, table_id LIMIT $5",
        room_id, status, player_id, level, limit)
    return [line_of(r) for r in rows]


async def shows_seat(pool: asyncpg.Pool, table_id: str, player_id: str) -> bool:
    """Whether the list shows the player at the table."""
    return bool(await pool.fetchval("SELECT true FROM lobby_tables WHERE table_id = $1 AND $2 = ANY(seats)",
                                    table_id, player_id))


async def place(pool: asyncpg.Pool, table_id: str, room_id: str) -> None:
    """Record the room of a table the lobby created (and move its line there if the projection was
    first and matched it elsewhere)."""
    async with pool.acquire() as conn, conn.transaction():
        await conn.execute("INSERT INTO lobby_table_rooms (table_id, room_id) VALUES ($1, $2)"
                           " ON CONFLICT (table_id) DO UPDATE SET room_id = $2", table_id, room_id)
        row = await conn.fetchrow(f"SELECT {COLUMNS} FROM lobby_tables WHERE table_id = $1 FOR UPDATE", table_id)
        if row is not None and row["room_id"] != room_id:
            line = line_of(row)
            line.old_room, line.room_id = line.room_id or "", room_id
            await projection.write(conn, line)


async def seated(pool: asyncpg.Pool, player_id: str, limit: int = 50) -> list[Line]:
    """The listed tables where the player sits, the last changed first."""
    rows = await pool.fetch(f"SELECT {COLUMNS} FROM lobby_tables WHERE $1 = ANY(seats) AND taken > 0"
                            " ORDER BY updated_ms DESC LIMIT $2", player_id, limit)
    return [line_of(r) for r in rows]
