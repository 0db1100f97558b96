"""Players, guest devices and accounts, and their passwords (Argon2id through argon2-cffi).

A guest is one player per device id; an account is a username (case-insensitive) with a
password. Player ids are made here, never chosen by a client: ``g-<hex>`` for a guest,
``u-<hex>`` for an account. Hashing runs in a worker thread (argon2-cffi releases the GIL), so a
sign-in never blocks the event loop.
"""

from __future__ import annotations

import asyncio
import re
import secrets
from dataclasses import dataclass

import argon2
import asyncpg
import grpc

from chieu.kit import db
from chieu.kit.errors import ServiceError, invalid

HASHER = argon2.PasswordHasher(time_cost=2, memory_cost=19_456, parallelism=1)
"""Argon2id with OWASP's minimum recommended cost (19 MiB, 2 passes, 1 lane): about 15 ms here.
A stored hash with other parameters is rehashed at the next good sign-in."""

USERNAME = re.compile(r"^[A-Za-z0-9._-]{3,32}$")
MIN_PASSWORD, MAX_PASSWORD = 8, 128
MIN_DEVICE, MAX_DEVICE = 8, 128
MAX_NAME = 40

_DUMMY = HASHER.hash("chieu-dummy-password")
"""Verified against when the account does not exist, so an unknown name costs the same time."""


@dataclass(frozen=True, slots=True)
class PlayerRow:
    player_id: str
    name: str
    guest: bool
    roles: tuple[str, ...]
    welcome: str
    created_ms: int


def check_device(device_id: str) -> str:
    if not MIN_DEVICE <= len(device_id) <= MAX_DEVICE or not device_id.isprintable() or device_id.strip() != device_id:
        raise invalid("bad_device_id", f"device_id must be {MIN_DEVICE}..{MAX_DEVICE} printable characters")
    return device_id


def check_username(username: str) -> str:
    if not USERNAME.match(username):
        raise invalid("bad_username", "a username has 3..32 letters, digits, '.', '_' or '-'")
    return username.lower()


def check_password(password: str) -> str:
    if not MIN_PASSWORD <= len(password) <= MAX_PASSWORD:
        raise invalid("bad_password", f"a password has {MIN_PASSWORD}..{MAX_PASSWORD} characters")
    return password


def check_name(name: str, default: str) -> str:
    name = name.strip() or default
    if len(name) > MAX_NAME or not name.isprintable():
        raise invalid("bad_name", f"a name has at most {MAX_NAME} printable characters")
    return name


async def hash_password(password: str) -> str:
    return await asyncio.to_thread(HASHER.hash, password)


async def verify_password(stored: str | None, password: str) -> bool:
    """Whether ``password`` matches ``stored`` (``None``: no such account, checked against a dummy)."""
    def check() -> bool:
        try:
            return HASHER.verify(stored or _DUMMY, password) and stored is not None
        except (argon2.exceptions.VerificationError, argon2.exceptions.InvalidHashError):
            return False

    return await asyncio.to_thread(check)


def _player(r: asyncpg.Record) -> PlayerRow:
    return PlayerRow(r["player_id"], r["name"], r["guest"], tuple(r["roles"]), r["welcome"], r["created_ms"])


_PLAYER_COLUMNS = ("player_id, name, guest, roles, welcome, "
                   "(extract(epoch FROM created_at) * 1000)::bigint AS created_ms")


async def player(conn: db.Conn, player_id: str) -> PlayerRow | None:
    r = await conn.fetchrow(f"SELECT {_PLAYER_COLUMNS} FROM lobby_players WHERE player_id = $1", player_id)
    return None if r is None else _player(r)


async def _guest_of(conn: db.Conn, device_id: str) -> PlayerRow | None:
    found = await conn.fetchrow(
        f"SELECT {_PLAYER_COLUMNS} FROM lobby_players WHERE player_id ="
        " (SELECT player_id FROM lobby_devices WHERE device_id = $1)", device_id)
    return None if found is None else _player(found)


async def guest_of(pool: asyncpg.Pool, device_id: str) -> PlayerRow | None:
    """The device's guest player, if it has one."""
    async with pool.acquire() as conn:
        return await _guest_of(conn, device_id)


async def guest(pool: asyncpg.Pool, device_id: str, name: str) -> PlayerRow:
    """The device's guest player, created on its first sign-in (two at once make one)."""
    async with pool.acquire() as conn:
        found = await _guest_of(conn, device_id)
        if found is not None:
            return found
        player_id = f"g-{secrets.token_hex(8)}"
        async with conn.transaction():
            await conn.execute("INSERT INTO lobby_players (player_id, name, guest) VALUES ($1, $2, true)",
                               player_id, check_name(name, f"Khách {player_id[2:7]}"))
            won = await conn.fetchval("INSERT INTO lobby_devices (device_id, player_id) VALUES ($1, $2)"
                                      " ON CONFLICT (device_id) DO NOTHING RETURNING player_id", device_id, player_id)
            if won is None:
                raise _Lost()
        row = await player(conn, player_id)
        assert row is not None
        return row


class _Lost(Exception):
    """Another sign-in of the same device created its guest first."""


async def guest_once(pool: asyncpg.Pool, device_id: str, name: str) -> PlayerRow:
    try:
        return await guest(pool, device_id, name)
    except _Lost:
        return await guest(pool, device_id, name)


async def register(pool: asyncpg.Pool, username: str, password_hash: str, name: str) -> PlayerRow:
    """A new account's player; ``ALREADY_EXISTS`` / ``username_taken`` if the name is someone's."""
    player_id = f"u-{secrets.token_hex(8)}"
    async with pool.acquire() as conn:
        try:
            async with conn.transaction():
                await conn.execute("INSERT INTO lobby_players (player_id, name, guest) VALUES ($1, $2, false)",
                                   player_id, name)
                await conn.execute("INSERT INTO lobby_accounts (username, player_id, password) VALUES ($1, $2, $3)",
                                   username, player_id, password_hash)
        except asyncpg.UniqueViolationError:
            raise ServiceError(grpc.StatusCode.ALREADY_EXISTS, "username_taken",
                               f"the username {username!r} is taken") from None
        row = await player(conn, player_id)
        assert row is not None
        return row


async def account(pool: asyncpg.Pool, username: str) -> tuple[str, str] | None:
    """(player id, password hash) of an account."""
    r = await pool.fetchrow("SELECT player_id, password FROM lobby_accounts WHERE username = $1", username)
    return None if r is None else (r["player_id"], r["password"])


async def rehash_if_needed(pool: asyncpg.Pool, username: str, stored: str, password: str) -> None:
    if HASHER.check_needs_rehash(stored):
        fresh = await hash_password(password)
        await pool.execute("UPDATE lobby_accounts SET password = $2 WHERE username = $1", username, fresh)


async def limit_welcome(pool: asyncpg.Pool, player_id: str) -> None:
    """Mark a player whose welcome 金币 were never claimed as over the address or device allowance."""
    await pool.execute("UPDATE lobby_players SET welcome = 'limited' WHERE player_id = $1 AND welcome = ''", player_id)


async def set_welcome(pool: asyncpg.Pool, player_id: str, state: str) -> None:
    """Record what became of the player's welcome 金币 (``claimed``, ``campaign_over``)."""
    await pool.execute("UPDATE lobby_players SET welcome = $2 WHERE player_id = $1", player_id, state)
