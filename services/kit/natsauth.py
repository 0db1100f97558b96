"""NATS authorization: one NKEY user per service, each allowed only the subjects it needs.

The permission table (:data:`PERMISSIONS`) is data, built from :mod:`chieu.kit.names`:

- the **table** service alone publishes the table log (``chieu.table.>``) and presence
  (``chieu.presence.>``), creates its stream and writes its KV buckets (snapshots, active tables,
  the tables each player has never played);
- the **ledger** and the **ladder** own their outbox streams (``chieu.ledger.>``,
  ``chieu.ladder.>``) and, like the **lobby**, only *consume* the table log through their own
  durables: ``$JS.API.CONSUMER.*`` for those durables, ``$JS.ACK`` for their own messages;
- the ladder alone publishes its reward records (``chieu.ladder.reward``), which the ledger
  consumes through its durable ``ledger-rewards`` and pays once each: no one else can make the
  ledger pay a ladder reward (there is no RPC for it that a service credential may call);
- the read-only **audit** user (``chieu audit``, ``chieu export``, ``chieu verify``) reads the
  table log and its buckets through ephemeral consumers and writes nothing;
- nobody deletes or purges a stream (an operator does, with the server's own tooling), and the
  durables named in :mod:`chieu.kit.names` are reserved to their owner: no other user may
  create, delete or fetch from them.

Replies come to a private inbox, ``_INBOX.<the user's public key>``, which only that user may
subscribe to (:func:`connect` sets the prefix from the seed), so no service reads another's
replies (a snapshot, a fetched batch).

Credentials are NKEY seeds, one file per user (``<user>.nk``, mode 0600) in a folder, generated
fresh by :func:`ensure` (random, never a constant); the server's config holds only the public
keys (:func:`server_block`). The seed file is what a process is given (``CHIEU_NATS_CREDS``).
"""

from __future__ import annotations

import json
import os
import ssl
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nats
import nkeys  # type: ignore[import-untyped]
from nats.aio.client import Client

from chieu.kit import names
from chieu.kit.settings import Settings, SettingsError, nats_servers

API = "$JS.API"
INBOX = "_INBOX"

SERVICES = ("table", "ledger", "ladder", "lobby", "audit")
"""Every NATS user of the system (``audit`` is the read-only user of the audit commands)."""
ADMIN = "admin"
"""A user with no restriction; generated only on request (:func:`ensure` with ``admin=True``),
for tests that plant records or make streams of their own, and never by ``chieu up``."""

DURABLES = {
    (names.TABLES.name, names.LEDGER_DURABLE): "ledger",
    (names.TABLES.name, names.LADDER_DURABLE): "ladder",
    (names.TABLES.name, names.LOBBY_DURABLE): "lobby",
    (names.LEDGER.name, names.LADDER_RESETS_DURABLE): "ladder",
    (names.LADDER.name, names.LEDGER_REWARDS_DURABLE): "ledger",
}
"""Each durable consumer (stream, durable) and the one user that owns it."""


@dataclass(frozen=True, slots=True)
class Permissions:
    """What one user may publish (JetStream API calls are publishes too) and subscribe to."""

    publish: tuple[str, ...]
    subscribe: tuple[str, ...] = ()
    deny_publish: tuple[str, ...] = field(default=())


def kv_stream(bucket: str) -> str:
    """The stream behind a KV bucket."""
    return f"KV_{bucket}"


def _owns(stream: names.Stream) -> tuple[str, ...]:
    """Create, inspect and publish to ``stream`` (no delete, no purge)."""
    return (stream.subjects, f"{API}.STREAM.CREATE.{stream.name}", f"{API}.STREAM.INFO.{stream.name}")


def _owns_bucket(bucket: str) -> tuple[str, ...]:
    """Create a KV bucket, read and write its keys (a put, a delete and a purge are publishes)."""
    s = kv_stream(bucket)
    return (f"$KV.{bucket}.>", f"{API}.STREAM.CREATE.{s}", *_reads(s))


def _reads(stream: str) -> tuple[str, ...]:
    """Read ``stream``: its info, single messages, and ephemeral (ordered) consumers with their
    flow control (and the stream names: a subscription finds its stream by subject). The durables
    reserved to their owners are denied separately."""
    c = f"{API}.CONSUMER"
    return (f"{API}.STREAM.NAMES", f"{API}.STREAM.INFO.{stream}", f"{API}.STREAM.MSG.GET.{stream}",
            f"{API}.DIRECT.GET.{stream}", f"{API}.DIRECT.GET.{stream}.>", f"{c}.CREATE.{stream}",
            f"{c}.CREATE.{stream}.>", f"{c}.INFO.{stream}.*", f"{c}.DELETE.{stream}.*", f"$JS.FC.{stream}.>")


def _consumes(stream: str, durable: str) -> tuple[str, ...]:
    """Consume ``stream`` through the durable ``durable`` only: create, inspect and delete it (to move
    it back after a restore: ``chieu rewind``), fetch from it, acknowledge its messages; and read
    single messages of the stream (a consumer looks back for
    what another process of its service holds)."""
    c = f"{API}.CONSUMER"
    return (f"{API}.STREAM.INFO.{stream}", f"{API}.STREAM.MSG.GET.{stream}", f"{API}.DIRECT.GET.{stream}",
            f"{API}.DIRECT.GET.{stream}.>", f"{c}.CREATE.{stream}.{durable}", f"{c}.CREATE.{stream}.{durable}.>",
            f"{c}.DURABLE.CREATE.{stream}.{durable}", f"{c}.INFO.{stream}.{durable}",
            f"{c}.MSG.NEXT.{stream}.{durable}", f"$JS.ACK.{stream}.{durable}.>",
            f"{c}.DELETE.{stream}.{durable}")  # chieu rewind, after a restore of its database


def _reserved(user: str) -> tuple[str, ...]:
    """The durables of other users, denied to ``user`` whatever its allows say."""
    c = f"{API}.CONSUMER"
    out: list[str] = []
    for (stream, durable), owner in DURABLES.items():
        if owner != user:
            out += [f"{c}.CREATE.{stream}.{durable}", f"{c}.CREATE.{stream}.{durable}.>",
                    f"{c}.DURABLE.CREATE.{stream}.{durable}", f"{c}.DELETE.{stream}.{durable}",
                    f"{c}.MSG.NEXT.{stream}.{durable}", f"$JS.ACK.{stream}.{durable}.>"]
    return tuple(out)


def _table_log_buckets() -> tuple[str, ...]:
    """The table service's buckets: snapshots, active tables (and purging a subject of it), and the
    tables never played (the quota every table process counts in; nobody else reads or writes it)."""
    return (*_owns_bucket(names.TABLES.snapshots), *_owns_bucket(names.TABLES.active), *_owns_bucket(names.UNPLAYED),
            f"{API}.STREAM.PURGE.{kv_stream(names.TABLES.active)}")  # a table no longer active leaves nothing


PERMISSIONS: dict[str, Permissions] = {
    "table": Permissions(
        publish=(*_owns(names.TABLES), *_reads(names.TABLES.name), *_table_log_buckets(), f"{names.PRESENCE}.>"),
        deny_publish=_reserved("table")),
    "ledger": Permissions(
        publish=(*_owns(names.LEDGER), *_consumes(names.TABLES.name, names.LEDGER_DURABLE),
                 *_consumes(names.LADDER.name, names.LEDGER_REWARDS_DURABLE)),
        deny_publish=_reserved("ledger")),
    "ladder": Permissions(
        publish=(*_owns(names.LADDER), *_consumes(names.TABLES.name, names.LADDER_DURABLE),
                 *_consumes(names.LEDGER.name, names.LADDER_RESETS_DURABLE)),
        deny_publish=_reserved("ladder")),
    "lobby": Permissions(
        publish=_consumes(names.TABLES.name, names.LOBBY_DURABLE),
        subscribe=(f"{names.PRESENCE}.>",),
        deny_publish=_reserved("lobby")),
    "audit": Permissions(
        publish=(*_reads(names.TABLES.name), *_reads(kv_stream(names.TABLES.snapshots)),
                 f"{API}.STREAM.INFO.{kv_stream(names.TABLES.active)}"),
        deny_publish=_reserved("audit")),
}
"""Every user's permissions; anything not allowed here is refused by the server."""


def inbox(public_key: str) -> str:
    """The private inbox prefix of the user with ``public_key``."""
    return f"{INBOX}.{public_key}"


@dataclass(frozen=True, slots=True)
class Credentials:
    """A folder of NKEY seeds, ``<user>.nk``."""

    folder: Path

    def seed(self, user: str) -> Path:
        """The seed file of ``user`` (what its process is given as ``CHIEU_NATS_CREDS``)."""
        return self.folder / f"{user}.nk"

    def public_key(self, user: str) -> str:
        return public_key(self.seed(user))

    @property
    def users(self) -> tuple[str, ...]:
        """The users with a seed in the folder (known users only, in :data:`SERVICES` order)."""
        return tuple(u for u in (*SERVICES, ADMIN) if self.seed(u).exists())


def public_key(seed_file: str | Path) -> str:
    """The public key (``U…``) of the NKEY seed in ``seed_file``."""
    kp = nkeys.from_seed(bytearray(Path(seed_file).read_bytes().strip()))
    try:
        return str(kp.public_key.decode())
    finally:
        kp.wipe()


def ensure(folder: str | Path, users: Iterable[str] = SERVICES, *, admin: bool = False) -> Credentials:
    """The credentials in ``folder``: a fresh random seed (mode 0600) for each of ``users`` (and
    :data:`ADMIN` if asked) that has none yet; existing seeds are kept, so a second run reuses them."""
    creds = Credentials(Path(folder))
    creds.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    for user in (*users, *((ADMIN,) if admin else ())):
        if user not in PERMISSIONS and user != ADMIN:
            raise ValueError(f"unknown NATS user {user!r}")
        path = creds.seed(user)
        if path.exists():
            os.chmod(path, 0o600)
            continue
        seed = nkeys.encode_seed(os.urandom(32), nkeys.PREFIX_BYTE_USER)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(seed + b"\n")
    return creds


def _unique(subjects: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(subjects))


def _list(subjects: Iterable[str], indent: str) -> str:
    inner = "".join(f"{indent}  {json.dumps(s)}\n" for s in _unique(subjects))
    return f"[\n{inner}{indent}]"


def user_entry(public: str, user: str) -> str:
    """One entry of the server's ``users`` list: the public key and the user's permissions."""
    if user == ADMIN:
        return f"    {{nkey: {json.dumps(public)}}}  # {user}: unrestricted (tests only)\n"
    p = PERMISSIONS[user]
    ind = " " * 8
    deny = f"{ind}deny: {_list(p.deny_publish, ind)}\n" if p.deny_publish else ""
    return (f"    # {user}\n"
            f"    {{nkey: {json.dumps(public)}, permissions: {{\n"
            f"      publish: {{\n{ind}allow: {_list(p.publish, ind)}\n{deny}      }}\n"
            f"      subscribe: {{\n{ind}allow: {_list((*p.subscribe, f'{inbox(public)}.>'), ind)}\n      }}\n"
            "    }}\n")


def server_block(folder: str | Path) -> str:
    """The ``authorization`` block of a nats-server config for the users with a seed in ``folder``
    (public keys only): a client without one of them is refused."""
    creds = Credentials(Path(folder))
    users = creds.users
    if not users:
        raise FileNotFoundError(f"no NATS credentials in {folder}")
    entries = "".join(user_entry(creds.public_key(u), u) for u in users)
    return f"authorization {{\n  users: [\n{entries}  ]\n}}\n"


def tls_block(cert: str | Path, key: str | Path) -> str:
    """The ``tls`` block of a nats-server config: clients must speak TLS to it."""
    return (f"tls {{\n  cert_file: {json.dumps(str(cert))}\n  key_file: {json.dumps(str(key))}\n"
            "  timeout: 5\n}\n")


def client_options(creds: str = "", ca: str = "") -> dict[str, Any]:
    """nats-py ``connect`` options for the seed file ``creds`` (its private inbox included) and the
    CA ``ca`` that the server's certificate must chain to (TLS)."""
    options: dict[str, Any] = {}
    if creds:
        options["nkeys_seed"] = creds
        options["inbox_prefix"] = inbox(public_key(creds))
    if ca:
        options["tls"] = ssl.create_default_context(cafile=ca)
    return options


PING_INTERVAL_S = 1.0
"""How often a client pings its server (nats-py's default: 2 minutes)."""
MAX_OUTSTANDING_PINGS = 2
"""Pings left unanswered before the connection is taken for dead and the client moves to another
node: a server that stops answering (frozen, a GC pause, a one-way partition) keeps its TCP
connection open, so only the pings notice it, after 2–3 s (nats-py's default: 4 minutes)."""
CONNECT_TIMEOUT_S = 2.0
"""How long a (re)connection waits for a server's greeting: a frozen node accepts the TCP
connection (its kernel does) and says nothing."""
RECONNECT_WAIT_S = 0.5
"""The pause before trying again a server tried a moment ago (nats-py's default: 2 s)."""
LIVENESS = {"ping_interval": PING_INTERVAL_S, "max_outstanding_pings": MAX_OUTSTANDING_PINGS,
            "connect_timeout": CONNECT_TIMEOUT_S, "reconnect_time_wait": RECONNECT_WAIT_S}
"""The options of every connection that notice an unresponsive server within a few seconds."""


async def connect_url(url: str, name: str, *, creds: str = "", ca: str = "", **options: Any) -> Client:
    """Connect to the NATS server(s) ``url`` (comma-separated) as the user of ``creds``; a server
    that stops answering is noticed within about 3 s (:data:`LIVENESS`, which ``options`` may
    override) and the client moves to another of ``url``'s servers."""
    return await nats.connect(nats_servers(url), name=name, **client_options(creds, ca), **{**LIVENESS, **options})


def check(settings: Settings) -> None:
    """Production refuses to connect without its NATS credential, or in plaintext."""
    if settings.env == "prod" and not settings.nats_creds:
        raise SettingsError("CHIEU_NATS_CREDS must be set in production")
    if settings.env == "prod" and not settings.nats_ca:
        raise SettingsError("CHIEU_NATS_CA must be set in production (NATS is TLS only there)")


async def connect(settings: Settings, name: str, **options: Any) -> Client:
    """The connection of a service (or command) named ``name``: ``NATS_URL`` as the user of
    ``CHIEU_NATS_CREDS``, over TLS checked against ``CHIEU_NATS_CA`` when set."""
    check(settings)
    full = f"chieu-{name} {settings.instance}".strip()
    return await connect_url(settings.nats_url, full, creds=settings.nats_creds, ca=settings.nats_ca, **options)
