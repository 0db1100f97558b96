"""NATS authorization (issue 16): only the table service writes the table log; the ledger, the
ladder, the lobby and the auditor only read it, through what is theirs.

The permission table is checked as data (who may publish what), then against the session's real
nats-server, which runs with :func:`chieu.kit.natsauth.server_block`: the forged settlement of the
issue (victim → attacker, 150 coins) published to a new table's subject with no credential or with
another service's is refused by the server and the ledger posts nothing, while the same records
written as the table service are posted (so the ledger would have paid them); a consumer-only user
cannot delete or purge the stream, write the table's buckets, or take another's durable.
"""

from __future__ import annotations

import asyncio
import os
import stat
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import nats
import pytest
from nats.aio.client import Client
from nats.errors import TimeoutError as NatsTimeoutError
from nats.js.errors import NotFoundError

from chieu.games.core import Transfer
from chieu.kit import db, names, natsauth
from chieu.kit.eventstore import EventStore
from chieu.kit.settings import Settings, SettingsError
from chieu.ledger import books as b
from chieu.ledger.books import Books, Leg, Posting
from chieu.table.v1 import log_pb2
from tests.conftest import NATS_AUTH, nats_connect, nats_creds
from tests.ledger.conftest import hand_started_record, settlement, until

CONSUMERS = ("ledger", "ladder", "lobby", "audit")
"""The users that may only read the table log."""


def matches(pattern: str, subject: str) -> bool:
    """NATS subject matching: ``*`` one token, ``>`` one or more at the end."""
    p, s = pattern.split("."), subject.split(".")
    for i, tok in enumerate(p):
        if tok == ">":
            return len(s) > i
        if i >= len(s) or (tok != "*" and tok != s[i]):
            return False
    return len(p) == len(s)


def may_publish(user: str, subject: str) -> bool:
    perms = natsauth.PERMISSIONS[user]
    return any(matches(a, subject) for a in perms.publish) and not any(matches(d, subject)
                                                                         for d in perms.deny_publish)


def test_matching_follows_the_nats_rules() -> None:
    assert matches("chieu.table.>", "chieu.table.t1") and not matches("chieu.table.>", "chieu.table")
    assert matches("$JS.API.CONSUMER.INFO.S.*", "$JS.API.CONSUMER.INFO.S.d")
    assert not matches("$JS.API.CONSUMER.INFO.S.*", "$JS.API.CONSUMER.INFO.S.d.x")


@pytest.mark.parametrize("subject, allowed", [
    ("chieu.table.any-new-table", {"table"}),
    ("chieu.presence.table-1", {"table"}),
    ("$KV.CHIEU_TABLES_snapshots.t1", {"table"}),
    ("$KV.CHIEU_TABLES_active.t1", {"table"}),
    ("$JS.API.STREAM.CREATE.CHIEU_TABLES", {"table"}),
    ("$JS.API.STREAM.DELETE.CHIEU_TABLES", set()),
    ("$JS.API.STREAM.PURGE.CHIEU_TABLES", set()),
    ("$JS.API.STREAM.UPDATE.CHIEU_TABLES", set()),
    ("$JS.API.STREAM.MSG.DELETE.CHIEU_TABLES", set()),
    ("$JS.API.STREAM.PURGE.KV_CHIEU_TABLES_active", {"table"}),  # a table no longer active leaves nothing
    ("$JS.API.STREAM.PURGE.KV_CHIEU_TABLES_snapshots", set()),
    ("chieu.ledger.reputation_reset", {"ledger"}),
    ("$JS.API.STREAM.CREATE.CHIEU_LEDGER", {"ledger"}),
    ("chieu.ladder.best_level_up", {"ladder"}),
    ("chieu.ladder.reward", {"ladder"}),  # the ladder's reward records: what the ledger pays (issue 27)
    ("$JS.API.CONSUMER.MSG.NEXT.CHIEU_LADDER.ledger-rewards", {"ledger"}),
    ("$JS.ACK.CHIEU_LADDER.ledger-rewards.1.2.3.4.5", {"ledger"}),
    ("$JS.API.CONSUMER.MSG.NEXT.CHIEU_TABLES.ledger", {"ledger"}),
    ("$JS.ACK.CHIEU_TABLES.ledger.1.2.3.4.5", {"ledger"}),
    ("$JS.API.CONSUMER.CREATE.CHIEU_TABLES.ledger.chieu.table.>", {"ledger"}),
    ("$JS.API.CONSUMER.DELETE.CHIEU_TABLES.ledger", {"ledger"}),  # its owner, to rewind it (chieu rewind)
    ("$JS.API.CONSUMER.DELETE.CHIEU_TABLES.lobby", {"lobby"}),
    ("$JS.API.CONSUMER.MSG.NEXT.CHIEU_TABLES.lobby", {"lobby"}),
    ("$JS.API.CONSUMER.MSG.NEXT.CHIEU_LEDGER.ladder-reputation-resets", {"ladder"}),
    ("$JS.API.CONSUMER.CREATE.CHIEU_TABLES.some-ephemeral.chieu.table.t1", {"table", "audit"}),
    ("$JS.API.DIRECT.GET.KV_CHIEU_TABLES_snapshots.$KV.CHIEU_TABLES_snapshots.t1", {"table", "audit"}),
    ("$JS.API.STREAM.MSG.GET.CHIEU_TABLES", {"table", "ledger", "ladder", "lobby", "audit"}),  # readers read
    ("$JS.API.STREAM.MSG.GET.CHIEU_LEDGER", {"ladder"}),
])
def test_each_subject_is_published_only_by_those_who_need_it(subject: str, allowed: set[str]) -> None:
    assert {u for u in natsauth.PERMISSIONS if may_publish(u, subject)} == allowed


def test_credentials_are_fresh_private_files_and_the_config_holds_public_keys_only(tmp_path: Path) -> None:
    one = natsauth.ensure(tmp_path / "one")
    again = natsauth.ensure(tmp_path / "one")
    other = natsauth.ensure(tmp_path / "other")
    assert one.users == natsauth.SERVICES  # no admin unless asked
    for user in natsauth.SERVICES:
        seed = one.seed(user)
        assert stat.S_IMODE(os.stat(seed).st_mode) == 0o600
        assert seed.read_bytes().startswith(b"SU")  # an NKEY user seed
        assert again.public_key(user) == one.public_key(user)  # a second run reuses them
        assert other.public_key(user) != one.public_key(user)  # fresh per folder, never a constant
    block = natsauth.server_block(one.folder)
    assert all(one.public_key(u) in block for u in natsauth.SERVICES)
    assert all(one.seed(u).read_text().strip() not in block for u in natsauth.SERVICES)
    with pytest.raises(ValueError):
        natsauth.ensure(tmp_path / "x", ["nobody"])


def test_production_refuses_to_connect_without_a_credential() -> None:
    with pytest.raises(SettingsError, match="CHIEU_NATS_CREDS"):
        natsauth.check(Settings(env="prod", token_public_keys="/k"))
    with pytest.raises(SettingsError, match="CHIEU_NATS_CA"):  # nor in plaintext
        natsauth.check(Settings(env="prod", token_public_keys="/k", nats_creds="/run/secrets/table.nk"))
    natsauth.check(Settings(env="prod", token_public_keys="/k", nats_creds="/run/secrets/table.nk",
                            nats_ca="/etc/chieu/nats-ca/ca.crt"))
    natsauth.check(Settings())  # development: loopback, as the developer runs it


# -- against the real server ------------------------------------------------------------------

needs_auth = pytest.mark.skipif(not NATS_AUTH, reason="an external NATS_URL server runs without our authorization")


class Watched:
    """A connection as one user, with the server's refusals (``permissions violation``) it heard."""

    def __init__(self) -> None:
        self.errors: list[str] = []
        self.heard = asyncio.Event()
        self.nc: Client | None = None

    async def open(self, url: str, user: str) -> Watched:
        async def on_error(e: Exception) -> None:
            self.errors.append(str(e))
            self.heard.set()

        self.nc = await natsauth.connect_url(url, f"test-{user}", creds=nats_creds(user), error_cb=on_error,
                                             allow_reconnect=False)
        return self

    async def refused(self, subject: str, within_s: float = 10.0) -> bool:
        """Whether the server refused something on ``subject`` (waits for its error; nats-py says it
        in lower case)."""
        deadline = asyncio.get_running_loop().time() + within_s
        while not any("permissions violation" in e.lower() and subject.lower() in e.lower() for e in self.errors):
            self.heard.clear()
            left = deadline - asyncio.get_running_loop().time()
            if left <= 0:
                return False
            try:
                await asyncio.wait_for(self.heard.wait(), left)
            except TimeoutError:
                return False
        return True

    async def close(self) -> None:
        if self.nc is not None:
            await self.nc.close()


@pytest.fixture
async def admin(nats_url: str) -> AsyncIterator[Client]:
    """The test-only admin, to look at the stream as it is."""
    nc = await nats_connect(nats_url)
    yield nc
    await nc.close()


async def as_user(url: str, user: str) -> Watched:
    return await Watched().open(url, user)


def forged(table_id: str, victim: str, attacker: str) -> list[log_pb2.Record]:
    """The issue's forgery: a coin hand of ``table_id`` started, then settled victim → attacker for
    150 coins (stake 1), as records of the table log."""
    s = settlement("xiangqi", [victim, attacker], [Transfer(0, 1, 150, "cuoc")], stake=1, coins=True)
    rec = log_pb2.Record(table_id=table_id, version=2, command_id=uuid.uuid4().hex, actor="system", game="xiangqi")
    rec.events.add().settlement.CopyFrom(s)
    return [hand_started_record(table_id, s), rec]


async def fund(books: Books, player: str, coins: int) -> None:
    await books.post(Posting(f"fund/{player}", "test", (Leg(f"fund/{player}", b.system(b.COINS, "test"),
                                                            b.player(b.COINS, player), coins, "fund"),)))


def uid(prefix: str) -> str:
    return f"{prefix}{uuid.uuid4().hex[:10]}"


@needs_auth
@pytest.mark.integration
async def test_a_client_without_credentials_is_refused(nats_url: str) -> None:
    with pytest.raises(nats.errors.Error, match="Authorization Violation"):
        await nats.connect(nats_url, allow_reconnect=False, max_reconnect_attempts=1, connect_timeout=3)


@needs_auth
@pytest.mark.integration
async def test_a_forged_settlement_is_refused_and_nothing_is_posted(
        nats_url: str, settings: Settings, table_server: str, ledger_server: str, database_url: str,
        admin: Client) -> None:
    pool = await db.create_pool(database_url, max_size=2)
    books = Books(pool)
    victim, attacker, table_id = uid("victim-"), uid("attacker-"), uid("forged-")
    await fund(books, victim, 200)
    records = forged(table_id, victim, attacker)
    subject = names.TABLES.subject(table_id)
    try:
        # no credential: not even a connection
        with pytest.raises(nats.errors.Error, match="Authorization Violation"):
            await nats.connect(nats_url, allow_reconnect=False, max_reconnect_attempts=1, connect_timeout=3)
        # each consumer-only service's credential: the server refuses the publish, plain or JetStream
        for user in CONSUMERS:
            w = await as_user(nats_url, user)
            try:
                assert w.nc is not None
                for rec in records:
                    await w.nc.publish(subject, rec.SerializeToString())
                await w.nc.flush()
                assert await w.refused(subject), (user, w.errors)
                w.errors.clear()
                with pytest.raises(NatsTimeoutError):  # no ack ever comes: the message was dropped
                    await w.nc.jetstream(timeout=1.0).publish(subject, records[0].SerializeToString())
                assert await w.refused(subject), (user, w.errors)
            finally:
                await w.close()
        with pytest.raises(NotFoundError):  # nothing of it reached the log
            await admin.jetstream().get_last_msg(names.TABLES.name, subject)
        # the control: the same records written as the table service are posted by the ledger
        victim2, attacker2, table2 = uid("victim-"), uid("attacker-"), uid("genuine-")
        await fund(books, victim2, 200)
        store = await EventStore.connect(nats_url, stream=names.TABLES, creds=nats_creds("table"))
        try:
            for rec in forged(table2, victim2, attacker2):
                await store.js.publish(names.TABLES.subject(table2), rec.SerializeToString())
        finally:
            await store.close()

        async def control_posted() -> bool:
            return bool(await pool.fetchval("SELECT count(*) FROM ledger_postings WHERE table_id = $1", table2))

        await until(control_posted, 30)
        assert await books.balance(b.player(b.COINS, victim2)) == 50
        assert await books.balance(b.player(b.COINS, attacker2)) == 150
        # and the forged table: nothing posted, balances as they were
        assert await pool.fetchval("SELECT count(*) FROM ledger_postings WHERE table_id = $1", table_id) == 0
        assert await books.balance(b.player(b.COINS, victim)) == 200
        assert not await books.balance(b.player(b.COINS, attacker))
    finally:
        await pool.close()


@needs_auth
@pytest.mark.integration
@pytest.mark.parametrize("user", CONSUMERS)
async def test_a_consumer_only_service_cannot_delete_purge_or_write_the_tables_buckets(
        nats_url: str, table_server: str, ledger_server: str, admin: Client, user: str) -> None:
    js_admin = admin.jetstream()
    before = (await js_admin.stream_info(names.TABLES.name)).state.messages
    key = uid("kv-")
    w = await as_user(nats_url, user)
    try:
        assert w.nc is not None
        nc = w.nc
        js = nc.jetstream(timeout=1.0)
        attempts: list[tuple[str, Callable[[], Awaitable[Any]]]] = [
            (f"$JS.API.STREAM.DELETE.{names.TABLES.name}", lambda: js.delete_stream(names.TABLES.name)),
            (f"$JS.API.STREAM.PURGE.{names.TABLES.name}", lambda: js.purge_stream(names.TABLES.name)),
            (f"$KV.{names.TABLES.snapshots}.{key}", lambda: js.publish(f"$KV.{names.TABLES.snapshots}.{key}", b"x")),
            (f"$KV.{names.TABLES.active}.{key}", lambda: js.publish(f"$KV.{names.TABLES.active}.{key}", b"1")),
        ]
        if user != "ledger":  # nobody else may touch the ledger's durable (the money path)
            attempts += [
                (f"$JS.API.CONSUMER.DELETE.{names.TABLES.name}.{names.LEDGER_DURABLE}",
                 lambda: js.delete_consumer(names.TABLES.name, names.LEDGER_DURABLE)),
                (f"$JS.API.CONSUMER.MSG.NEXT.{names.TABLES.name}.{names.LEDGER_DURABLE}",
                 lambda: nc.request(f"$JS.API.CONSUMER.MSG.NEXT.{names.TABLES.name}.{names.LEDGER_DURABLE}",
                                    b'{"batch": 1, "no_wait": true}', timeout=1.0)),
            ]
        for subject, attempt in attempts:
            with pytest.raises(NatsTimeoutError):
                await attempt()
            assert await w.refused(subject), (user, subject, w.errors)
        # a reply inbox of its own only: the others' replies (a snapshot, a fetched batch) are not its
        await w.nc.subscribe("_INBOX.>")
        await w.nc.flush()
        assert await w.refused("_INBOX.>"), w.errors
    finally:
        await w.close()
    info = await js_admin.stream_info(names.TABLES.name)
    assert info.state.messages >= before  # not deleted, not purged (the table may have appended)
    for bucket in (names.TABLES.snapshots, names.TABLES.active):
        with pytest.raises(NotFoundError):
            await js_admin.get_last_msg(natsauth.kv_stream(bucket), f"$KV.{bucket}.{key}")
    if user != "ledger":
        assert (await js_admin.consumer_info(names.TABLES.name, names.LEDGER_DURABLE)).name == names.LEDGER_DURABLE


@needs_auth
@pytest.mark.integration
async def test_only_the_ladder_publishes_reward_records(nats_url: str) -> None:
    """Issue 27: a reward reaches the ledger only as the ladder's record on ``chieu.ladder.reward``;
    every other user's publish there is refused by the server."""
    for user in ("table", "ledger", "lobby", "audit"):
        w = await as_user(nats_url, user)
        try:
            assert w.nc is not None
            await w.nc.publish(names.LADDER_REWARDS, b'{"reward_id": "ladder/forged", "player_id": "me",'
                                                     b' "coins": 1000000, "reason": "forged"}')
            await w.nc.flush(timeout=2)
            assert await w.refused(names.LADDER_REWARDS), (user, w.errors)
        finally:
            await w.close()
