"""A table as an event-sourced aggregate: its state folded from log records, and the
deciders of the table's own commands (create, sit, stand up, ready, settings, start a hand,
act, time out, presence).

Deciders return the events of one record and never change the table; ``apply`` folds a
record. The game itself is decided by the rules core through the registry.
"""

from __future__ import annotations

import re
import secrets
from collections import OrderedDict
from dataclasses import dataclass, field, replace
from typing import Any

import grpc
from google.protobuf import json_format, struct_pb2

from chieu.kit.errors import ServiceError, invalid, not_found, precondition
from chieu.table import codec
from chieu.table.rules import fair, registry
from chieu.table.rules.core import Game, Outcome, Seat, Setup, Transfer
from chieu.table.v1 import log_pb2, table_service_pb2

TABLE_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
COMMAND_ID = re.compile(r"^[\x21-\x7e]{1,128}$")
MAX_STAKE = 1_000_000_000
MAX_CLIENT_SEED = 64
DEFAULT_GRACE_S = 30
REMEMBERED_COMMANDS = 1000
"""How many recent command ids a table remembers for idempotency (beyond JetStream's window)."""
_TABLE_FIELD = b"\x0a"
"""The key of field 1 (``table``), length-delimited: the start of a ``WatchResponse`` / ``ActResponse``."""
POT_OPTIONS: dict[str, tuple[str, ...]] = {"phom": ("ga",)}

"""Options that change the gà pot's rules: like the stake, changed only while the pot is 0."""


def check_table_id(table_id: str) -> str:
    if not TABLE_ID.match(table_id or ""):
        raise invalid("bad_table_id", "a table id is 1-64 characters of A-Z a-z 0-9 _ -")
    return table_id


def check_command_id(command_id: str) -> str:
    if command_id and not COMMAND_ID.match(command_id):
        raise invalid("bad_command_id", "a command id is 1-128 printable ASCII characters")
    return command_id


def check_client_seed(seed: bytes) -> bytes:
    if len(seed) > MAX_CLIENT_SEED:
        raise invalid("bad_client_seed", f"a client seed has at most {MAX_CLIENT_SEED} bytes")
    return seed


def game_of(key: str) -> Game[Any, Any]:
    try:
        return registry.get(key)
    except registry.UnknownGame:
        raise not_found("unknown_game", f"no game {key!r}; games: {', '.join(registry.keys())}") from None


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
    """Game options as the rules core reads them: ``15``, not ``15.0``, for a whole number."""
    out: dict[str, Any] = _whole(json_format.MessageToDict(options))
    return out


def options_struct(values: dict[str, Any]) -> struct_pb2.Struct:
    s = struct_pb2.Struct()
    s.update(values)
    return s


def _varint(n: int) -> bytes:
    """``n`` (≥ 0) as a protobuf varint."""
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _ev(**kind: Any) -> log_pb2.TableEvent:
    return log_pb2.TableEvent(**kind)


def _denied(reason: str, message: str) -> ServiceError:
    return ServiceError(grpc.StatusCode.PERMISSION_DENIED, reason, message)


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


@dataclass
class Table:
    """The state of one table, folded from its log."""

    table_id: str
    game_key: str = ""
    options: Any = None
    option_values: dict[str, Any] = field(default_factory=dict)
    options_msg: struct_pb2.Struct = field(default_factory=struct_pb2.Struct)
    """The options as logged (the views' copy)."""
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
    """The gà pot in stake units, from this table's settlements."""
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
    commitment: str = ""
    settled_legs: int = 0
    """Transfers of the current hand already put in a Settlement."""
    auto: set[str] = field(default_factory=set)
    """Players of the hand whose seat is auto-played (disconnected, or quit)."""
    lost: dict[str, int] = field(default_factory=dict)
    """Players of the hand whose connection is lost → the end of their reconnect grace."""
    last_outcome: Outcome | None = None
    last_hand_players: list[str] = field(default_factory=list)
    last_server_seed: bytes = b""
    commands: OrderedDict[str, int] = field(default_factory=OrderedDict)
    """Recent ``actor/command_id`` keys and the version they produced."""
    views: dict[str | None, table_service_pb2.TableView] = field(default_factory=dict, repr=False, compare=False)
    """Views of the current version already built, by viewer (a cache, cleared on every record)."""
    wires: dict[str | None, bytes] = field(default_factory=dict, repr=False, compare=False)
    """Serialized ``WatchResponse`` messages of the current version, by viewer (a cache)."""
    base_view: table_service_pb2.TableView | None = field(default=None, repr=False, compare=False)
    """The part of this version's view every viewer shares (a cache, cleared on every record)."""
    base_bytes: bytes | None = field(default=None, repr=False, compare=False)
    """``base_view`` serialized (a cache, cleared on every record)."""
    packed_views: dict[Any, Any] = field(default_factory=dict, repr=False, compare=False)
    """Game views of the current version already packed (a cache, cleared on every record)."""
    decided: tuple[list[log_pb2.TableEvent], Any] | None = field(default=None, repr=False, compare=False)
    """The game events the decider just built and the game state after them (until applied)."""

    _CACHES = ("views", "base_view", "base_bytes", "packed_views", "decided", "wires")

    def __getstate__(self) -> dict[str, Any]:
        """A snapshot holds the folded state only, never the view caches."""
        return {k: v for k, v in self.__dict__.items() if k not in self._CACHES}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.views, self.packed_views, self.decided, self.wires = {}, {}, None, {}
        self.base_view = self.base_bytes = None

    @property
    def game(self) -> Game[Any, Any]:
        return game_of(self.game_key)

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

    def apply(self, record: log_pb2.Record, seq: int, *, decided: bool = False) -> None:
        """Fold one record (never fails on a logged record of a known game).

        ``decided``: the record was just built by this table's decider, whose game state after
        its game events is kept in ``self.decided``; it is used instead of decoding and folding
        the same events again (the same state: evolve is a pure function of the same events).
        """
        version = int(record.version)
        self.views = {}
        self.packed_views = {}
        self.base_view = self.base_bytes = None
        self.wires = {}
        after = self.decided[1] if decided and self.decided is not None else None
        self.decided = None
        for ev in record.events:
            kind = ev.WhichOneof("kind")
            if kind == "game_event":
                if after is None:
                    self.game_state = self.game.evolve(self.game_state, codec.unpack(ev.game_event, self.game_key))
            elif kind is not None:
                getattr(self, f"_on_{kind}")(getattr(ev, kind), version)
        if after is not None:
            self.game_state = after
        self.version = version
        self.last_seq = seq
        if record.command_id:
            self.commands[f"{record.actor}/{record.command_id}"] = self.version
            while len(self.commands) > REMEMBERED_COMMANDS:
                self.commands.popitem(last=False)

    def _on_table_created(self, c: log_pb2.TableCreated, version: int) -> None:
        self.game_key = c.game
        self.option_values = options_dict(c.options)
        self.options = self.game.parse_options(self.option_values)
        self.options_msg = struct_pb2.Struct()
        self.options_msg.CopyFrom(c.options)
        self.host = c.host
        self.max_seats = int(c.seats)
        self.seats = [None] * self.max_seats
        self.stake = int(c.stake) or 1
        self.currency = c.currency or log_pb2.CURRENCY_POINTS
        self.require_ready = c.require_ready
        self.reconnect_grace_s = int(c.reconnect_grace_s) or DEFAULT_GRACE_S

    def _on_player_seated(self, e: log_pb2.PlayerSeated, version: int) -> None:
        self.seats[e.seat] = e.player_id
        self.seated_since[e.player_id] = version
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
        self.ready.discard(e.player_id)
        self.client_seeds.pop(e.player_id, None)

    def _on_host_changed(self, e: log_pb2.HostChanged, version: int) -> None:
        self.host = e.host

    def _on_settings_changed(self, e: log_pb2.SettingsChanged, version: int) -> None:
        self.option_values = options_dict(e.options)
        self.options = self.game.parse_options(self.option_values)
        self.options_msg = struct_pb2.Struct()
        self.options_msg.CopyFrom(e.options)
        self.stake = int(e.stake) or 1
        self.require_ready = e.require_ready
        self.reconnect_grace_s = int(e.reconnect_grace_s) or DEFAULT_GRACE_S

    def _on_hand_started(self, h: log_pb2.HandStarted, version: int) -> None:
        self.hand_no = int(h.hand_no)
        self.playing = True
        self.hand_players = list(h.players)
        self.owner_seat = int(h.owner_seat)
        self.server_seed = h.server_seed
        self.commitment = h.seed_commitment
        self.game_state = self.game.initial(self.options, len(self.hand_players))
        self.settled_legs = 0
        self.auto = set()
        self.lost = {}
        self.ready = set()
        self.client_seeds = {}

    def _on_settlement(self, s: log_pb2.Settlement, version: int) -> None:
        self.settled_legs += len(s.transfers)
        for t in s.transfers:
            if not t.HasField("from_seat"):
                self.pot -= t.amount
            if not t.HasField("to_seat"):
                self.pot += t.amount

    def _on_hand_ended(self, e: log_pb2.HandEnded, version: int) -> None:
        self.playing = False
        self.last_outcome = codec.outcome_from_message(e.outcome)
        self.last_hand_players = list(e.players)
        self.last_server_seed = e.server_seed
        self.server_seed = b""
        self.auto = set()
        self.lost = {}

    def _on_connection_lost(self, e: log_pb2.ConnectionLost, version: int) -> None:
        self.lost[e.player_id] = int(e.deadline_ms)

    def _on_reconnected(self, e: log_pb2.Reconnected, version: int) -> None:
        self.lost.pop(e.player_id, None)

    def _on_disconnected(self, e: log_pb2.Disconnected, version: int) -> None:
        self.lost.pop(e.player_id, None)
        self.auto.add(e.player_id)

    def _on_forced_quit(self, e: log_pb2.ForcedQuit, version: int) -> None:
        self.lost.pop(e.player_id, None)
        self.auto.add(e.player_id)

    # ------------------------------------------------------------ seats, host, settings

    def create(self, game_key: str, raw_options: dict[str, Any], host: str, stake: int = 1,
               currency: log_pb2.Currency.ValueType = log_pb2.CURRENCY_POINTS, *, require_ready: bool = False,
               reconnect_grace_s: int = 0, client_seed: bytes = b"") -> list[log_pb2.TableEvent]:
        if self.exists:
            raise ServiceError(grpc.StatusCode.ALREADY_EXISTS, "table_exists", "that table exists")
        game = game_of(game_key)
        values = dict(game.option_values(game.parse_options(raw_options)))
        self._check_money(stake, currency)
        grace = self._check_grace(reconnect_grace_s)
        return [
            _ev(table_created=log_pb2.TableCreated(
                table_id=self.table_id, game=game_key, options=options_struct(values), host=host,
                seats=game.max_players, stake=stake, currency=currency, require_ready=require_ready,
                reconnect_grace_s=grace)),
            _ev(player_seated=log_pb2.PlayerSeated(player_id=host, seat=0,
                                                   client_seed=check_client_seed(client_seed))),
        ]

    @staticmethod
    def _check_money(stake: int, currency: log_pb2.Currency.ValueType) -> None:
        if not 1 <= stake <= MAX_STAKE:
            raise invalid("bad_stake", f"the stake must be 1..{MAX_STAKE}")
        if currency not in (log_pb2.CURRENCY_POINTS, log_pb2.CURRENCY_COINS):
            raise invalid("bad_currency", "the currency must be POINTS or COINS")

    @staticmethod
    def _check_grace(seconds: int) -> int:
        grace = seconds or DEFAULT_GRACE_S
        if not 1 <= grace <= 600:
            raise invalid("bad_reconnect_grace", "the reconnect grace is 1..600 seconds")
        return grace

    def take_seat(self, player: str, seat: int | None, client_seed: bytes = b"") -> list[log_pb2.TableEvent]:
        if player in self.seats:
            raise precondition("already_seated", f"you already sit in seat {self.seats.index(player)}")
        if seat is None:
            free = [i for i, p in enumerate(self.seats) if p is None]
            if not free:
                raise precondition("table_full", "every seat is taken")
            seat = free[0]
        if not 0 <= seat < self.max_seats:
            raise invalid("bad_seat", f"seats are 0..{self.max_seats - 1}")
        if self.seats[seat] is not None:
            raise precondition("seat_taken", f"seat {seat} is taken")
        events = [_ev(player_seated=log_pb2.PlayerSeated(player_id=player, seat=seat,
                                                         client_seed=check_client_seed(client_seed)))]
        if not self.host:
            events.append(_ev(host_changed=log_pb2.HostChanged(host=player)))
        return events

    def stand_up(self, player: str) -> list[log_pb2.TableEvent]:
        seat = self.table_seat_of(player)
        if seat is None:
            raise precondition("not_seated", "you have no seat at this table")
        events = [_ev(player_left=log_pb2.PlayerLeft(player_id=player, seat=seat))]
        hand_seat = self.seat_of(player)
        if hand_seat is not None and player not in self.auto:
            events.append(_ev(forced_quit=log_pb2.ForcedQuit(player_id=player, hand_no=self.hand_no, seat=hand_seat)))
        if player == self.host:
            others = sorted((v, p) for p, v in self.seated_since.items() if p != player)
            events.append(_ev(host_changed=log_pb2.HostChanged(host=others[0][1] if others else "")))
        return events

    def set_ready(self, player: str, ready: bool, client_seed: bytes = b"") -> list[log_pb2.TableEvent]:
        if player not in self.seats:
            raise precondition("not_seated", "only a seated player can be ready")
        if self.playing and player in self.hand_players:
            raise precondition("hand_in_progress", "a hand is being played")
        return [_ev(player_ready=log_pb2.PlayerReady(player_id=player, ready=ready,
                                                     client_seed=check_client_seed(client_seed)))]

    def touches_pot(self, patch: dict[str, Any], stake: int | None) -> bool:
        """Whether a settings change needs the gà pot to be empty (the stake or a gà option)."""
        return (stake is not None and stake != self.stake) or any(
            k in patch and patch[k] != self.option_values.get(k) for k in POT_OPTIONS.get(self.game_key, ()))

    def change_settings(self, player: str, patch: dict[str, Any], stake: int | None,
                        require_ready: bool | None, grace: int | None,
                        ledger_pot: int = 0) -> list[log_pb2.TableEvent]:
        """``ledger_pot``: the pot's balance as the ledger has it (the ledger is the authority on
        money; the table's own count from its settlements must agree, and both must be 0)."""
        if player != self.host:
            raise _denied("not_host", "only the host (chủ bàn) changes the settings")
        if self.playing:
            raise precondition("hand_in_progress", "settings change only between hands")
        game = self.game
        values = dict(game.option_values(game.parse_options({**self.option_values, **patch})))
        new_stake = self.stake if stake is None else stake
        self._check_money(new_stake, self.currency)
        pot_changes = [k for k in POT_OPTIONS.get(self.game_key, ()) if values.get(k) != self.option_values.get(k)]
        pot = self.pot or ledger_pot
        if pot != 0 and (new_stake != self.stake or pot_changes):
            raise precondition("pot_not_empty",
                               f"the stake and the gà option change only while the gà pot is 0 (it holds {pot})")
        return [_ev(settings_changed=log_pb2.SettingsChanged(
            options=options_struct(values), stake=new_stake,
            require_ready=self.require_ready if require_ready is None else require_ready,
            reconnect_grace_s=self._check_grace(self.reconnect_grace_s if grace is None else grace)))]

    # ------------------------------------------------------------ hands

    def setup(self, players: list[str], material: bytes, now_ms: int, hand_no: int, owner_seat: int) -> Setup:
        """The rules core's set-up of a hand at this table (used by the auditor too)."""
        return Setup(options=self.options, players=len(players), seed=material, now_ms=now_ms,
                     hand_no=hand_no, previous=remap(self.last_outcome, self.last_hand_players, players),
                     owner=max(owner_seat, 0))

    def start_hand(self, player: str, now_ms: int, server_seed: bytes | None = None) -> list[log_pb2.TableEvent]:
        if player != self.host:
            raise _denied("not_host", "only the host (chủ bàn) starts a hand")
        if self.playing:
            raise precondition("hand_in_progress", "a hand is being played")
        players = [p for p in self.seats if p is not None]
        game = self.game
        if len(players) < game.min_players:
            raise precondition("not_enough_players", f"{game.title} needs {game.min_players} players seated")
        waiting = [p for p in players if p != self.host and p not in self.ready]
        if self.require_ready and waiting:
            raise precondition("players_not_ready", f"waiting for {', '.join(waiting)} to be ready")
        seed = server_seed if server_seed is not None else secrets.token_bytes(32)
        client_seeds = [self.client_seeds.get(p, b"") for p in players]
        owner_seat = players.index(self.host) if self.host in players else -1
        hand_no = self.hand_no + 1
        setup = self.setup(players, fair.seed_material(seed, client_seeds), now_ms, hand_no, owner_seat)
        events = [_ev(hand_started=log_pb2.HandStarted(
            hand_no=hand_no, algorithm=fair.ALGORITHM, seed_commitment=fair.commitment(seed),
            server_seed=seed, players=players, client_seeds=client_seeds, owner_seat=owner_seat))]
        state = game.initial(self.options, len(players))
        return events + self._game_events(game, state, list(game.start(setup)), seed, players, hand_no, fresh=True)

    def _game_events(self, game: Game[Any, Any], state: Any, game_events: list[Any], seed: bytes,
                     players: list[str], hand_no: int, *, fresh: bool = False) -> list[log_pb2.TableEvent]:
        out = [_ev(game_event=codec.pack(e, self.game_key)) for e in game_events]
        for e in game_events:
            state = game.evolve(state, e)
        self.decided = (out, state)
        settled = 0 if fresh else self.settled_legs
        paid: list[Transfer] = [t for e in game_events for t in getattr(e, "transfers", ())]
        outcome = game.outcome(state)
        if outcome is not None:
            paid = list(outcome.transfers[settled:])
        if paid:
            out.append(_ev(settlement=log_pb2.Settlement(
                hand_no=hand_no, first_leg=settled, players=players, stake=self.stake,
                currency=self.currency, game=self.game_key,
                transfers=[codec.transfer_message(t) for t in paid])))
        if outcome is not None:
            out.append(_ev(hand_ended=log_pb2.HandEnded(
                hand_no=hand_no, outcome=codec.outcome_message(outcome), server_seed=seed, players=players)))
        return out

    def act(self, player: str, command: Any, now_ms: int) -> list[log_pb2.TableEvent]:
        if not self.playing:
            raise precondition("no_hand", "no hand is being played at this table")
        seat = self.seat_of(player)
        if seat is None:
            raise _denied("not_seated", "you are not playing in this hand")
        if player in self.auto:
            raise precondition("auto_played", "your seat is auto-played for the rest of this hand")
        game = self.game
        events = list(game.decide(self.game_state, seat, command, now_ms))
        return self._game_events(game, self.game_state, events, self.server_seed, self.hand_players, self.hand_no)

    def time_out(self, seat: Seat, now_ms: int) -> list[log_pb2.TableEvent]:
        if not self.playing:
            raise precondition("no_hand", "no hand is being played at this table")
        game = self.game
        events = list(game.on_timeout(self.game_state, seat, now_ms))
        return self._game_events(game, self.game_state, events, self.server_seed, self.hand_players, self.hand_no)

    def abort_hand(self, reason: str) -> list[log_pb2.TableEvent]:
        """An operator ends the running hand: no winner, no further settlement, the seed revealed.
        Payments already made during the hand (already in a Settlement) stand."""
        if not self.playing:
            raise precondition("no_hand", "no hand is being played at this table")
        reason = reason.strip()
        if not reason or len(reason) > 200:
            raise invalid("bad_reason", "an abort needs a reason of 1-200 characters")
        # the gà pot keeps what the settlements put in it: the next hand starts with it
        outcome = Outcome(winner=None, ranking=(), scores=(0,) * len(self.hand_players), transfers=(),
                          reason=f"aborted: {reason}", pot_balance=self.pot)
        return [_ev(hand_ended=log_pb2.HandEnded(hand_no=self.hand_no, outcome=codec.outcome_message(outcome),
                                                  server_seed=self.server_seed, players=self.hand_players))]

    # ------------------------------------------------------------ presence

    def connection_lost(self, player: str, now_ms: int) -> list[log_pb2.TableEvent]:
        if self.seat_of(player) is None or player in self.auto or player in self.lost:
            return []
        deadline = now_ms + self.reconnect_grace_s * 1000
        return [_ev(connection_lost=log_pb2.ConnectionLost(player_id=player, deadline_ms=deadline))]

    def reconnected(self, player: str) -> list[log_pb2.TableEvent]:
        if player not in self.lost:
            return []
        return [_ev(reconnected=log_pb2.Reconnected(player_id=player))]

    def disconnect(self, player: str, now_ms: int) -> list[log_pb2.TableEvent]:
        deadline = self.lost.get(player)
        seat = self.seat_of(player)
        if deadline is None or deadline > now_ms or seat is None:
            return []
        return [_ev(disconnected=log_pb2.Disconnected(player_id=player, hand_no=self.hand_no, seat=seat))]

    def due(self) -> list[tuple[int, str, Any]]:
        """What the clock must do and when: ``(at_ms, "timeout", seat)`` for the game's
        deadlines (at once for an auto-played seat) and ``(at_ms, "disconnect", player)``."""
        if not self.playing:
            return []
        out: list[tuple[int, str, Any]] = []
        for d in self.game.deadlines(self.game_state):
            auto = 0 <= d.seat < len(self.hand_players) and self.hand_players[d.seat] in self.auto
            out.append((0 if auto else d.at_ms, "timeout", d.seat))
        out.extend((at, "disconnect", p) for p, at in self.lost.items())
        return out

    # ------------------------------------------------------------ views

    def _viewer(self, player: str | None) -> str | None:
        """The cache key of ``player``'s view: every spectator sees the same one (``None``)."""
        if player is not None and player not in self.seats and player not in self.hand_players:
            return None
        return player

    def view(self, player: str | None) -> table_service_pb2.TableView:
        """The table as ``player`` may see it (``None``: a spectator)."""
        player = self._viewer(player)
        cached = self.views.get(player)
        if cached is None:  # decoded from the encoding watchers get: one derivation, not two
            cached = self.views[player] = table_service_pb2.WatchResponse.FromString(self.wire(player)).table
        return cached

    def wire(self, player: str | None) -> bytes:
        """The serialized ``WatchResponse`` of ``player``'s view, encoded once per version.

        Built by concatenation, which protobuf parsers read as a merge: the shared part of the
        view is serialized once per version, and only each viewer's own fields once per viewer.
        """
        player = self._viewer(player)
        cached = self.wires.get(player)
        if cached is None:
            if self.base_bytes is None:
                self.base_bytes = self._base_view().SerializeToString()
            body = self.base_bytes + self._personal(player).SerializeToString()
            cached = self.wires[player] = _TABLE_FIELD + _varint(len(body)) + body
        return cached

    def _base_view(self) -> table_service_pb2.TableView:
        """What every viewer of this version sees alike (built once per version)."""
        base = self.base_view
        if base is None:
            status = table_service_pb2.TABLE_STATUS_PLAYING if self.playing else table_service_pb2.TABLE_STATUS_WAITING
            base = self.base_view = table_service_pb2.TableView(
                table_id=self.table_id, game=self.game_key, version=self.version, host=self.host, status=status,
                options=self.options_msg,
                seats=[table_service_pb2.SeatInfo(seat=i, player_id=p) for i, p in enumerate(self.seats) if p],
                max_seats=self.max_seats, hand_no=self.hand_no, seed_commitment=self.commitment,
                last_server_seed=self.last_server_seed, hand_players=self.hand_players,
                stake=self.stake, currency=self.currency,
                ready=sorted(self.ready), require_ready=self.require_ready,
                reconnect_grace_s=self.reconnect_grace_s, auto_played=sorted(self.auto),
                reconnect_deadlines=self.lost, pot=self.pot,
            )
            if self.last_outcome is not None:
                base.last_outcome.CopyFrom(codec.outcome_message(self.last_outcome))
        return base

    def _personal(self, player: str | None) -> table_service_pb2.TableView:
        """What only ``player`` sees: their seats and their game view (the rest is the base)."""
        seat = self.hand_players.index(player) if player in self.hand_players else None
        out = table_service_pb2.TableView()
        ts = self.table_seat_of(player) if player is not None else None
        if ts is not None:
            out.your_seat = ts
        if seat is not None:
            out.hand_seat = seat
        if self.game_state is not None:
            game_view = self.game.view(self.game_state, seat)
            try:  # seats that see the same game view share one encoding of it
                packed = self.packed_views.get(game_view)
                if packed is None:
                    packed = self.packed_views[game_view] = codec.pack(game_view, self.game_key)
            except TypeError:  # a view that cannot be hashed is packed every time
                packed = codec.pack(game_view, self.game_key)
            out.game_view.CopyFrom(packed)
        return out
