"""Typed, frozen settings, built once from the environment (every variable is in the README)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields

from chieu.kit import address


class SettingsError(ValueError):
    """An environment variable that does not parse."""


@dataclass(frozen=True, slots=True)
class Settings:
    """Configuration of a Chiếu process."""

    env: str = "dev"
    """``CHIEU_ENV``: ``dev`` or ``prod`` (prod refuses to start without public token keys)."""
    nats_url: str = "nats://127.0.0.1:4222"
    """``NATS_URL``: the NATS server(s), comma-separated."""
    nats_creds: str = ""
    """``CHIEU_NATS_CREDS``: this process's NATS credential, an NKEY seed file (``chieu up`` and
    ``chieu nats-auth`` make one per service); the server admits only its users (prod refuses to
    connect without one)."""
    nats_ca: str = ""
    """``CHIEU_NATS_CA``: a CA (PEM) the NATS server's TLS certificate must chain to; set: NATS over TLS."""
    tls_cert: str = ""
    """``CHIEU_TLS_CERT``: this service's TLS certificate chain (PEM); with ``CHIEU_TLS_KEY`` every
    gRPC port listens with TLS only."""
    tls_key: str = ""
    """``CHIEU_TLS_KEY``: the private key (PEM) of ``CHIEU_TLS_CERT``."""
    tls_ca: str = ""
    """``CHIEU_TLS_CA``: the CA (PEM) that the other services' certificates must chain to: set, every
    call to another service is TLS, checked against it."""
    table_addr: str = "127.0.0.1:50051"
    """``CHIEU_TABLE_ADDR``: where the table service listens (host:port)."""
    log_format: str = "console"
    """``CHIEU_LOG_FORMAT``: ``console`` (readable) or ``json`` (production)."""
    log_level: str = "info"
    """``CHIEU_LOG_LEVEL``: debug, info, warning, error."""
    token_public_keys: str = ""
    """``CHIEU_TOKEN_PUBLIC_KEYS``: the public keys that verify session tokens: a JWKS JSON file, or
    a directory of PEM public keys (``*.pem``); re-read when it changes (key rotation). Every
    service has it; without it every token is refused (prod refuses to start)."""
    token_private_key: str = ""
    """``CHIEU_TOKEN_PRIVATE_KEY``: the Ed25519 private key (PEM, PKCS #8) that signs tokens; given
    only to the lobby and to ``chieu token``. Every other process has none and cannot mint."""
    service_token: str = field(default="", repr=False)
    """``CHIEU_SERVICE_TOKEN``: this service's own credential for its calls to other services (a
    token with the role ``service`` and subject ``service:<name>``, made by ``chieu token
    --service NAME``)."""
    service_key: str = ""
    """``CHIEU_SERVICE_KEY``: this service's own Ed25519 private key (PEM): with it the service signs
    its own credential for 15 minutes and renews it (its public key is in the keyset bound to the
    service); without it, ``CHIEU_SERVICE_TOKEN`` is used as given."""
    archive_private_key: str = ""
    """``CHIEU_ARCHIVE_PRIVATE_KEY``: the Ed25519 private key (PEM, PKCS #8) that signs the auditor's
    archives (``chieu export``, which refuses to export without one); its own key, never the token
    key: it signs no token, and a token key signs no archive."""
    archive_public_keys: str = ""
    """``CHIEU_ARCHIVE_PUBLIC_KEYS``: the operator's published archive keyset (a JWKS file whose keys
    carry ``"use": "chieu-archive"``) that ``chieu audit --archive`` and ``chieu replay --archive``
    verify an archive's signature with (``--keys`` says another)."""
    seal_keys: str = ""
    """``CHIEU_SEAL_KEYS``: the table processes' seal keyset (a JSON file: a JWKS of 32-byte ``oct``
    keys, the first one seals): what a hand in play hides is sealed in the log under it
    (docs/fairness.md). Given to the table service alone; it refuses to start without one."""
    replicas: int = 1
    """``CHIEU_REPLICAS``: how many processes of this service share its traffic (its deployment's
    replica count): each holds ``1/N`` of the service's request rates (``chieu.kit.ratelimit``)."""
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
    reflection: int = 1
    """``CHIEU_REFLECTION``: 1 serves gRPC server reflection (v1 and v1alpha: grpcurl and buf curl
    list and call every method), 0 does not (the production overlay sets 0)."""
    instance: str = ""
    """``CHIEU_INSTANCE``: a name for this process in logs (default: host and pid)."""
    trusted_proxies: str = ""
    """``CHIEU_TRUSTED_PROXIES``: the proxies (addresses or CIDR networks, comma-separated) whose
    ``X-Forwarded-For`` names the client's address; empty: the header is ignored and the peer's
    address is the client's (``chieu up`` trusts its local Envoy: ``127.0.0.1/32,::1/128``)."""
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
    ladder_addr: str = "127.0.0.1:50053"
    """``CHIEU_LADDER_ADDR``: where the ladder service listens (host:port); the table service asks
    it at ladder tables (empty: never ask, so a ladder table refuses every seat)."""
    ladder_ack_wait_s: float = 30.0
    """``CHIEU_LADDER_ACK_WAIT_S``: how long the ladder's durable waits for an ack before it
    redelivers; the durable's setting (the last ladder process started sets it)."""
    ladder_check_timeout_s: float = 2.0
    """``CHIEU_LADDER_CHECK_TIMEOUT_S``: how long the table service waits for the ladder's seat
    check before it refuses the seat (``UNAVAILABLE`` / ``ladder_unavailable``)."""
    ladder_up: int = 5
    """``CHIEU_LADDER_UP``: promotion when 关积分 exceeds this (ladder.md §5.1 ``UP``)."""
    ladder_down: int = 5
    """``CHIEU_LADDER_DOWN``: demotion when 关积分 falls below minus this (§5.1 ``DOWN``)."""
    ladder_floor_style: str = "at"
    """``CHIEU_LADDER_FLOOR_STYLE``: ``at`` (level-1 关积分 stops at −2×DOWN) or ``below`` (one lower)."""
    ladder_only_lose_basis: str = "table-level"
    """``CHIEU_LADDER_ONLY_LOSE_BASIS``: ``table-level`` or ``opponent-level`` (§5.3.2)."""
    ladder_reward_best_coins: int = 0
    """``CHIEU_LADDER_REWARD_BEST_COINS``: 金币 per level of a new best level ≥ 2 (a new best of 4
    pays 4× this); 0: no best-level rewards (the seeds give no amount)."""
    ladder_reward_monthly: str = ""
    """``CHIEU_LADDER_REWARD_MONTHLY``: 金币 for the monthly ranking's places, best first,
    comma-separated (``500,300,100``); empty: no monthly rewards (the seeds give no amount)."""
    ladder_reputation_start: int = 100
    """``CHIEU_LADDER_REPUTATION_START``: a player's reputation (信誉度) before any quit, and what a
    paid reset (信誉度复位) restores; also its ceiling."""
    ladder_reputation_quit: int = 10
    """``CHIEU_LADDER_REPUTATION_QUIT``: reputation lost per forced quit (强退), at any table."""
    ladder_reputation_disconnect: int = 5
    """``CHIEU_LADDER_REPUTATION_DISCONNECT``: reputation lost per disconnect without coming back
    (断线不重连), at any table."""
    ladder_reputation_min: int = 60
    """``CHIEU_LADDER_REPUTATION_MIN``: the threshold the lobby gates on: below it, a player is
    flagged ``below_threshold``."""
    lobby_addr: str = "127.0.0.1:50054"
    """``CHIEU_LOBBY_ADDR``: where the lobby service listens (host:port)."""
    revocation_poll_s: float = 2.0
    """``CHIEU_REVOCATION_POLL_S``: how often a service asks the lobby for revoked sessions: a
    signed-out or revoked session is refused (and its open streams end) within this time."""
    lobby_access_ttl_s: int = 900
    """``CHIEU_LOBBY_ACCESS_TTL_S``: lifetime of an access token the lobby issues (seconds)."""
    lobby_refresh_ttl_s: int = 2_592_000
    """``CHIEU_LOBBY_REFRESH_TTL_S``: lifetime of a refresh token (seconds; 30 days)."""
    lobby_signin_failures: int = 5
    """``CHIEU_LOBBY_SIGNIN_FAILURES``: failed sign-ins free of delay per account and device, and per
    account and address (a device's failures over every account: 4× this); each failure after
    them doubles the wait before the next try (``RESOURCE_EXHAUSTED`` / ``too_many_attempts`` with
    the time to wait). A device that has signed in to the account before is never delayed by
    failures from elsewhere."""
    lobby_signin_window_s: int = 3600
    """``CHIEU_LOBBY_SIGNIN_WINDOW_S``: a count of failed sign-ins is forgotten this long after its
    last failure (seconds)."""
    lobby_signin_delay_s: float = 1.0
    """``CHIEU_LOBBY_SIGNIN_DELAY_S``: the wait after the first failure over the free ones (seconds);
    it doubles with each further failure."""
    lobby_signin_delay_max_s: float = 900.0
    """``CHIEU_LOBBY_SIGNIN_DELAY_MAX_S``: the longest wait between failed sign-ins (seconds): a delay,
    never a lock."""
    lobby_new_players_per_address: int = 60
    """``CHIEU_LOBBY_NEW_PLAYERS_PER_ADDRESS``: new players (guests and accounts) one client address
    may create per ``CHIEU_LOBBY_NEW_PLAYERS_WINDOW_S``; the next is refused (``RESOURCE_EXHAUSTED``
    / ``too_many_new_players`` with the time to wait). 0: no limit."""
    lobby_new_players_window_s: int = 3600
    """``CHIEU_LOBBY_NEW_PLAYERS_WINDOW_S``: the window of the new-player limit (seconds)."""
    lobby_welcome_per_address: int = 60
    """``CHIEU_LOBBY_WELCOME_PER_ADDRESS``: welcome 金币 one client address may collect per
    ``CHIEU_LOBBY_WELCOME_WINDOW_S`` (a café's or a mobile network's players behind one address);
    a new player over it is made, with no welcome coins. 0: no limit."""
    lobby_welcome_after_hands: int = 3
    """``CHIEU_LOBBY_WELCOME_AFTER_HANDS``: the welcome 金币 are paid once the new player has
    finished so many hands against an opponent (at its next sign-in or token refresh); 0: at
    the first sign-in."""
    lobby_welcome_per_device: int = 1
    """``CHIEU_LOBBY_WELCOME_PER_DEVICE``: welcome 金币 one device may collect per
    ``CHIEU_LOBBY_WELCOME_WINDOW_S`` (a guest and the accounts registered on it). 0: no limit."""
    lobby_welcome_window_s: int = 86400
    """``CHIEU_LOBBY_WELCOME_WINDOW_S``: the window of the welcome limits (seconds; a day)."""
    lobby_ack_wait_s: float = 30.0
    """``CHIEU_LOBBY_ACK_WAIT_S``: how long the lobby's durable waits for an ack before it
    redelivers; the durable's setting (the last lobby process started sets it)."""
    coin_stakes: str = "1,10,100"
    """``CHIEU_COIN_STAKES``: the stakes of coin (金币) tables, comma-separated: the lobby's coin rooms
    are made at these, and the table service refuses a coin table at any other (``stake_not_offered``)."""
    reward_daily_cap: int = 10_000
    """``CHIEU_REWARD_DAILY_CAP``: 金币 of rewards the ledger credits a player per UTC day (0: no cap);
    a ladder reward over it is paid the next day."""
    rate_per_player: float = 100.0
    """``CHIEU_RATE_PER_PLAYER``: requests per second a player may make to one service process (a token
    bucket, ``CHIEU_RATE_BURST`` deep); over it: ``RESOURCE_EXHAUSTED`` / ``rate_limited`` with the
    wait. 0: no limit."""
    rate_per_address: float = 1000.0
    """``CHIEU_RATE_PER_ADDRESS``: requests per second one client address may make to one service
    process (the same bucket, per peer address). 0: no limit."""
    web_rate_per_address: float = 50.0
    """``CHIEU_WEB_RATE_PER_ADDRESS``: requests per second one browser address may send through the
    gateway (Envoy's ``local_ratelimit``, 4 s of them at once, refused by Envoy itself with
    ``RESOURCE_EXHAUSTED`` / ``rate_limited``); read when the gateway's configuration is written.
    0: no limit."""
    rate_burst: float = 2.0
    """``CHIEU_RATE_BURST``: how many seconds of requests a bucket holds (its depth: rate × burst)."""
    unplayed_tables: int = 3
    """``CHIEU_UNPLAYED_TABLES``: tables a player may have created and never played a hand at; the
    next ``CreateTable`` is refused (``RESOURCE_EXHAUSTED`` / ``too_many_unplayed_tables``). 0: no limit."""
    watches_per_session: int = 8
    """``CHIEU_WATCHES_PER_SESSION``: ``Watch`` streams one session may hold open on a table-service
    process (``RESOURCE_EXHAUSTED`` / ``too_many_watches``). 0: no limit."""
    table_idle_expiry_s: float = 900.0
    """``CHIEU_TABLE_IDLE_EXPIRY_S``: an empty table (nobody seated, no hand) idle this long is closed.
    0: never."""
    table_idle_stand_s: float = 60.0
    """``CHIEU_TABLE_IDLE_STAND_S``: at a table with no hand running, a seated player with no open
    ``Watch`` stream for this long is stood up (``PlayerLeft`` / ``idle``)."""
    metrics_addr: str = ""
    """``CHIEU_METRICS_ADDR``: where this process serves its Prometheus metrics (host:port, ``/metrics``;
    port 0: any free port, logged); empty: no metrics endpoint."""
    metrics_refresh_s: float = 5.0
    """``CHIEU_METRICS_REFRESH_S``: how often the gauges read from elsewhere are refreshed (consumer lag
    from JetStream's consumer info)."""
    ledger_audit_every_s: float = 60.0
    """``CHIEU_LEDGER_AUDIT_EVERY_S``: how often the ledger audits its own books for
    ``chieu_ledger_audit_clean`` (every balance from its transfers, every currency summing to 0)."""
    screen_payers: int = 3
    """``CHIEU_SCREEN_PAYERS``: the ledger's collusion screen flags an account, and holds its
    winnings for review, when at least so many accounts lost it nearly all their net 金币 losses
    (docs/ledger.md, "The collusion screen"); 0: the screen is off."""
    screen_min_coins: int = 100
    """``CHIEU_SCREEN_MIN_COINS``: the least net 金币 a payer must have lost to the account to count."""
    screen_share: float = 0.9
    """``CHIEU_SCREEN_SHARE``: the least part of a payer's net losses (to everyone) that went to the account."""
    screen_drain: float = 0.5
    """``CHIEU_SCREEN_DRAIN``: the least part of the 金币 a payer was ever given (welcome, rewards,
    conversions, adjustments) that it lost to the account."""
    screen_welcome_payers: int = 2
    """``CHIEU_SCREEN_WELCOME_PAYERS``: the screen flags an account as soon as so many accounts whose
    only 金币 were their welcome emptied themselves into it (a script's accounts: at most one
    welcome bonus moves into any account); 0: only ``CHIEU_SCREEN_PAYERS`` counts."""
    screen_window_days: int = 30
    """``CHIEU_SCREEN_WINDOW_DAYS``: the UTC days of flows the screen nets."""
    tracing: str = ""
    """``CHIEU_TRACING``: ``otlp`` exports OpenTelemetry traces over OTLP/gRPC, ``console`` prints them,
    ``off`` never traces; empty: traces are exported over OTLP when ``OTEL_EXPORTER_OTLP_ENDPOINT`` is
    set, else off."""
    otlp_endpoint: str = ""
    """``OTEL_EXPORTER_OTLP_ENDPOINT``: the OpenTelemetry collector (the standard variable,
    e.g. ``http://otel-collector:4317``); setting it turns traces on (unless ``CHIEU_TRACING=off``)."""


_ENV = {
    "env": "CHIEU_ENV",
    "nats_url": "NATS_URL",
    "nats_creds": "CHIEU_NATS_CREDS",
    "nats_ca": "CHIEU_NATS_CA",
    "tls_cert": "CHIEU_TLS_CERT",
    "tls_key": "CHIEU_TLS_KEY",
    "tls_ca": "CHIEU_TLS_CA",
    "table_addr": "CHIEU_TABLE_ADDR",
    "log_format": "CHIEU_LOG_FORMAT",
    "log_level": "CHIEU_LOG_LEVEL",
    "token_public_keys": "CHIEU_TOKEN_PUBLIC_KEYS",
    "token_private_key": "CHIEU_TOKEN_PRIVATE_KEY",
    "service_token": "CHIEU_SERVICE_TOKEN",
    "service_key": "CHIEU_SERVICE_KEY",
    "archive_private_key": "CHIEU_ARCHIVE_PRIVATE_KEY",
    "archive_public_keys": "CHIEU_ARCHIVE_PUBLIC_KEYS",
    "seal_keys": "CHIEU_SEAL_KEYS",
    "replicas": "CHIEU_REPLICAS",
    "stream_replicas": "CHIEU_STREAM_REPLICAS",
    "duplicate_window_s": "CHIEU_DUPLICATE_WINDOW_S",
    "shutdown_grace_s": "CHIEU_SHUTDOWN_GRACE_S",
    "max_message_bytes": "CHIEU_MAX_MESSAGE_BYTES",
    "snapshot_every": "CHIEU_SNAPSHOT_EVERY",
    "table_cache": "CHIEU_TABLE_CACHE",
    "event_loop": "CHIEU_EVENT_LOOP",
    "reflection": "CHIEU_REFLECTION",
    "instance": "CHIEU_INSTANCE",
    "trusted_proxies": "CHIEU_TRUSTED_PROXIES",
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
    "ladder_addr": "CHIEU_LADDER_ADDR",
    "ladder_ack_wait_s": "CHIEU_LADDER_ACK_WAIT_S",
    "ladder_check_timeout_s": "CHIEU_LADDER_CHECK_TIMEOUT_S",
    "ladder_up": "CHIEU_LADDER_UP",
    "ladder_down": "CHIEU_LADDER_DOWN",
    "ladder_floor_style": "CHIEU_LADDER_FLOOR_STYLE",
    "ladder_only_lose_basis": "CHIEU_LADDER_ONLY_LOSE_BASIS",
    "ladder_reward_best_coins": "CHIEU_LADDER_REWARD_BEST_COINS",
    "ladder_reward_monthly": "CHIEU_LADDER_REWARD_MONTHLY",
    "ladder_reputation_start": "CHIEU_LADDER_REPUTATION_START",
    "ladder_reputation_quit": "CHIEU_LADDER_REPUTATION_QUIT",
    "ladder_reputation_disconnect": "CHIEU_LADDER_REPUTATION_DISCONNECT",
    "ladder_reputation_min": "CHIEU_LADDER_REPUTATION_MIN",
    "lobby_addr": "CHIEU_LOBBY_ADDR",
    "revocation_poll_s": "CHIEU_REVOCATION_POLL_S",
    "lobby_access_ttl_s": "CHIEU_LOBBY_ACCESS_TTL_S",
    "lobby_refresh_ttl_s": "CHIEU_LOBBY_REFRESH_TTL_S",
    "lobby_signin_failures": "CHIEU_LOBBY_SIGNIN_FAILURES",
    "lobby_signin_window_s": "CHIEU_LOBBY_SIGNIN_WINDOW_S",
    "lobby_signin_delay_s": "CHIEU_LOBBY_SIGNIN_DELAY_S",
    "lobby_signin_delay_max_s": "CHIEU_LOBBY_SIGNIN_DELAY_MAX_S",
    "lobby_new_players_per_address": "CHIEU_LOBBY_NEW_PLAYERS_PER_ADDRESS",
    "lobby_new_players_window_s": "CHIEU_LOBBY_NEW_PLAYERS_WINDOW_S",
    "lobby_welcome_per_address": "CHIEU_LOBBY_WELCOME_PER_ADDRESS",
    "lobby_welcome_per_device": "CHIEU_LOBBY_WELCOME_PER_DEVICE",
    "lobby_welcome_after_hands": "CHIEU_LOBBY_WELCOME_AFTER_HANDS",
    "lobby_welcome_window_s": "CHIEU_LOBBY_WELCOME_WINDOW_S",
    "lobby_ack_wait_s": "CHIEU_LOBBY_ACK_WAIT_S",
    "coin_stakes": "CHIEU_COIN_STAKES",
    "reward_daily_cap": "CHIEU_REWARD_DAILY_CAP",
    "rate_per_player": "CHIEU_RATE_PER_PLAYER",
    "rate_per_address": "CHIEU_RATE_PER_ADDRESS",
    "rate_burst": "CHIEU_RATE_BURST",
    "web_rate_per_address": "CHIEU_WEB_RATE_PER_ADDRESS",
    "unplayed_tables": "CHIEU_UNPLAYED_TABLES",
    "watches_per_session": "CHIEU_WATCHES_PER_SESSION",
    "table_idle_expiry_s": "CHIEU_TABLE_IDLE_EXPIRY_S",
    "table_idle_stand_s": "CHIEU_TABLE_IDLE_STAND_S",
    "metrics_addr": "CHIEU_METRICS_ADDR",
    "metrics_refresh_s": "CHIEU_METRICS_REFRESH_S",
    "ledger_audit_every_s": "CHIEU_LEDGER_AUDIT_EVERY_S",
    "screen_payers": "CHIEU_SCREEN_PAYERS",
    "screen_min_coins": "CHIEU_SCREEN_MIN_COINS",
    "screen_share": "CHIEU_SCREEN_SHARE",
    "screen_drain": "CHIEU_SCREEN_DRAIN",
    "screen_welcome_payers": "CHIEU_SCREEN_WELCOME_PAYERS",
    "screen_window_days": "CHIEU_SCREEN_WINDOW_DAYS",
    "tracing": "CHIEU_TRACING",
    "otlp_endpoint": "OTEL_EXPORTER_OTLP_ENDPOINT",
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
    for name, value in (("CHIEU_LADDER_ACK_WAIT_S", s.ladder_ack_wait_s),
                        ("CHIEU_LADDER_CHECK_TIMEOUT_S", s.ladder_check_timeout_s)):
        if not value > 0:
            raise SettingsError(f"{name} must be positive, not {value}")
    if min(s.lobby_access_ttl_s, s.lobby_refresh_ttl_s, s.lobby_signin_failures, s.lobby_signin_window_s) < 1 \
            or not s.lobby_ack_wait_s > 0:
        raise SettingsError("the CHIEU_LOBBY_* lifetimes, windows, limits and ack wait must be positive")
    if not 0 < s.lobby_signin_delay_s <= s.lobby_signin_delay_max_s:
        raise SettingsError("CHIEU_LOBBY_SIGNIN_DELAY_S must be positive and at most CHIEU_LOBBY_SIGNIN_DELAY_MAX_S")
    if min(s.lobby_new_players_per_address, s.lobby_welcome_per_address, s.lobby_welcome_per_device,
           s.lobby_welcome_after_hands) < 0 \
            or min(s.lobby_new_players_window_s, s.lobby_welcome_window_s) < 1:
        raise SettingsError("the CHIEU_LOBBY_NEW_PLAYERS_* and CHIEU_LOBBY_WELCOME_* limits must not be negative, "
                            "their windows positive")
    try:
        address.proxies(s.trusted_proxies)
    except address.SettingsError as e:
        raise SettingsError(str(e)) from None
    if s.ladder_up < 1 or s.ladder_down < 1:
        raise SettingsError("CHIEU_LADDER_UP and CHIEU_LADDER_DOWN must be at least 1")
    if s.ladder_floor_style not in ("at", "below"):
        raise SettingsError(f"CHIEU_LADDER_FLOOR_STYLE must be at or below, not {s.ladder_floor_style!r}")
    if s.ladder_only_lose_basis not in ("table-level", "opponent-level"):
        raise SettingsError("CHIEU_LADDER_ONLY_LOSE_BASIS must be table-level or opponent-level, "
                            f"not {s.ladder_only_lose_basis!r}")
    if min(s.ladder_reward_best_coins, s.ladder_reputation_quit, s.ladder_reputation_disconnect) < 0:
        raise SettingsError("ladder reward and reputation amounts must not be negative")
    if not 0 <= s.ladder_reputation_min <= s.ladder_reputation_start:
        raise SettingsError("CHIEU_LADDER_REPUTATION_MIN must be 0..CHIEU_LADDER_REPUTATION_START")
    try:
        monthly_rewards(s)
    except ValueError:
        raise SettingsError(f"CHIEU_LADDER_REWARD_MONTHLY={s.ladder_reward_monthly!r} is not a comma-separated "
                            "list of positive amounts") from None
    try:
        coin_stakes(s)
    except ValueError:
        raise SettingsError(f"CHIEU_COIN_STAKES={s.coin_stakes!r} is not a comma-separated list of positive "
                            "stakes") from None
    if min(s.reward_daily_cap, s.rate_per_player, s.rate_per_address, s.web_rate_per_address, s.unplayed_tables,
           s.watches_per_session,
           s.table_idle_expiry_s) < 0 or not s.rate_burst > 0 or not s.table_idle_stand_s > 0:
        raise SettingsError("the reward cap, rates, quotas and idle expiry must not be negative, and "
                            "CHIEU_RATE_BURST and CHIEU_TABLE_IDLE_STAND_S must be positive")
    if s.replicas < 1:
        raise SettingsError(f"CHIEU_REPLICAS={s.replicas} must be the number of processes of this service (1 or more)")
    if s.env not in ("dev", "prod"):
        raise SettingsError(f"CHIEU_ENV must be dev or prod, not {s.env!r}")
    if s.env == "prod" and not s.token_public_keys:
        raise SettingsError("CHIEU_TOKEN_PUBLIC_KEYS must be set in production")
    if bool(s.tls_cert) != bool(s.tls_key):
        raise SettingsError("CHIEU_TLS_CERT and CHIEU_TLS_KEY are set together or not at all")
    if s.event_loop not in ("uvloop", "asyncio"):
        raise SettingsError(f"CHIEU_EVENT_LOOP must be uvloop or asyncio, not {s.event_loop!r}")
    if s.log_format not in ("console", "json"):
        raise SettingsError(f"CHIEU_LOG_FORMAT must be console or json, not {s.log_format!r}")
    if s.tracing not in ("", "otlp", "console", "off"):
        raise SettingsError(f"CHIEU_TRACING must be otlp, console, off or empty, not {s.tracing!r}")
    if min(s.screen_payers, s.screen_min_coins, s.screen_welcome_payers) < 0 or not 0 < s.screen_share <= 1 \
            or not 0 <= s.screen_drain <= 1 or s.screen_window_days < 1:
        raise SettingsError("CHIEU_SCREEN_PAYERS, _MIN_COINS and _WELCOME_PAYERS must be at least 0, _SHARE "
                            "within (0, 1], _DRAIN within [0, 1], _WINDOW_DAYS at least 1")
    if not (s.metrics_refresh_s > 0 and s.ledger_audit_every_s > 0):
        raise SettingsError("CHIEU_METRICS_REFRESH_S and CHIEU_LEDGER_AUDIT_EVERY_S must be positive")
    return s


def nats_servers(url: str) -> list[str]:
    """``NATS_URL`` as the list of servers a NATS client takes (one URL, or several comma-separated)."""
    return [u.strip() for u in url.split(",") if u.strip()]


def coin_stakes(s: Settings) -> frozenset[int]:
    """``CHIEU_COIN_STAKES`` as a set of stakes; ``ValueError`` if malformed or empty."""
    stakes = frozenset(int(x) for x in s.coin_stakes.split(","))
    if not stakes or any(x <= 0 for x in stakes):
        raise ValueError("stakes must be positive")
    return stakes


def monthly_rewards(s: Settings) -> tuple[int, ...]:
    """``CHIEU_LADDER_REWARD_MONTHLY`` as amounts by place (best first); ``ValueError`` if malformed."""
    if not s.ladder_reward_monthly.strip():
        return ()
    amounts = tuple(int(x) for x in s.ladder_reward_monthly.split(","))
    if any(a <= 0 for a in amounts):
        raise ValueError("amounts must be positive")
    return amounts
