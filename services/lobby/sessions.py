"""Sessions: short-lived access tokens, rotating refresh tokens, sign-out, revocation, and the
sign-in failure limit.

- A session is one sign-in and one refresh-token *family*. ``Refresh`` spends the refresh token
  it is given and returns a new one (and a new access token). A spent refresh token presented
  again means it was stolen or replayed: the whole session is revoked.
- Refresh and access tokens are stored by their SHA-256 only; the tokens themselves are never
  written anywhere.
- A revoked session's access tokens still unexpired are listed in ``lobby_revocations``
  (``ListRevocations``), and ``CheckSession`` answers for one token: a service that caches either
  refuses a revoked session within its cache time.
- Every access token is made by :func:`issue_token` and nowhere else: a JWT signed with the
  lobby's Ed25519 private key (``CHIEU_TOKEN_PRIVATE_KEY``, ``chieu.kit.auth``) carrying the
  session id (``sid``) and a unique token id (``jti``). The lobby is the only service that holds
  the private key; its own calls to the ledger and the ladder use its service credential
  (``CHIEU_SERVICE_TOKEN``, ``service:lobby``), never a token it signs for itself.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import asyncpg
import grpc

from chieu.kit import auth, db
from chieu.kit.errors import ServiceError
from chieu.kit.settings import Settings

_signers: dict[tuple[str, int], auth.Signer] = {}


def _signer(settings: Settings) -> auth.Signer:
    """The lobby's signer, loaded once per key file (and again when the file changes)."""
    path = settings.token_private_key
    try:
        stamp = os.stat(path).st_mtime_ns if path else 0
    except OSError:
        stamp = 0
    found = _signers.get((path, stamp))
    if found is None:
        found = _signers[(path, stamp)] = auth.signer(settings)
    return found


def issue_token(settings: Settings, player_id: str, roles: Iterable[str], ttl_s: int, session_id: str,
                now: float | None = None) -> str:
    """Every access token the lobby makes is made here: a player's, for one session (``sid``),
    with a fresh ``jti``. A service credential is never made here (``chieu token --service``)."""
    roles = tuple(roles)
    if auth.SERVICE in roles:
        raise ValueError("the lobby does not issue service credentials")
    return _signer(settings).sign(player_id, roles, ttl_s, sid=session_id, now=now)


def service_token(settings: Settings) -> str:
    """The lobby's own credential for its calls to other services (``CHIEU_SERVICE_TOKEN``)."""
    return settings.service_token


def digest(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


def unauthenticated(reason: str, message: str) -> ServiceError:
    return ServiceError(grpc.StatusCode.UNAUTHENTICATED, reason, message)


@dataclass(frozen=True, slots=True)
class Tokens:
    session_id: str
    player_id: str
    access_token: str
    access_expires_ms: int
    refresh_token: str
    refresh_expires_ms: int


@dataclass(frozen=True, slots=True)
class SessionState:
    session_id: str
    player_id: str
    active: bool
    expires_ms: int


class RefreshReused(Exception):
    """A spent refresh token came back: its session was revoked (after the commit)."""


class Sessions:
    """Sessions on PostgreSQL."""

    def __init__(self, pool: asyncpg.Pool, settings: Settings) -> None:
        self.pool = pool
        self.settings = settings

    async def _tokens(self, conn: db.Conn, session_id: str, player_id: str, roles: Sequence[str],
                      generation: int, refresh_expires: float) -> Tokens:
        now = int(time.time())
        ttl = self.settings.lobby_access_ttl_s
        # every token has its own jti: two sign-ins in the same second never share a token
        access = issue_token(self.settings, player_id, roles, ttl, session_id, now=now)
        await conn.execute("INSERT INTO lobby_access (hash, session_id, expires_at) VALUES ($1, $2, to_timestamp($3))",
                           digest(access), session_id, now + ttl)
        refresh = f"r1.{secrets.token_urlsafe(32)}"
        await conn.execute("INSERT INTO lobby_refresh (hash, session_id, generation, expires_at)"
                           " VALUES ($1, $2, $3, to_timestamp($4))",
                           digest(refresh), session_id, generation, refresh_expires)
        return Tokens(session_id, player_id, access, int(now + ttl) * 1000, refresh, int(refresh_expires * 1000))

    async def start(self, player_id: str, roles: Sequence[str], device_id: str) -> Tokens:
        """A new session for a player who just proved who they are."""
        session_id = secrets.token_hex(12)
        expires = time.time() + self.settings.lobby_refresh_ttl_s
        async with self.pool.acquire() as conn, conn.transaction():
            await conn.execute("INSERT INTO lobby_sessions (id, player_id, device_id, expires_at)"
                               " VALUES ($1, $2, $3, to_timestamp($4))", session_id, player_id, device_id, expires)
            return await self._tokens(conn, session_id, player_id, roles, 1, expires)

    async def refresh(self, refresh_token: str) -> Tokens:
        """Trade a refresh token for new tokens; a spent one revokes its session (``RefreshReused``)."""
        if not refresh_token.startswith("r1.") or len(refresh_token) > 100:
            raise unauthenticated("bad_refresh_token", "this is not a refresh token")
        h = digest(refresh_token)
        async with self.pool.acquire() as conn, conn.transaction():
            r = await conn.fetchrow(
                "SELECT r.session_id, r.generation, r.spent_at IS NOT NULL AS spent,"
                " r.expires_at < now() AS expired, s.player_id, s.revoked_at IS NOT NULL AS revoked,"
                " extract(epoch FROM s.expires_at) AS session_expires, p.roles"
                " FROM lobby_refresh r JOIN lobby_sessions s ON s.id = r.session_id"
                " JOIN lobby_players p ON p.player_id = s.player_id"
                " WHERE r.hash = $1 FOR UPDATE OF r, s", h)
            if r is None:
                raise unauthenticated("bad_refresh_token", "unknown refresh token")
            if r["revoked"]:
                raise unauthenticated("session_revoked", "this session was signed out or revoked")
            if r["spent"]:
                await self._revoke(conn, [r["session_id"]], "refresh_reused")
                reused = True
            else:
                reused = False
                if r["expired"]:
                    raise unauthenticated("refresh_expired", "the refresh token expired: sign in again")
                await conn.execute("UPDATE lobby_refresh SET spent_at = now() WHERE hash = $1", h)
                return await self._tokens(conn, r["session_id"], r["player_id"], r["roles"],
                                          r["generation"] + 1, float(r["session_expires"]))
        assert reused
        raise RefreshReused(r["session_id"])

    async def _revoke(self, conn: db.Conn, session_ids: Sequence[str], why: str) -> int:
        revoked = await conn.fetch("UPDATE lobby_sessions SET revoked_at = now(), revoked_why = $2"
                                   " WHERE id = ANY($1) AND revoked_at IS NULL RETURNING id", list(session_ids), why)
        ids = [x["id"] for x in revoked]
        if ids:
            await conn.execute(
                "INSERT INTO lobby_revocations (hash, session_id, player_id, expires_at)"
                " SELECT a.hash, a.session_id, s.player_id, a.expires_at FROM lobby_access a"
                " JOIN lobby_sessions s ON s.id = a.session_id"
                " WHERE a.session_id = ANY($1) AND a.expires_at > now() ORDER BY a.expires_at"
                " ON CONFLICT (hash) DO NOTHING", ids)
        return len(ids)

    async def session_of_refresh(self, refresh_token: str) -> str:
        sid = await self.pool.fetchval("SELECT session_id FROM lobby_refresh WHERE hash = $1", digest(refresh_token))
        if sid is None:
            raise unauthenticated("bad_refresh_token", "unknown refresh token")
        return str(sid)

    async def state(self, access_token: str) -> SessionState | None:
        r = await self.pool.fetchrow(
            "SELECT a.session_id, s.player_id, s.revoked_at IS NULL AS active,"
            " (extract(epoch FROM a.expires_at) * 1000)::bigint AS expires_ms"
            " FROM lobby_access a JOIN lobby_sessions s ON s.id = a.session_id WHERE a.hash = $1",
            digest(access_token))
        return None if r is None else SessionState(r["session_id"], r["player_id"], r["active"], r["expires_ms"])

    async def sign_out(self, session_id: str, player_id: str) -> None:
        async with self.pool.acquire() as conn, conn.transaction():
            owner = await conn.fetchval("SELECT player_id FROM lobby_sessions WHERE id = $1", session_id)
            if owner != player_id:
                raise ServiceError(grpc.StatusCode.PERMISSION_DENIED, "not_yours", "this is another player's session")
            await self._revoke(conn, [session_id], "signed_out")

    async def revoke_player(self, player_id: str, why: str) -> int:
        async with self.pool.acquire() as conn, conn.transaction():
            ids = [r["id"] for r in await conn.fetch(
                "SELECT id FROM lobby_sessions WHERE player_id = $1 AND revoked_at IS NULL FOR UPDATE", player_id)]
            return await self._revoke(conn, ids, why)

    async def revocations(self, after: int, limit: int) -> list[asyncpg.Record]:
        return list(await self.pool.fetch(
            "SELECT id, hash, session_id, player_id, (extract(epoch FROM expires_at) * 1000)::bigint AS expires_ms"
            " FROM lobby_revocations WHERE id > $1 AND expires_at > now() ORDER BY id LIMIT $2", after, limit))

    async def forget_expired(self) -> None:
        """Drop access-token rows past their expiry (housekeeping)."""
        await self.pool.execute("DELETE FROM lobby_access WHERE expires_at < now() - interval '1 hour'")

    # -- the sign-in failure limit -----------------------------------------------------------

    async def throttled(self, keys: Sequence[str]) -> None:
        """``RESOURCE_EXHAUSTED`` / ``too_many_attempts`` with the wait, when a key has failed too often."""
        window = self.settings.lobby_signin_window_s
        wait = await self.pool.fetchval(
            "SELECT max(extract(epoch FROM window_start + make_interval(secs => $2) - now()))"
            " FROM lobby_attempts WHERE key = ANY($1) AND failures >= $3"
            " AND window_start > now() - make_interval(secs => $2)", list(keys), float(window),
            self.settings.lobby_signin_failures)
        if wait is not None and wait > 0:
            ms = int(float(wait) * 1000) + 1
            raise ServiceError(grpc.StatusCode.RESOURCE_EXHAUSTED, "too_many_attempts",
                               f"too many failed sign-ins; retry in {(ms + 999) // 1000} s (retry_after_ms={ms})")

    async def failed(self, keys: Sequence[str]) -> None:
        window = float(self.settings.lobby_signin_window_s)
        for key in keys:
            await self.pool.execute(
                "INSERT INTO lobby_attempts (key, window_start, failures) VALUES ($1, now(), 1)"
                " ON CONFLICT (key) DO UPDATE SET"
                " failures = CASE WHEN lobby_attempts.window_start <= now() - make_interval(secs => $2)"
                " THEN 1 ELSE lobby_attempts.failures + 1 END,"
                " window_start = CASE WHEN lobby_attempts.window_start <= now() - make_interval(secs => $2)"
                " THEN now() ELSE lobby_attempts.window_start END", key, window)

    async def succeeded(self, keys: Sequence[str]) -> None:
        await self.pool.execute("DELETE FROM lobby_attempts WHERE key = ANY($1)", list(keys))
