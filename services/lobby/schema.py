"""The lobby's tables, as ordered migrations (applied at start by ``chieu.kit.db.migrate``).

- ``lobby_players``: every player the lobby signed in (guest or account), whether the welcome
  金币 were claimed.
- ``lobby_devices``: a device id's guest player (one per device).
- ``lobby_accounts``: username (lower-case, unique) → player, with the Argon2id password hash.
- ``lobby_sessions``: one row per sign-in; a session is one refresh-token family.
- ``lobby_refresh``: refresh tokens by SHA-256 (never the token itself); ``spent_at`` once traded:
  a spent token presented again revokes the session.
- ``lobby_access``: access tokens by SHA-256 with their session: sign-out and revocation find the
  session of a token, and ``ListRevocations`` lists the revoked ones not yet expired.
- ``lobby_revocations``: one row per revoked access token (cursor = id).
- ``lobby_attempts``: failed sign-ins per key (an account and a device, an account and an address,
  a device, an address), each with the time its next try may come (V2: a delay that grows).
- ``lobby_limits``: the new-player and welcome-coin limits per address and per device (V2), one
  theoretical arrival time per key (GCRA, as :class:`chieu.kit.limits.Rate` counts).
- ``lobby_rooms`` and ``lobby_room_audit``: rooms (operator data) and every change with its reason.
- ``lobby_tables``: the live table list, folded from the table log; ``lobby_table_rooms``: the
  room the lobby created a table for (quick seat).
- ``lobby_inbox``: one row per applied table-log message (stream sequence), in the same
  transaction as the change it made: exactly once from an at-least-once log.
- ``lobby_hands_played``: the finished hands each player played against an opponent, for the
  welcome 金币 paid after a few (V3, :mod:`chieu.lobby.welcome`).
"""

from __future__ import annotations

from chieu.lobby import welcome

V1 = """
CREATE TABLE lobby_players (
    player_id   text        PRIMARY KEY,
    name        text        NOT NULL,
    guest       boolean     NOT NULL,
    roles       text[]      NOT NULL DEFAULT ARRAY['player'],
    welcome     text        NOT NULL DEFAULT '',
    created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE lobby_devices (
    device_id   text        PRIMARY KEY,
    player_id   text        NOT NULL REFERENCES lobby_players (player_id),
    created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE lobby_accounts (
    username    text        PRIMARY KEY,
    player_id   text        NOT NULL UNIQUE REFERENCES lobby_players (player_id),
    password    text        NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE lobby_sessions (
    id          text        PRIMARY KEY,
    player_id   text        NOT NULL REFERENCES lobby_players (player_id),
    device_id   text        NOT NULL DEFAULT '',
    created_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz NOT NULL,
    revoked_at  timestamptz,
    revoked_why text        NOT NULL DEFAULT ''
);
CREATE INDEX lobby_sessions_player ON lobby_sessions (player_id) WHERE revoked_at IS NULL;

CREATE TABLE lobby_refresh (
    hash        bytea       PRIMARY KEY,
    session_id  text        NOT NULL REFERENCES lobby_sessions (id),
    generation  integer     NOT NULL,
    expires_at  timestamptz NOT NULL,
    spent_at    timestamptz
);
CREATE INDEX lobby_refresh_session ON lobby_refresh (session_id);

CREATE TABLE lobby_access (
    hash        bytea       PRIMARY KEY,
    session_id  text        NOT NULL REFERENCES lobby_sessions (id),
    expires_at  timestamptz NOT NULL
);
CREATE INDEX lobby_access_session ON lobby_access (session_id);
CREATE INDEX lobby_access_expiry ON lobby_access (expires_at);

CREATE TABLE lobby_revocations (
    id          bigserial   PRIMARY KEY,
    hash        bytea       NOT NULL UNIQUE,
    session_id  text        NOT NULL,
    player_id   text        NOT NULL,
    expires_at  timestamptz NOT NULL,
    revoked_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE lobby_attempts (
    key          text        PRIMARY KEY,
    window_start timestamptz NOT NULL,
    failures     integer     NOT NULL
);

CREATE TABLE lobby_rooms (
    room_id          text        PRIMARY KEY,
    game             text        NOT NULL,
    name             text        NOT NULL,
    currency         integer     NOT NULL,
    stake            bigint      NOT NULL CHECK (stake >= 1),
    ladder_min_level bigint      NOT NULL DEFAULT 0,
    ladder_max_level bigint      NOT NULL DEFAULT 0,
    min_reputation   bigint      NOT NULL DEFAULT 0,
    options          jsonb       NOT NULL DEFAULT '{}',
    sort             bigint      NOT NULL DEFAULT 0,
    CHECK (ladder_min_level >= 0 AND ladder_max_level >= ladder_min_level)
);
CREATE INDEX lobby_rooms_game ON lobby_rooms (game, sort, room_id);

CREATE TABLE lobby_room_audit (
    id          bigserial   PRIMARY KEY,
    room_id     text        NOT NULL,
    action      text        NOT NULL,
    actor       text        NOT NULL,
    reason      text        NOT NULL,
    before      jsonb,
    after       jsonb,
    at          timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX lobby_room_audit_room ON lobby_room_audit (room_id, id);

CREATE TABLE lobby_tables (
    table_id     text        PRIMARY KEY,
    game         text        NOT NULL,
    room_id      text        NOT NULL DEFAULT '',
    ladder_level bigint      NOT NULL DEFAULT 0,
    stake        bigint      NOT NULL,
    currency     integer     NOT NULL,
    host         text        NOT NULL,
    seats        text[]      NOT NULL,
    taken        integer     NOT NULL,
    status       integer     NOT NULL,
    hand_no      bigint      NOT NULL DEFAULT 0,
    version      bigint      NOT NULL,
    updated_ms   bigint      NOT NULL,
    seated_ms    bigint      NOT NULL DEFAULT 0
);
-- the open tables of a room, fullest first (ListTables, QuickSeat, WatchRoom's snapshot)
CREATE INDEX lobby_tables_room ON lobby_tables (room_id, taken DESC, table_id) WHERE taken > 0;
CREATE INDEX lobby_tables_game ON lobby_tables (game, taken DESC, table_id) WHERE taken > 0;
-- the tables a player sits at (the home screen)
CREATE INDEX lobby_tables_seats ON lobby_tables USING gin (seats) WHERE taken > 0;

CREATE TABLE lobby_table_rooms (
    table_id    text        PRIMARY KEY,
    room_id     text        NOT NULL
);

CREATE TABLE lobby_inbox (
    stream      text        NOT NULL,
    seq         bigint      NOT NULL,
    table_id    text        NOT NULL,
    applied_by  text        NOT NULL DEFAULT '',
    applied_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (stream, seq)
);
"""

V2 = """
-- failed sign-ins: a delay per key that grows with each failure, instead of a window's hard lock
DELETE FROM lobby_attempts;
ALTER TABLE lobby_attempts RENAME COLUMN window_start TO last_failure;
ALTER TABLE lobby_attempts ADD COLUMN blocked_until timestamptz NOT NULL DEFAULT '-infinity';
CREATE INDEX lobby_attempts_last ON lobby_attempts (last_failure);

-- a device that signed in to an account before is known to it
CREATE INDEX lobby_sessions_device ON lobby_sessions (player_id, device_id);

CREATE TABLE lobby_limits (
    key         text        PRIMARY KEY,
    tat         timestamptz NOT NULL
);
CREATE INDEX lobby_limits_tat ON lobby_limits (tat);
"""

V3 = welcome.MIGRATION

MIGRATIONS: tuple[str, ...] = (V1, V2, V3)
"""Append only: a new script for every change; never edit an applied one."""
