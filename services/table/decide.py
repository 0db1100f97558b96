"""The deciders of a table's own commands: create, sit, stand up, ready, settings, start a
hand, act, time out, abort, presence.

Each is a pure function of the table (and the command's arguments and server time) that returns
the events of one record, or a :class:`~chieu.table.refusals.Refused` saying why not; none
changes the table, raises a refusal or knows gRPC (the edge, :mod:`chieu.table.statuses`, turns a
refusal into a status). The service appends the record and folds it
(:meth:`chieu.tablelog.fold.Table.apply`). The game itself is decided by the rules core through
the registry (a ``RuleViolation`` it raises is returned as a refusal too); what a game command
pays goes in a ``Settlement`` and the hand's end in ``HandEnded``, both in the same record.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from chieu.games import fair, fairround, registry
from chieu.games.core import Game, RuleViolation, Seat
from chieu.table import refusals
from chieu.table.refusals import Kind, Refused, denied, invalid, precondition
from chieu.table.v1 import log_pb2
from chieu.tablelog import codec
from chieu.tablelog.fold import DEFAULT_GRACE_S, Table, hand_setup, options_struct
from chieu.tablelog.money import aborted, money_events, rule_money

Events = list[log_pb2.TableEvent]
Reserved = tuple[int, dict[str, int]]
"""A hand's reservations: its number and the 金币 reserved per player."""
Decision = Events | Refused
"""What a decider returns: the events of one record (none: nothing to do), or its refusal."""

TABLE_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
COMMAND_ID = re.compile(r"^[\x21-\x7e]{1,128}$")
MAX_STAKE = 1_000_000_000
INT64_MAX = 2**63 - 1
"""The largest amount the log (protobuf ``int64``) and the books (PostgreSQL ``bigint``) hold."""
MAX_CLIENT_SEED = 64
MAX_LADDER_LEVEL = 1000
"""The highest ladder level a table may have (the ladder service refuses levels above it too)."""
LADDER_TOO_LOW = "ladder_level_too_low"
"""Why the table stood a player up: their ladder level fell below the table's (``PlayerLeft.reason``)."""
NOT_ENOUGH_COINS = "not_enough_coins"
"""Why: at a coin table, the player has the minimum 金币 or fewer (GC-1)."""
REPUTATION_TOO_LOW = "reputation_too_low"
"""Why: the player's reputation (信誉度) is below the table's minimum."""
MAX_REPUTATION = 1_000_000
WITHHELD = "withheld_reveal"
"""Why: a seat of a commit–reveal round that did not reveal its seed by the deadline (a forced quit)."""
REVEAL_S = 15.0
"""How long the seats of a commit–reveal round have to reveal, from StartHand (one round trip
each: their clients reveal as soon as they see the round)."""
Seeds = Callable[[Table], tuple[bytes, log_pb2.NextSeed]]
"""The server seed of the table's next hand, opened, and the hand after's, committed now
(:func:`chieu.table.seeds.seeds_to_deal`): asked only by the record that deals."""
IDLE = "idle"
"""Why: between hands, the player had no open stream for the idle stand (``CHIEU_TABLE_IDLE_STAND_S``)."""


def table_id_refused(table_id: str) -> Refused | None:
    if not TABLE_ID.match(table_id or ""):
        return invalid("bad_table_id", "a table id is 1-64 characters of A-Z a-z 0-9 _ -")
    return None


def command_id_refused(command_id: str) -> Refused | None:
    if command_id and not COMMAND_ID.match(command_id):
        return invalid("bad_command_id", "a command id is 1-128 printable ASCII characters")
    return None


def _client_seed_refused(seed: bytes) -> Refused | None:
    if len(seed) > MAX_CLIENT_SEED:
        return invalid("bad_client_seed", f"a client seed has at most {MAX_CLIENT_SEED} bytes")
    return None


def _ev(**kind: Any) -> log_pb2.TableEvent:
    return log_pb2.TableEvent(**kind)


def create(t: Table, game_key: str, raw_options: dict[str, Any], host: str, stake: int = 1,
           currency: log_pb2.Currency.ValueType = log_pb2.CURRENCY_POINTS, *, require_ready: bool = False,
           reconnect_grace_s: int = 0, client_seed: bytes = b"", ladder_level: int = 0,
           min_reputation: int = 0, profile: tuple[str, str] = ("", ""),
           next_seed: log_pb2.NextSeed | None = None) -> Decision:
    """``next_seed``: hand 1's server seed, committed and sealed by the caller (deciders are pure).
    ``ladder_level`` > 0 makes a ladder table (过关斩将) of that level, for good;
    ``min_reputation`` > 0 the least reputation (信誉度) a player needs to sit there; ``profile`` the
    host's (name, avatar) as the lobby has them, logged with their seat."""
    if t.exists:
        return Refused(Kind.EXISTS, "table_exists", "that table exists")
    try:
        game = registry.get(game_key)
    except registry.UnknownGame:
        return Refused(Kind.NOT_FOUND, "unknown_game", f"no game {game_key!r}; games: {', '.join(registry.keys())}")
    try:
        values = dict(game.option_values(game.parse_options(raw_options)))
    except RuleViolation as v:
        return refusals.of(v)
    grace = reconnect_grace_s or DEFAULT_GRACE_S
    if refused := _money_refused(stake, currency) or _fit_refused(game_key, stake) or _grace_refused(grace):
        return refused
    if not 0 <= ladder_level <= MAX_LADDER_LEVEL:
        return invalid("bad_ladder_level", f"a ladder level is 1..{MAX_LADDER_LEVEL} (0: not a ladder table)")
    if not 0 <= min_reputation <= MAX_REPUTATION:
        return invalid("bad_min_reputation", f"a minimum reputation is 0..{MAX_REPUTATION}")
    if refused := _client_seed_refused(client_seed):
        return refused
    return [
        _ev(table_created=log_pb2.TableCreated(
            table_id=t.table_id, game=game_key, options=options_struct(values), host=host,
            seats=game.max_players, stake=stake, currency=currency, require_ready=require_ready,
            reconnect_grace_s=grace, ladder_level=ladder_level, min_reputation=min_reputation,
            next_seed=next_seed)),
        _ev(player_seated=log_pb2.PlayerSeated(player_id=host, seat=0, client_seed=client_seed,
                                               name=profile[0], avatar=profile[1])),
    ]


def _money_refused(stake: int, currency: log_pb2.Currency.ValueType) -> Refused | None:
    if not 1 <= stake <= MAX_STAKE:
        return invalid("bad_stake", f"the stake must be 1..{MAX_STAKE}")
    if currency not in (log_pb2.CURRENCY_POINTS, log_pb2.CURRENCY_COINS):
        return invalid("bad_currency", "the currency must be POINTS or COINS")
    return None


def _fit_refused(game_key: str, stake: int) -> Refused | None:
    """``money_overflow`` when the most one move of the game can settle (its options at their
    bounds, the most seats: ``Descriptor.max_move_units``) times the stake would not fit an
    ``int64`` / ``bigint``: such a settlement could be logged but never posted."""
    units = registry.descriptor(game_key).max_move_units
    if stake * max(units, 1) > INT64_MAX:
        return invalid("money_overflow", f"at stake {stake} one move of this game could settle "
                                         f"{units} × {stake}, more than the books can hold")
    return None


def _grace_refused(grace: int) -> Refused | None:
    if not 1 <= grace <= 600:
        return invalid("bad_reconnect_grace", "the reconnect grace is 1..600 seconds")
    return None


def take_seat(t: Table, player: str, seat: int | None, client_seed: bytes = b"",
              profile: tuple[str, str] = ("", ""), idle_deadline_ms: int = 0) -> Decision:
    """``profile``: the player's (name, avatar) as the lobby has them, logged with the seat.
    ``idle_deadline_ms``: the player has no open stream here (0: they have one): between hands the
    seat starts their idle stand (``ConnectionLost`` in the same record), ended by a stream opening
    (``Reconnected``, from whichever process holds it) — a seat nobody watches is no ghost."""
    if player in t.seats:
        return precondition("already_seated", f"you already sit in seat {t.seats.index(player)}")
    if seat is None:
        free = [i for i, p in enumerate(t.seats) if p is None]
        if not free:
            return precondition("table_full", "every seat is taken")
        seat = free[0]
    if not 0 <= seat < t.max_seats:
        return invalid("bad_seat", f"seats are 0..{t.max_seats - 1}")
    if t.seats[seat] is not None:
        return precondition("seat_taken", f"seat {seat} is taken")
    if refused := _client_seed_refused(client_seed):
        return refused
    events = [_ev(player_seated=log_pb2.PlayerSeated(player_id=player, seat=seat, client_seed=client_seed,
                                                     name=profile[0], avatar=profile[1]))]
    if not t.host:
        events.append(_ev(host_changed=log_pb2.HostChanged(host=player)))
    return events if t.playing else events + unwatched(player, idle_deadline_ms)


def unwatched(player: str, idle_deadline_ms: int) -> Events:
    """A player seated (between hands) with no open stream here: their idle stand, until
    ``idle_deadline_ms`` (0: they have a stream: nothing)."""
    if not idle_deadline_ms:
        return []
    return [_ev(connection_lost=log_pb2.ConnectionLost(player_id=player, deadline_ms=idle_deadline_ms))]


def idle_stands(t: Table, players: list[str], now_ms: int, idle_stand_s: float) -> Events:
    """Between hands, the idle stand of each of ``players`` seated and not yet absent (a process
    that starts, for the seated players no stream of which it holds)."""
    if t.playing:
        return []
    deadline = now_ms + int(idle_stand_s * 1000)
    return [_ev(connection_lost=log_pb2.ConnectionLost(player_id=p, deadline_ms=deadline))
            for p in players if p in t.seats and p not in t.lost and p not in t.auto]


def stand_up(t: Table, player: str) -> Decision:
    seat = t.table_seat_of(player)
    if seat is None:
        return precondition("not_seated", "you have no seat at this table")
    events = [_ev(player_left=log_pb2.PlayerLeft(player_id=player, seat=seat))]
    hand_seat = t.seat_of(player)
    if hand_seat is not None and player not in t.auto:
        events.append(_ev(forced_quit=log_pb2.ForcedQuit(player_id=player, hand_no=t.hand_no, seat=hand_seat,
                                                         ladder_level=t.ladder_level)))
    events += _round_quit(t, player)
    if player == t.host:
        others = sorted((v, p) for p, v in t.seated_since.items() if p != player)
        events.append(_ev(host_changed=log_pb2.HostChanged(host=others[0][1] if others else "")))
    return events


def stand_down(t: Table, players: list[str], reason: str) -> Decision:
    """The table stands up seated players who may no longer sit (between hands only), saying
    why; hosting passes on as when they stand up themselves. Nothing for players not seated."""
    if t.playing:
        return precondition("hand_in_progress", "a hand is being played")
    events: Events = []
    host = t.host
    leaving = [p for p in players if p in t.seats]
    for player in leaving:
        events.append(_ev(player_left=log_pb2.PlayerLeft(player_id=player, seat=t.seats.index(player),
                                                         reason=reason)))
        events += _round_quit(t, player)
    if host in leaving:
        others = sorted((v, p) for p, v in t.seated_since.items() if p not in leaving)
        events.append(_ev(host_changed=log_pb2.HostChanged(host=others[0][1] if others else "")))
    return events


def set_ready(t: Table, player: str, ready: bool, client_seed: bytes = b"") -> Decision:
    if player not in t.seats:
        return precondition("not_seated", "only a seated player can be ready")
    if t.playing and player in t.hand_players:
        return precondition("hand_in_progress", "a hand is being played")
    if refused := _client_seed_refused(client_seed):
        return refused
    return [_ev(player_ready=log_pb2.PlayerReady(player_id=player, ready=ready, client_seed=client_seed))]


def touches_pot(t: Table, patch: dict[str, Any], stake: int | None) -> bool:
    """Whether a settings change needs the gà pot to be empty (the stake or a gà option)."""
    return (stake is not None and stake != t.stake) or any(
        k in patch and patch[k] != t.option_values.get(k) for k in t.game.pot_options)


def change_settings(t: Table, player: str, patch: dict[str, Any], stake: int | None,
                    require_ready: bool | None, grace: int | None,
                    ledger_pot: int = 0) -> Decision:
    """``ledger_pot``: the pot's balance as the ledger has it (the ledger is the authority on
    money; the table's own count from its settlements must agree, and both must be 0)."""
    if player != t.host:
        return denied("not_host", "only the host (chủ bàn) changes the settings")
    if t.playing or t.round_players:
        return precondition("hand_in_progress", "settings change only between hands")
    game = t.game
    try:
        values = dict(game.option_values(game.parse_options({**t.option_values, **patch})))
    except RuleViolation as v:
        return refusals.of(v)
    new_stake = t.stake if stake is None else stake
    if refused := _money_refused(new_stake, t.currency) or _fit_refused(t.game_key, new_stake):
        return refused
    pot_changes = [k for k in t.game.pot_options if values.get(k) != t.option_values.get(k)]
    pot = t.pot or ledger_pot
    if pot != 0 and (new_stake != t.stake or pot_changes):
        return precondition("pot_not_empty",
                            f"the stake and the gà option change only while the gà pot is 0 (it holds {pot})")
    new_grace = (t.reconnect_grace_s if grace is None else grace) or DEFAULT_GRACE_S
    if refused := _grace_refused(new_grace):
        return refused
    return [_ev(settings_changed=log_pb2.SettingsChanged(
        options=options_struct(values), stake=new_stake,
        require_ready=t.require_ready if require_ready is None else require_ready,
        reconnect_grace_s=new_grace))]


def start_hand(t: Table, player: str, now_ms: int, server_seed: bytes,
               next_seed: log_pb2.NextSeed | None = None, reserved: Reserved | None = None) -> Decision:
    """Deal a hand with ``server_seed``: the seed committed before (``t.next_seed``, opened by the
    caller; deciders are pure). ``next_seed``: the next hand's, committed now, before any of its
    client seeds can be given (docs/fairness.md). ``reserved``: at a coin table, the hand and the
    金币 the ledger reserved for each of its players (:mod:`chieu.table.reservations`), logged in
    ``HandStarted`` and the cap of every settlement of the hand (:mod:`chieu.tablelog.capped`); the
    hand and seats must be the ones reserved (else ``seats_changed``: the caller reserves again).

    Where seated players committed to client seeds (``chieu-fair-v2``), nothing is dealt yet: the
    seats that committed are asked to reveal (``RevealsAsked``), and the last reveal deals
    (:func:`reveal_seed`); the seats that did not commit sit the hand out."""
    if player != t.host:
        return denied("not_host", "only the host (chủ bàn) starts a hand")
    if t.playing:
        return precondition("hand_in_progress", "a hand is being played")
    if t.round_players:
        return precondition("hand_in_progress", "the hand is starting: its seats are revealing their seeds")
    if t.options_refused:
        return invalid("bad_options", f"this table's options are out of bounds now ({t.options_refused}): "
                                      "the host changes them before the next hand")
    if refused := _fit_refused(t.game_key, t.stake):
        return refused
    players = [p for p in t.seats if p is not None]
    game = t.game
    if len(players) < game.min_players:
        return precondition("not_enough_players", f"{game.title} needs {game.min_players} players seated")
    waiting = [p for p in players if p != t.host and p not in t.ready]
    if t.require_ready and waiting:
        return precondition("players_not_ready", f"waiting for {', '.join(waiting)} to be ready")
    if reserved is not None and (sorted(reserved[1]) != sorted(players) or reserved[0] != t.hand_no + 1):
        return Refused(Kind.ABORTED, "seats_changed", "the seats changed while the hand was starting; start again")
    coins = [reserved[1][p] for p in players] if reserved is not None else []
    if committing(t, players):
        return _ask_reveals(t, players, coins, now_ms)
    client_seeds = [t.client_seeds.get(p, b"") for p in players]
    return _deal(t, players, client_seeds, server_seed, next_seed, now_ms, coins, fair.ALGORITHM)


def committing(t: Table, players: list[str]) -> bool:
    """Whether the hand is dealt after a commit–reveal round (``chieu-fair-v2``): some seated
    player committed to a client seed for it (then the seats that did not sit it out)."""
    return any(p in t.commitments for p in players)


def _deal(t: Table, players: list[str], client_seeds: list[bytes], seed: bytes, next_seed: log_pb2.NextSeed | None,
          now_ms: int, coins: list[int], algorithm: str, host: str | None = None) -> Decision:
    """``HandStarted`` and the deal: the material is ``chieu-fair-v1``'s formula under either id.
    ``host``: the host the deal is made under when the same record passes hosting on first."""
    game = t.game
    host = t.host if host is None else host
    owner_seat = players.index(host) if host in players else -1
    hand_no = t.hand_no + 1
    hand = hand_setup(t, players, fair.seed_material(seed, client_seeds), now_ms, hand_no, owner_seat)
    events = [_ev(hand_started=log_pb2.HandStarted(
        hand_no=hand_no, algorithm=algorithm, seed_commitment=fair.commitment(seed),
        server_seed=seed, players=players, client_seeds=client_seeds, owner_seat=owner_seat,
        game=t.game_key, stake=t.stake, currency=t.currency, next_seed=next_seed, reserved=coins))]
    try:
        state = game.initial(t.options, len(players))
        return events + _game_events(t, game, state, list(game.start(hand)), seed, players, hand_no, fresh=True,
                                     reserved=coins)
    except RuleViolation as v:
        return refusals.of(v)


# ------------------------------------------------------------ the commit–reveal round (chieu-fair-v2)


def commit_seed(t: Table, player: str, commitment: str) -> Decision:
    """A seated player's commitment to a client seed for hand ``t.hand_no + 1``: at any time but
    during that hand's reveals (during the previous hand, typically: off the move path)."""
    if player not in t.seats:
        return precondition("not_seated", "only a seated player commits to a seed")
    if t.round_players:
        return precondition("commitments_closed", f"hand {t.hand_no + 1} is revealing its seeds; "
                                                  "commit for the next hand once it is dealt")
    if len(commitment) != 64 or any(c not in "0123456789abcdef" for c in commitment):
        return invalid("bad_commitment", "a commitment is 64 lowercase hex digits")
    return [_ev(client_committed=log_pb2.ClientCommitted(player_id=player, hand_no=t.hand_no + 1,
                                                         commitment=commitment))]


def _ask_reveals(t: Table, players: list[str], coins: list[int], now_ms: int) -> Decision:
    """StartHand where players committed: the seats that committed, asked to reveal."""
    seats = [p for p in players if p in t.commitments]
    if len(seats) < t.game.min_players:
        waiting = [p for p in players if p not in t.commitments]
        return precondition("players_not_committed", f"{t.game.title} needs {t.game.min_players} players committed "
                                                     f"to a seed; waiting for {', '.join(waiting)}")
    return [_ev(reveals_asked=log_pb2.RevealsAsked(
        hand_no=t.hand_no + 1, players=seats, deadline_ms=now_ms + int(REVEAL_S * 1000),
        reserved=[c for p, c in zip(players, coins, strict=False) if p in t.commitments]))]


def reveal_seed(t: Table, player: str, seed: bytes, now_ms: int, seeds: Seeds) -> Decision:
    """A seat of the open round reveals its seed (``reveal_too_early`` before StartHand asked for the
    reveals, ``reveal_mismatch`` when it does not hash to the commitment); the last reveal deals."""
    if not t.round_players:
        return precondition("reveal_too_early",
                            "no seed is revealed before every seat has committed and the hand is started")
    if player not in t.round_players or player not in t.seats:
        return denied("not_in_round", f"you are not one of hand {t.hand_no + 1}'s seats")
    if player in t.revealed:
        return precondition("already_revealed", "you have revealed your seed already")
    if len(seed) != fairround.SEED_BYTES:
        return invalid("bad_revealed_seed", f"a revealed seed is exactly {fairround.SEED_BYTES} bytes")
    hand_no = t.hand_no + 1
    if fairround.client_commitment(t.table_id, hand_no, player, seed) != t.commitments.get(player):
        return invalid("reveal_mismatch", "that seed does not hash to your commitment")
    events = [_ev(client_revealed=log_pb2.ClientRevealed(player_id=player, hand_no=hand_no, seed=seed))]
    revealed = {**t.revealed, player: seed}
    if all(p in revealed and p in t.seats for p in t.round_players):
        dealt = _deal_round(t, t.round_players, revealed, now_ms, seeds)
        return dealt if isinstance(dealt, Refused) else events + dealt
    return events


def _deal_round(t: Table, players: list[str], revealed: dict[str, bytes], now_ms: int, seeds: Seeds,
                host: str | None = None) -> Decision:
    server_seed, next_seed = seeds(t)
    coins = [c for p, c in zip(t.round_players, t.round_reserved, strict=False) if p in players]
    return _deal(t, players, [revealed[p] for p in players], server_seed, next_seed, now_ms, coins,
                 fairround.ALGORITHM, host)


def _round_quit(t: Table, player: str) -> Events:
    """A seat of the open round that leaves before the deal: a forced quit (as withholding)."""
    if player not in t.round_players:
        return []
    return [_ev(forced_quit=log_pb2.ForcedQuit(player_id=player, hand_no=t.hand_no + 1,
                                               seat=t.round_players.index(player), ladder_level=t.ladder_level))]


def reveals_due(t: Table, now_ms: int, seeds: Seeds, fresh_seed: Callable[[int], log_pb2.NextSeed]) -> Decision:
    """The round's deadline passed: each seat still seated that did not reveal withholds (stood up,
    a forced quit); the hand is dealt from the seeds revealed by the seats still seated, or, with
    fewer than the game's minimum, not at all (``RoundCancelled``: a fresh server seed, from
    ``fresh_seed(hand_no)``, committed for the same hand number). Nothing before the deadline."""
    if not t.round_players or now_ms < t.round_deadline_ms:
        return []
    hand_no = t.hand_no + 1
    withheld = [p for p in t.round_players if p in t.seats and p not in t.revealed]
    events = stand_down(t, withheld, WITHHELD)  # each a forced quit; hosting passes on (no hand runs)
    if isinstance(events, Refused):
        return events
    host = next((e.host_changed.host for e in events if e.WhichOneof("kind") == "host_changed"), t.host)
    players = [p for p in t.round_players if p in t.seats and p in t.revealed]
    if len(players) < t.game.min_players or (t.round_reserved and len(players) < len(t.round_players)):
        # (at a coin table the ledger reserved the round's seats: it is dealt in full or not at all)
        return events + [_ev(round_cancelled=log_pb2.RoundCancelled(hand_no=hand_no, next_seed=fresh_seed(hand_no)))]
    dealt = _deal_round(t, players, t.revealed, now_ms, seeds, host)
    return dealt if isinstance(dealt, Refused) else events + dealt


def _game_events(t: Table, game: Game[Any, Any, Any, Any], state: Any, game_events: list[Any], seed: bytes,
                 players: list[str], hand_no: int, *, fresh: bool = False,
                 reserved: list[int] | None = None) -> Events:
    out = [_ev(game_event=codec.pack(e, t.game_key)) for e in game_events]
    for e in game_events:
        state = game.evolve(state, e)
    settled = 0 if fresh else t.settled_legs
    paid, outcome = rule_money(game, state, game_events, settled)
    reserve = list(reserved if fresh and reserved is not None else t.reserved)
    lost = [0] * len(players) if fresh else list(t.hand_lost)
    return out + money_events(t, paid, outcome, seed, players, hand_no, settled, reserve, lost, t.pot_coins)


def act(t: Table, player: str, command: Any, now_ms: int) -> Decision:
    """A player's game command (the rules core decides it; its refusal is this one's)."""
    if not t.playing:
        return precondition("no_hand", "no hand is being played at this table")
    seat = t.seat_of(player)
    if seat is None:
        return denied("not_seated", "you are not playing in this hand")
    if player in t.auto:
        return precondition("auto_played", "your seat is auto-played for the rest of this hand")
    game = t.game
    try:
        events = list(game.decide(t.game_state, seat, command, now_ms))
        return _game_events(t, game, t.game_state, events, t.server_seed, t.hand_players, t.hand_no)
    except RuleViolation as v:
        return refusals.of(v)


def time_out(t: Table, seat: Seat, now_ms: int) -> Decision:
    if not t.playing:
        return precondition("no_hand", "no hand is being played at this table")
    game = t.game
    try:
        events = list(game.on_timeout(t.game_state, seat, now_ms))
        return _game_events(t, game, t.game_state, events, t.server_seed, t.hand_players, t.hand_no)
    except RuleViolation as v:
        return refusals.of(v)


def abort_hand(t: Table, reason: str) -> Decision:
    """An operator ends the running hand: no winner, no further settlement, the seed revealed.
    Payments already made during the hand (already in a Settlement) stand."""
    if not t.playing:
        return precondition("no_hand", "no hand is being played at this table")
    reason = reason.strip()
    if not reason or len(reason) > 200:
        return invalid("bad_reason", "an abort needs a reason of 1-200 characters")
    outcome = aborted(len(t.hand_players), reason, t.pot)
    return [_ev(hand_ended=log_pb2.HandEnded(hand_no=t.hand_no, outcome=codec.outcome_message(outcome),
                                              server_seed=t.server_seed, players=t.hand_players,
                                              ladder_level=t.ladder_level))]


def connection_lost(t: Table, player: str, now_ms: int, idle_stand_s: float = 60.0) -> Events:
    """The player's last stream closed: during a hand they play in, their reconnect grace starts;
    between hands, if seated, their idle stand (stood up at its end unless back). A seated player
    not in the hand being played: nothing (today's grace and auto-play are the hand's players')."""
    if player in t.auto or player in t.lost:
        return []
    if t.seat_of(player) is not None:
        deadline = now_ms + t.reconnect_grace_s * 1000
    elif not t.playing and player in t.seats:
        deadline = now_ms + int(idle_stand_s * 1000)
    else:
        return []
    return [_ev(connection_lost=log_pb2.ConnectionLost(player_id=player, deadline_ms=deadline))]


def extend_graces(t: Table, by_ms: int) -> Events:
    """Every lost player's reconnect grace ``by_ms`` later (a ``ConnectionLost`` with the new
    deadline): the time no process served the table is not held against them."""
    if by_ms <= 0:
        return []
    return [_ev(connection_lost=log_pb2.ConnectionLost(player_id=p, deadline_ms=d + by_ms))
            for p, d in sorted(t.lost.items())]


def reconnected(t: Table, player: str) -> Events:
    if player not in t.lost:
        return []
    return [_ev(reconnected=log_pb2.Reconnected(player_id=player))]


def disconnect(t: Table, player: str, now_ms: int) -> Events:
    """The player's grace is over: during a hand, ``Disconnected`` (auto-play); between hands, the
    idle stand: stood up (``PlayerLeft`` / ``idle``), hosting passing on as when they stand up."""
    deadline = t.lost.get(player)
    if deadline is None or deadline > now_ms:
        return []
    if not t.playing:
        stood = stand_down(t, [player], IDLE)
        return stood if isinstance(stood, list) else []
    seat = t.seat_of(player)
    if seat is None:
        return []
    return [_ev(disconnected=log_pb2.Disconnected(player_id=player, hand_no=t.hand_no, seat=seat,
                                                  ladder_level=t.ladder_level))]
