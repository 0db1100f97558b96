"""The auditor's speed (issue 17): table logs verified per second — every hand's commitment and
deal, every move decided again by the rules core (``chieu.audit.logs.verify_all``, what
``chieu audit`` does) — beside the plain replay of the same logs measured in the same run (the
fold alone, ``chieu.audit.logs.fold_only``: what any reader of the log pays). Target: ≥ 50,000
events/s for Ô ăn quan and for Phỏm logs. The logs are made by the table's own deciders (the
records the table service appends), random legal moves with now and then a timeout, so no
server is needed and nothing but the audit is timed.

A period of many tables (hundreds, as a day of play gives) is verified by one process and by
one worker process per core this process may use (the pool's start included), each the best of
three runs in wall time; the one-process rate per CPU-second is printed too, and the load
average, since the machine may be shared (what the other processes take is not ours to count).
"""

from __future__ import annotations

import os
import random
import secrets
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from chieu.audit import logs
from chieu.audit.archive import Message
from chieu.audit.report import Report
from chieu.table import decide
from chieu.table.v1 import log_pb2
from chieu.tablelog import codec, sealing
from chieu.tablelog.fold import Table
from chieu.tablelog.sealing import SealKeys
from tests.benchmarks.common import line

TARGET = 50_000


KEYS = SealKeys.generate()
"""The table processes' seal keyset of these logs."""


def table_log(game: str, players: int, hands: int, options: dict[str, Any], rng: random.Random,
              n: int, *, sealed: bool = True) -> list[Message]:
    """One table's log: created, seated, ``hands`` hands of random legal moves to their end; each
    seed committed ahead, and sealed as the table service logs it (``sealed``)."""
    table_id = f"{game}-{n}"
    table = Table(table_id)
    out: list[Message] = []
    now = 1_700_000_000_000

    def run(actor: str, events: list[log_pb2.TableEvent], *, command: Any = None, timeout: int | None = None) -> None:
        rec = log_pb2.Record(table_id=table_id, version=table.version + 1, actor=actor, server_time_ms=now,
                             game=game, events=events)
        if command is not None:
            rec.game_command.CopyFrom(codec.pack(command, game))
        if timeout is not None:
            rec.timeout_seat = timeout
        seq = n * 100_000 + len(out) + 1
        logged = sealing.seal_record(rec, table) if sealed else rec
        table.apply(rec, seq)
        out.append(Message(seq, f"chieu.table.{table_id}", now, logged.SerializeToString()))

    names = [f"p{i}" for i in range(players)]
    run(names[0], decide.create(table, game, options, names[0], next_seed=KEYS.new_seed(table_id, 1)))
    for p in names[1:]:
        run(p, decide.take_seat(table, p, None, secrets.token_bytes(8)))
    for _ in range(hands):
        now += 1000
        assert table.next_seed is not None
        run(names[0], decide.start_hand(table, names[0], now, KEYS.open_seed(table_id, table.next_seed),
                                        KEYS.new_seed(table_id, table.hand_no + 2)))
        for _ in range(5000):
            if not table.playing:
                break
            now += 700
            game_rules, state = table.game, table.game_state
            movers = [(s, m) for s in range(len(table.hand_players)) if (m := game_rules.legal(state, s))]
            if not movers or rng.random() < 0.03:
                due = sorted(game_rules.deadlines(state), key=lambda d: d.at_ms)
                if not due:
                    raise AssertionError(f"{game}: nobody may move and no deadline")
                seat = due[0].seat
                now = max(now, due[0].at_ms)
                run("system", decide.time_out(table, seat, now), timeout=seat)
                continue
            seat, moves = rng.choice(movers)
            move = rng.choice(list(moves))
            player = table.hand_players[seat]
            run(player, decide.act(table, player, move, now), command=move)
        else:
            raise AssertionError(f"{game}: the hand did not end")
    return out


def best(runs: int, fn: Any) -> tuple[float, float]:
    """The best of ``runs`` calls: (wall seconds, CPU seconds of this process in that call)."""
    out = []
    for _ in range(runs):
        w, c = time.perf_counter(), time.process_time()
        fn()
        out.append((time.perf_counter() - w, time.process_time() - c))
    return min(out)


def bench(game: str, players: int, tables: int, hands: int, options: dict[str, Any]) -> None:
    rng = random.Random(17)
    messages = [m for n in range(tables) for m in table_log(game, players, hands, options, rng, n)]
    period = logs.load(messages)
    events = period.events
    records = period.records
    cores = len(os.sched_getaffinity(0))

    def audit(workers: int) -> None:
        report = Report()
        logs.verify_all(period, report, workers=workers)
        assert report.ok, report.findings[:3]
        assert report.counts["events"] == events

    load = os.getloadavg()[0]
    one, one_cpu = best(3, lambda: audit(1))
    many, _ = best(3, lambda: audit(cores))
    fold, fold_cpu = best(3, lambda: logs.fold_only(period))
    rate, per_cpu, rate_n, base = events / one, events / one_cpu, events / many, events / fold
    print(f"{game}: {tables} tables × {hands} hands, {records:,} records, {events:,} events; {cores} cores, "
          f"load average {load:.1f} → {os.getloadavg()[0]:.1f}")
    line(f"{game} audit, 1 process ev/s", rate, "ev/s", f">= {TARGET}", rate >= TARGET,
         f"(plain replay {base:,.0f} ev/s; {rate / TARGET:.2f}× the target)")
    line(f"{game} audit, 1 process ev/CPU-s", per_cpu, "ev/CPU-s", f">= {TARGET}", per_cpu >= TARGET,
         f"(plain replay {events / fold_cpu:,.0f} ev/CPU-s: the audit costs {fold_cpu and one_cpu / fold_cpu:.2f}× "
         "the fold; what one free core gives)")
    line(f"{game} audit, {cores} processes ev/s", rate_n, "ev/s", f">= {TARGET}", rate_n >= TARGET,
         f"({rate_n / rate:.2f}× one process, the pool's start included)")
    line(f"{game} plain replay (fold only) ev/s", base, "ev/s", "baseline", True)


def main() -> None:
    bench("o_an_quan", 2, 400, 3, {"maxMoves": 200})
    bench("phom", 4, 400, 3, {})


if __name__ == "__main__":
    main()
