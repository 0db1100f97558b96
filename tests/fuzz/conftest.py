"""The world the fuzzers play in: every service up (real nats-server and PostgreSQL), players with
money, a room, tables waiting and tables in play (whose seated players keep a ``Watch`` open, as
a client would), and what a refused call must leave as it was (:meth:`World.fingerprint`)."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import asyncpg
import grpc
import pytest
from google.protobuf import struct_pb2

from chieu.games import registry
from chieu.kit import names
from chieu.kit.settings import Settings
from chieu.ledger.v1 import ledger_service_pb2 as lpb
from chieu.ledger.v1 import ledger_service_pb2_grpc as lpb_grpc
from chieu.lobby.v1 import lobby_service_pb2 as opb
from chieu.lobby.v1 import lobby_service_pb2_grpc as opb_grpc
from chieu.table.client import TableClient, game_view
from chieu.table.v1 import log_pb2
from chieu.tablelog import codec
from tests.conftest import credential, nats_connect, token
from tests.table.helpers import sowings

STATE_SQL = """
SELECT
  (SELECT count(*) FROM ledger_postings WHERE kind <> 'settlement'
                                          AND NOT (kind = 'reward' AND actor = 'service:ladder')) AS postings,
  (SELECT coalesce(sum(days), 0) FROM ledger_memberships) AS membership_days,
  (SELECT count(*) FROM ladder_history WHERE cause = 'correction') AS corrections,
  (SELECT count(*) FROM ladder_months) AS months_paid,
  (SELECT count(*) FROM ladder_rewards WHERE kind = 'monthly') AS monthly_rewards,
  (SELECT count(*) FROM lobby_players) AS players,
  (SELECT count(*) FROM lobby_devices) AS devices,
  (SELECT count(*) FROM lobby_accounts) AS accounts,
  (SELECT coalesce(md5(string_agg(to_jsonb(r)::text, ',' ORDER BY room_id)), '') FROM lobby_rooms r) AS rooms,
  (SELECT count(*) FROM lobby_room_audit) AS room_audit,
  (SELECT count(*) FROM lobby_sessions) AS sessions,
  (SELECT count(*) FROM lobby_sessions WHERE revoked_at IS NULL) AS live_sessions,
  (SELECT count(*) FROM lobby_revocations) AS revocations
"""
"""What the API alone changes in the three databases (not what the consumers write from the table
log, which goes on by itself): the ledger's postings other than settlements (and than the
ladder's reward payouts, which its relay retries by itself) and its membership days, the
ladder's corrections and monthly payouts, the lobby's accounts, rooms and sessions."""

SESSION_STATE = ("sessions", "live_sessions", "revocations")
"""What a refused ``Refresh`` may change: a refresh token used twice revokes its session
(``refresh_reused``, as the README says), whose tokens are then listed as revoked."""


@dataclass
class World:
    channels: dict[str, grpc.aio.Channel]
    db: asyncpg.Pool
    js: Any
    tokens: dict[str, str]
    """Valid tokens by who holds them: p, q (seated), r (a spectator), operator, auditor, and each
    service's credential (``service:table``...)."""
    pools: dict[str, list[Any]]
    players: list[str]
    watches: list[asyncio.Task[None]] = field(default_factory=list)

    async def deal_tables(self) -> list[str]:
        """Fresh tables for the next fuzzer (the last one may have aborted or ended their hands):
        one waiting, and two in play (one of 金币) whose seated players keep a ``Watch`` open, as
        clients do, so the fuzzers' own streams coming and going are not their presence. Their
        ids become the ``table_id`` pool, and the first hand's legal moves the ``command`` pool."""
        await self.clear_tables()
        p, q = self.players[:2]
        # an operator's fuzzed HoldCoins may have held their 金币, which keeps them from a coin table
        ledger = lpb_grpc.LedgerServiceStub(self.channels["ledger"])
        for who in (p, q):
            await ledger.ReleaseCoins(lpb.ReleaseCoinsRequest(player_id=who, reason="fuzz: next fuzzer"),
                                      metadata=_md(self.tokens["operator"]))
        cp, cq = (TableClient("", self.tokens[x], self.channels["table"]) for x in (p, q))
        tables, moves = [(await cp.create("o_an_quan", CALM)).table_id], []
        for extra in ({}, {"currency": log_pb2.CURRENCY_COINS, "stake": 1}):
            t = (await cp.create("o_an_quan", CALM, reconnect_grace_s=600, **extra)).table_id
            await cq.sit(t)
            for c in (cp, cq):
                self.watches.append(asyncio.ensure_future(_hold_watch(c, t)))
            gv = game_view(await cp.start(t))
            moves += [codec.pack(m, "o_an_quan") for m in sowings(gv)]
            tables.append(t)
        self.pools["table_id"], self.pools["command"] = tables, moves
        return tables

    async def clear_tables(self) -> None:
        for task in self.watches:
            task.cancel()
        await asyncio.gather(*self.watches, return_exceptions=True)
        self.watches.clear()

    async def state(self) -> dict[str, Any]:
        row = await self.db.fetchrow(STATE_SQL)
        assert row is not None
        return dict(row)

    async def last_seq(self) -> int:
        info = await self.js.stream_info(names.TABLES.name)
        return int(info.state.last_seq)

    async def commands_since(self, seq: int) -> list[log_pb2.Record]:
        """The records appended after ``seq`` that a command made: not a timer's (actor
        ``system``) nor a presence record (a closed or reopened ``Watch``: ``lost:``/``back:``)."""
        out = []
        for s in range(seq + 1, await self.last_seq() + 1):
            msg = await self.js.get_msg(names.TABLES.name, s)
            rec = log_pb2.Record.FromString(msg.data)
            if rec.actor != "system" and not rec.command_id.startswith(("lost:", "back:")):
                out.append(rec)
        return out


CALM = {"turnSeconds": 3600}
"""Turns of an hour: no timer fires while the fuzzers play."""


def _md(tok: str) -> tuple[tuple[str, str]]:
    return (("authorization", f"Bearer {tok}"),)


async def _hold_watch(client: TableClient, table_id: str) -> None:
    with contextlib.suppress(grpc.aio.AioRpcError, asyncio.CancelledError):
        async for _ in client.watch(table_id):
            pass


@pytest.fixture(scope="module")
async def world(settings: Settings, database_url: str, table_server: str, ledger_server: str,
                ladder_server: str, lobby_server: str) -> AsyncIterator[World]:
    """The fuzzers share the session's services with every other test: the pools name only what
    this world made (its players, its room, its tables, months no one played), so what an
    operator's fuzzed call changes is the fuzzers' own (the default rooms, another test's month)."""
    run = uuid.uuid4().hex[:6]
    p, q, r = f"fz-p-{run}", f"fz-q-{run}", f"fz-r-{run}"
    tokens = {p: token(settings, p), q: token(settings, q), r: token(settings, r),
              "operator": token(settings, f"fz-ops-{run}", "operator"),
              "auditor": token(settings, f"fz-aud-{run}", "auditor"),
              **{f"service:{s}": credential(s) for s in ("table", "ledger", "ladder", "lobby")}}
    addrs = {"table": table_server, "ledger": ledger_server, "ladder": ladder_server, "lobby": lobby_server}
    channels = {k: grpc.aio.insecure_channel(a) for k, a in addrs.items()}
    db = await asyncpg.create_pool(database_url, min_size=1, max_size=2)
    nc = await nats_connect(settings.nats_url, "audit")  # reads the table stream, writes nothing

    ops = _md(tokens["operator"])
    ledger = lpb_grpc.LedgerServiceStub(channels["ledger"])
    for who in (p, q):
        await ledger.Adjust(lpb.AdjustRequest(adjustment_id=f"fz-{who}", player_id=who, currency="coins",
                                              delta=1000, reason="fuzz"), metadata=ops)
        await ledger.CreditPurchase(lpb.CreditPurchaseRequest(payment_id=f"fz-{who}", player_id=who, hearts=20),
                                    metadata=ops)
    lobby = opb_grpc.LobbyServiceStub(channels["lobby"])
    room = f"o_an_quan.coins.fz{run}"
    # a stake no other room has, listed last: tables other tests open at the default rooms' stakes
    # must still fall into those rooms (a table not opened by quick seat goes to the first room of
    # its game, currency and stake)
    await lobby.PutRoom(opb.PutRoomRequest(room=opb.Room(room_id=room, game="o_an_quan", name="fuzz",
                                                         currency=log_pb2.CURRENCY_COINS, stake=97_531,
                                                         sort=1_000_000), reason="fuzz"),
                        metadata=ops)
    guest = (await lobby.SignInGuest(opb.SignInGuestRequest(device_id=f"fz-dev-{run}"))).session

    options = struct_pb2.Struct()
    options.update(CALM)
    pools: dict[str, list[Any]] = {
        "table_id": [], "player_id": [p, q, r], "player_ids": [p, q, r], "game": list(registry.KEYS),
        "room_id": [room], "currency": ["coins", "hearts", "points:o_an_quan", "pot:coins"],
        "refresh_token": [guest.refresh_token], "access_token": [guest.access_token, tokens[p]],
        "month": ["2001-01", "2002-02"], "square": list(range(12)), "seat": [0, 1, 2],
        "device_id": [f"fz-dev-{run}"],
        "username": [f"fz{run}"], "reason": ["fuzz"], "song": ["song-1"], "target": [q],
        "options": [options], "command_games": ["o_an_quan"], "direction": [1, 2], "days": [1], "hearts": [1],
        "coins": [1], "delta": [1, -1], "stake": [1], "top": [10], "page_size": [10], "limit": [10],
        "after_cursor": [0], "after_version": [0], "from_version": [0], "after_seq": [0], "table_level": [1],
        "ladder_level": [0], "min_reputation": [0], "reconnect_grace_s": [30],
    }
    w = World(channels, db, nc.jetstream(), tokens, pools, [p, q, r])
    try:
        yield w
    finally:
        await w.clear_tables()
        with contextlib.suppress(grpc.aio.AioRpcError):  # (a fuzzed DeleteRoom may have done it)
            # the room as the fuzzers left it (any game, currency, stake and sort) must not take the
            # tables later tests open in the default rooms
            await lobby.DeleteRoom(opb.DeleteRoomRequest(room_id=room, reason="fuzz done"), metadata=ops)
        await nc.close()
        await db.close()
        for ch in channels.values():
            await ch.close()
