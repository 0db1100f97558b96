"""Two ladder processes at once: the in-process ladder (the ``ladder_server`` fixture) and a
second one as its own OS process (``python -m chieu.ladder``), both on the durable ``ladder`` of
the real table stream. Many two-player tables publish their hands interleaved, the same players
at several tables; the second process is SIGKILLed while it works. Every change must be made
once, and the final standings must equal the pure rules folded over the log in order."""

from __future__ import annotations

import os
import random
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from chieu.kit import names
from chieu.kit.eventstore import EventStore
from chieu.ladder import rules
from chieu.ladder.consumer import items_of
from chieu.ladder.rules import Standing
from chieu.ladder.standings import Games, Store
from chieu.table.v1 import log_pb2
from chieu_tools import localnats
from tests.conftest import nats_connect, nats_creds, nats_env
from tests.ladder.conftest import hand_ended, penalty
from tests.ladder.helpers import uid, until

pytestmark = [pytest.mark.integration, pytest.mark.e2e]

TABLES, HANDS, PLAYERS = 40, 8, 24


def start_ladder(nats_url: str, database_url: str, log: Path) -> subprocess.Popen[bytes]:
    port = localnats.free_port()
    env = {**os.environ, **nats_env("ladder"), "NATS_URL": nats_url, "DATABASE_URL": database_url,
           "CHIEU_LADDER_ADDR": f"127.0.0.1:{port}",
           "CHIEU_LADDER_ACK_WAIT_S": "2", "CHIEU_LOG_FORMAT": "json", "CHIEU_INSTANCE": "ladder-2",
           "CHIEU_LEDGER_ADDR": ""}
    with log.open("ab") as out:
        proc = subprocess.Popen([sys.executable, "-m", "chieu.ladder"], env=env, stdout=out, stderr=subprocess.STDOUT)
    localnats.wait_for_port(port, timeout=60, proc=proc)
    return proc


def fold(records: list[log_pb2.Record]) -> tuple[dict[str, Standing], int]:
    """The pure rules over the records in stream order (the expected standings), and the changes."""
    out: dict[str, Standing] = {}
    done: set[tuple[str, int, str]] = set()
    changes = 0
    for rec in records:
        for item in items_of(rec, "x", 0):
            if not isinstance(item, Games):
                continue
            before = {p: out.get(p, Standing()) for p, _ in item.results}
            for p, result in item.results:
                if (item.table_id, item.hand_no, p) in done:
                    continue
                done.add((item.table_id, item.hand_no, p))
                others = [before[q].level for q, _ in item.results if q != p]
                out[p] = rules.record(before[p], result, item.table_level, opponent_levels=others).standing
                changes += 1
    return out, changes


async def test_second_ladder_process_killed_midway(ladder_server: str, nats_url: str, database_url: str,
                                                   lpool: object, tmp_path: Path) -> None:
    store = Store(lpool)  # type: ignore[arg-type]
    rng = random.Random(1414)
    people = [uid("kp-") for _ in range(PLAYERS)]
    records: list[log_pb2.Record] = []
    tables = [(uid("kt-"), rng.sample(people, 2)) for _ in range(TABLES)]
    for hand_no in range(1, HANDS + 1):
        for table_id, players in rng.sample(tables, len(tables)):
            level = rng.randint(1, 2)
            kind = rng.choice("WWLLDQX")
            if kind in "QX":
                records.append(hand_ended(table_id, hand_no, players, 1, level=level,
                                          before=[penalty(kind, players[0], hand_no, 0, level)]))
            else:
                records.append(hand_ended(table_id, hand_no, players, {"W": 0, "L": 1, "D": None}[kind], level=level))
    # the table stream, as its owner creates it
    owner = await EventStore.connect(nats_url, stream=names.TABLES, creds=nats_creds("table"))
    await owner.close()
    log = tmp_path / "ladder-2.log"
    proc = start_ladder(nats_url, database_url, log)
    second = f"{socket.gethostname()}:{proc.pid}"
    nc = await nats_connect(nats_url, "table")  # records as the table service writes them
    js = nc.jetstream()
    seqs: list[int] = []
    try:
        for rec in records:
            ack = await js.publish(names.TABLES.subject(rec.table_id), rec.SerializeToString())
            seqs.append(int(ack.seq))

        async def second_worked() -> bool:
            n = await store.pool.fetchval("SELECT count(*) FROM ladder_inbox WHERE applied_by = $1", second)
            return bool(n and n >= 20)

        await until(second_worked, within=60)
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        await until(lambda: _applied(store, seqs[-1]), within=90)
    finally:
        if proc.poll() is None:
            proc.kill()
        await nc.close()
    expected, changes = fold(records)
    ours = list(expected)
    got = await store.pool.fetch(
        "SELECT player_id, level, best, lp FROM ladder_standings WHERE game = 'xiangqi' AND player_id = ANY($1)", ours)
    assert {r["player_id"]: Standing(r["level"], r["best"], r["lp"]) for r in got} == expected
    assert await store.pool.fetchval("SELECT count(*) FROM ladder_history WHERE player_id = ANY($1)", ours) == changes
    by = await store.pool.fetch("SELECT applied_by, count(*) AS n FROM ladder_inbox WHERE stream = $1"
                                " AND seq = ANY($2) GROUP BY applied_by", names.TABLES.name, seqs)
    counts = {r["applied_by"]: r["n"] for r in by}
    assert counts.get(second, 0) >= 20 and sum(counts.values()) == len(seqs)


async def _applied(store: Store, seq: int) -> bool:
    return await store.applied(names.TABLES.name) >= seq
