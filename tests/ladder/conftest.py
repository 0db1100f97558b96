"""Ladder fixtures: a migrated PostgreSQL pool and a store on it (a real PostgreSQL); a test
JetStream stream of table records (a real nats-server) and builders of the records the ladder
counts."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import asyncpg
import pytest
from nats.js import api

from chieu.kit import db
from chieu.ladder import rules
from chieu.ladder.consumer import LadderConsumer
from chieu.ladder.rules import Result, Standing
from chieu.ladder.schema import MIGRATIONS
from chieu.ladder.standings import Store
from chieu.table.v1 import log_pb2
from tests.conftest import nats_connect
from tests.ladder.helpers import uid


@pytest.fixture(scope="session")
async def lpool(database_url: str) -> AsyncIterator[asyncpg.Pool]:
    p = await db.create_pool(database_url, max_size=20)
    async with p.acquire() as conn:
        await db.migrate(conn, "ladder", MIGRATIONS)
    try:
        yield p
    finally:
        await p.close()


@pytest.fixture(scope="session")
def store(lpool: asyncpg.Pool) -> Store:
    return Store(lpool)


def hand_ended(table_id: str, hand_no: int, players: Sequence[str], winner: int | None, *, level: int,
               game: str = "xiangqi", scores: Sequence[int] = (), at_ms: int = 1_700_000_000_000,
               before: Sequence[log_pb2.TableEvent] = (), reason: str = "resignation") -> log_pb2.Record:
    rec = log_pb2.Record(table_id=table_id, version=hand_no * 10, command_id=uid("c"), actor="system", game=game,
                         server_time_ms=at_ms)
    for e in before:
        rec.events.append(e)
    h = rec.events.add().hand_ended
    h.hand_no, h.ladder_level = hand_no, level
    h.players.extend(players)
    if winner is not None:
        h.outcome.winner = winner
    h.outcome.scores.extend(scores or [0] * len(players))
    h.outcome.reason = reason
    return rec


def penalty(kind: str, player: str, hand_no: int, seat: int, level: int) -> log_pb2.TableEvent:
    e = log_pb2.TableEvent()
    ev = e.forced_quit if kind == "Q" else e.disconnected
    ev.player_id, ev.hand_no, ev.seat, ev.ladder_level = player, hand_no, seat, level
    return e


@dataclass
class Script:
    """Two players' games at one table: the records, and the pure fold of the same results."""

    a: str
    b: str
    table_id: str
    records: list[log_pb2.Record] = field(default_factory=list)
    expected: dict[str, Standing] = field(default_factory=dict)
    changes: int = 0


def script(games: Sequence[tuple[str, int]], prefix: str = "s") -> Script:
    """``games``: A's result (W L D Q X) and the table level, hand by hand; B gets what the rules
    give them (a win when A quits or disconnects)."""
    s = Script(uid(f"{prefix}a-"), uid(f"{prefix}b-"), uid(f"{prefix}t-"))
    a, b = Standing(), Standing()
    for hand_no, (result, level) in enumerate(games, 1):
        players = [s.a, s.b]
        if result in "QX":
            s.records.append(hand_ended(s.table_id, hand_no, players, 1, level=level,
                                        before=[penalty(result, s.a, hand_no, 0, level)]))
            ra, rb = Result(result), Result.WIN
        else:
            winner = {"W": 0, "L": 1, "D": None}[result]
            s.records.append(hand_ended(s.table_id, hand_no, players, winner, level=level))
            ra = Result(result)
            rb = {"W": Result.LOSS, "L": Result.WIN, "D": Result.DRAW}[result]
        a, b = (rules.record(a, ra, level, opponent_levels=[b.level]).standing,
                rules.record(b, rb, level, opponent_levels=[a.level]).standing)
        s.changes += 2
    s.expected = {s.a: a, s.b: b}
    return s


def random_games(rng: random.Random, n: int) -> list[tuple[str, int]]:
    return [(rng.choice("WWLLDQX"), rng.randint(1, 3)) for _ in range(n)]


class Log:
    """A test stream of table records."""

    def __init__(self, js: Any, stream: str, prefix: str) -> None:
        self.js, self.stream, self.prefix = js, stream, prefix

    async def publish(self, rec: log_pb2.Record) -> int:
        ack = await self.js.publish(f"{self.prefix}.{rec.table_id}", rec.SerializeToString(),
                                    headers={"Nats-Msg-Id": f"{rec.table_id}:{rec.command_id}"})
        return int(ack.seq)

    def consumer(self, store: Store, durable: str = "", **kw: Any) -> LadderConsumer:
        return LadderConsumer(store, self.js, durable=durable or uid("d"), stream=self.stream,
                              subjects=f"{self.prefix}.>", ack_wait_s=kw.pop("ack_wait_s", 2.0), **kw)


@pytest.fixture
async def tlog(nats_url: str) -> AsyncIterator[Log]:
    """A fresh stream per test: the cursor is per stream, so each test starts at 0."""
    nc = await nats_connect(nats_url)  # the test-only admin: a stream of its own
    js = nc.jetstream()
    name, prefix = uid("LADDERTEST_").upper(), uid("lt")
    await js.add_stream(api.StreamConfig(name=name, subjects=[f"{prefix}.>"], storage=api.StorageType.FILE))
    try:
        yield Log(js, name, prefix)
    finally:
        await js.delete_stream(name)
        await nc.close()
