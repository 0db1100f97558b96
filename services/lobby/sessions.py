"""Sessions: short-lived access tokens, rotating refresh tokens, sign-out, revocation, the
sign-in failure delay, and the new-player and welcome-coin limits.

- A session is one sign-in and one refresh-token *family*. ``Refresh`` spends the refresh token
  it is given and returns a new one (and a new access token). A spent refresh token presented
  again means it was stolen or replayed: the whole session is revoked.
- Refresh and access tokens are stored by their SHA-256 only; the tokens themselves are never
  written anywhere.
- A revoked session's access tokens still unexpired are listed in ``lobby_revocations``
  (``ListRevocations``, for services only), and ``CheckSession`` answers for one token: every
  service polls the list (:mod:`chieu.kit.revocations`) and refuses a revoked session within
  ``CHIEU_REVOCATION_POLL_S``.
- Every access token is made by :func:`issue_token` and nowhere else: a JWT signed with the
  lobby's Ed25519 private key (``CHIEU_TOKEN_PRIVATE_KEY``, ``chieu.kit.auth``) carrying the
  session id (``sid``) and a unique token id (``jti``). The lobby is the only service that holds
  the private key; its own calls to the ledger and the ladder use its service credential
  (``CHIEU_SERVICE_TOKEN``, ``service:lobby``), never a token it signs for itself.
- Failed sign-ins are counted per (account, device), per (account, address) and per device
  (:class:`Caller`); each failure past the free ones doubles the wait before the key's
  next try. A device that signed in to the account before is held only to its own keys, so a
  stranger's failures never delay the owner there.
- New players per address, and welcome 金币 per address and per device, are rates kept in
  PostgreSQL (:class:`Limit`): every lobby process counts against one allowance.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import secrets
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import asyncpg
import grpc

from chieu.kit import auth, db, limits
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
    """The lobby's own credential for its calls to other services (signed by itself with
    ``CHIEU_SERVICE_KEY`` and renewed, or ``CHIEU_SERVICE_TOKEN``: :func:`chieu.kit.auth.service_token`)."""
    return auth.service_token(settings)


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
        self.new_players = Limit(pool, settings.lobby_new_players_per_address, settings.lobby_new_players_window_s)
        self.welcome_address = Limit(pool, settings.lobby_welcome_per_address, settings.lobby_welcome_window_s)
        self.welcome_device = Limit(pool, settings.lobby_welcome_per_device, settings.lobby_welcome_window_s)
        self._next_sweep = 0.0
        self._tasks: set[asyncio.Task[None]] = set()

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
        """Drop access-token rows past their expiry, failure counts no longer counted and limit
        keys back to a full allowance (housekeeping)."""
        await self.pool.execute("DELETE FROM lobby_access WHERE expires_at < now() - interval '1 hour'")
        await self.pool.execute("DELETE FROM lobby_attempts WHERE blocked_until < now()"
                                " AND last_failure < now() - make_interval(secs => $1)",
                                float(self.settings.lobby_signin_window_s))
        await self.pool.execute("DELETE FROM lobby_limits WHERE tat < now()")

    # -- the sign-in failure delay ------------------------------------------------------------

    async def throttled(self, caller: Caller, *, guest: bool = False) -> None:
        """``RESOURCE_EXHAUSTED`` / ``too_many_attempts`` with the time to wait, while a key of
        ``caller`` is delayed: its (account, device) and its device always; its (account,
        address) unless the device has signed in to the account before (a stranger's failures
        never delay the owner's known device). A guest sign-in looks at its device alone."""
        keys = caller.device_keys() if guest else caller.own_keys() + caller.shared_keys()
        rows = await self.pool.fetch(
            "SELECT key, extract(epoch FROM blocked_until - now()) AS wait FROM lobby_attempts"
            " WHERE key = ANY($1) AND blocked_until > now()", keys)
        if not rows:
            return
        waits = {r["key"]: float(r["wait"]) for r in rows}
        own = [w for k, w in waits.items() if k not in caller.shared_keys()]
        if not own and await self.known_device(caller):
            return
        wait = max(own or waits.values())
        ms = int(wait * 1000) + 1
        raise ServiceError(grpc.StatusCode.RESOURCE_EXHAUSTED, "too_many_attempts",
                           f"too many failed sign-ins; retry in {(ms + 999) // 1000} s (retry_after_ms={ms})",
                           retry_after_ms=ms)

    async def known_device(self, caller: Caller) -> bool:
        """Whether ``caller``'s device has had a session of ``caller``'s account."""
        return bool(await self.pool.fetchval(
            "SELECT EXISTS (SELECT 1 FROM lobby_accounts a JOIN lobby_sessions s ON s.player_id = a.player_id"
            " WHERE a.username = $1 AND s.device_id = $2)", caller.account, caller.device))

    async def failed(self, caller: Caller) -> None:
        """Count a failed sign-in under each key of ``caller``; a key's next try waits
        :func:`chieu.kit.limits.backoff_s` of its failures (forgotten ``CHIEU_LOBBY_SIGNIN_WINDOW_S``
        after the last)."""
        st = self.settings
        free = st.lobby_signin_failures
        args = [(k, float(st.lobby_signin_window_s), free, st.lobby_signin_delay_s, st.lobby_signin_delay_max_s)
                for k in caller.own_keys()[:1] + caller.shared_keys()]
        args += [(k, float(st.lobby_signin_window_s), free * CROSS_ACCOUNT, st.lobby_signin_delay_s,
                  st.lobby_signin_delay_max_s) for k in caller.own_keys()[1:]]
        await self.pool.executemany(_FAILED, args)
        self._housekeeping()

    async def succeeded(self, caller: Caller) -> None:
        """Forget the account's failures from this device. The counts others can push stay (the
        account's from this address: a stranger at the same café keeps the delay the owner's
        success would otherwise lift), and so do the device's over every account (signing in to
        one's own account buys no more guesses at others)."""
        await self.pool.execute("DELETE FROM lobby_attempts WHERE key = $1", caller.own_keys()[0])

    # -- new players and welcome coins -------------------------------------------------------

    async def new_player(self, caller: Caller) -> None:
        """Count a new player of ``caller``'s address; ``RESOURCE_EXHAUSTED`` /
        ``too_many_new_players`` with the time to wait once the address has made
        ``CHIEU_LOBBY_NEW_PLAYERS_PER_ADDRESS`` in the window."""
        wait = await self.new_players.take(f"new:{caller.address}")
        if wait > 0:
            ms = int(wait * 1000) + 1
            raise ServiceError(grpc.StatusCode.RESOURCE_EXHAUSTED, "too_many_new_players",
                               f"too many new players from this address; retry in {_human(ms)} (retry_after_ms={ms})",
                               retry_after_ms=ms)

    async def welcome_allowed(self, caller: Caller) -> bool:
        """Whether a welcome bonus may go to ``caller`` now (and count it): within the allowance of
        its address (``CHIEU_LOBBY_WELCOME_PER_ADDRESS``), then of its device (``_PER_DEVICE``)."""
        if await self.welcome_address.take(f"welcome:{caller.address}") > 0:
            return False
        return await self.welcome_device.take(f"welcome-device:{caller.device}") == 0

    def _housekeeping(self) -> None:
        """Now and then, drop the failure counts and limit keys no longer in force."""
        t = time.monotonic()
        if t < self._next_sweep:
            return
        self._next_sweep = t + SWEEP_S
        task = asyncio.create_task(self.forget_expired())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)


def _human(ms: int) -> str:
    s = (ms + 999) // 1000
    return f"{s} s" if s < 120 else f"{(s + 59) // 60} min"


CROSS_ACCOUNT = 4
"""A device's failures over every account are free of delay up to this many times
``CHIEU_LOBBY_SIGNIN_FAILURES``."""
SWEEP_S = 300.0
"""How often the lobby drops failure counts and limit keys no longer in force."""

_FAILURES = ("(CASE WHEN a.last_failure < now() - make_interval(secs => $2) THEN 0 ELSE a.failures END + 1)")
_FAILED = (
    "INSERT INTO lobby_attempts AS a (key, last_failure, failures, blocked_until)"
    " VALUES ($1, now(), 1, now() + make_interval(secs => CASE WHEN 1 >= $3 THEN $4::float8 ELSE 0 END))"
    " ON CONFLICT (key) DO UPDATE SET failures = " + _FAILURES + ", last_failure = now(),"
    " blocked_until = now() + make_interval(secs => CASE WHEN " + _FAILURES + " >= $3"
    " THEN least($5::float8, $4::float8 * power(2, least(" + _FAILURES + " - $3, 62))) ELSE 0 END)")
"""One failure of a key: its count (restarted after the window), and its delay as
:func:`chieu.kit.limits.backoff_s` computes it ($1 key, $2 window, $3 free, $4 base, $5 cap)."""


@dataclass(frozen=True, slots=True)
class Caller:
    """Who tries to sign in: the account (its lower-case username; empty for a guest), the device
    and the client address's key (:func:`chieu.kit.address.key`)."""

    account: str
    device: str
    address: str

    def own_keys(self) -> list[str]:
        """The keys only this device can push: (account, device), then the device's own."""
        return [f"acct-device:{self.account}\x1f{self.device}", f"device:{self.device}"]

    def shared_keys(self) -> list[str]:
        """The key anyone at this address can push: (account, address). (No count of an address
        over every account: behind one carrier-grade NAT, strangers' typos would delay everyone.)"""
        return [f"acct-address:{self.account}\x1f{self.address}"]

    def device_keys(self) -> list[str]:
        return [f"device:{self.device}"]


class Limit:
    """A rate per key (GCRA) kept in PostgreSQL, so every lobby process counts against one
    allowance; a key this process already saw over its limit is refused from memory
    (:class:`chieu.kit.limits.Rate`), without a round trip."""

    def __init__(self, pool: asyncpg.Pool, limit: int, window_s: float) -> None:
        self.pool = pool
        self.memory = limits.Rate(limit, window_s)
        self.interval, self.tolerance = self.memory.interval, self.memory.tolerance

    async def take(self, key: str) -> float:
        """Count one event of ``key`` if it may have one (returns 0), else the seconds to wait
        (and counts nothing)."""
        if not self.memory.limit:
            return 0.0
        known = self.memory.wait(key)
        if known > 0:
            return known
        if await self.pool.fetchval(_TAKE, key, self.interval, self.tolerance):
            self.memory.take(key)
            return 0.0
        wait = max(float(await self.pool.fetchval(_WAIT, key, self.tolerance) or 0.0), 0.001)
        self.memory.hold(key, wait)
        return wait


_TAKE = ("INSERT INTO lobby_limits AS l (key, tat) VALUES ($1, now() + make_interval(secs => $2))"
         " ON CONFLICT (key) DO UPDATE SET tat = greatest(l.tat, now()) + make_interval(secs => $2)"
         " WHERE l.tat <= now() + make_interval(secs => $3) RETURNING true")
"""GCRA in one statement: one more event of key $1 if its theoretical arrival time allows it ($2
the interval between events, $3 the burst's tolerance); no row when it does not."""
_WAIT = "SELECT extract(epoch FROM tat - now()) - $2 FROM lobby_limits WHERE key = $1"
