"""Typed, frozen settings, built once from the environment (every variable is in the README)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, fields

DEV_TOKEN_SECRET = "chieu-dev-secret-not-for-production"


class SettingsError(ValueError):
    """An environment variable that does not parse."""


@dataclass(frozen=True, slots=True)
class Settings:
    """Configuration of a Chiếu process."""

    env: str = "dev"
    """``CHIEU_ENV``: ``dev`` or ``prod`` (prod refuses the developer token secret)."""
    nats_url: str = "nats://127.0.0.1:4222"
    """``NATS_URL``: the NATS server(s), comma-separated."""
    table_addr: str = "127.0.0.1:50051"
    """``CHIEU_TABLE_ADDR``: where the table service listens (host:port)."""
    log_format: str = "console"
    """``CHIEU_LOG_FORMAT``: ``console`` (readable) or ``json`` (production)."""
    log_level: str = "info"
    """``CHIEU_LOG_LEVEL``: debug, info, warning, error."""
    token_secret: str = DEV_TOKEN_SECRET
    """``CHIEU_TOKEN_SECRET``: the HMAC key of session tokens."""
    stream_replicas: int = 1
    """``CHIEU_STREAM_REPLICAS``: JetStream replicas of the table stream (3 in production)."""
    duplicate_window_s: int = 120
    """``CHIEU_DUPLICATE_WINDOW_S``: the stream's Nats-Msg-Id duplicate window."""
    shutdown_grace_s: float = 5.0
    """``CHIEU_SHUTDOWN_GRACE_S``: how long in-flight calls may finish on shutdown."""
    max_message_bytes: int = 65536
    """``CHIEU_MAX_MESSAGE_BYTES``: the largest gRPC request accepted."""
    snapshot_every: int = 100
    """``CHIEU_SNAPSHOT_EVERY``: write a table snapshot every this many records."""
    table_cache: int = 10000
    """``CHIEU_TABLE_CACHE``: idle tables a table-service process keeps in memory at most."""
    event_loop: str = "uvloop"
    """``CHIEU_EVENT_LOOP``: ``uvloop`` (where installed: Linux and macOS) or ``asyncio``."""
    instance: str = ""
    """``CHIEU_INSTANCE``: a name for this process in logs (default: host and pid)."""
    database_url: str = ""
    """``DATABASE_URL``: the PostgreSQL of the ledger (``postgresql://...``; ``?host=/dir`` for a socket)."""
    ledger_addr: str = "127.0.0.1:50052"
    """``CHIEU_LEDGER_ADDR``: where the ledger service listens (host:port)."""
    ledger_ack_wait_s: float = 30.0
    """``CHIEU_LEDGER_ACK_WAIT_S``: how long the ledger's durable waits for an ack before it
    redelivers (a process died holding the message); the durable's setting: give every ledger
    process the same, the last one started sets it."""
    welcome_coins: int = 200
    """``CHIEU_WELCOME_COINS``: 金币 given once per player while the campaign is on."""
    welcome_campaign: int = 1
    """``CHIEU_WELCOME_CAMPAIGN``: 1 while the welcome-coins campaign is on, 0 when it is over."""
    coin_table_minimum: int = 3
    """``CHIEU_COIN_TABLE_MINIMUM``: a player needs more than this many 金币 to sit at a coin table."""
    hearts_to_coins: int = 10
    """``CHIEU_HEARTS_TO_COINS``: 金币 per 红心币 converted."""
    price_negative_reset: int = 100
    """``CHIEU_PRICE_NEGATIVE_RESET``: 金币 for 负分清零 (one game's negative score back to 0)."""
    price_reputation_reset: int = 100
    """``CHIEU_PRICE_REPUTATION_RESET``: 金币 for 信誉度复位 (a reputation reset)."""
    price_song: int = 20
    """``CHIEU_PRICE_SONG``: 金币 for 点歌 (a song request)."""
    price_membership_day: int = 10
    """``CHIEU_PRICE_MEMBERSHIP_DAY``: 金币 per membership day."""


_ENV = {
    "env": "CHIEU_ENV",
    "nats_url": "NATS_URL",
    "table_addr": "CHIEU_TABLE_ADDR",
    "log_format": "CHIEU_LOG_FORMAT",
    "log_level": "CHIEU_LOG_LEVEL",
    "token_secret": "CHIEU_TOKEN_SECRET",
    "stream_replicas": "CHIEU_STREAM_REPLICAS",
    "duplicate_window_s": "CHIEU_DUPLICATE_WINDOW_S",
    "shutdown_grace_s": "CHIEU_SHUTDOWN_GRACE_S",
    "max_message_bytes": "CHIEU_MAX_MESSAGE_BYTES",
    "snapshot_every": "CHIEU_SNAPSHOT_EVERY",
    "table_cache": "CHIEU_TABLE_CACHE",
    "event_loop": "CHIEU_EVENT_LOOP",
    "instance": "CHIEU_INSTANCE",
    "database_url": "DATABASE_URL",
    "ledger_addr": "CHIEU_LEDGER_ADDR",
    "ledger_ack_wait_s": "CHIEU_LEDGER_ACK_WAIT_S",
    "welcome_coins": "CHIEU_WELCOME_COINS",
    "welcome_campaign": "CHIEU_WELCOME_CAMPAIGN",
    "coin_table_minimum": "CHIEU_COIN_TABLE_MINIMUM",
    "hearts_to_coins": "CHIEU_HEARTS_TO_COINS",
    "price_negative_reset": "CHIEU_PRICE_NEGATIVE_RESET",
    "price_reputation_reset": "CHIEU_PRICE_REPUTATION_RESET",
    "price_song": "CHIEU_PRICE_SONG",
    "price_membership_day": "CHIEU_PRICE_MEMBERSHIP_DAY",
}


def from_env(environ: Mapping[str, str] | None = None) -> Settings:
    """Settings from ``environ`` (default ``os.environ``); unset variables keep their defaults."""
    env = os.environ if environ is None else environ
    values: dict[str, object] = {}
    for f in fields(Settings):
        name = _ENV[f.name]
        if name not in env:
            continue
        raw = env[name]
        try:
            if f.type in ("int", int):
                values[f.name] = int(raw)
            elif f.type in ("float", float):
                values[f.name] = float(raw)
            else:
                values[f.name] = raw
        except ValueError:
            raise SettingsError(f"{name}={raw!r} is not a {f.type}") from None
    s = Settings(**values)  # type: ignore[arg-type]
    if not s.ledger_ack_wait_s > 0:
        raise SettingsError(f"CHIEU_LEDGER_ACK_WAIT_S must be positive, not {s.ledger_ack_wait_s}")
    if s.env not in ("dev", "prod"):
        raise SettingsError(f"CHIEU_ENV must be dev or prod, not {s.env!r}")
    if s.env == "prod" and s.token_secret == DEV_TOKEN_SECRET:
        raise SettingsError("CHIEU_TOKEN_SECRET must be set in production")
    if s.event_loop not in ("uvloop", "asyncio"):
        raise SettingsError(f"CHIEU_EVENT_LOOP must be uvloop or asyncio, not {s.event_loop!r}")
    if s.log_format not in ("console", "json"):
        raise SettingsError(f"CHIEU_LOG_FORMAT must be console or json, not {s.log_format!r}")
    return s
