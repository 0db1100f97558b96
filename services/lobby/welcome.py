"""The welcome 金币 paid once a new player has played (issue 32, point 7): a café lets 50 real
people in, a script still moves at most one welcome bonus into any account.

- At a new player's first sign-in the lobby takes the welcome from the allowances — one per
  device (``CHIEU_LOBBY_WELCOME_PER_DEVICE``) and a café-sized number per address
  (``CHIEU_LOBBY_WELCOME_PER_ADDRESS``, 60 a day) — and marks it ``pending``; nothing is paid yet.
- The lobby's projection of the table log counts every finished hand each player played against
  at least one other player (``lobby_hands_played``, in the projection's transaction: exactly
  once, :func:`count`).
- At the player's next sign-in or token refresh after ``CHIEU_LOBBY_WELCOME_AFTER_HANDS`` (3)
  such hands, the welcome is paid (``ClaimWelcome``, idempotent in the ledger) and marked
  ``claimed``.
- Coins farmed this way are not transferable by dumping: the ledger's collusion screen holds the
  winnings of an account that a second account funded by its welcome alone emptied itself into
  (``CHIEU_SCREEN_WELCOME_PAYERS``, docs/ledger.md).
"""

from __future__ import annotations

import asyncpg

from chieu.kit import db
from chieu.table.v1 import log_pb2

PENDING = "pending"
"""``lobby_players.welcome`` of a player whose welcome waits for its hands."""


async def count(conn: db.Conn, record: log_pb2.Record) -> None:
    """Count the hands a record ends for each of their players, when they had an opponent."""
    for e in record.events:
        if e.WhichOneof("kind") != "hand_ended":
            continue
        players = sorted(set(e.hand_ended.players) - {""})
        if len(players) >= 2:
            await conn.execute(
                "INSERT INTO lobby_hands_played (player_id, hands) SELECT p, 1 FROM unnest($1::text[]) AS p"
                " ON CONFLICT (player_id) DO UPDATE SET hands = lobby_hands_played.hands + 1", players)


async def mark_pending(pool: asyncpg.Pool, player_id: str) -> None:
    """Mark a new player's welcome, taken from the allowances, as waiting: for its hands, or for a
    ledger that could not pay it."""
    await pool.execute("UPDATE lobby_players SET welcome = $2 WHERE player_id = $1 AND welcome = ''", player_id,
                       PENDING)


async def played(conn: db.Conn, player_id: str) -> int:
    """The hands ``player_id`` finished against an opponent."""
    return int(await conn.fetchval("SELECT hands FROM lobby_hands_played WHERE player_id = $1", player_id) or 0)


MIGRATION = """
-- the finished hands each player played against an opponent (chieu.lobby.welcome): the welcome
-- 金币 are paid after a few
CREATE TABLE lobby_hands_played (
    player_id  text        PRIMARY KEY,
    hands      bigint      NOT NULL DEFAULT 0
);
"""
