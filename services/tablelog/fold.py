"""A table's state, folded from its log: :class:`Table` and its :meth:`Table.apply`.

The fold is the only code that changes a table. The deciders of the table's commands
(``chieu.table.decide``) read a table and return events; the views (``chieu.table.views``)
read it and encode what each viewer may see; snapshots (``chieu.table.snapshot``) save it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from google.protobuf import json_format, struct_pb2

from chieu.games import registry
from chieu.games.common import logged_options
from chieu.games.core import Game, Outcome, RuleViolation, Seat, Setup
from chieu.table.v1 import log_pb2
from chieu.tablelog import codec

DEFAULT_GRACE_S = 30
LADDER_EVENTS = frozenset({"hand_ended", "forced_quit", "disconnected"})
"""The table events the ladder counts at a ladder table."""
REMEMBERED_COMMANDS = 500
"""How many recent command ids a table remembers for idempotency (beyond JetStream's 120 s duplicate
window: at the busiest table of a 15-minute soak, 2.3 commands a second, 500 are 3.6 minutes). About
120 KiB per table at the cap (1000 in an OrderedDict were about 300 KiB; a soak's table process grew
with them, issue 28)."""


def _whole(value: Any) -> Any:
    """JSON numbers travel as doubles in a ``Struct``: whole ones come back as ``int``."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, list):
        return [_whole(v) for v in value]
    if isinstance(value, dict):
        return {k: _whole(v) for k, v in value.items()}
    return value


def options_dict(options: struct_pb2.Struct) -> dict[str, Any]:
    """Game options as the rules core reads them: ``15``, not ``15.0``, for a whole number.
    ``ValueError`` for a value that is no JSON (NaN, ±Infinity): the edge refuses it."""
    out: dict[str, Any] = _whole(json_format.MessageToDict(options))
    return out


def options_struct(values: dict[str, Any]) -> struct_pb2.Struct:
    s = struct_pb2.Struct()
    s.update(values)
    return s


def remap(outcome: Outcome | None, before: list[str], now: list[str]) -> Outcome | None:
    """The previous hand's outcome with its seats renumbered for the new hand's players
    (a seat whose player is gone becomes ``None``), for dealer rotation and carry-overs."""
    if outcome is None:
        return None

    def seat(s: int | None) -> int | None:
        if s is None or not 0 <= s < len(before) or before[s] not in now:
            return None
        return now.index(before[s])

    same = before == now
    return replace(outcome, winner=seat(outcome.winner), first=seat(outcome.first),
                   carry=outcome.carry if same else ())


def pot_coins_of(s: log_pb2.Settlement) -> int:
    """What one settlement moves into the gà pot, in 金币 (negative: out of it): the capped pot's
    net when capped, the pot's legs × the stake otherwise; 0 at a points table."""
    if s.currency != log_pb2.CURRENCY_COINS:
        return 0
    if s.capped:
        return int(s.capped_pot)
    return sum((0 if x.HasField("to_seat") else x.amount) - (0 if x.HasField("from_seat") else x.amount)
               for x in s.transfers) * s.stake


@dataclass
class Table:
    """The state of one table, folded from its log."""

    table_id: str
    game_key: str = ""
    options: Any = None
    option_values: dict[str, Any] = field(default_factory=dict)
    options_msg: struct_pb2.Struct = field(default_factory=struct_pb2.Struct)
    """The options as logged (the views' copy)."""
    options_refused: str = ""
    """Why the game's schema now refuses the logged options (a bound added after the table was
    created), else empty: the table folds and replays them as played, and starts no hand."""
    host: str = ""
    max_seats: int = 0
    seats: list[str | None] = field(default_factory=list)
    seated_since: dict[str, int] = field(default_factory=dict)
    """Player → the version they sat down at (the longest seated hosts next)."""
    client_seeds: dict[str, bytes] = field(default_factory=dict)
    ready: set[str] = field(default_factory=set)
    require_ready: bool = False
    reconnect_grace_s: int = DEFAULT_GRACE_S
    stake: int = 1
    currency: log_pb2.Currency.ValueType = log_pb2.CURRENCY_POINTS
    pot: int = 0
    """The gà pot in stake units, from this table's settlements (the rules' count)."""
    pot_coins: int = 0
    """At a coin table, the gà pot's 金币 as the log says: each settlement's capped pot net when
    capped, its pot legs × the stake otherwise — what the ledger's pot account holds. At most
    ``pot`` × the stake: a capped feed leaves it short of the count, and a payout is capped to it."""
    version: int = 0
    """Records folded so far (the client-visible table version)."""
    last_seq: int = 0
    """The stream sequence of the last folded record (for optimistic appends)."""
    hand_no: int = 0
    playing: bool = False
    hand_players: list[str] = field(default_factory=list)
    owner_seat: int = -1
    game_state: Any = None
    server_seed: bytes = b""
    """The server seed of the hand in play (opened by the table processes; empty elsewhere)."""
    commitment: str = ""
    next_seed: log_pb2.NextSeed | None = None
    """The next hand's server seed, committed and sealed (``TableCreated``, ``HandStarted``)."""
    settled_legs: int = 0
    """Transfers of the current hand already put in a Settlement."""
    reserved: list[int] = field(default_factory=list)
    """The 金币 the ledger reserved per seat for the hand in play (``HandStarted.reserved``; empty
    at points tables and for hands logged before reservations)."""
    hand_lost: list[int] = field(default_factory=list)
    """Per seat, the net 金币 lost in the hand in play so far (negative: won), with ``reserved``."""
    auto: set[str] = field(default_factory=set)
    """Players of the hand whose seat is auto-played (disconnected, or quit)."""
    lost: dict[str, int] = field(default_factory=dict)
    """Players of the hand whose connection is lost → the end of their reconnect grace; between
    hands, seated players with no open stream → when they are stood up (the idle stand)."""
    away: set[str] = field(default_factory=set)
    """Seated players absent when a hand started or ended (lost, or auto-played), or seated while
    a hand they are not in was played, and not given an idle stand since: a process where they
    have no stream gives them one after the hand."""
    unseen: set[str] = field(default_factory=set)
    """Players whose idle stand started as they sat (no stream yet) and who have not watched since:
    absent for the stand, not announced as gone (the quick seat still seats beside them)."""
    last_outcome: Outcome | None = None
    last_hand_players: list[str] = field(default_factory=list)
    last_server_seed: bytes = b""
    commands: dict[str, tuple[int, bytes]] = field(default_factory=dict)
    """Recent ``actor/command_id`` keys, the version they produced and their request's digest."""
    ladder_level: int = 0
    """The table's ladder level (过关斩将), fixed at creation; 0: not a ladder table."""
    ladder_seq: int = 0
    """The stream sequence of the last record the ladder counts (a hand's end, a quit or a
    disconnect at this ladder table): its seat checks must include it."""
    min_reputation: int = 0
    """The least reputation (信誉度) a player needs to sit, fixed at creation; 0: no minimum."""
    profiles: dict[str, tuple[str, str]] = field(default_factory=dict)
    """Player → (name, avatar) as they sat down (``PlayerSeated``), for the seated players and
    the players of the current and last hand (the others are forgotten when a hand starts)."""
    commitments: dict[str, str] = field(default_factory=dict)
    """The commit–reveal round (``chieu-fair-v2``): seated player → their commitment to a client
    seed for hand ``hand_no + 1`` (``ClientCommitted``)."""
    round_players: list[str] = field(default_factory=list)
    """The seats asked to reveal for hand ``hand_no + 1`` (``RevealsAsked``); empty: no round open."""
    round_deadline_ms: int = 0
    round_reserved: list[int] = field(default_factory=list)
    revealed: dict[str, bytes] = field(default_factory=dict)
    """The seeds revealed in the open round (``ClientRevealed``): nobody's view shows them."""

    @property
    def game(self) -> Game[Any, Any, Any, Any]:
        return registry.get(self.game_key)

    @property
    def exists(self) -> bool:
        return self.version > 0

    def seat_of(self, player: str) -> Seat | None:
        """The player's seat in the current hand (turn order), if playing in it."""
        if self.playing and player in self.hand_players:
            return self.hand_players.index(player)
        return None

    def table_seat_of(self, player: str) -> int | None:
        return self.seats.index(player) if player in self.seats else None

    # ------------------------------------------------------------ folding

    def apply(self, record: log_pb2.Record, seq: int, game_events: Sequence[Any] | None = None) -> None:
        """Fold one record (never fails on a logged record of a known game). ``game_events``:
        the record's game events already decoded, in order (the auditor's, who derived the same
        bytes again), instead of decoding them from the record."""
        version = int(record.version)
        decoded = iter(game_events) if game_events is not None else None
        for ev in record.events:
            kind = ev.WhichOneof("kind")
            if kind == "game_event":
                event = next(decoded) if decoded is not None else codec.unpack(ev.game_event, self.game_key)
                self.game_state = self.game.evolve(self.game_state, event)
            elif kind is not None:
                getattr(self, f"_on_{kind}")(getattr(ev, kind), version)
                if self.ladder_level and kind in LADDER_EVENTS:
                    self.ladder_seq = seq
        self.version = version
        self.last_seq = seq
        if record.command_id:
            self.commands[f"{record.actor}/{record.command_id}"] = (self.version, record.command_digest)
            while len(self.commands) > REMEMBERED_COMMANDS:  # the oldest first (a dict keeps insertion order)
                del self.commands[next(iter(self.commands))]

    def due(self) -> list[tuple[int, str, Any]]:
        """What the clock must do and when: ``(at_ms, "timeout", seat)`` for the game's
        deadlines (at once for an auto-played seat), ``(at_ms, "disconnect", player)`` and, while
        a commit–reveal round is open, ``(at_ms, "reveals", hand_no)`` for its deadline."""
        if not self.playing:
            waiting: list[tuple[int, str, Any]] = [(at, "disconnect", p) for p, at in self.lost.items()]
            if self.round_players:
                waiting.append((self.round_deadline_ms, "reveals", self.hand_no + 1))
            return waiting
        out: list[tuple[int, str, Any]] = []
        for d in self.game.deadlines(self.game_state):
            auto = 0 <= d.seat < len(self.hand_players) and self.hand_players[d.seat] in self.auto
            out.append((0 if auto else d.at_ms, "timeout", d.seat))
        out.extend((at, "disconnect", p) for p, at in self.lost.items())
        return out

    def set_options(self, options: struct_pb2.Struct) -> None:
        """Take the game's options as logged: the views' copy, the plain values, the parsed options."""
        self.options_msg = struct_pb2.Struct()
        self.options_msg.CopyFrom(options)
        self.option_values = options_dict(options)
        try:
            self.options = self.game.parse_options(self.option_values)
            self.options_refused = ""
        except RuleViolation as refused:  # logged under an older schema: read as played
            with logged_options():
                self.options = self.game.parse_options(self.option_values)
            self.options_refused = refused.message

    def _on_table_created(self, c: log_pb2.TableCreated, version: int) -> None:
        self.game_key = c.game
        self.set_options(c.options)
        self.host = c.host
        self.max_seats = int(c.seats)
        self.seats = [None] * self.max_seats
        self.stake = int(c.stake) or 1
        self.currency = c.currency or log_pb2.CURRENCY_POINTS
        self.require_ready = c.require_ready
        self.reconnect_grace_s = int(c.reconnect_grace_s) or DEFAULT_GRACE_S
        self.ladder_level = int(c.ladder_level)
        self.min_reputation = int(c.min_reputation)
        self.next_seed = c.next_seed if c.HasField("next_seed") else None

    def _on_player_seated(self, e: log_pb2.PlayerSeated, version: int) -> None:
        self.seats[e.seat] = e.player_id
        self.seated_since[e.player_id] = version
        self.profiles[e.player_id] = (e.name, e.avatar)
        if self.playing:  # not in the hand: not timed during it; after it, the idle stand if no stream
            self.away.add(e.player_id)
        if e.client_seed:
            self.client_seeds[e.player_id] = e.client_seed

    def _on_player_ready(self, e: log_pb2.PlayerReady, version: int) -> None:
        if e.ready:
            self.ready.add(e.player_id)
        else:
            self.ready.discard(e.player_id)
        if e.client_seed:
            self.client_seeds[e.player_id] = e.client_seed

    def _on_player_left(self, e: log_pb2.PlayerLeft, version: int) -> None:
        if 0 <= e.seat < len(self.seats) and self.seats[e.seat] == e.player_id:
            self.seats[e.seat] = None
        self.seated_since.pop(e.player_id, None)
        self.away.discard(e.player_id)
        self.unseen.discard(e.player_id)
        if not self.playing:
            self.lost.pop(e.player_id, None)
        self.ready.discard(e.player_id)
        self.client_seeds.pop(e.player_id, None)
        self.commitments.pop(e.player_id, None)

    def _on_host_changed(self, e: log_pb2.HostChanged, version: int) -> None:
        self.host = e.host

    def _on_settings_changed(self, e: log_pb2.SettingsChanged, version: int) -> None:
        self.set_options(e.options)
        self.stake = int(e.stake) or 1
        self.require_ready = e.require_ready
        self.reconnect_grace_s = int(e.reconnect_grace_s) or DEFAULT_GRACE_S

    def _on_hand_started(self, h: log_pb2.HandStarted, version: int) -> None:
        self.hand_no = int(h.hand_no)
        self.playing = True
        self.hand_players = list(h.players)
        keep = {*self.hand_players, *self.last_hand_players, *(p for p in self.seats if p)}
        self.profiles = {p: v for p, v in self.profiles.items() if p in keep}
        self.owner_seat = int(h.owner_seat)
        self.server_seed = h.server_seed
        self.commitment = h.seed_commitment
        self.next_seed = h.next_seed if h.HasField("next_seed") else None
        self.game_state = self.game.initial(self.options, len(self.hand_players))
        self.settled_legs = 0
        self.reserved = list(h.reserved)
        self.hand_lost = [0] * len(h.players) if h.reserved else []
        self.auto = set()
        self.away = (self.away | set(self.lost)) & set(self.hand_players)
        self.lost = {}
        self.unseen = set()
        self.ready = set()
        self.client_seeds = {}
        self.commitments = {}
        self._end_round()

    def _end_round(self) -> None:
        self.round_players = []
        self.round_deadline_ms = 0
        self.round_reserved = []
        self.revealed = {}

    def _on_client_committed(self, e: log_pb2.ClientCommitted, version: int) -> None:
        if int(e.hand_no) == self.hand_no + 1:
            self.commitments[e.player_id] = e.commitment

    def _on_reveals_asked(self, e: log_pb2.RevealsAsked, version: int) -> None:
        self.round_players = list(e.players)
        self.round_deadline_ms = int(e.deadline_ms)
        self.round_reserved = list(e.reserved)
        self.revealed = {}

    def _on_client_revealed(self, e: log_pb2.ClientRevealed, version: int) -> None:
        self.revealed[e.player_id] = e.seed

    def _on_round_cancelled(self, e: log_pb2.RoundCancelled, version: int) -> None:
        self.commitments = {}
        self._end_round()
        if e.HasField("next_seed"):
            self.next_seed = e.next_seed

    def _on_settlement(self, s: log_pb2.Settlement, version: int) -> None:
        self.settled_legs += len(s.transfers)
        if self.hand_lost:  # what each seat lost in 金币: the capped nets when capped, else the legs
            if s.capped:
                self.hand_lost = [lo - n for lo, n in zip(self.hand_lost, s.capped, strict=True)]
            else:
                for t in s.transfers:
                    if t.HasField("from_seat"):
                        self.hand_lost[t.from_seat] += t.amount * s.stake
                    if t.HasField("to_seat"):
                        self.hand_lost[t.to_seat] -= t.amount * s.stake
        for t in s.transfers:
            if not t.HasField("from_seat"):
                self.pot -= t.amount
            if not t.HasField("to_seat"):
                self.pot += t.amount
        self.pot_coins += pot_coins_of(s)

    def _on_hand_ended(self, e: log_pb2.HandEnded, version: int) -> None:
        self.playing = False
        self.last_outcome = codec.outcome_from_message(e.outcome)
        self.last_hand_players = list(e.players)
        self.last_server_seed = e.server_seed
        self.server_seed = b""
        self.away = (self.away | self.auto | set(self.lost)) & {p for p in self.seats if p}
        self.auto = set()
        self.lost = {}

    def _on_sealed(self, e: log_pb2.Sealed, version: int) -> None:
        """A game event of a hand in play, sealed (a reader without the hand's seed): not folded."""

    def _on_connection_lost(self, e: log_pb2.ConnectionLost, version: int) -> None:
        self.lost[e.player_id] = int(e.deadline_ms)
        if not self.playing:
            self.away.discard(e.player_id)
        if self.seated_since.get(e.player_id) == version:  # in the seat's own record: never watched yet
            self.unseen.add(e.player_id)
        else:
            self.unseen.discard(e.player_id)

    def _on_reconnected(self, e: log_pb2.Reconnected, version: int) -> None:
        self.unseen.discard(e.player_id)
        self.lost.pop(e.player_id, None)
        self.away.discard(e.player_id)

    def _on_disconnected(self, e: log_pb2.Disconnected, version: int) -> None:
        self.lost.pop(e.player_id, None)
        self.auto.add(e.player_id)

    def _on_forced_quit(self, e: log_pb2.ForcedQuit, version: int) -> None:
        self.lost.pop(e.player_id, None)
        if self.playing:  # (a withheld reveal quits a hand not dealt yet: no seat to auto-play)
            self.auto.add(e.player_id)


def hand_setup(t: Table, players: list[str], material: bytes, now_ms: int, hand_no: int, owner_seat: int) -> Setup:
    """The rules core's set-up of a hand at this table: how the table deals it, and how the auditor
    checks that deal."""
    return Setup(options=t.options, players=len(players), seed=material, now_ms=now_ms,
                 hand_no=hand_no, previous=remap(t.last_outcome, t.last_hand_players, players),
                 owner=max(owner_seat, 0))
