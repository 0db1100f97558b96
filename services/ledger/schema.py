"""The ledger's tables, as ordered migrations (applied at start by ``chieu.kit.db.migrate``).

- ``ledger_accounts``: one row per account ``<kind>/<currency>/<owner>`` with its running
  balance; 金币 and 红心币 of players and gà pots never go below 0 (a CHECK, besides the code).
- ``ledger_postings``: one row per posting (its id is derived from the source) with a digest of
  its content: the same id with other content is refused.
- ``ledger_transfers``: immutable double-entry transfers (debit → credit, amount > 0).
- ``ledger_inbox``: one row per applied table-log message (stream sequence), written in the same
  transaction as its posting: exactly once from an at-least-once log.
- ``ledger_outbox``: announcements to other services (信誉度复位, 点歌, membership), same transaction.
- ``ledger_table_marks``: per table, the last stream sequence whose settlements were posted (or
  refused): the high-water mark that keeps one table's postings in stream order (V3).
- ``ledger_reward_days``: 金币 rewards credited per player and UTC day, for the daily cap (V5).
- ``ledger_holds`` / ``ledger_hold_log``: players whose 金币 are held for an operator's review,
  and every hold and release (V5).
- ``ledger_parked``: table-log records the ledger could not post, for an operator to retry (V6).
- ``ledger_reservations``: each seat's largest loss in a coin hand, reserved before it starts
  and closed when the log ends it (V7, :mod:`chieu.ledger.reservations`).
- ``ledger_flows``, ``ledger_flow_pots``, ``ledger_review_holds``, ``ledger_review_payers``: the
  collusion screen's 金币 flows between players per day, the gà pots' shares, and the holds of
  flagged winnings in their ``review`` escrow accounts (V8, :mod:`chieu.ledger.holds`).
- ``ledger_boards``: the leaderboards, one row per (game, board, period, player) — the points or
  金币 a player's settlements of that game moved this ISO week, this month and all time — raised in
  the settlement's posting transaction (so exactly once, as postings are), read by the index
  ``(game, board, period, score DESC, player_id)`` (V9).
"""

from __future__ import annotations

from chieu.ledger import holds
from chieu.ledger.parked import SCHEMA as PARKED
from chieu.ledger.reservations import SCHEMA as RESERVATIONS

V1 = """
CREATE TABLE ledger_accounts (
    id         text        PRIMARY KEY,
    kind       text        NOT NULL CHECK (kind IN ('player', 'pot', 'house', 'system')),
    currency   text        NOT NULL,
    owner      text        NOT NULL,
    balance    bigint      NOT NULL DEFAULT 0,
    opened_at  timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT wallet_not_negative CHECK (
        balance >= 0 OR kind NOT IN ('player', 'pot') OR currency NOT IN ('coins', 'hearts'))
);
CREATE INDEX ledger_accounts_owner ON ledger_accounts (owner, kind);

CREATE TABLE ledger_postings (
    id         text        PRIMARY KEY,
    digest     bytea       NOT NULL,
    kind       text        NOT NULL,
    table_id   text,
    hand_no    bigint,
    actor      text        NOT NULL DEFAULT '',
    memo       text        NOT NULL DEFAULT '',
    posted_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE ledger_transfers (
    seq        bigserial   PRIMARY KEY,
    id         text        NOT NULL UNIQUE,
    posting_id text        NOT NULL REFERENCES ledger_postings (id),
    debit      text        NOT NULL REFERENCES ledger_accounts (id),
    credit     text        NOT NULL REFERENCES ledger_accounts (id),
    currency   text        NOT NULL,
    amount     bigint      NOT NULL CHECK (amount > 0),
    owed       bigint      NOT NULL CHECK (owed >= 0),
    reason     text        NOT NULL,
    table_id   text,
    hand_no    bigint,
    posted_at  timestamptz NOT NULL DEFAULT now(),
    CHECK (debit <> credit)
);
CREATE INDEX ledger_transfers_debit ON ledger_transfers (debit, seq);
CREATE INDEX ledger_transfers_credit ON ledger_transfers (credit, seq);
CREATE INDEX ledger_transfers_posting ON ledger_transfers (posting_id);

CREATE TABLE ledger_inbox (
    stream     text        NOT NULL,
    seq        bigint      NOT NULL,
    posting_id text,
    outcome    text        NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (stream, seq)
);

CREATE TABLE ledger_outbox (
    id           bigserial   PRIMARY KEY,
    posting_id   text        NOT NULL REFERENCES ledger_postings (id),
    topic        text        NOT NULL,
    payload      jsonb       NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    published_at timestamptz
);
CREATE INDEX ledger_outbox_pending ON ledger_outbox (id) WHERE published_at IS NULL;

CREATE TABLE ledger_memberships (
    player_id  text        PRIMARY KEY,
    days       bigint      NOT NULL DEFAULT 0 CHECK (days >= 0)
);

-- Transfers and postings are immutable: no UPDATE, no DELETE, ever.
CREATE FUNCTION ledger_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'ledger rows are immutable (% on %)', TG_OP, TG_TABLE_NAME;
END $$;
CREATE TRIGGER ledger_transfers_immutable BEFORE UPDATE OR DELETE ON ledger_transfers
    FOR EACH ROW EXECUTE FUNCTION ledger_immutable();
CREATE TRIGGER ledger_postings_immutable BEFORE UPDATE OR DELETE ON ledger_postings
    FOR EACH ROW EXECUTE FUNCTION ledger_immutable();
"""

V2 = """
-- history by table (and hand): one index range scan, however many transfers the player has
CREATE INDEX ledger_transfers_table ON ledger_transfers (table_id, hand_no, seq);
"""

V3 = """
-- per table, the stream sequence of the last settlement record posted (or refused): locked and
-- raised in the posting transaction, so one table's settlements are posted in stream order
CREATE TABLE ledger_table_marks (
    stream     text        NOT NULL,
    table_id   text        NOT NULL,
    seq        bigint      NOT NULL,
    PRIMARY KEY (stream, table_id)
);
-- which ledger process applied a message (host:pid), for operations and the two-process tests
ALTER TABLE ledger_inbox ADD COLUMN applied_by text NOT NULL DEFAULT '';
"""

V4 = """
-- every hand the table log started (HandStarted), with its money terms: a settlement is posted
-- only for a hand started before it in the stream, with the same game, stake, currency, players
CREATE TABLE ledger_hands (
    stream     text        NOT NULL,
    table_id   text        NOT NULL,
    hand_no    bigint      NOT NULL,
    seq        bigint      NOT NULL,
    game       text        NOT NULL,
    stake      bigint      NOT NULL,
    currency   integer     NOT NULL,
    players    text[]      NOT NULL,
    PRIMARY KEY (stream, table_id, hand_no)
);
"""

V5 = """
-- the 金币 rewards credited per player and UTC day: raised in the reward's posting transaction,
-- only while the day's total stays within CHIEU_REWARD_DAILY_CAP
CREATE TABLE ledger_reward_days (
    player_id  text        NOT NULL,
    day        date        NOT NULL,
    coins      bigint      NOT NULL CHECK (coins >= 0),
    PRIMARY KEY (player_id, day)
);
-- players whose 金币 are held for an operator's review: only a settlement or an adjustment takes
-- coins from a held account, and it is not eligible for coin tables
CREATE TABLE ledger_holds (
    player_id  text        PRIMARY KEY,
    reason     text        NOT NULL,
    held_by    text        NOT NULL,
    held_at    timestamptz NOT NULL DEFAULT now()
);
-- every hold and release, for the review's record (never updated)
CREATE TABLE ledger_hold_log (
    id         bigserial   PRIMARY KEY,
    player_id  text        NOT NULL,
    action     text        NOT NULL CHECK (action IN ('hold', 'release')),
    reason     text        NOT NULL,
    actor      text        NOT NULL,
    at         timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX ledger_hold_log_player ON ledger_hold_log (player_id, id);
"""

V6 = PARKED
"""``ledger_parked``: records of the table log that could not be posted (:mod:`chieu.ledger.parked`)."""
V7 = RESERVATIONS
"""The hands' reservations at coin tables (:mod:`chieu.ledger.reservations`)."""
V8 = holds.MIGRATION
"""The collusion screen's flows and its holds of flagged winnings (:mod:`chieu.ledger.holds`)."""

V9 = """
-- the leaderboards: per game, board ('points': the game's score points at points tables; 'coins':
-- 金币 won at its coin tables), period ('all', 'm2026-11', 'w2026-W48', UTC) and player, the net
-- amount the player's settlements moved and how many settlements; raised with the posting
CREATE TABLE ledger_boards (
    game       text        NOT NULL,
    board      text        NOT NULL CHECK (board IN ('points', 'coins')),
    period     text        NOT NULL,
    player_id  text        NOT NULL,
    score      bigint      NOT NULL DEFAULT 0,
    hands      bigint      NOT NULL DEFAULT 0,
    PRIMARY KEY (game, board, period, player_id)
);
-- a page is one range scan of this index, from the top or from a cursor (score, player_id); hands
-- rides along, so a page is read from the index alone (no heap page per row, where it is all-visible)
CREATE INDEX ledger_boards_rank ON ledger_boards (game, board, period, score DESC, player_id) INCLUDE (hands);
""" + "\n"

BOARDS_BACKFILL = """
-- the settlements posted before the boards existed, counted once as the posting counts them (the net
-- of each player's account over the posting's transfers, in the week and month of posted_at, UTC)
INSERT INTO ledger_boards (game, board, period, player_id, score, hands)
SELECT p.memo, CASE WHEN x.currency = 'coins' THEN 'coins' ELSE 'points' END, per.period, x.owner,
       sum(x.delta), count(DISTINCT p.id)
FROM ledger_postings AS p
JOIN LATERAL (
    SELECT t.currency, a.owner, CASE WHEN a.id = t.credit THEN t.amount ELSE -t.amount END AS delta
    FROM ledger_transfers AS t
    JOIN ledger_accounts AS a ON a.id IN (t.debit, t.credit) AND a.kind = 'player'
    WHERE t.posting_id = p.id) AS x ON true
CROSS JOIN LATERAL (VALUES ('all'), ('m' || to_char(p.posted_at AT TIME ZONE 'UTC', 'YYYY-MM')),
                           ('w' || to_char(p.posted_at AT TIME ZONE 'UTC', 'IYYY-"W"IW'))) AS per(period)
WHERE p.kind = 'settlement' AND p.memo <> '' AND (x.currency = 'coins' OR x.currency LIKE 'points:%')
GROUP BY 1, 2, 3, 4;
"""
"""The boards of what was posted before V9 (once, in V9's migration); a test holds it to the live upkeep."""

V9 += BOARDS_BACKFILL

MIGRATIONS: tuple[str, ...] = (V1, V2, V3, V4, V5, V6, V7, V8, V9)
"""Append only: a new script for every change; never edit an applied one."""
