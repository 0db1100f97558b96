"""Two ledger processes at once: the in-process ledger (the ``ledger_server`` fixture) and a second
one as its own OS process (``python -m chieu.ledger``), both on the durable ``ledger`` of the real
table stream ``CHIEU_TABLES``. Many tables — coin tables where losers are capped and gà pots fed
then paid, and points tables — publish their settlements interleaved; the second process is
SIGKILLed while it works (what it held comes back after the ack wait,
``CHIEU_LEDGER_ACK_WAIT_S=2``). Every posting must be made exactly once, the balances must be
exactly those of one consumer reading the stream in order, and the audit clean.
"""

from __future__ import annotations

import os
import random
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from chieu.kit import names
from chieu.kit.eventstore import EventStore
from chieu.ledger.books import Books
from chieu_tools import localnats
from tests.conftest import nats_connect, nats_creds, nats_env

from .conftest import hand_started_record, until
from .script import Script, fund_postings, table_script

pytestmark = [pytest.mark.integration, pytest.mark.e2e]

COIN_TABLES, POINT_TABLES, HANDS = 24, 8, 5  # 3 settlements a hand: 480 records


def start_ledger(nats_url: str, database_url: str, log: Path) -> subprocess.Popen[bytes]:
    port = localnats.free_port()
    env = {**os.environ, **nats_env("ledger"), "NATS_URL": nats_url, "DATABASE_URL": database_url,
           "CHIEU_LEDGER_ADDR": f"127.0.0.1:{port}",
           "CHIEU_LEDGER_ACK_WAIT_S": "2", "CHIEU_LOG_FORMAT": "json", "CHIEU_INSTANCE": "ledger-2"}
    with log.open("ab") as out:
        proc = subprocess.Popen([sys.executable, "-m", "chieu.ledger"], env=env, stdout=out, stderr=subprocess.STDOUT)
    localnats.wait_for_port(port, timeout=60, proc=proc)
    return proc


async def test_second_ledger_process_killed_midway(ledger_server: str, nats_url: str, database_url: str,
                                                   books: Books, tmp_path: Path) -> None:
    rng = random.Random(2026)
    scripts: list[Script] = [table_script(rng, coins=True, hands=HANDS, prefix="xp") for _ in range(COIN_TABLES)]
    scripts += [table_script(rng, coins=False, hands=HANDS, prefix="xq") for _ in range(POINT_TABLES)]
    for p in fund_postings(scripts):
        await books.post(p)
    # the table stream, as its owner creates it
    owner = await EventStore.connect(nats_url, stream=names.TABLES, creds=nats_creds("table"))
    await owner.close()
    log = tmp_path / "ledger-2.log"
    proc = start_ledger(nats_url, database_url, log)
    second = f"{socket.gethostname()}:{proc.pid}"
    nc = await nats_connect(nats_url, "table")  # records as the table service writes them
    seqs: list[int] = []
    try:
        js = nc.jetstream()
        from chieu.table.v1 import log_pb2

        started: set[tuple[str, int]] = set()
        for i in range(3 * HANDS):  # the tables play at once: their records interleave in the stream
            for s in scripts:
                hand = (s.table_id, s.settlements[i].hand_no)
                if hand not in started:  # the record that starts the hand, as the table writes it
                    started.add(hand)
                    await js.publish(names.TABLES.subject(s.table_id),
                                     hand_started_record(s.table_id, s.settlements[i]).SerializeToString())
                rec = log_pb2.Record(table_id=s.table_id, version=i + 1, command_id=f"{s.table_id}-{i}",
                                     actor="system", game="phom")
                rec.events.add().settlement.CopyFrom(s.settlements[i])
                ack = await js.publish(names.TABLES.subject(s.table_id), rec.SerializeToString(),
                                       headers={"Nats-Msg-Id": rec.command_id})
                seqs.append(int(ack.seq))

        async def applied(by: str | None = None) -> int:
            if by is None:
                n = await books.pool.fetchval("SELECT count(*) FROM ledger_inbox WHERE stream = $1 AND seq = ANY($2)",
                                              names.TABLES.name, seqs)
            else:
                n = await books.pool.fetchval("SELECT count(*) FROM ledger_inbox WHERE stream = $1 AND seq = ANY($2)"
                                              " AND applied_by = $3", names.TABLES.name, seqs, by)
            return int(n)

        async def second_at_work() -> bool:
            return await applied(second) >= 10

        await until(second_at_work, 60)
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        killed_at, done_at_kill = time.monotonic(), await applied()
        assert done_at_kill < len(seqs), "the second process was killed after everything was posted"

        async def all_applied() -> bool:
            return await applied() == len(seqs)

        await until(all_applied, 120)
        took = time.monotonic() - killed_at
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            proc.wait(10)
        await nc.close()
    by = dict(await books.pool.fetch("SELECT applied_by, count(*) FROM ledger_inbox WHERE stream = $1"
                                     " AND seq = ANY($2) GROUP BY applied_by", names.TABLES.name, seqs))
    print(f"applied by {by}; {done_at_kill}/{len(seqs)} done at the kill, the rest in {took:.1f} s")
    assert by.get(second, 0) >= 10 and by.get(f"{socket.gethostname()}:{os.getpid()}", 0) > 0
    outcomes = await books.pool.fetch("SELECT outcome, count(*) FROM ledger_inbox WHERE stream = $1"
                                      " AND seq = ANY($2) GROUP BY outcome", names.TABLES.name, seqs)
    assert dict(outcomes) == {"posted": len(seqs)}
    tables = [s.table_id for s in scripts]
    postings = {r["id"] for r in await books.pool.fetch("SELECT id FROM ledger_postings WHERE table_id = ANY($1)",
                                                        tables)}
    assert postings == {f"{s.table_id}/{st.hand_no}/{st.first_leg}" for s in scripts for st in s.settlements}
    capped = 0
    for s in scripts:
        rows = await books.pool.fetch("SELECT id, debit, credit, amount, owed FROM ledger_transfers"
                                      " WHERE table_id = $1", s.table_id)
        got = {r["id"]: (r["debit"], r["credit"], r["amount"], r["owed"]) for r in rows}
        assert len(rows) == len(got) and got == s.model.transfers, s.table_id
        for a in s.accounts():
            assert (await books.balance(a) or 0) == s.model.balances.get(a, 0), a
        capped += sum(1 for t in got if "/pay/" in t)
    assert capped > 0
    _, _, problems = await books.audit()
    assert problems == []
