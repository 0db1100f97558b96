"""Two-phase money at coin tables: a hand's reservations, as TigerBeetle's pending transfers.

Before a coin table's hand starts, the table service asks :meth:`Reservations.reserve` (the RPC
``ReserveHand``) to set aside each seat's largest possible loss in the hand: all seats or none, in
one transaction, from each player's 金币 not already reserved for other hands. While the hand is
in play the reserved 金币 are spoken for: another hand's reservation, and every posting that is not
a settlement (paid services, conversions, adjustments), sees only the balance less what is
reserved (:meth:`Reservations.held`, the books' ``holds_back``). The table caps every settlement
of the hand within the reservations and logs the capped amounts; the consumer posts exactly them
(a reserved seat always has them) and closes the hand's reservations when the log ends the hand
(the statement that writes the ``HandEnded`` record's inbox row, in the transaction that posts
its last settlement: ``chieu.ledger.books.inbox_and_mark``), posting the loss and releasing the
rest in one step — a void of what is left, in TigerBeetle's words.

Keys: a reservation is ``(table_id, hand_no, player_id)``; the same table and hand asked again
with the same seats returns the first answer (``replayed``), so a retried start or a table process
taking over mid-start never reserves twice. Asked with other seats (the seats changed between two
tries of a start that never reached the log) it replaces a reservation whose hand the log has not
started; one whose hand started, or ended, is refused (``id_reused``). A reservation whose hand
never starts (the start failed after the ledger answered) stops counting after
:data:`UNSTARTED_TTL_S`; a started one counts until its ``HandEnded``.

The log is the authority: when the consumer applies a ``HandStarted`` with reservations, the
ledger's reservations of that hand are made exactly the log's (:func:`started`). So the reservation
commits without waiting for its flush to disk (``synchronous_commit off``, the one fsync a start
would otherwise wait for): what a database crash in that instant loses, the log writes back.

Holding back is conservative: the whole reservation counts until the hand ends, even after the
seat lost part of it (then its balance already fell by that part), so what a player may spend
elsewhere is never more than what is safe.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import asyncpg

from chieu.kit import db
from chieu.kit.errors import precondition
from chieu.table.v1 import log_pb2

UNSTARTED_TTL_S = 120
"""How long a reservation whose hand the log never started keeps its 金币 (a start that failed
after the ledger reserved: the table asks again under the same key, or never)."""

_HELD = """
SELECT r.player_id, sum(r.coins)::bigint AS coins FROM ledger_reservations r
WHERE r.player_id = ANY($1::text[]) AND r.closed_at IS NULL
  AND (r.created_at > now() - make_interval(secs => $2)
       OR EXISTS (SELECT 1 FROM ledger_hands h WHERE h.stream = $3 AND h.table_id = r.table_id
                  AND h.hand_no = r.hand_no))
GROUP BY r.player_id
"""


_LOCK = """
WITH unflushed AS (SELECT set_config('synchronous_commit', 'off', true))
SELECT a.id, a.balance FROM ledger_accounts a, unflushed WHERE a.id = ANY($1::text[]) ORDER BY a.id FOR UPDATE OF a
"""
"""Lock the players' 金币 accounts; this transaction commits without waiting for its flush."""

_STATE = """
SELECT
  (SELECT coalesce(jsonb_object_agg(player_id, jsonb_build_array(coins, closed_at IS NOT NULL)), '{}')
   FROM ledger_reservations WHERE table_id = $1 AND hand_no = $2) AS before,
  EXISTS (SELECT 1 FROM ledger_hands WHERE stream = $5 AND table_id = $1 AND hand_no = $2) AS started,
  (SELECT coalesce(jsonb_object_agg(player_id, coins), '{}') FROM (
     SELECT r.player_id, sum(r.coins)::bigint AS coins FROM ledger_reservations r
     WHERE r.player_id = ANY($3::text[]) AND r.closed_at IS NULL AND NOT (r.table_id = $1 AND r.hand_no = $2)
       AND (r.created_at > now() - make_interval(secs => $4)
            OR EXISTS (SELECT 1 FROM ledger_hands h WHERE h.stream = $5 AND h.table_id = r.table_id
                       AND h.hand_no = r.hand_no))
     GROUP BY r.player_id) h) AS held
"""
"""One hand's reservations before (player → [coins, closed]), whether the log started it, and each
player's 金币 reserved for other hands in play."""


def covers(free: int, need: int) -> bool:
    """Whether 金币 ``free`` (a balance less what its hands in play reserve) cover a seat's
    reservation ``need``: the one rule of ``ReserveHand`` and of every entry gate that asks
    ``CheckEligibility`` with a need (the table's seats, the lobby's rooms and quick seat)."""
    return free >= need


@dataclass(frozen=True, slots=True)
class Answer:
    """What a reservation did: every seat reserved (or none: ``short`` names who could not)."""

    reserved: bool
    short: tuple[str, ...] = ()
    replayed: bool = False


class Reservations:
    """The hands' reservations on the ledger's pool; ``stream``: the table log's name (whose
    ``ledger_hands`` say which hands started)."""

    def __init__(self, pool: asyncpg.Pool, stream: str) -> None:
        self.pool = pool
        self.stream = stream

    async def free(self, player: str, balance: int) -> int:
        """``player``'s 金币 not reserved for hands in play, of ``balance`` (what a reservation of
        theirs is held to: :func:`covers`)."""
        async with self.pool.acquire() as conn:
            return balance - (await self.held(conn, [player])).get(player, 0)

    async def held(self, conn: db.Conn, players: Sequence[str]) -> dict[str, int]:
        """The 金币 of each of ``players`` reserved for hands in play (absent: none)."""
        rows = await conn.fetch(_HELD, list(players), UNSTARTED_TTL_S, self.stream)
        return {r["player_id"]: int(r["coins"]) for r in rows}

    async def reserve(self, table_id: str, hand_no: int, seats: Mapping[str, int]) -> Answer:
        """Reserve ``seats`` (player → 金币) for the hand, all or none; idempotent by table and hand."""
        players = sorted(seats)
        accounts = [f"player/coins/{p}" for p in players]
        async with self.pool.acquire() as conn, conn.transaction():
            # the players' 金币 accounts, locked in the books' one order: a posting or another
            # reservation of theirs waits for this one (and never deadlocks with it); the commit
            # does not wait for its flush (the log writes a lost reservation back: module docstring)
            rows = await conn.fetch(_LOCK, accounts)
            # after the lock (its own statement, so it sees what the lock waited for): this hand's
            # reservations before, whether the log started it, what the players have reserved elsewhere
            state = await conn.fetchrow(_STATE, table_id, hand_no, players, UNSTARTED_TTL_S, self.stream)
            assert state is not None  # one row, always
            before = {p: tuple(v) for p, v in json.loads(state["before"]).items()}
            if before:
                if {p: v[0] for p, v in before.items()} == dict(seats):
                    return Answer(True, replayed=True)
                if state["started"] or any(closed for _, closed in before.values()):
                    raise precondition("id_reused", f"hand {hand_no} of table {table_id} was reserved for "
                                       "other seats, and has started")
                await conn.execute("DELETE FROM ledger_reservations WHERE table_id = $1 AND hand_no = $2",
                                   table_id, hand_no)
            balance = {r["id"]: int(r["balance"]) for r in rows}
            held = {p: int(c) for p, c in json.loads(state["held"]).items()}
            short = tuple(p for p, a in zip(players, accounts, strict=True)
                          if not covers(balance.get(a, 0) - held.get(p, 0), seats[p]))
            if short:
                return Answer(False, short)
            await conn.execute(
                "INSERT INTO ledger_reservations (table_id, hand_no, player_id, coins)"
                " SELECT $1, $2, p, c FROM unnest($3::text[], $4::bigint[]) AS s(p, c)",
                table_id, hand_no, players, [seats[p] for p in players])
        return Answer(True)


async def started(conn: db.Conn, table_id: str, hand: log_pb2.HandStarted) -> None:
    """The log started ``hand`` with its reservations (``HandStarted.reserved``): the ledger's are
    made exactly the log's — written again if lost (a crash right after ``ReserveHand`` answered),
    the log's seats and amounts if they differ. In the transaction that applies the record."""
    if not hand.reserved:
        return
    await conn.execute(
        """WITH gone AS (DELETE FROM ledger_reservations WHERE table_id = $1 AND hand_no = $2
                         AND NOT (player_id = ANY($3::text[])))
           INSERT INTO ledger_reservations (table_id, hand_no, player_id, coins)
           SELECT $1, $2, p, c FROM unnest($3::text[], $4::bigint[]) AS s(p, c)
           ON CONFLICT (table_id, hand_no, player_id) DO UPDATE SET coins = excluded.coins
           WHERE ledger_reservations.closed_at IS NULL AND ledger_reservations.coins <> excluded.coins""",
        table_id, int(hand.hand_no), list(hand.players), [int(c) for c in hand.reserved])


SCHEMA = """
-- two-phase money at coin tables: each seat's largest loss in a hand, reserved before it starts
-- (ReserveHand), spoken for until the log ends the hand (closed_at)
CREATE TABLE ledger_reservations (
    table_id   text        NOT NULL,
    hand_no    bigint      NOT NULL,
    player_id  text        NOT NULL,
    coins      bigint      NOT NULL CHECK (coins > 0),
    created_at timestamptz NOT NULL DEFAULT now(),
    closed_at  timestamptz,
    PRIMARY KEY (table_id, hand_no, player_id)
);
CREATE INDEX ledger_reservations_open ON ledger_reservations (player_id) WHERE closed_at IS NULL;
"""
"""The migration (``chieu.ledger.schema``, V6)."""
