"""The chaos run's clients: players that sign in through the lobby and play every game over gRPC,
spectators, and probes that measure how soon a table accepts commands again after a fault.

A **player** signs in as a guest (``SignInGuest``, refreshing its session before it expires) from
its own device and its own client address (:func:`address`: homes and a few cafés, given to the
lobby as a gateway gives it, in ``X-Forwarded-For``), quick-seats in its room (``QuickSeat``: the
chaos rooms of its game, points, 金币 or 过关斩将, with short clocks), watches its table (``Watch``,
resumed from its version after a drop), and plays: the host starts hands, every seat picks a
random command of the rules core's ``legal()`` on the true state (the
:class:`~chieu_tools.chaos.oracle.Oracle`). Now and then a seat lets its clock run out, closes its
stream and comes back (within the reconnect grace or not), quits mid-hand (强退) and quick-seats
again, or leaves between hands. A **coin player** sits at two or three coin tables at once (one
in each of two or three coin rooms of its game, so that opponents mix), one session for all its
seats: the ledger reserves each hand's largest loss from one balance for several tables at a
time, and a start whose reservation the balance cannot cover is refused (``not_enough_coins``,
naming the short players: they stand up, as a player who cannot cover a table leaves it). A
**spectator** watches a table of the lobby's list for a while, then another. A **probe** toggles
its readiness at its own table every few hundred milliseconds.

Every table command is sent with one command id for all its retries and journaled with its
outcome; every view received is journaled as its bytes came (:mod:`chieu_tools.chaos.records`).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import random
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import grpc
from google.protobuf import struct_pb2
from google.protobuf.message import Message

from chieu.games import registry
from chieu.kit import tasks
from chieu.lobby.v1 import lobby_service_pb2 as lobby_pb
from chieu.lobby.v1 import lobby_service_pb2_grpc as lobby_grpc
from chieu.table.client import SeedRound
from chieu.table.v1 import log_pb2
from chieu.table.v1 import table_service_pb2 as pb
from chieu.tablelog import codec
from chieu_tools.chaos import client as calls
from chieu_tools.chaos.oracle import Oracle
from chieu_tools.chaos.records import Command, Journal

ROOM_OPTIONS: dict[str, dict[str, Any]] = {d.key: dict(d.short_clock) for d in registry.descriptors()}
"""Short clocks, so that seats that do not act are timed out within seconds."""
TURN_S = 3.0
GRACE_S = 8
"""The reconnect grace the hosts set (a disconnect longer than this is 断线不重连)."""
CHANNEL_OPTIONS = [("grpc.lb_policy_name", "round_robin"), ("grpc.initial_reconnect_backoff_ms", 200),
                   ("grpc.min_reconnect_backoff_ms", 200), ("grpc.max_reconnect_backoff_ms", 2000)]
"""A client's channel to a service's two processes: calls spread over both, a lost process is
retried every two seconds at most."""
PER_TRY_S = 1.5
GIVE_UP_S = 20.0
ARRIVALS_S = 4.0
"""Players sign in over the run's first seconds, as people arrive, not all within 100 ms."""
WELCOME_TRIES = 4
"""Sign-ins again of a coin player whose welcome was not paid at its first."""
SIGN_IN_TRY_S = 20.0
"""A sign-in's deadline (a loaded cluster's first sign-ins took more than 3 s)."""


@dataclass(frozen=True, slots=True)
class Group:
    """Players of one game in one kind of room."""

    game: str
    kind: str
    """``points``, ``coins`` or ``ladder``."""
    players: int
    tables: int = 1
    """Coin rooms of the group (``chaos.<game>.coins``, ``….coins.2``, …): each player sits in two or
    three of them at once (:func:`rooms_of`); 1: one table at a time."""
    stake: int = 1
    """The stake of the group's rooms."""


def room_id(game: str, kind: str, room_no: int = 0) -> str:
    return f"chaos.{game}.{kind}" + (f".{room_no + 1}" if room_no else "")


def rooms_of(group: Group, index: int) -> list[int]:
    """The rooms (0-based numbers) the group's ``index``-th player sits in at once: two or three in
    turn (players 0, 1, 2, 3 of three rooms: {0, 1}, {1, 2, 0}, {2, 0}, {0, 1, 2}), so every
    room has players of several others and each player meets every other somewhere."""
    if group.tables <= 1:
        return [0]
    k = min(group.tables, 2 + index % 2)
    return [(index + j) % group.tables for j in range(k)]


def room_players(group: Group, room_no: int) -> int:
    """How many of the group's players sit in its room ``room_no``."""
    return sum(1 for i in range(group.players) if room_no in rooms_of(group, i))


def coin_stake(max_loss: int, welcome: int, most: int = 10) -> int:
    """The stake of a coin room where two hands' reservations fit in a welcome bonus and a third
    does not (each reserves about two fifths of it), at least 1 and at most ``most`` (a game whose
    worst hand is a few units is not played for a fifth of a purse a hand)."""
    return max(1, min(most, welcome * 2 // (5 * max(1, max_loss))))


def rooms(groups: list[Group]) -> list[lobby_pb.Room]:
    """The rooms the groups play in (put by the run's operator before the bots start): a coin
    group's rooms and its game's points room (where its players go when their 金币 run out)."""
    out: dict[str, lobby_pb.Room] = {}

    def put(g: Group, kind: str, room_no: int, stake: int) -> None:
        rid = room_id(g.game, kind, room_no)
        if rid in out:
            return
        opts = struct_pb2.Struct()
        opts.update(ROOM_OPTIONS[g.game])
        out[rid] = lobby_pb.Room(
            room_id=rid, game=g.game, name=f"chaos {kind}" + (f" {room_no + 1}" if room_no else ""), stake=stake,
            options=opts, sort=-1, currency=log_pb2.CURRENCY_COINS if kind == "coins" else log_pb2.CURRENCY_POINTS,
            ladder_min_level=1 if kind == "ladder" else 0, ladder_max_level=5 if kind == "ladder" else 0)

    for g in groups:
        for n in range(g.tables):
            put(g, g.kind, n, g.stake)
        if g.kind == "coins":
            put(g, "points", 0, 1)
    return list(out.values())


def address(seed: int, name: str) -> str:
    """A client address for the player ``name``: most players at home (an address each, a few
    neighbours behind one carrier-grade NAT), a quarter of them in one of three internet cafés."""
    r = random.Random(f"{seed}/address/{name}")
    if r.random() < 0.25:
        return f"198.51.100.{r.randrange(1, 4)}"
    return f"203.0.113.{r.randrange(1, 255)}"


@dataclass
class Behaviour:
    """How often a player misbehaves (per decision, per hand)."""

    timeout: float = 0.02
    disconnect: float = 0.01
    quit: float = 0.003
    leave: float = 0.1
    think_s: tuple[float, float] = (0.15, 0.8)


@dataclass
class Shared:
    """What every client of the run shares."""

    table_target: str
    lobby_target: str
    journal: Journal
    oracle: Oracle
    stop: asyncio.Event = field(default_factory=asyncio.Event)
    """Set when the run is over: clients finish what they send and stop."""
    streams: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    t0: float = field(default_factory=time.monotonic)
    """When the clients were made (monotonic seconds)."""
    short: set[tuple[str, str]] = field(default_factory=set)
    """(table, player) named by a start refused ``not_enough_coins`` and not yet stood up."""
    counts: dict[str, int] = field(default_factory=dict)
    """What the bots did that the logs do not say (``stood_up_short``)."""

    def stopping(self) -> bool:
        return self.stop.is_set()


def now_ms() -> int:
    return int(time.time() * 1000)


class _Raw:
    """Stubs that return the answers' bytes as they came (every table answer but TakeSeat's holds
    the ``TableView`` as field 1, so its bytes read as a ``WatchResponse``)."""

    def __init__(self, channel: grpc.aio.Channel) -> None:
        self.channel = channel

    def unary(self, method: str) -> Any:
        return self.channel.unary_unary(f"/chieu.table.v1.TableService/{method}",
                                        request_serializer=_serialize, response_deserializer=None)

    def stream(self, method: str) -> Any:
        return self.channel.unary_stream(f"/chieu.table.v1.TableService/{method}",
                                         request_serializer=_serialize, response_deserializer=None)


def _serialize(m: Message) -> bytes:
    return m.SerializeToString()


@dataclass
class Session:
    """A player's session, shared by the seats of a player at several tables (a refresh token is
    used once: one refresh at a time)."""

    player_id: str = ""
    token: str = ""
    expires_ms: int = 0
    refresh_token: str = ""
    welcome: int = 0
    """The welcome 金币 the lobby said it paid (at a sign-in or a refresh)."""
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)


class Client:
    """A session with its own channels to the table and the lobby, journaling what it does."""

    def __init__(self, shared: Shared, name: str, rng: random.Random, session: Session | None = None,
                 address: str = "") -> None:
        self.shared = shared
        self.name = name
        self.rng = rng
        self.session = session if session is not None else Session()
        self.address = address
        """The client address the lobby is told (``X-Forwarded-For``, as the gateway tells it); "": none."""
        self.table_channel = grpc.aio.insecure_channel(shared.table_target, options=CHANNEL_OPTIONS)
        self.lobby_channel = grpc.aio.insecure_channel(shared.lobby_target, options=CHANNEL_OPTIONS)
        self.raw = _Raw(self.table_channel)
        self.lobby = lobby_grpc.LobbyServiceStub(self.lobby_channel)
        self.latest: pb.TableView | None = None
        self.wake = asyncio.Event()
        self._watch: asyncio.Task[None] | None = None

    async def close(self) -> None:
        await self.stop_watch()
        for ch in (self.table_channel, self.lobby_channel):
            with contextlib.suppress(Exception):
                await ch.close()

    @property
    def player_id(self) -> str:
        return self.session.player_id

    @player_id.setter
    def player_id(self, value: str) -> None:
        self.session.player_id = value

    @property
    def token(self) -> str:
        return self.session.token

    @token.setter
    def token(self, value: str) -> None:
        self.session.token = value

    def forwarded(self) -> tuple[tuple[str, str], ...]:
        return (("x-forwarded-for", self.address),) if self.address else ()

    def meta(self) -> tuple[tuple[str, str], ...]:
        return (("authorization", f"Bearer {self.token}"), *self.forwarded())

    # ------------------------------------------------------------ sessions

    async def sign_in(self, device: str) -> bool:
        async def attempt(t: float) -> lobby_pb.SignInGuestResponse:
            r: lobby_pb.SignInGuestResponse = await self.lobby.SignInGuest(
                lobby_pb.SignInGuestRequest(device_id=device, name=self.name[:20]), timeout=t,
                metadata=self.forwarded())
            return r

        # a sign-in waits as long as a person would: a sign-in retried after its deadline, when the
        # lobby had counted the device's welcome allowance and not yet paid it, was refused the
        # welcome (``limited``: see run.SERVICE_ENV)
        result = await calls.call(attempt, per_try_s=SIGN_IN_TRY_S, give_up_s=60.0, stop=self.shared.stopping)
        if result.outcome != calls.ACKED:
            return False
        self._session(result.response.session)
        return True

    def _session(self, s: lobby_pb.Session) -> None:
        self.session.player_id, self.session.token = s.player.player_id, s.access_token
        self.session.expires_ms, self.session.refresh_token = int(s.access_expires_ms), s.refresh_token
        self.session.welcome += int(s.welcome_coins)

    async def fresh(self, device: str) -> None:
        """Refresh the session when its access token has less than two minutes left (a refresh
        token refused — reused after an unknown answer, which ends the session — signs in again).
        The seats of one player refresh their shared session once."""
        if now_ms() < self.session.expires_ms - 120_000:
            return
        async with self.session.lock:
            if now_ms() < self.session.expires_ms - 120_000:
                return  # another seat refreshed it

            async def attempt(t: float) -> lobby_pb.RefreshResponse:
                r: lobby_pb.RefreshResponse = await self.lobby.Refresh(
                    lobby_pb.RefreshRequest(refresh_token=self.session.refresh_token), timeout=t,
                    metadata=self.forwarded())
                return r

            result = await calls.call(attempt, per_try_s=3.0, give_up_s=30.0, stop=self.shared.stopping)
            if result.outcome == calls.ACKED:
                self._session(result.response.session)
            elif result.outcome == calls.REFUSED:
                await self.sign_in(device)

    # ------------------------------------------------------------ table commands

    async def command(self, method: str, request: Any, *, probe: bool = False,
                      per_try_s: float = PER_TRY_S) -> calls.Result:
        """Send one table command (its ``command_id`` kept for every retry); journal it and the view it
        was answered with."""
        stub = self.raw.unary(method)
        meta = self.meta()
        result = await calls.call(lambda t: stub(request, timeout=t, metadata=meta), per_try_s=per_try_s,
                                  give_up_s=GIVE_UP_S, stop=self.shared.stopping)
        version = 0
        if result.outcome == calls.ACKED:
            raw: bytes = result.response
            self.shared.journal.view(self.player_id, request.table_id, method.lower(), 0, now_ms(), raw)
            view = pb.WatchResponse.FromString(raw).table
            version = int(view.version)
            self.see(view)
        wall = time.time() - time.monotonic()
        self.shared.journal.command(Command(
            table_id=request.table_id, player=self.player_id, command_id=request.command_id, method=method,
            outcome=result.outcome, code=result.code, reason=result.reason,
            sent_ms=int((result.sent + wall) * 1000), settled_ms=int((result.settled + wall) * 1000),
            attempts=result.attempts, version=version, probe=probe))
        return result

    def see(self, view: pb.TableView) -> None:
        latest = self.latest
        if latest is None or latest.table_id != view.table_id or view.version >= latest.version:
            self.latest = view
            self.wake.set()

    # ------------------------------------------------------------ watching

    def start_watch(self, table_id: str) -> None:
        if self._watch is None:
            self._watch = asyncio.create_task(self._watching(table_id))

    async def stop_watch(self) -> None:
        task, self._watch = self._watch, None
        await tasks.cancel(task)

    async def _watching(self, table_id: str) -> None:
        stub = self.raw.stream("Watch")
        while not self.shared.stopping():
            stream = next(self.shared.streams)
            latest = self.latest
            after = int(latest.version) if latest is not None and latest.table_id == table_id else 0
            try:
                async for raw in stub(pb.WatchRequest(table_id=table_id, from_version=after), metadata=self.meta()):
                    self.shared.journal.view(self.player_id, table_id, "watch", stream, now_ms(), raw)
                    self.see(pb.WatchResponse.FromString(raw).table)
            except grpc.aio.AioRpcError as e:
                if e.code() == grpc.StatusCode.NOT_FOUND:
                    return
            await asyncio.sleep(0.2 + self.rng.random() * 0.3)


class Player(Client):
    """A player of one group: signs in, quick-seats, plays, misbehaves now and then. A coin
    player's first seat (``room_no`` its first room) signs in and starts its other seats, each in
    another room of the group, sharing its session."""

    def __init__(self, shared: Shared, group: Group, index: int, seed: int, behaviour: Behaviour,
                 parent: Player | None = None, room_no: int | None = None) -> None:
        name = f"{group.game[:6]}{group.kind[:2]}{index}"
        rooms_ = rooms_of(group, index)
        room_no = rooms_[0] if room_no is None else room_no
        super().__init__(shared, name, random.Random(f"{seed}/{group}/{index}/{room_no}"),
                         session=parent.session if parent is not None else None, address=address(seed, name))
        self.group = group
        self.index = index
        self.seed = seed
        self.parent = parent
        self.room_no = room_no
        self.first = room_no == rooms_[0]
        """The seat that signed in (and that goes to the points room when its 金币 run out)."""
        self.device = f"chaos-{seed}-{group.game}-{group.kind}-{index}"
        self.behaviour = behaviour
        self.game = registry.get(group.game)
        self.moves = 0
        self.hands_seen: set[tuple[str, int]] = parent.hands_seen if parent is not None else set()
        """(table, hand) this player saw end, at any of its tables (the soak counts hands by them)."""
        self.alone_s = self.rng.uniform(12, 30)
        """How long this player waits alone at a table before it tries another (two players who
        opened a table each at once do not both give up at the same moment)."""
        self.round = SeedRound()
        """The commit–reveal round of client seeds: a fresh seed per hand, revealed when asked."""

    async def run(self) -> None:
        seats: list[asyncio.Task[None]] = []
        try:
            arrive = self.rng.uniform(0, ARRIVALS_S)
            if self.parent is None:
                await asyncio.sleep(arrive)  # people do not all sign in within the same 100 ms
                if not await self.sign_in(self.device):
                    return
                for _ in range(WELCOME_TRIES):
                    if self.group.kind != "coins" or self.session.welcome or self.shared.stopping():
                        break
                    # the lobby could not have the ledger pay it (a loaded cluster's first seconds):
                    # a person whose welcome did not come signs in again
                    await asyncio.sleep(self.rng.uniform(2, 4))
                    await self.sign_in(self.device)
                seats = [asyncio.create_task(
                    Player(self.shared, self.group, self.index, self.seed, self.behaviour, self, n).run())
                    for n in rooms_of(self.group, self.index)[1:]]
            # players of a group arrive one after another once all have signed in, as the table list
            # (projected from the log within milliseconds) shows the table the first one opened to
            # the next
            await asyncio.sleep(max(0.0, self.shared.t0 + ARRIVALS_S + self.index * 1.5 + self.rng.random()
                                    - time.monotonic()))
            while not self.shared.stopping():
                table_id = await self.quick_seat()
                if table_id is None:
                    if self.group.kind != "coins" and not self.first:
                        return  # out of 金币: one seat goes on in the points room
                    await asyncio.sleep(1 + self.rng.random())
                    continue
                await self.play(table_id)
                await asyncio.sleep(0.5 + self.rng.random() * 2)
        finally:
            await self.close()
            await asyncio.gather(*seats, return_exceptions=True)

    async def quick_seat(self) -> str | None:
        await self.fresh(self.device)
        kind, room_no = self.group.kind, self.room_no
        if kind == "coins" and self.first and self.rng.random() < 0.1:
            kind, room_no = "points", 0  # a coin player visits the points room now and then

        async def attempt(t: float) -> lobby_pb.QuickSeatResponse:
            r: lobby_pb.QuickSeatResponse = await self.lobby.QuickSeat(
                lobby_pb.QuickSeatRequest(room_id=room_id(self.group.game, kind, room_no),
                                          client_seed=self.rng.randbytes(8)),
                timeout=t, metadata=self.meta())
            return r

        result = await calls.call(attempt, per_try_s=4.0, give_up_s=GIVE_UP_S, stop=self.shared.stopping)
        if result.outcome == calls.REFUSED and result.reason == "not_enough_coins" and kind == "coins":
            self.group = Group(self.group.game, "points", self.group.players)
            self.room_no = 0
            return None
        if result.outcome != calls.ACKED:
            return None
        r = result.response
        if r.HasField("table"):
            self.shared.journal.view(self.player_id, r.table_id, "quickseat", 0, now_ms(),
                                     pb.WatchResponse(table=r.table).SerializeToString())
            self.see(r.table)
        return str(r.table_id)

    async def play(self, table_id: str) -> None:
        """Play at ``table_id`` until this player leaves it (or the run ends)."""
        self.latest = None
        self.start_watch(table_id)
        waited_since = time.monotonic()
        try:
            while not self.shared.stopping():
                self.wake.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.wake.wait(), 0.5)
                view = self.latest
                if view is None or view.table_id != table_id:
                    continue
                if self.player_id not in [s.player_id for s in view.seats]:
                    return  # stood down (a gate), or our quit went through
                step = self.round.step(view, self.player_id)
                if step is not None:  # commit for the next hand, or reveal when asked (no click)
                    result = await self.command(*step)
                    acked = result.outcome == calls.ACKED
                    self.round.answered(step[1], pb.WatchResponse.FromString(result.response).table.version
                                        if acked else None)
                    continue
                if view.status != pb.TABLE_STATUS_PLAYING:
                    if not await self.between_hands(view, waited_since):
                        return
                    continue
                waited_since = time.monotonic()
                if self.player_id not in view.hand_players or self.player_id in view.auto_played:
                    continue  # not in this hand, or the rules play for this seat until it ends
                if not await self.turn(view):
                    return
        finally:
            await self.stop_watch()

    async def between_hands(self, view: pb.TableView, waited_since: float) -> bool:
        """The table waits: the host starts a hand when enough players sit. False: leave the table."""
        if (view.table_id, self.player_id) in self.shared.short:
            # named by a start the ledger could not reserve: this player's 金币 not already in play
            # at its other tables do not cover a hand here; it leaves, and comes back later
            self.shared.short.discard((view.table_id, self.player_id))
            self.shared.counts["stood_up_short"] = self.shared.counts.get("stood_up_short", 0) + 1
            await self.stand_up(view.table_id)
            await asyncio.sleep(self.rng.uniform(2, 6))
            return False
        if view.hand_no > 0 and (view.table_id, view.hand_no) not in self.hands_seen:
            self.hands_seen.add((view.table_id, view.hand_no))
            if self.rng.random() < self.behaviour.leave:
                await self.stand_up(view.table_id)
                return False
        seated = len(view.seats)
        waited = time.monotonic() - waited_since
        if view.host == self.player_id:
            await self.fresh(self.device)
            if view.reconnect_grace_s != GRACE_S:
                await self.command("ChangeSettings", pb.ChangeSettingsRequest(
                    table_id=view.table_id, reconnect_grace_s=GRACE_S, command_id=uuid.uuid4().hex))
                return True
            full = room_players(self.group, self.room_no) if self.group.kind == "coins" else self.group.players
            enough = seated >= full or (seated >= self.game.min_players and waited > 6)
            if enough and waited > 0.5:
                result = await self.command("StartHand", pb.StartHandRequest(table_id=view.table_id,
                                                                             command_id=uuid.uuid4().hex))
                if result.outcome == calls.REFUSED and result.reason == "not_enough_coins":
                    named = {s.player_id for s in view.seats if s.player_id and s.player_id in result.detail}
                    self.shared.short |= {(view.table_id, p) for p in named}
                    await asyncio.sleep(1.0)
                await asyncio.sleep(0.3)
        if waited > self.alone_s and seated < self.game.min_players:
            await self.stand_up(view.table_id)  # alone too long: try another table
            return False
        return True

    async def turn(self, view: pb.TableView) -> bool:
        """Act if the rules give this seat something to do now. False: this player quit the table."""
        table = await self.shared.oracle.at(view.table_id, int(view.version))
        if table is None or not table.playing or self.player_id not in table.hand_players:
            return True
        seat = table.hand_players.index(self.player_id)
        legal = list(self.game.legal(table.game_state, seat))
        if not legal:
            return True
        b, roll = self.behaviour, self.rng.random()
        if roll < b.quit:
            await self.stand_up(view.table_id)  # 强退 during the hand
            return False
        if roll < b.quit + b.disconnect:
            await self.stop_watch()  # the connection drops; back within the grace or not
            await asyncio.sleep(self.rng.choice((1.0, 3.0, 5.0, GRACE_S + 4.0)))
            self.start_watch(view.table_id)
            return True
        if roll < b.quit + b.disconnect + b.timeout:
            await asyncio.sleep(TURN_S + 1.0)  # the clock runs out: the rules play for this seat
            return True
        await asyncio.sleep(self.rng.uniform(*b.think_s))
        if self.shared.stopping():
            return True
        move = self.rng.choice(legal)
        await self.fresh(self.device)
        request = pb.ActRequest(table_id=view.table_id, command=codec.pack(move, table.game_key),
                                command_id=uuid.uuid4().hex)
        result = await self.command("Act", request)
        if result.outcome == calls.ACKED:
            self.moves += 1
        else:  # out of date, or refused: wait for the table to move on
            await asyncio.sleep(0.3)
        return True

    async def stand_up(self, table_id: str) -> None:
        await self.command("StandUp", pb.StandUpRequest(table_id=table_id, command_id=uuid.uuid4().hex))


class Spectator(Client):
    """Watches a table of the lobby's list for a while, then another."""

    def __init__(self, shared: Shared, index: int, seed: int, games: list[str]) -> None:
        super().__init__(shared, f"watcher{index}", random.Random(f"{seed}/spectator/{index}"),
                         address=address(seed, f"watcher{index}"))
        self.device = f"chaos-{seed}-spectator-{index}"
        self.games = games

    async def run(self) -> None:
        try:
            if not await self.sign_in(self.device):
                return
            while not self.shared.stopping():
                await self.fresh(self.device)
                game = self.rng.choice(self.games)
                try:
                    listed = await self.lobby.ListTables(lobby_pb.ListTablesRequest(game=game, page_size=50),
                                                         timeout=3, metadata=self.meta())
                except grpc.aio.AioRpcError:
                    await asyncio.sleep(1)
                    continue
                if not listed.tables:
                    await asyncio.sleep(2)
                    continue
                table_id = self.rng.choice(list(listed.tables)).table_id
                self.latest = None
                self.start_watch(table_id)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.shared.stop.wait(), self.rng.uniform(10, 30))
                await self.stop_watch()
        finally:
            await self.close()


PROBE_GAME = next(d.key for d in registry.descriptors() if d.min_seats >= 2)
"""The probe's game: any that needs a second player, so that its one player's readiness never
starts a hand."""
PROBE_STAKE = 7
"""The probe's table is played for points at a stake no room offers (the chaos rooms' is 1), so
it is listed in no room and no player is quick-seated at it (where its host would never start)."""


class Probe(Client):
    """Its own table, where it toggles its readiness every ``every_s``: when a fault stops a table
    from accepting commands, the probe's answers stop, and resume when it accepts them again."""

    def __init__(self, shared: Shared, index: int, token: str, every_s: float = 0.25) -> None:
        super().__init__(shared, f"probe{index}", random.Random(index))
        self.player_id = f"chaos-probe-{index}"
        self.token = token
        self.every_s = every_s
        self.table_id = ""

    async def run(self) -> None:
        try:
            create = pb.CreateTableRequest(game=PROBE_GAME, stake=PROBE_STAKE, currency=log_pb2.CURRENCY_POINTS,
                                          command_id=f"probe-{uuid.uuid4().hex}")
            stub = pb_stub(self.table_channel)
            result = await calls.call(lambda t: stub.CreateTable(create, timeout=t, metadata=self.meta()),
                                      per_try_s=3.0, give_up_s=60.0, stop=self.shared.stopping)
            if result.outcome != calls.ACKED:
                return
            self.table_id = result.response.table.table_id
            # its stream is its presence: a seated player who never watches is stood up between hands
            self.start_watch(self.table_id)
            ready = False
            while not self.shared.stopping():
                ready = not ready
                await self.command("SetReady", pb.SetReadyRequest(table_id=self.table_id, ready=ready,
                                                                  command_id=uuid.uuid4().hex),
                                   probe=True, per_try_s=1.0)
                await asyncio.sleep(self.every_s)
        finally:
            await self.close()


def pb_stub(channel: grpc.aio.Channel) -> Any:
    from chieu.table.v1 import table_service_pb2_grpc

    return table_service_pb2_grpc.TableServiceStub(channel)
