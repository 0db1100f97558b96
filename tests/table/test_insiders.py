"""Hidden cards against insiders (issue 26): while a Phỏm hand is in play, no credential but the
table service's can read its server seed, its seed material or a seat's cards.

The attack of the issue, for the lobby's, the ledger's, the ladder's and the audit user's NATS
credentials (and none): read all that the credential may read of a live table — its records by
direct get and by stream sequence, through an ordered consumer, its snapshot — and rebuild the
victim's nine cards from it, from ``HandStarted.server_seed`` and the seed derivation (as the
issue did) or from a ``Dealt`` event in clear. The auditor's gRPC log (``AuditLog``) is read too.
The table service's own credential reads the same records and, with the seal keys, opens them:
so the secret is there, sealed, and the test knows exactly what it must not find.

Once the hand is over (an operator aborts it), the audit opens and verifies it.
"""

from __future__ import annotations

import contextlib
from typing import Any

import nats
import pytest
from nats.aio.client import Client

from chieu.games import fair, registry
from chieu.games.phom import cards
from chieu.kit import names
from chieu.kit.settings import Settings
from chieu.table import decide
from chieu.table.client import game_view
from chieu.table.v1 import log_pb2
from chieu.table.v1 import table_service_pb2 as pb
from chieu.tablelog import sealing
from chieu.tablelog.fold import Table, hand_setup
from chieu.tablelog.sealing import SealKeys
from chieu.tablelog.verify import verify
from tests.conftest import nats_connect
from tests.table.helpers import client

pytestmark = pytest.mark.integration

INSIDERS = ("lobby", "ledger", "ladder", "audit")
"""Every NATS user that may read the table log, but is not the table service."""


async def _everything(nc: Client, table_id: str, seqs: list[int]) -> list[bytes]:
    """Every byte string ``nc``'s user can read of the table: each way it might try."""
    js = nc.jetstream(timeout=0.5)  # a refused request times out: nothing read
    subject = names.TABLES.subject(table_id)
    got: list[bytes] = []
    with contextlib.suppress(Exception):
        got.append((await js.get_last_msg(names.TABLES.name, subject, direct=True)).data or b"")
    for seq in seqs:
        for direct in (True, False):
            with contextlib.suppress(Exception):
                got.append((await js.get_msg(names.TABLES.name, seq, direct=direct)).data or b"")
    with contextlib.suppress(Exception):
        sub = await js.subscribe(subject, ordered_consumer=True)
        with contextlib.suppress(Exception):
            for _ in seqs:
                got.append((await sub.next_msg(timeout=0.5)).data)
        await sub.unsubscribe()
    with contextlib.suppress(Exception):
        kv = await js.key_value(names.TABLES.snapshots)
        got.append((await kv.get(table_id)).value or b"")
    return got


def _names(mask: int) -> tuple[str, ...]:
    return tuple(sorted(cards.names(mask)))


def _rebuilt(raw: bytes, table: Table, players: int) -> list[tuple[str, ...]]:
    """The hands an attacker rebuilds from one record read: from a seed in clear (the seed
    derivation and Phỏm's deal), or from the game events in clear."""
    try:
        record = log_pb2.Record.FromString(raw)
    except Exception:
        return []
    hands: list[tuple[str, ...]] = []
    for ev in record.events:
        kind = ev.WhichOneof("kind")
        if kind == "hand_started" and ev.hand_started.server_seed:
            h = ev.hand_started
            material = fair.seed_material(h.server_seed, list(h.client_seeds))
            setup = hand_setup(table, list(h.players), material, 0, int(h.hand_no), int(h.owner_seat))
            state = registry.get("phom").initial(table.options, players)
            for e in registry.get("phom").start(setup):
                state = registry.get("phom").evolve(state, e)
            hands += [_names(mask) for mask in state.hands]
        elif kind == "game_event":
            hands.append(("a game event in clear", ev.game_event.type_url))
    return hands


async def test_no_insider_reads_a_live_hand(settings: Settings, table_server: str) -> None:
    host, victim = client(settings, table_server, "ins-host"), client(settings, table_server, "ins-victim")
    t = await host.create("phom")
    await victim.sit(t.table_id)
    view = await host.start(t.table_id)
    table_id = view.table_id
    dealt = tuple(sorted(game_view(await victim.get(table_id)).hand))
    assert len(dealt) == 9

    # the table service's own credential: the records, opened with the seal keys
    table_nc = await nats_connect(settings.nats_url, "table")
    try:
        store = [(s.seq, s.data) for s in await _read(table_nc, table_id)]
    finally:
        await table_nc.close()
    seqs = [seq for seq, _ in store]
    opener, folded = sealing.Opener(SealKeys.load(settings.seal_keys)), Table(table_id)
    for seq, data in store:
        folded.apply(opener.open(log_pb2.Record.FromString(data), folded), seq)
    seed = folded.server_seed
    material = fair.seed_material(seed, [folded.client_seeds.get(p, b"") for p in folded.hand_players])
    assert len(seed) == 32 and folded.playing
    assert dealt in [_names(mask) for mask in folded.game_state.hands]
    secrets = (seed, material)

    for user in INSIDERS:
        nc = await nats_connect(settings.nats_url, user)
        try:
            read = await _everything(nc, table_id, seqs)
        finally:
            await nc.close()
        if user == "audit":  # the auditor reads the log: the test reads what an insider reads
            assert len(read) >= len(seqs), user
        for raw in read:
            assert not any(s in raw for s in secrets), f"{user} read the live hand's seed"
            rebuilt = _rebuilt(raw, folded, len(folded.hand_players))
            assert dealt not in rebuilt and not rebuilt, f"{user} rebuilt a hand: {rebuilt}"

    # the auditor's gRPC log: the records as stored, sealed
    auditor = client(settings, table_server, "ins-auditor", "auditor")
    served = [r async for r in auditor.stub.AuditLog(pb.AuditLogRequest(table_id=table_id),
                                                     metadata=auditor.metadata)]
    assert len(served) >= len(seqs)  # (a turn's clock may have run out since)
    for r in served:
        raw = r.record.SerializeToString()
        assert not any(s in raw for s in secrets) and not _rebuilt(raw, folded, 2)
    hands = (await auditor.stub.VerifyDeals(pb.VerifyDealsRequest(table_id=table_id), metadata=auditor.metadata)).hands
    assert [(h.hand_no, h.revealed) for h in hands] == [(1, False)]  # in play: nothing to check yet

    # no credential at all: the server admits no one
    with pytest.raises(Exception):  # noqa: B017 - nats-py raises its own error for a refused user
        await nats.connect(settings.nats_url, allow_reconnect=False, max_reconnect_attempts=0,
                           connect_timeout=2)

    # once the hand is over, everybody may check it: the seed revealed opens it
    operator = client(settings, table_server, "ins-operator", "operator")
    await operator.stub.AbortHand(pb.AbortHandRequest(table_id=table_id, reason="the test's end"),
                                  metadata=operator.metadata)
    hands = (await auditor.stub.VerifyDeals(pb.VerifyDealsRequest(table_id=table_id), metadata=auditor.metadata)).hands
    assert [(h.hand_no, h.revealed, h.commitment_ok, h.committed_first, h.deal_ok, h.moves_ok) for h in hands] == [
        (1, True, True, True, True, True)]
    audit_nc = await nats_connect(settings.nats_url, "audit")
    try:
        logged = [(s.seq, log_pb2.Record.FromString(s.data)) for s in await _read(audit_nc, table_id)]
    finally:
        await audit_nc.close()
    assert [v.ok for v in verify(table_id, logged)] == [True]
    for c in (host, victim, auditor, operator):
        await c.close()


async def _read(nc: Client, table_id: str) -> list[Any]:
    from chieu.kit.eventstore import EventStore

    return await EventStore(nc, stream=names.TABLES).read(table_id)


def test_a_hand_rebuilt_from_a_clear_seed_would_be_found() -> None:
    """The attack's check can fail: given the seed in clear (a log written as before issue 26),
    it rebuilds the victim's cards."""

    table = Table("ins-probe")
    keys = SealKeys.generate()
    created = log_pb2.Record(table_id="ins-probe", version=1, events=decide.create(
        table, "phom", {}, "h", next_seed=keys.new_seed("ins-probe", 1)))
    table.apply(created, 1)
    table.apply(log_pb2.Record(table_id="ins-probe", version=2, events=decide.take_seat(table, "v", None)), 2)
    assert table.next_seed is not None
    seed = keys.open_seed("ins-probe", table.next_seed)
    started = log_pb2.Record(table_id="ins-probe", version=3, events=decide.start_hand(table, "h", 0, seed))
    before = Table("ins-probe")
    before.apply(created, 1)
    table.apply(started, 3)
    victim = _names(table.game_state.hands[1])
    assert victim in _rebuilt(started.SerializeToString(), before, 2)  # the old log gave it away
    logged = sealing.seal_record(started, before)
    assert _rebuilt(logged.SerializeToString(), before, 2) == []  # the sealed one does not
