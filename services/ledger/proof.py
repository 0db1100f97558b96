"""A ladder reward is paid only for what the table log proves (issue 32, attack 4): no service
credential alone creates money.

The ladder's NATS user may publish reward records (``chieu.ladder.reward``), so a record alone
proves nothing: whoever holds that credential could write any JSON. Before paying one, the
ledger reads the table log itself, with its own NATS user, and checks the record against it:

- **A new best level** (``kind`` ``best``, id ``ladder/best/<game>/<player>/<best>``) names the
  table-log record whose hand raised the best (``source``: table, hand, stream sequence). That
  record, read from ``CHIEU_TABLES`` by its sequence, must be on that table's subject and end that
  hand of that game at a ladder table of level ``best − 1`` (a player sits only at tables of their
  level or below, and a win at a table below their level counts nothing: the win that takes a
  player from level L to L + 1 is at a table of level L), the player must have won it (the winner,
  or a positive score in a team game; not a seat that quit or lost its connection in it), and the
  coins must be ``best × CHIEU_LADDER_REWARD_BEST_COINS``. The reward id is one per (game,
  player, level), so each level is paid once whatever is published.
- **A month's place** (``kind`` ``monthly``) is an operator's decision (``PayMonthlyRewards``): it
  is paid only by the operator's own ``CreditReward`` (the ladder passes the operator's token on),
  never from a record.

- **The level itself**: the ladder's rules folded over the table log by the ledger
  (:mod:`chieu.ledger.climb`, as the auditor folds them) must raise the player's best level of
  that game to ``best`` at exactly that record. A real win at level L named for the reward of
  L + 1 before the player had the level points for it (a forgery one level ahead, with the
  ladder's credential) is refused.

Anything else is refused (``reward_unproven``, ``reward_operator_only``), recorded in the inbox,
logged, and never paid.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from google.protobuf.message import DecodeError
from nats.js.errors import BadRequestError, NotFoundError

from chieu.games import registry
from chieu.kit import names
from chieu.kit.errors import ServiceError, precondition
from chieu.ledger.climb import LogClimb
from chieu.table.v1 import log_pb2


@dataclass(frozen=True, slots=True)
class Source:
    """The table-log record a reward names as the one that earned it."""

    table_id: str
    hand_no: int
    seq: int


@dataclass(frozen=True, slots=True)
class Claim:
    """What a reward record asks to be paid."""

    reward_id: str
    player_id: str
    coins: int
    reason: str
    kind: str
    game: str
    source: Source | None


def unproven(message: str) -> ServiceError:
    return precondition("reward_unproven", message)


def source_of(payload: dict[str, Any]) -> Source | None:
    """The record's ``source`` (``None`` when absent or malformed)."""
    s = payload.get("source")
    if not isinstance(s, dict):
        return None
    try:
        table_id, hand_no, seq = str(s["table_id"]), s["hand_no"], s["stream_seq"]
    except KeyError:
        return None
    if not all(isinstance(v, int) and not isinstance(v, bool) and 0 < v < 2**63 for v in (hand_no, seq)):
        return None
    return Source(table_id, int(hand_no), int(seq))


def best_of(claim: Claim) -> int:
    """The level a best-level reward's id names (``unproven`` when the id is not one)."""
    prefix = f"ladder/best/{claim.game}/{claim.player_id}/"
    level = claim.reward_id.removeprefix(prefix)
    if not claim.reward_id.startswith(prefix) or not level.isdigit() or int(level) < 2:
        raise unproven(f"{claim.reward_id} is not ladder/best/<game>/<player>/<level ≥ 2>")
    return int(level)


async def prove(js: Any, claim: Claim, best_coins: int, tables: names.Stream = names.TABLES,
                climb: LogClimb | None = None) -> None:
    """Raise ``reward_unproven`` / ``reward_operator_only`` unless the table log proves ``claim``
    (above; ``climb``: the ladder folded over ``tables``, a fresh one when not given); a NATS error
    passes through (the record waits, like any other)."""
    if claim.kind == "monthly":
        raise precondition("reward_operator_only", "a month's reward is paid by the operator's CreditReward "
                                                   "(PayMonthlyRewards), never from a record")
    if claim.kind != "best":
        raise unproven(f"a reward of kind {claim.kind!r}: only a new best level is paid from a record")
    best = best_of(claim)
    if best_coins <= 0 or claim.coins != best * best_coins:
        raise unproven(f"a best level of {best} pays {best * best_coins} 金币 here "
                       f"(CHIEU_LADDER_REWARD_BEST_COINS = {best_coins}), not {claim.coins}")
    s = claim.source
    if s is None:
        raise unproven("the record names no table-log record that earned it")
    try:
        msg = await js.get_msg(tables.name, seq=s.seq)
    except (NotFoundError, BadRequestError):  # no such record (a server that is away passes through: it waits)
        raise unproven(f"no record {s.seq} in {tables.name}") from None
    if msg.subject != tables.subject(s.table_id) or not msg.data:
        raise unproven(f"record {s.seq} of {tables.name} is not one of table {s.table_id}")
    try:
        record = log_pb2.Record.FromString(msg.data)
    except DecodeError:
        raise unproven(f"record {s.seq} of {tables.name} is no table record") from None
    if record.table_id != s.table_id or record.game != claim.game:
        raise unproven(f"record {s.seq} is of table {record.table_id} ({record.game}), not {s.table_id} "
                       f"({claim.game})")
    ended = [e.hand_ended for e in record.events
             if e.WhichOneof("kind") == "hand_ended" and e.hand_ended.hand_no == s.hand_no]
    if not ended:
        raise unproven(f"record {s.seq} does not end hand {s.hand_no}")
    h = ended[0]
    if h.ladder_level < 1 or best != h.ladder_level + 1:
        raise unproven(f"hand {s.hand_no} of {s.table_id} was played at ladder level {h.ladder_level}: a win "
                       f"there reaches level {h.ladder_level + 1} at most, not {best}")
    if claim.player_id not in h.players or h.outcome.reason.startswith("aborted"):
        raise unproven(f"{claim.player_id} did not play hand {s.hand_no} of {s.table_id} to its end")
    seat = list(h.players).index(claim.player_id)
    o = h.outcome
    team = claim.game in registry.team_games()
    won = (seat < len(o.scores) and o.scores[seat] > 0) if team else (o.HasField("winner") and o.winner == seat)
    penalised = any(e.WhichOneof("kind") in ("forced_quit", "disconnected")
                    and getattr(e, e.WhichOneof("kind") or "").player_id == claim.player_id for e in record.events)
    if not won or penalised:
        raise unproven(f"{claim.player_id} did not win hand {s.hand_no} of {s.table_id}")
    climb = climb or LogClimb(js, tables=tables)
    reached = await climb.reached_at(claim.game, claim.player_id, best, s.seq)
    if reached != s.seq:
        where = "not by then" if reached is None else f"at record {reached}"
        raise unproven(f"the ladder's rules over the table log raise {claim.player_id}'s best level of {claim.game} "
                       f"to {best} {where}, not at record {s.seq}")
