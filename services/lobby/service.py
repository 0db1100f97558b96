"""The lobby's gRPC API (``chieu.lobby.v1.LobbyService``).

Session calls need no token; every other call carries ``authorization: Bearer <access token>``.
A player reads their own home screen; ``operator`` manages rooms and revokes sessions. Every
refusal is a gRPC status with a stable reason, and changes nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import asyncpg
import grpc

from chieu.games import registry
from chieu.kit import address, auth, fields, logs, metrics, words
from chieu.kit.errors import ServiceError, invalid, not_found, precondition
from chieu.kit.revocations import RevocationList
from chieu.kit.settings import Settings, coin_stakes
from chieu.lobby import accounts, listing, names, projection, rooms, welcome
from chieu.lobby.accounts import PlayerRow
from chieu.lobby.peers import Peers, Standing
from chieu.lobby.presence import Spectators, seatable
from chieu.lobby.projection import Feed, Line, summary
from chieu.lobby.rooms import Room, Rooms
from chieu.lobby.sessions import Caller, RefreshReused, Sessions, Tokens, unauthenticated
from chieu.lobby.v1 import lobby_service_pb2 as pb
from chieu.lobby.v1 import lobby_service_pb2_grpc as pb_grpc
from chieu.table.v1 import table_service_pb2

log = logs.get("chieu.lobby")

Context = grpc.aio.ServicerContext[Any, Any]
SNAPSHOT_CHUNK = 500
QUICK_CANDIDATES = 8
SEAT_LISTED_S = 2.0
"""How long ``QuickSeat`` waits for the lobby's own list to show the seat it took (the projection
is a few milliseconds behind the table log), so the player's next call sees it."""
WAITING = table_service_pb2.TABLE_STATUS_WAITING
LEVEL_TOO_LOW = "ladder_level_too_low"
"""The ladder gate's one code in every service (the table's refusal and log, the ladder's seat check)."""


def _expired() -> ServiceError:
    return unauthenticated("token_expired", "the session token expired: watch again with a fresh one")


def _revoked() -> ServiceError:
    return unauthenticated("session_revoked", "this session was signed out or revoked: sign in again")


def _signin(kind: str) -> Callable[[Any], Any]:
    """Count a sign-in method's calls in ``chieu_lobby_signins_total`` by ``kind`` and result (``ok``,
    or the refusal's reason)."""
    ok = metrics.LOBBY_SIGNINS.labels(kind, "ok")

    def wrap(method: Any) -> Any:
        async def counted(self: Any, request: Any, context: Context) -> Any:
            try:
                response = await method(self, request, context)
            except ServiceError as e:
                metrics.LOBBY_SIGNINS.labels(kind, e.reason).inc()
                raise
            except Exception:
                metrics.LOBBY_SIGNINS.labels(kind, "internal").inc()
                raise
            ok.inc()
            return response

        counted.__name__, counted.__doc__ = method.__name__, method.__doc__
        return counted

    return wrap


def _player_message(p: PlayerRow) -> pb.Player:
    return pb.Player(player_id=p.player_id, name=p.name, guest=p.guest, created_ms=p.created_ms,
                     avatar=names.avatar_of(p.player_id))


def _session(t: Tokens, p: PlayerRow, welcome: int = 0) -> pb.Session:
    return pb.Session(session_id=t.session_id, access_token=t.access_token, access_expires_ms=t.access_expires_ms,
                      refresh_token=t.refresh_token, refresh_expires_ms=t.refresh_expires_ms,
                      player=_player_message(p), welcome_coins=welcome)


class Gates:
    """The caller's gates, asking each peer at most once per call."""

    def __init__(self, peers: Peers, player_id: str, lang: str = words.FALLBACK) -> None:
        self.peers, self.player_id = peers, player_id
        self.lang = lang
        """The caller's language (``accept-language``): a closed gate's message is worded in it."""
        self._coins: tuple[int, bool, int] | None = None
        self._levels: dict[str, Standing] = {}
        self._reputation: int | None = None

    async def coins(self, need: int = 0) -> tuple[int, bool, int]:
        """(金币, eligible at a table whose hands reserve ``need`` of each seat, 金币 free): the
        ledger asked once per request, whatever the rooms' needs (a list of coin rooms asked it once
        per stake and game before). Eligible at ``need`` is eligible at none and ``need`` free:
        the ledger's own rule (``CheckEligibility``, ``ReserveHand``: free ≥ need)."""
        if self._coins is None:
            self._coins = await self.peers.coins(self.player_id)
        coins, eligible, free = self._coins
        return coins, eligible and free >= need, free

    async def level(self, game: str) -> int:
        if game not in self._levels:
            self._levels[game] = await self.peers.standing(self.player_id, game)
        return self._levels[game].level

    async def reputation(self) -> int:
        if self._reputation is None:
            self._reputation = await self.peers.reputation(self.player_id)
        return self._reputation

    async def gate(self, room: Room) -> pb.Gate:
        """Whether the player may sit in the room; a peer that cannot answer raises UNAVAILABLE."""
        g = pb.Gate(allowed=True)
        if room.currency == rooms.COINS:
            g.need = rooms.seat_need(room)
            g.coins, eligible, g.free = await self.coins(g.need)
            if not eligible:
                g.allowed, g.reason = False, "not_enough_coins"
                g.message = (f"a hand here reserves {g.need} 金币 of each seat (the game's largest loss × the stake "
                             f"{room.stake}); you have {g.free} not already in play, and a coin table needs more "
                             f"than {self.peers.settings.coin_table_minimum} 金币 (GC-1)")
        if room.ladder:
            g.level = await self.level(room.game)
            if g.allowed and g.level < room.ladder_min_level:
                g.allowed, g.reason = False, LEVEL_TOO_LOW
                g.message = f"this room's tables are level {room.ladder_min_level} and up; you are level {g.level}"
        if room.min_reputation:
            g.reputation = await self.reputation()
            if g.allowed and g.reputation < room.min_reputation:
                g.allowed, g.reason = False, "reputation_too_low"
                g.message = f"this room needs reputation {room.min_reputation}; yours is {g.reputation}"
        return g

    async def shown(self, room: Room) -> pb.Gate:
        """The gate as a list shows it: a peer that cannot answer makes it closed, with that reason;
        a closed gate's message in the caller's language (English: the lobby's own, with numbers)."""
        try:
            g = await self.gate(room)
        except ServiceError as e:
            g = pb.Gate(allowed=False, reason=e.reason, message=e.message)
        if g.reason and self.lang != words.FALLBACK:
            g.message = words.text(g.reason, self.lang) or g.message
            if g.reason == "not_enough_coins" and g.need:  # how much: the room's need and the caller's free 金币
                g.message += " " + (words.text("coins_needed", self.lang) or "").format(need=g.need, free=g.free)
        return g


class LobbyService(pb_grpc.LobbyServiceServicer):
    """The lobby's servicer."""

    def __init__(self, pool: asyncpg.Pool, settings: Settings, peers: Peers, feed: Feed) -> None:
        self.pool = pool
        self.settings = settings
        self.peers = peers
        self.feed = feed
        self.sessions = Sessions(pool, settings)
        self.rooms = Rooms(pool)
        self.profiles = names.Profiles(pool)
        """Players' names for the table lists' seats and GetProfiles."""
        self.revocations = RevocationList(self._revoked_since, settings.revocation_poll_s)
        """The sessions signed out or revoked, read from the lobby's own table as any service polls it."""
        self.spectators = Spectators(self._spectators_changed)
        """Every table's spectators, as the table processes announce them (started with NATS)."""
        self._tasks: set[asyncio.Task[None]] = set()

    def _spectators_changed(self, tables: set[str]) -> None:
        """Tell this process's room watchers (if any) the tables whose spectators changed."""
        if self.feed.rooms:
            task = asyncio.create_task(self._announce(tables))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _announce(self, tables: set[str]) -> None:
        try:
            lines = await listing.listed(self.pool, sorted(tables))
        except Exception as e:  # the next change or a new watch shows the count
            log.info("spectators not announced", reason=str(e))
            return
        for line in lines:
            line.presence = True
            self.feed.announce(line)

    def _summary(self, line: Line, known: dict[str, str] | None = None) -> pb.TableSummary:
        out = summary(line, self.spectators.count(line.table_id))
        if known is not None:
            out.seat_profiles.extend(
                pb.Profile(player_id=p, name=known[p], avatar=names.avatar_of(p)) if p in known else pb.Profile()
                for p in line.seats)
            out.spectator_profiles.extend(
                pb.Profile(player_id=p, name=known[p], avatar=names.avatar_of(p))
                for p in self.spectators.ids(line.table_id) if p in known)
        return out

    async def _summaries(self, lines: list[Line]) -> list[pb.TableSummary]:
        """The lines as a list shows them, each seat and each listed spectator with its player's
        profile (one lookup)."""
        known = await self.profiles.names(
            p for line in lines for p in (*line.seats, *self.spectators.ids(line.table_id)))
        return [self._summary(line, known) for line in lines]

    async def _revoked_since(self, after: int) -> tuple[list[tuple[bytes, int]], int]:
        rows = await self.sessions.revocations(after, 1000)
        return [(bytes(r["hash"]), int(r["expires_ms"])) for r in rows], int(rows[-1]["id"]) if rows else after

    async def _revoked_here(self) -> None:
        """Learn at once what this process just revoked: its own calls refuse the session and its
        open ``WatchRoom`` streams end now, not at the next poll (the other replicas learn it at
        theirs, within ``CHIEU_REVOCATION_POLL_S``)."""
        try:
            while await self.revocations.poll_once():
                pass
        except Exception as e:  # the poll loop learns it later
            log.info("revocations not read at once", error=f"{type(e).__name__}: {e}")

    def _who(self, context: Context) -> auth.Principal:
        return auth.principal(context, auth.public_keys(self.settings), self.revocations)

    def _operator(self, context: Context) -> auth.Principal:
        who = self._who(context)
        auth.require_role(who, "operator")
        return who

    # -- sessions -----------------------------------------------------------------------------

    def _caller(self, context: Context, account: str, device: str) -> Caller:
        """Who signs in: the account, the device and the client address's key (the peer, or
        what a trusted proxy says: :mod:`chieu.kit.address`)."""
        return Caller(account, device, address.client_key(context, self.settings))

    async def _welcome(self, p: PlayerRow, caller: Caller | None) -> int:
        """The welcome 金币 (GC-4), through the ledger (idempotent there: ``welcome/<player>``).
        At a new player's first sign-in it is taken from the caller's address and device allowance
        (a player over it is marked ``limited`` and never paid) and, when
        ``CHIEU_LOBBY_WELCOME_AFTER_HANDS`` is set, left ``pending`` until the player has finished
        that many hands against an opponent (:mod:`chieu.lobby.welcome`); it is paid at the sign-in
        or token refresh after. A ledger that cannot answer leaves it ``pending`` for the next one
        (never taken from the allowances twice)."""
        if p.welcome not in ("", welcome.PENDING):
            return 0
        if not p.welcome:
            if caller is None:
                return 0
            if not await self.sessions.welcome_allowed(caller):
                await accounts.limit_welcome(self.pool, p.player_id)
                log.info("welcome coins over the address or device allowance", player_id=p.player_id)
                return 0
            # taken from the allowances once: the player's from now on, whether it is paid now,
            # after its hands, or at a later sign-in because the ledger could not answer this one
            await welcome.mark_pending(self.pool, p.player_id)
        if self.settings.lobby_welcome_after_hands > 0:
            async with self.pool.acquire() as conn:
                if await welcome.played(conn, p.player_id) < self.settings.lobby_welcome_after_hands:
                    return 0
        try:
            paid, campaign = await self.peers.claim_welcome(p.player_id)
        except ServiceError as e:
            log.warning("welcome coins not claimed now; next sign-in tries again", player_id=p.player_id,
                        reason=e.reason)
            return 0
        await accounts.set_welcome(self.pool, p.player_id, "claimed" if campaign else "campaign_over")
        return paid

    @_signin("guest")
    async def SignInGuest(self, request: pb.SignInGuestRequest, context: Context) -> pb.SignInGuestResponse:
        device = accounts.check_device(request.device_id)
        names.check_name(request.name, "-")
        caller = self._caller(context, "", device)
        await self.sessions.throttled(caller, guest=True)
        p = await accounts.guest_of(self.pool, device)
        if p is None:
            await self.sessions.new_player(caller)
            p = await accounts.guest_once(self.pool, device, request.name)
        welcome = await self._welcome(p, caller)
        tokens = await self.sessions.start(p.player_id, p.roles, device)
        return pb.SignInGuestResponse(session=_session(tokens, p, welcome))

    @_signin("register")
    async def Register(self, request: pb.RegisterRequest, context: Context) -> pb.RegisterResponse:
        username = accounts.check_username(request.username)
        password = accounts.check_password(request.password)
        device = accounts.check_device(request.device_id)
        name = names.check_name(request.name, request.username)
        caller = self._caller(context, username, device)
        await self.sessions.throttled(caller, guest=True)
        await self.sessions.new_player(caller)
        p = await accounts.register(self.pool, username, await accounts.hash_password(password), name)
        welcome = await self._welcome(p, caller)
        tokens = await self.sessions.start(p.player_id, p.roles, device)
        return pb.RegisterResponse(session=_session(tokens, p, welcome))

    @_signin("password")
    async def SignIn(self, request: pb.SignInRequest, context: Context) -> pb.SignInResponse:
        device = accounts.check_device(request.device_id)
        if not request.username or len(request.username) > 64 or not request.password \
                or len(request.password) > accounts.MAX_PASSWORD:
            raise invalid("bad_credentials", "a username and a password are needed")
        username = request.username.lower()
        caller = self._caller(context, username, device)
        await self.sessions.throttled(caller)
        found = await accounts.account(self.pool, username)
        if not await accounts.verify_password(None if found is None else found[1], request.password) \
                or found is None:
            await self.sessions.failed(caller)
            raise unauthenticated("bad_credentials", "wrong username or password")
        await self.sessions.succeeded(caller)
        await accounts.rehash_if_needed(self.pool, username, found[1], request.password)
        async with self.pool.acquire() as conn:
            p = await accounts.player(conn, found[0])
        assert p is not None
        welcome = await self._welcome(p, caller)
        tokens = await self.sessions.start(p.player_id, p.roles, device)
        return pb.SignInResponse(session=_session(tokens, p, welcome))

    @_signin("refresh")
    async def Refresh(self, request: pb.RefreshRequest, context: Context) -> pb.RefreshResponse:
        try:
            tokens = await self.sessions.refresh(request.refresh_token)
        except RefreshReused:
            await self._revoked_here()
            raise unauthenticated("refresh_reused", "this refresh token was already used: the session is revoked; "
                                  "sign in again") from None
        async with self.pool.acquire() as conn:
            p = await accounts.player(conn, tokens.player_id)
        assert p is not None
        return pb.RefreshResponse(session=_session(tokens, p, await self._welcome(p, None)))

    async def SignOut(self, request: pb.SignOutRequest, context: Context) -> pb.SignOutResponse:
        who = self._who(context)
        if request.refresh_token:
            sid = await self.sessions.session_of_refresh(request.refresh_token)
        else:
            state = await self.sessions.state(auth.bearer(context))
            if state is None:
                raise precondition("no_session", "this token belongs to no lobby session (send its refresh token)")
            sid = state.session_id
        await self.sessions.sign_out(sid, who.player_id)
        await self._revoked_here()
        return pb.SignOutResponse(session_id=sid)

    async def RevokeSessions(self, request: pb.RevokeSessionsRequest,
                             context: Context) -> pb.RevokeSessionsResponse:
        self._operator(context)
        player_id = fields.ident(request.player_id, "player_id")
        reason = fields.reason(request.reason)
        n = await self.sessions.revoke_player(player_id, f"operator: {reason}")
        log.info("sessions revoked", player_id=player_id, revoked=n, reason=reason)
        await self._revoked_here()
        return pb.RevokeSessionsResponse(revoked=n)

    async def CheckSession(self, request: pb.CheckSessionRequest, context: Context) -> pb.CheckSessionResponse:
        self._who(context)
        if not request.access_token or len(request.access_token) > 4096:
            raise invalid("bad_access_token", "access_token must be 1..4096 characters")
        state = await self.sessions.state(request.access_token)
        if state is None:
            return pb.CheckSessionResponse(active=False)
        return pb.CheckSessionResponse(active=state.active, session_id=state.session_id, player_id=state.player_id,
                                       expires_ms=state.expires_ms)

    async def ListRevocations(self, request: pb.ListRevocationsRequest,
                              context: Context) -> pb.ListRevocationsResponse:
        """For services only (what they refuse): each revoked token's SHA-256 and expiry, never
        whose it was."""
        auth.require(self._who(context), auth.SERVICE)
        limit = fields.page_size(request.limit, 1000, 10_000)
        # (a cursor past the ids' bigint range: nothing after it; the database would refuse the number)
        rows = await self.sessions.revocations(min(int(request.after_cursor), 2**63 - 1), limit)
        return pb.ListRevocationsResponse(
            revocations=[pb.Revocation(token_sha256=bytes(r["hash"]), expires_ms=r["expires_ms"]) for r in rows],
            next_cursor=rows[-1]["id"] if rows else request.after_cursor)

    # -- zones and rooms ----------------------------------------------------------------------

    async def _counts(self, game: str = "") -> dict[str, tuple[int, int]]:
        return await listing.room_counts(self.pool, game)

    async def ListZones(self, request: pb.ListZonesRequest, context: Context) -> pb.ListZonesResponse:
        self._who(context)
        all_rooms = await self.rooms.all()
        counts = await self._counts()
        zones = []
        for game in registry.KEYS:
            mine = [r for r in all_rooms if r.game == game]
            zones.append(pb.Zone(game=game, rooms=len(mine), tables=sum(counts.get(r.room_id, (0, 0))[0] for r in mine),
                                 players=sum(counts.get(r.room_id, (0, 0))[1] for r in mine)))
        return pb.ListZonesResponse(zones=zones)

    def _game(self, game: str) -> str:
        if not game:
            raise invalid("bad_game", "a game is needed")
        if game not in registry.KEYS:
            raise not_found("unknown_game", f"no game {game[:64]!r}")
        return game

    async def _entry(self, room: Room, gates: Gates, counts: dict[str, tuple[int, int]]) -> pb.RoomEntry:
        n, players = counts.get(room.room_id, (0, 0))
        return pb.RoomEntry(room=room.message(), gate=await gates.shown(room), tables=n, players=players)

    async def ListRooms(self, request: pb.ListRoomsRequest, context: Context) -> pb.ListRoomsResponse:
        who = self._who(context)
        game = self._game(request.game)
        gates = Gates(self.peers, who.player_id, words.of_metadata(context.invocation_metadata()))
        counts = await self._counts(game)
        return pb.ListRoomsResponse(rooms=[await self._entry(r, gates, counts) for r in await self.rooms.all(game)])

    async def GetRoom(self, request: pb.GetRoomRequest, context: Context) -> pb.GetRoomResponse:
        who = self._who(context)
        room = await self.rooms.get(request.room_id)
        gates = Gates(self.peers, who.player_id, words.of_metadata(context.invocation_metadata()))
        return pb.GetRoomResponse(room=await self._entry(room, gates,
                                                         await self._counts(room.game)))

    async def PutRoom(self, request: pb.PutRoomRequest, context: Context) -> pb.PutRoomResponse:
        who = self._operator(context)
        reason = fields.reason(request.reason)
        room = rooms.from_message(request.room, coin_stakes(self.settings))
        created = await self.rooms.put(room, who.player_id, reason)
        log.info("room changed", room_id=room.room_id, created=created, actor=who.player_id, reason=reason)
        return pb.PutRoomResponse(room=room.message(), created=created)

    async def DeleteRoom(self, request: pb.DeleteRoomRequest, context: Context) -> pb.DeleteRoomResponse:
        who = self._operator(context)
        reason = fields.reason(request.reason)
        await self.rooms.get(request.room_id)
        await self.rooms.delete(request.room_id, who.player_id, reason)
        log.info("room deleted", room_id=request.room_id, actor=who.player_id, reason=reason)
        return pb.DeleteRoomResponse()

    async def ListRoomAudit(self, request: pb.ListRoomAuditRequest, context: Context) -> pb.ListRoomAuditResponse:
        who = self._who(context)
        if not who.roles & {"operator", "auditor"}:
            raise ServiceError(grpc.StatusCode.PERMISSION_DENIED, "role_required",
                               "this call needs operator or auditor")
        size = fields.page_size(request.page_size)
        before = _int_token(request.page_token)
        rows = await self.rooms.audit(request.room_id, before, size + 1)
        entries = []
        for r in rows[:size]:
            e = pb.RoomAudit(id=r["id"], room_id=r["room_id"], action=r["action"], actor=r["actor"],
                             reason=r["reason"], at_ms=r["at_ms"])
            b, a = rooms.room_json(r["before"]), rooms.room_json(r["after"])
            if b is not None:
                e.before.CopyFrom(b)
            if a is not None:
                e.after.CopyFrom(a)
            entries.append(e)
        return pb.ListRoomAuditResponse(entries=entries,
                                        next_page_token=str(rows[size - 1]["id"]) if len(rows) > size else "")

    # -- the table list -----------------------------------------------------------------------

    async def ListTables(self, request: pb.ListTablesRequest, context: Context) -> pb.ListTablesResponse:
        self._who(context)
        if request.room_id:
            await self.rooms.get(request.room_id)
            if request.game:
                raise invalid("bad_filter", "give room_id or game, not both")
        elif request.game:
            self._game(request.game)
        else:
            raise invalid("bad_filter", "room_id or game is needed")
        if request.status not in (0, table_service_pb2.TABLE_STATUS_WAITING, table_service_pb2.TABLE_STATUS_PLAYING):
            raise invalid("bad_filter", f"status {request.status} is not a table status")
        if request.ladder_level < 0:
            raise invalid("bad_filter", "ladder_level must not be negative")
        size = fields.page_size(request.page_size)
        after = _table_token(request.page_token)
        lines = await listing.page(self.pool, room_id=request.room_id, game=request.game, status=int(request.status),
                                   free_seat=request.free_seat, ladder_level=request.ladder_level, after=after,
                                   size=size + 1)
        token = f"{lines[size - 1].taken}.{lines[size - 1].table_id}" if len(lines) > size else ""
        return pb.ListTablesResponse(tables=await self._summaries(lines[:size]), next_page_token=token)

    async def WatchRoom(self, request: pb.WatchRoomRequest, context: Context) -> AsyncIterator[pb.WatchRoomResponse]:
        """The room's tables, then every change; the stream ends with its token (expired or revoked)."""
        who, token = self._who(context), auth.bearer(context)
        room = await self.rooms.get(request.room_id)
        wait = who.exp - time.time()
        if wait <= 0:
            raise _expired()
        q = self.feed.subscribe(room.room_id)
        ended: list[ServiceError] = []

        def end(error: ServiceError) -> None:
            if not ended:
                ended.append(error)
                q.put_nowait(projection.WAKE)

        timer = asyncio.get_running_loop().call_later(wait, end, _expired())
        unsubscribe = self.revocations.subscribe(token, lambda: end(_revoked()))
        try:
            if ended:
                raise ended[0]
            lines = await listing.room(self.pool, room.room_id)
            seen: dict[str, int] = {}
            for i in range(0, max(len(lines), 1), SNAPSHOT_CHUNK):
                part = lines[i:i + SNAPSHOT_CHUNK]
                for x in part:
                    seen[x.table_id] = x.version
                yield pb.WatchRoomResponse(snapshot=pb.Snapshot(
                    tables=await self._summaries(part), complete=i + SNAPSHOT_CHUNK >= len(lines)))
            while True:
                line = await q.get()
                if ended:
                    raise ended[0]
                if projection.lost(line):
                    raise ServiceError(grpc.StatusCode.UNAVAILABLE, "feed_lost",
                                       "the lobby lost its table feed; watch again")
                if line.presence:  # its spectators changed: shown if listed and not older than shown
                    if line.room_id == room.room_id and line.version >= seen.get(line.table_id, line.version + 1):
                        yield pb.WatchRoomResponse(changed=(await self._summaries([line]))[0])
                    continue
                if not line.old_room and line.version <= seen.get(line.table_id, -1):
                    continue
                here = line.room_id == room.room_id and line.taken > 0
                if not here and line.table_id not in seen:
                    continue
                if here:
                    seen[line.table_id] = line.version
                    yield pb.WatchRoomResponse(changed=(await self._summaries([line]))[0])
                else:
                    seen.pop(line.table_id, None)
                    yield pb.WatchRoomResponse(removed=pb.Removed(table_id=line.table_id, version=line.version,
                                                                  updated_ms=line.updated_ms))
        finally:
            timer.cancel()
            unsubscribe()
            self.feed.unsubscribe(room.room_id, q)

    # -- quick seat -----------------------------------------------------------------------------

    async def QuickSeat(self, request: pb.QuickSeatRequest, context: Context) -> pb.QuickSeatResponse:
        who = self._who(context)
        token = auth.bearer(context)
        if len(request.client_seed) > 64:
            raise invalid("bad_client_seed", "a client seed has at most 64 bytes")
        room = await self.rooms.get(request.room_id)
        gates = Gates(self.peers, who.player_id)
        gate = await gates.gate(room)  # at a coin room the reservation's need (the table asks it again)
        if not gate.allowed:
            raise precondition(gate.reason, gate.message)
        level = min(gate.level, room.ladder_max_level) if room.ladder else 0
        mine = await listing.seat_in_room(self.pool, room.room_id, who.player_id)
        if mine is not None:
            return pb.QuickSeatResponse(table_id=mine.table_id, seat=mine.seats.index(who.player_id))
        candidates = await listing.open_seats(self.pool, room.room_id, WAITING, who.player_id, level, QUICK_CANDIDATES)
        for line in seatable(candidates, lambda c: c.seats, self.spectators.absent, lambda c: c.table_id):
            req = table_service_pb2.TakeSeatRequest(table_id=line.table_id, command_id=uuid.uuid4().hex,
                                                    client_seed=request.client_seed)
            try:
                r = await self.peers.take_seat(token, req)
            except grpc.aio.AioRpcError as e:
                if e.code() in (grpc.StatusCode.FAILED_PRECONDITION, grpc.StatusCode.NOT_FOUND):
                    continue  # lost the race for the seat (or the table changed): the next one
                raise _relay("table", e) from None
            await self._listed(room.room_id, line.table_id, who.player_id)
            return pb.QuickSeatResponse(table_id=line.table_id, seat=r.seat, table=r.table)
        create = table_service_pb2.CreateTableRequest(
            game=room.game, stake=room.stake, currency=room.currency,  # type: ignore[arg-type]
            command_id=uuid.uuid4().hex, client_seed=request.client_seed, ladder_level=level,
            min_reputation=room.min_reputation)  # the table enforces the room's gate itself
        create.options.update(dict(room.options))
        try:
            view = await self.peers.create_table(token, create)
        except grpc.aio.AioRpcError as e:
            raise _relay("table", e) from None
        await listing.place(self.pool, view.table_id, room.room_id)
        await self._listed(room.room_id, view.table_id, who.player_id)
        return pb.QuickSeatResponse(table_id=view.table_id, seat=view.your_seat, created=True, table=view)

    async def _listed(self, room_id: str, table_id: str, player_id: str) -> None:
        """Return once the table list shows ``player_id`` at ``table_id`` (read your own seat: the
        home screen, and a second quick seat, see it), or after ``SEAT_LISTED_S`` (the projection is
        away: the seat stands all the same). Looks again at each change the room's feed hears, and
        every 50 ms in case a notice is lost."""
        changes = self.feed.subscribe(room_id)
        try:
            deadline = time.monotonic() + SEAT_LISTED_S
            while not await listing.shows_seat(self.pool, table_id, player_id):
                left = deadline - time.monotonic()
                if left <= 0:
                    log.warning("the table list does not show a quick seat yet", table_id=table_id)
                    return
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(changes.get(), min(left, 0.05))
        finally:
            self.feed.unsubscribe(room_id, changes)

    # -- the home screen ----------------------------------------------------------------------

    async def GetHome(self, request: pb.GetHomeRequest, context: Context) -> pb.GetHomeResponse:
        who = self._who(context)
        player_id = request.player_id or who.player_id
        fields.ident(player_id, "player_id")
        if player_id != who.player_id and not who.roles & {"operator", "auditor"}:
            raise ServiceError(grpc.StatusCode.PERMISSION_DENIED, "not_yours", "this is another player's home")
        async with self.pool.acquire() as conn:
            p = await accounts.player(conn, player_id)
        if p is None:
            raise not_found("unknown_player", f"the lobby has no player {player_id[:64]!r}")
        out = pb.GetHomeResponse(player=_player_message(p))

        async def money() -> None:
            found, out.membership_days = await self.peers.balances(player_id)
            out.coins, out.hearts = found.get("coins", 0), found.get("hearts", 0)
            # the points boards of the games the player has points in (played at a points table)
            played = [g for g in registry.KEYS if f"points:{g}" in found]
            rows = await asyncio.gather(*(self.peers.points_rank(player_id, g) for g in played))
            out.ranks.extend(pb.GameRank(game=g, points=r.score, rank=r.rank, hands=r.hands)
                             for g, r in zip(played, rows, strict=True) if r is not None)

        async def ladder() -> None:
            standings = await asyncio.gather(*(self.peers.standing(player_id, g) for g in registry.KEYS))
            out.levels.extend(pb.GameLevel(game=g, level=s.level, best=s.best, lp=s.lp)
                              for g, s in zip(registry.KEYS, standings, strict=True))
            out.reputation = await self.peers.reputation(player_id)

        async def part(name: str, read: Callable[[], Awaitable[None]]) -> None:
            try:
                await read()
            except ServiceError:
                out.unavailable.append(name)

        await asyncio.gather(part("ledger", money), part("ladder", ladder))
        out.seated.extend(await self._summaries(await listing.seated(self.pool, player_id)))
        out.unavailable.sort()
        return out


    # -- profiles -------------------------------------------------------------------------------

    async def GetProfiles(self, request: pb.GetProfilesRequest, context: Context) -> pb.GetProfilesResponse:
        """Names and avatars of 1..200 players, for any signed-in caller: names are public (they
        are shown at every table and in every list)."""
        self._who(context)
        ids = names.check_ids(request.player_ids)
        known = await self.profiles.names(ids, fresh=True)
        return pb.GetProfilesResponse(
            profiles=[pb.Profile(player_id=p, name=known[p], avatar=names.avatar_of(p)) for p in ids if p in known],
            unknown=[p for p in ids if p not in known])


def _relay(service: str, e: grpc.aio.AioRpcError) -> ServiceError:
    """A peer's refusal passed on with its status and reason (UNAVAILABLE when it did not answer)."""
    if e.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
        return ServiceError(grpc.StatusCode.UNAVAILABLE, f"{service}_unavailable",
                            f"the {service} cannot answer now ({e.code().name}); try again")
    reason = dict(e.trailing_metadata() or ()).get("chieu-reason", "")
    text = e.details() or ""
    if isinstance(reason, bytes):
        reason = reason.decode()
    if text.startswith(f"{reason}: "):
        text = text[len(reason) + 2:]
    return ServiceError(e.code(), reason or f"{service}_refused", text)


def _int_token(token: str) -> int | None:
    if not token:
        return None
    try:
        value = int(token)
    except ValueError:
        raise invalid("bad_page_token", "page_token is not from a previous response") from None
    if value <= 0:
        raise invalid("bad_page_token", "page_token is not from a previous response")
    return value


def _table_token(token: str) -> tuple[int, str] | None:
    if not token:
        return None
    taken, _, table_id = token.partition(".")
    try:
        n = int(taken)
    except ValueError:
        n = -1
    if n < 1 or not table_id or len(table_id) > 64:
        raise invalid("bad_page_token", "page_token is not from a previous response")
    return n, table_id

