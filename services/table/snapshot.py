"""Table snapshots as protobuf (``chieu.table.v1.TableSnapshot``): every field of a folded
:class:`~chieu.tablelog.fold.Table`, the game's state in the rules core's plain encoding.

A snapshot is data, never code: it is read by field and by the game state's declared type, so
a process or an auditor of any version can read it, and whoever can write the bucket can at
worst make a table replay its log. A snapshot that does not decode, or whose game state has
another shape than the running code's, is refused with :class:`Unusable` (the log is replayed).
"""

from __future__ import annotations

from typing import Any

from google.protobuf.message import DecodeError

from chieu.games import plain
from chieu.table.v1 import snapshot_pb2
from chieu.tablelog import codec
from chieu.tablelog.fold import Table

FORMAT = 4
"""2: with the next hand's committed seed (``next_seed``); 3: with the commit–reveal round; 4: with
the gà pot's 金币 (``pot_coins``: a snapshot without it would start a coin table's pot at 0 金币, so
an older one is folded again)."""
TAG = f"table-snapshot-v{FORMAT}"
"""The tag the event store keeps beside a snapshot's bytes."""


class Unusable(ValueError):
    """A snapshot this code cannot use (another format or shape, or bytes that do not decode)."""


def _state_type(table: Table) -> type[Any]:
    """The game's state type (what ``initial`` returns)."""
    return type(table.game.initial(table.options, max(len(table.hand_players), table.game.min_players)))


def encode(table: Table) -> bytes:
    """The snapshot of ``table`` as bytes."""
    msg = snapshot_pb2.TableSnapshot(
        format=FORMAT, table_id=table.table_id, game=table.game_key, options=table.options_msg,
        host=table.host, max_seats=table.max_seats, seats=[p or "" for p in table.seats],
        seated_since=table.seated_since, client_seeds=table.client_seeds, ready=sorted(table.ready),
        require_ready=table.require_ready, reconnect_grace_s=table.reconnect_grace_s, stake=table.stake,
        currency=table.currency, pot=table.pot, pot_coins=table.pot_coins, version=table.version,
        last_seq=table.last_seq,
        hand_no=table.hand_no, playing=table.playing, hand_players=table.hand_players,
        owner_seat=table.owner_seat, server_seed=table.server_seed, commitment=table.commitment,
        settled_legs=table.settled_legs, auto_played=sorted(table.auto), lost=table.lost,
        away=sorted(table.away), unseen=sorted(table.unseen),
        last_hand_players=table.last_hand_players, last_server_seed=table.last_server_seed,
        commands=[snapshot_pb2.RememberedCommand(key=k, version=v, digest=d) for k, (v, d) in table.commands.items()],
        ladder_level=table.ladder_level, ladder_seq=table.ladder_seq, min_reputation=table.min_reputation,
        profiles={p: snapshot_pb2.Profile(name=n, avatar=a) for p, (n, a) in table.profiles.items()},
        next_seed=table.next_seed, reserved=table.reserved, hand_lost=table.hand_lost,
        commitments=table.commitments, round_players=table.round_players,
        round_deadline_ms=table.round_deadline_ms, round_reserved=table.round_reserved, revealed=table.revealed,
    )
    if table.game_state is not None:
        msg.game_state.shape = plain.shape(type(table.game_state))
        msg.game_state.json = plain.encode_state(table.game_state)
    if table.last_outcome is not None:
        msg.last_outcome.CopyFrom(codec.outcome_message(table.last_outcome))
    return msg.SerializeToString(deterministic=True)


def decode(data: bytes) -> Table:
    """The table a snapshot holds; :class:`Unusable` if this code cannot use it."""
    try:
        msg = snapshot_pb2.TableSnapshot.FromString(data)
    except DecodeError as e:
        raise Unusable(f"not a table snapshot: {e}") from None
    if msg.format != FORMAT:
        raise Unusable(f"snapshot format {msg.format}, expected {FORMAT}")
    try:
        table = Table(
            table_id=msg.table_id, game_key=msg.game, host=msg.host, max_seats=msg.max_seats,
            seats=[p or None for p in msg.seats], seated_since=dict(msg.seated_since),
            client_seeds=dict(msg.client_seeds), ready=set(msg.ready), require_ready=msg.require_ready,
            reconnect_grace_s=msg.reconnect_grace_s, stake=msg.stake, currency=msg.currency, pot=msg.pot,
            pot_coins=msg.pot_coins,
            version=msg.version, last_seq=msg.last_seq, hand_no=msg.hand_no, playing=msg.playing,
            hand_players=list(msg.hand_players), owner_seat=msg.owner_seat, server_seed=msg.server_seed,
            commitment=msg.commitment, settled_legs=msg.settled_legs, auto=set(msg.auto_played),
            lost=dict(msg.lost), away=set(msg.away), unseen=set(msg.unseen),
            last_hand_players=list(msg.last_hand_players),
            last_server_seed=msg.last_server_seed,
            commands={c.key: (c.version, c.digest) for c in msg.commands},
            ladder_level=msg.ladder_level, ladder_seq=msg.ladder_seq, min_reputation=msg.min_reputation,
            profiles={p: (v.name, v.avatar) for p, v in msg.profiles.items()},
            next_seed=msg.next_seed if msg.HasField("next_seed") else None,
            reserved=list(msg.reserved), hand_lost=list(msg.hand_lost),
            commitments=dict(msg.commitments), round_players=list(msg.round_players),
            round_deadline_ms=msg.round_deadline_ms, round_reserved=list(msg.round_reserved),
            revealed=dict(msg.revealed),
        )
        if msg.game:
            table.set_options(msg.options)
        if msg.HasField("last_outcome"):
            table.last_outcome = codec.outcome_from_message(msg.last_outcome)
        if msg.HasField("game_state"):
            cls = _state_type(table)
            if msg.game_state.shape != plain.shape(cls):
                raise Unusable(f"the {msg.game} state has another shape than this code's")
            table.game_state = plain.decode_state(cls, msg.game_state.json)
    except Unusable:
        raise
    except Exception as e:  # a snapshot is a cache: whatever does not fit is unusable, not fatal
        raise Unusable(f"{type(e).__name__}: {e}") from None
    return table
