"""A table as an event-sourced aggregate: its state folded from log records, and the
deciders of the table's own commands (create, sit, start a hand, act, time out).

Deciders return the events of one record and never change the table; ``apply`` folds a
record. The game itself is decided by the rules core through the registry.
"""

from __future__ import annotations

import re
import secrets
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import grpc
from google.protobuf import json_format, struct_pb2

from chieu.games.v1 import games_pb2
from chieu.kit.errors import ServiceError, invalid, not_found, precondition
from chieu.table import codec
from chieu.table.rules import fair, registry
from chieu.table.rules.core import Game, Outcome, Seat, Setup, Transfer
from chieu.table.v1 import log_pb2, table_service_pb2

TABLE_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
COMMAND_ID = re.compile(r"^[\x21-\x7e]{1,128}$")
MAX_STAKE = 1_000_000_000
REMEMBERED_COMMANDS = 1000
"""How many recent command ids a table remembers for idempotency (beyond JetStream's window)."""


def check_table_id(table_id: str) -> str:
    if not TABLE_ID.match(table_id or ""):
        raise invalid("bad_table_id", "a table id is 1-64 characters of A-Z a-z 0-9 _ -")
    return table_id


def check_command_id(command_id: str) -> str:
    if command_id and not COMMAND_ID.match(command_id):
        raise invalid("bad_command_id", "a command id is 1-128 printable ASCII characters")
    return command_id


def game_of(key: str) -> Game[Any, Any]:
    try:
        return registry.get(key)
    except registry.UnknownGame:
        raise not_found("unknown_game", f"no game {key!r}; games: {', '.join(registry.keys())}") from None


def options_struct(values: dict[str, Any]) -> struct_pb2.Struct:
    s = struct_pb2.Struct()
    s.update(values)
    return s


@dataclass
class Table:
    """The state of one table, folded from its log."""

    table_id: str
    game_key: str = ""
    options: Any = None
    option_values: dict[str, Any] = field(default_factory=dict)
    host: str = ""
    max_seats: int = 0
    seats: list[str | None] = field(default_factory=list)
    version: int = 0
    """Records folded so far (the client-visible table version)."""
    last_seq: int = 0
    """The stream sequence of the last folded record (for optimistic appends)."""
    hand_no: int = 0
    playing: bool = False
    hand_players: list[str] = field(default_factory=list)
    game_state: Any = None
    server_seed: bytes = b""
    commitment: str = ""
    last_outcome: Outcome | None = None
    last_server_seed: bytes = b""
    stake: int = 1
    currency: int = log_pb2.CURRENCY_POINTS
    settled_legs: int = 0
    """Transfers of the current hand already put in a Settlement."""
    commands: OrderedDict[str, int] = field(default_factory=OrderedDict)
    """Recent ``actor/command_id`` keys and the version they produced."""

    @property
    def game(self) -> Game[Any, Any]:
        return game_of(self.game_key)

    @property
    def exists(self) -> bool:
        return self.version > 0

    def seat_of(self, player: str) -> Seat | None:
        """The player's seat in the current hand (turn order), if playing in it."""
        if player in self.hand_players:
            return self.hand_players.index(player)
        return None

    def table_seat_of(self, player: str) -> int | None:
        return self.seats.index(player) if player in self.seats else None

    # ------------------------------------------------------------ folding

    def apply(self, record: log_pb2.Record, seq: int) -> None:
        """Fold one record (never fails on a logged record of a known game)."""
        for ev in record.events:
            kind = ev.WhichOneof("kind")
            if kind == "table_created":
                c = ev.table_created
                self.game_key = c.game
                self.option_values = json_format.MessageToDict(c.options)
                self.options = self.game.parse_options(self.option_values)
                self.host = c.host
                self.max_seats = int(c.seats)
                self.seats = [None] * self.max_seats
                self.stake = int(c.stake) or 1
                self.currency = c.currency or log_pb2.CURRENCY_POINTS
            elif kind == "player_seated":
                self.seats[ev.player_seated.seat] = ev.player_seated.player_id
            elif kind == "hand_started":
                h = ev.hand_started
                self.hand_no = int(h.hand_no)
                self.playing = True
                self.hand_players = list(h.players)
                self.server_seed = h.server_seed
                self.commitment = h.seed_commitment
                self.game_state = self.game.initial(self.options, len(self.hand_players))
                self.settled_legs = 0
            elif kind == "game_event":
                self.game_state = self.game.evolve(self.game_state, codec.unpack(ev.game_event, self.game_key))
            elif kind == "settlement":
                self.settled_legs += len(ev.settlement.transfers)
            elif kind == "hand_ended":
                self.playing = False
                self.last_outcome = codec.outcome_from_message(ev.hand_ended.outcome)
                self.last_server_seed = ev.hand_ended.server_seed
                self.server_seed = b""
        self.version = int(record.version)
        self.last_seq = seq
        if record.command_id:
            self.commands[f"{record.actor}/{record.command_id}"] = self.version
            while len(self.commands) > REMEMBERED_COMMANDS:
                self.commands.popitem(last=False)

    # ------------------------------------------------------------ deciders

    def create(self, game_key: str, raw_options: dict[str, Any], host: str, stake: int = 1,
               currency: int = log_pb2.CURRENCY_POINTS) -> list[log_pb2.TableEvent]:
        if self.exists:
            raise ServiceError(grpc.StatusCode.ALREADY_EXISTS, "table_exists", "that table exists")
        if not 1 <= stake <= MAX_STAKE:
            raise invalid("bad_stake", f"the stake must be 1..{MAX_STAKE}")
        if currency not in (log_pb2.CURRENCY_POINTS, log_pb2.CURRENCY_COINS):
            raise invalid("bad_currency", "the currency must be POINTS or COINS")
        game = game_of(game_key)
        options = game.parse_options(raw_options)
        values = dict(game.option_values(options))
        return [
            log_pb2.TableEvent(table_created=log_pb2.TableCreated(
                table_id=self.table_id, game=game_key, options=options_struct(values), host=host,
                seats=game.max_players, stake=stake, currency=currency)),
            log_pb2.TableEvent(player_seated=log_pb2.PlayerSeated(player_id=host, seat=0)),
        ]

    def take_seat(self, player: str, seat: int | None) -> list[log_pb2.TableEvent]:
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
        return [log_pb2.TableEvent(player_seated=log_pb2.PlayerSeated(player_id=player, seat=seat))]

    def start_hand(self, player: str, now_ms: int, server_seed: bytes | None = None) -> list[log_pb2.TableEvent]:
        if player != self.host:
            raise ServiceError(grpc.StatusCode.PERMISSION_DENIED, "not_host", "only the host (chủ bàn) starts a hand")
        if self.playing:
            raise precondition("hand_in_progress", "a hand is being played")
        players = [p for p in self.seats if p is not None]
        game = self.game
        if len(players) < game.min_players:
            raise precondition("not_enough_players", f"{game.title} needs {game.min_players} players seated")
        seed = server_seed if server_seed is not None else secrets.token_bytes(32)
        hand_no = self.hand_no + 1
        setup = Setup(options=self.options, players=len(players), seed=fair.seed_material(seed),
                      now_ms=now_ms, hand_no=hand_no, previous=self.last_outcome, owner=0)
        events = [log_pb2.TableEvent(hand_started=log_pb2.HandStarted(
            hand_no=hand_no, algorithm=fair.ALGORITHM, seed_commitment=fair.commitment(seed),
            server_seed=seed, players=players))]
        state = game.initial(self.options, len(players))
        game_events = list(game.start(setup))
        return events + self._game_events(game, state, game_events, seed, players, hand_no)

    def _game_events(self, game: Game[Any, Any], state: Any, game_events: list[Any], seed: bytes,
                     players: list[str], hand_no: int) -> list[log_pb2.TableEvent]:
        out = [log_pb2.TableEvent(game_event=codec.pack(e, self.game_key)) for e in game_events]
        for e in game_events:
            state = game.evolve(state, e)
        settled = self.settled_legs if self.playing else 0
        paid: list[Transfer] = [t for e in game_events for t in getattr(e, "transfers", ())]
        outcome = game.outcome(state)
        if outcome is not None:
            paid = list(outcome.transfers[settled:])
        if paid:
            out.append(log_pb2.TableEvent(settlement=log_pb2.Settlement(
                hand_no=hand_no, first_leg=settled, players=players, stake=self.stake,
                currency=self.currency, game=self.game_key,
                transfers=[codec.to_message(t, self.game_key) for t in paid])))
        if outcome is not None:
            out.append(log_pb2.TableEvent(hand_ended=log_pb2.HandEnded(
                hand_no=hand_no, outcome=codec.outcome_message(outcome), server_seed=seed, players=players)))
        return out

    def act(self, player: str, command: Any, now_ms: int) -> list[log_pb2.TableEvent]:
        if not self.playing:
            raise precondition("no_hand", "no hand is being played at this table")
        seat = self.seat_of(player)
        if seat is None:
            raise ServiceError(grpc.StatusCode.PERMISSION_DENIED, "not_seated", "you are not playing in this hand")
        game = self.game
        events = list(game.decide(self.game_state, seat, command, now_ms))
        return self._game_events(game, self.game_state, events, self.server_seed, self.hand_players, self.hand_no)

    def time_out(self, seat: Seat, now_ms: int) -> list[log_pb2.TableEvent]:
        if not self.playing:
            raise precondition("no_hand", "no hand is being played at this table")
        game = self.game
        events = list(game.on_timeout(self.game_state, seat, now_ms))
        return self._game_events(game, self.game_state, events, self.server_seed, self.hand_players, self.hand_no)

    # ------------------------------------------------------------ views

    def view(self, player: str | None) -> table_service_pb2.TableView:
        """The table as ``player`` may see it (``None``: a spectator)."""
        seat = self.seat_of(player) if player is not None else None
        out = table_service_pb2.TableView(
            table_id=self.table_id, game=self.game_key, version=self.version, host=self.host,
            status=table_service_pb2.TABLE_STATUS_PLAYING if self.playing else table_service_pb2.TABLE_STATUS_WAITING,
            options=options_struct(self.option_values),
            seats=[table_service_pb2.SeatInfo(seat=i, player_id=p) for i, p in enumerate(self.seats) if p],
            max_seats=self.max_seats, hand_no=self.hand_no, seed_commitment=self.commitment,
            last_server_seed=self.last_server_seed, hand_players=self.hand_players,
            stake=self.stake, currency=self.currency,  # type: ignore[arg-type]
        )
        if seat is not None:
            out.hand_seat = seat
        ts = self.table_seat_of(player) if player is not None else None
        if ts is not None:
            out.your_seat = ts
        if self.game_state is not None:
            out.game_view.CopyFrom(codec.pack(self.game.view(self.game_state, seat), self.game_key))
        if self.last_outcome is not None:
            out.last_outcome.CopyFrom(codec.outcome_message(self.last_outcome))
        return out


def outcome_of(msg: games_pb2.Outcome) -> Outcome:
    return codec.outcome_from_message(msg)
