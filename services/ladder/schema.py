"""The ladder's tables, as ordered migrations (applied at start by ``chieu.kit.db.migrate``).

- ``ladder_standings``: one row per (game, player): the current ``(level, best, lp)`` — a
  projection of the history, changed only in the transaction that writes its history row —
  and ``reached``, the history id at which the player reached this standing (the tie-break:
  who reached it first ranks first).
- ``ladder_buckets``: how many players of a game stand at each ``(best, level, lp)``; a
  player's rank is the players in the buckets ahead plus those of the same bucket who reached
  it first (a few hundred buckets, however many players).
- ``ladder_history``: immutable rows, one per change (a game's result, a penalty, a
  correction), before → after, with the table, the hand and the cause's stream sequence. One
  result or penalty per (table, hand, player): a penalty written at a quit keeps the hand's end
  from counting the player again.
- ``ladder_inbox``: one row per applied table-log message (stream sequence), in the same
  transaction as its changes; ``ladder_cursor``: the stream sequence of the last applied
  message, locked and raised in that transaction (messages are applied in stream order, so
  every player's changes are in stream order whatever the number of consumers).
- ``ladder_reputation`` and ``ladder_reputation_changes``: 信誉度 and its immutable changes
  (a quit, a disconnect, a paid reset), each once by its ``cause_key``.
- ``ladder_rewards``: 金币 rewards for the ledger to pay, by an id derived from their source
  (``ladder/best/<game>/<player>/<best>``, ``ladder/monthly/<game>/<month>/<player>``);
  ``ladder_months``: a month whose rewards were decided (decided once, paid once). ``paid_at``
  and ``attempts`` are from the time the ladder paid through an RPC (before V2).
- ``ladder_outbox``: announcements (``best_level_up``) and reward records (``reward``, read by
  the ledger), written with the change, relayed to JetStream ``chieu.ladder.<topic>``.
"""

from __future__ import annotations

V1 = """
CREATE TABLE ladder_standings (
    game       text        NOT NULL,
    player_id  text        NOT NULL,
    level      integer     NOT NULL CHECK (level >= 1),
    best       integer     NOT NULL CHECK (best >= level),
    lp         integer     NOT NULL,
    games      bigint      NOT NULL DEFAULT 0,
    reached    bigint      NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (game, player_id)
);
CREATE INDEX ladder_standings_rank ON ladder_standings (game, best DESC, level DESC, lp DESC, reached, player_id);
CREATE INDEX ladder_standings_player ON ladder_standings (player_id);

CREATE TABLE ladder_buckets (
    game       text        NOT NULL,
    best       integer     NOT NULL,
    level      integer     NOT NULL,
    lp         integer     NOT NULL,
    players    bigint      NOT NULL,
    PRIMARY KEY (game, best, level, lp)
);

CREATE TABLE ladder_history (
    id           bigserial   PRIMARY KEY,
    player_id    text        NOT NULL,
    game         text        NOT NULL,
    cause        text        NOT NULL CHECK (cause IN ('result', 'penalty', 'correction')),
    result       text        NOT NULL DEFAULT '',
    table_id     text,
    hand_no      bigint,
    table_level  integer     NOT NULL DEFAULT 0,
    level_before integer     NOT NULL,
    best_before  integer     NOT NULL,
    lp_before    integer     NOT NULL,
    level_after  integer     NOT NULL,
    best_after   integer     NOT NULL,
    lp_after     integer     NOT NULL,
    stream_seq   bigint,
    correction_id text       UNIQUE,
    digest       text        NOT NULL DEFAULT '',
    actor        text        NOT NULL DEFAULT '',
    reason       text        NOT NULL DEFAULT '',
    at           timestamptz NOT NULL,
    month        text        NOT NULL,
    reached      bigint      NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX ladder_history_once ON ladder_history (table_id, hand_no, player_id)
    WHERE cause IN ('result', 'penalty');
CREATE INDEX ladder_history_player ON ladder_history (player_id, id);
CREATE INDEX ladder_history_player_game ON ladder_history (player_id, game, id);
CREATE INDEX ladder_history_month ON ladder_history (game, month, player_id, id);

CREATE TABLE ladder_inbox (
    stream     text        NOT NULL,
    seq        bigint      NOT NULL,
    outcome    text        NOT NULL,
    applied_by text        NOT NULL DEFAULT '',
    applied_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (stream, seq)
);

CREATE TABLE ladder_cursor (
    stream     text        PRIMARY KEY,
    seq        bigint      NOT NULL
);

CREATE TABLE ladder_reputation (
    player_id   text        PRIMARY KEY,
    score       integer     NOT NULL,
    quits       bigint      NOT NULL DEFAULT 0,
    disconnects bigint      NOT NULL DEFAULT 0,
    updated_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE ladder_reputation_changes (
    id         bigserial   PRIMARY KEY,
    player_id  text        NOT NULL,
    cause      text        NOT NULL CHECK (cause IN ('quit', 'disconnect', 'reset')),
    cause_key  text        NOT NULL UNIQUE,
    before     integer     NOT NULL,
    after      integer     NOT NULL,
    at         timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX ladder_reputation_changes_player ON ladder_reputation_changes (player_id, id);

CREATE TABLE ladder_rewards (
    reward_id  text        PRIMARY KEY,
    player_id  text        NOT NULL,
    game       text        NOT NULL,
    kind       text        NOT NULL CHECK (kind IN ('best', 'monthly')),
    coins      bigint      NOT NULL CHECK (coins > 0),
    reason     text        NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    paid_at    timestamptz,
    attempts   integer     NOT NULL DEFAULT 0,
    last_error text        NOT NULL DEFAULT ''
);
CREATE INDEX ladder_rewards_unpaid ON ladder_rewards (created_at) WHERE paid_at IS NULL;

CREATE TABLE ladder_months (
    game       text        NOT NULL,
    month      text        NOT NULL,
    decided_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (game, month)
);

CREATE TABLE ladder_outbox (
    id           bigserial   PRIMARY KEY,
    topic        text        NOT NULL,
    payload      jsonb       NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    published_at timestamptz
);
CREATE INDEX ladder_outbox_pending ON ladder_outbox (id) WHERE published_at IS NULL;

-- History rows are immutable: a correction is a new row, never an update in place.
CREATE FUNCTION ladder_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'ladder history rows are immutable (% on %)', TG_OP, TG_TABLE_NAME;
END $$;
CREATE TRIGGER ladder_history_immutable BEFORE UPDATE OR DELETE ON ladder_history
    FOR EACH ROW EXECUTE FUNCTION ladder_immutable();
CREATE TRIGGER ladder_reputation_changes_immutable BEFORE UPDATE OR DELETE ON ladder_reputation_changes
    FOR EACH ROW EXECUTE FUNCTION ladder_immutable();
"""

V2 = """
-- rewards reach the ledger as records on chieu.ladder.reward (the outbox's 'reward' topic), no
-- longer through an RPC: every reward not yet paid that way is announced once now
INSERT INTO ladder_outbox (topic, payload)
SELECT 'reward', jsonb_build_object('reward_id', reward_id, 'player_id', player_id, 'game', game, 'kind', kind,
                                    'coins', coins, 'reason', reason)
FROM ladder_rewards WHERE paid_at IS NULL ORDER BY created_at, reward_id;
"""

MIGRATIONS: tuple[str, ...] = (V1, V2)
"""Append only: a new script for every change; never edit an applied one."""
