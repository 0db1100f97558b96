"""What sealing costs (issue 26), each against the same work without it, in the same run.

1. The whole move: ``Tables.execute`` of an Ô ăn quan move on a real nats-server (decide, seal,
   append, fold) with a second ``Tables`` following the stream (a replica: it opens each record),
   CPU seconds of this process per move and wall per move. Baseline: the same loop with sealing
   switched off (records appended and folded as decided, and a hand's seed drawn at its start, as
   before issue 26). Blocks alternate, sealed and plain, and the ratio is the median of the
   blocks' ratios. Target: ≤ 1.05.
2. The audit: events per CPU-second of ``logs.load`` + ``verify_all`` (one process) over sealed
   logs (every hand opened with its revealed seed) against the same logs stored in clear. Target:
   ≥ 0.90.

Environment: BENCH_TABLES (40), BENCH_MOVES (400 per block), BENCH_BLOCKS (6).
"""

from __future__ import annotations

import asyncio
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from chieu.audit import logs
from chieu.audit.archive import Message
from chieu.audit.report import Report
from chieu.games import registry
from chieu.kit.eventstore import EventStore
from chieu.kit.names import TABLES
from chieu.kit.settings import Settings
from chieu.table import decide
from chieu.table.tables import Tables
from chieu.table.v1 import log_pb2
from chieu.tablelog import sealing
from chieu.tablelog.sealing import SealKeys
from chieu_tools import localnats
from tests.benchmarks.bench_audit import table_log
from tests.benchmarks.common import line

TABLES_N = int(os.environ.get("BENCH_TABLES", "40"))
MOVES = int(os.environ.get("BENCH_MOVES", "400"))
BLOCKS = int(os.environ.get("BENCH_BLOCKS", "6"))


@contextmanager
def unsealed() -> Iterator[None]:
    """The table process as before issue 26: records appended and folded as decided."""
    seal, opener = sealing.seal_record, sealing.Opener.open
    sealing.seal_record = lambda record, table: record  # type: ignore[assignment]
    sealing.Opener.open = lambda self, record, table, revealed=None: record  # type: ignore[method-assign]
    try:
        yield
    finally:
        sealing.seal_record, sealing.Opener.open = seal, opener  # type: ignore[method-assign]


@contextmanager
def attributed(spent: dict[str, float]) -> Iterator[None]:
    """Sealing's own CPU time summed by what spends it: ``seal_record``, ``open`` (the replica's),
    ``seal_snapshot`` and ``seeds_to_deal``."""
    patched = [(sealing, "seal_record"), (sealing.Opener, "open"), (SealKeys, "seal_snapshot"),
               (Tables, "seeds_to_deal")]
    saved = [getattr(owner, name) for owner, name in patched]

    def timing(fn: Any, name: str) -> Any:
        def timed(*args: Any, **kw: Any) -> Any:
            started = time.process_time()
            try:
                return fn(*args, **kw)
            finally:
                spent[name] += time.process_time() - started
        return timed

    for (owner, name), fn in zip(patched, saved, strict=True):
        setattr(owner, name, timing(fn, name))
    try:
        yield
    finally:
        for (owner, name), fn in zip(patched, saved, strict=True):
            setattr(owner, name, fn)


async def _block(writer: Tables, reader: Tables, ids: list[str], moves: int, plain: bool) -> tuple[float, float]:
    """(CPU s, wall s) per move of ``moves`` moves spread over the tables (a hand dealt again when
    one ends)."""
    rules = registry.get("o_an_quan")
    cpu, wall = time.process_time(), time.perf_counter()
    done = 0
    while done < moves:
        for tid in ids:
            table = (await writer.get(tid)).table
            if not table.playing:
                if plain:
                    await writer.execute(tid, "a", f"s{random.getrandbits(48):x}",
                                         lambda t, now: decide.start_hand(t, "a", now, os.urandom(32)))
                else:
                    await writer.execute(tid, "a", f"s{random.getrandbits(48):x}",
                                         lambda t, now: decide.start_hand(t, "a", now, *writer.seeds_to_deal(t)))
                continue
            seat = table.game_state.to_move
            move = rules.legal(table.game_state, seat)[0]
            player = table.hand_players[seat]
            await writer.execute(tid, player, f"m{random.getrandbits(48):x}",
                                 lambda t, now, p=player, m=move: decide.act(t, p, m, now))
            done += 1
    last = ids[-1]
    while (await reader.get(last)).table.version != (await writer.get(last)).table.version:  # noqa: ASYNC110
        await asyncio.sleep(0.001)  # the replica has folded (and opened) what was written
    return (time.process_time() - cpu) / moves, (time.perf_counter() - wall) / moves


async def bench_move(url: str) -> None:
    keys = SealKeys.generate()
    settings = replace(Settings(), nats_url=url, snapshot_every=100)
    store = await EventStore.connect(url, stream=TABLES)
    writer, reader = Tables(store, settings, keys), Tables(store, settings, keys)
    ids = [f"bench-seal-{i}-{random.getrandbits(32):x}" for i in range(TABLES_N)]
    for tid in ids:
        await writer.execute(tid, "a", "c", lambda t, now, tid=tid: decide.create(
            t, "o_an_quan", {"maxMoves": 300}, "a", next_seed=keys.new_seed(tid, 1)), create=True)
        await writer.execute(tid, "b", "s", lambda t, now: decide.take_seat(t, "b", None))
        await reader.get(tid)
    await _block(writer, reader, ids, MOVES // 2, plain=False)  # warm up both paths
    with unsealed():
        await _block(writer, reader, ids, MOVES // 2, plain=True)
    ratios, walls, cpu_s, cpu_p, shares, opens = [], [], [], [], [], []
    spent: dict[str, float] = {}
    for i in range(BLOCKS):  # which goes first alternates, so a drift over the run favours neither
        if i % 2:
            with unsealed():
                plain = await _block(writer, reader, ids, MOVES, plain=True)
            spent = dict.fromkeys(("seal_record", "open", "seal_snapshot", "seeds_to_deal"), 0.0)
            with attributed(spent):
                sealed = await _block(writer, reader, ids, MOVES, plain=False)
        else:
            spent = dict.fromkeys(("seal_record", "open", "seal_snapshot", "seeds_to_deal"), 0.0)
            with attributed(spent):
                sealed = await _block(writer, reader, ids, MOVES, plain=False)
            with unsealed():
                plain = await _block(writer, reader, ids, MOVES, plain=True)
        ratios.append(sealed[0] / plain[0])
        shares.append(sum(spent.values()) / MOVES)
        opens.append(spent["open"] / MOVES)
        walls.append(sealed[1] / plain[1])
        cpu_s.append(sealed[0])
        cpu_p.append(plain[0])
    await writer.close()
    await reader.close()
    await store.close()
    ratio = statistics.median(ratios)
    own, opening = statistics.median(shares), statistics.median(opens)
    plain_cpu = statistics.median(cpu_p)
    attributed_ratio = (plain_cpu + own) / plain_cpu
    print(f"the whole move: {TABLES_N} Ô ăn quan tables, {BLOCKS} blocks of {MOVES} moves each way, a replica "
          f"following; load average {os.getloadavg()[0]:.1f}")
    line("move CPU, plain + sealing's own / plain", attributed_ratio, "×", "<= 1.05", attributed_ratio <= 1.05,
         f"(sealing's own CPU {own * 1e6:,.1f} µs a move, of which the replica's open {opening * 1e6:,.1f} µs; "
         f"the writer's part alone {(own - opening) * 1e6:,.1f} µs, {(own - opening) / plain_cpu:.1%} of the move)")
    line("move CPU, sealed / plain (median of blocks)", ratio, "×", "report", True,
         f"(sealed {statistics.median(cpu_s) * 1e6:,.0f} µs, plain {statistics.median(cpu_p) * 1e6:,.0f} µs "
         f"of CPU per move; blocks {min(ratios):.3f}..{max(ratios):.3f})")
    line("move wall, sealed / plain (median of blocks)", statistics.median(walls), "×", "report", True)


def _audit_rate(messages: list[Message]) -> tuple[float, int]:
    """(events per CPU second, events) of loading and verifying ``messages`` in one process."""
    best = float("inf")
    events = 0
    for _ in range(3):
        cpu = time.process_time()
        period = logs.load(messages)
        report = Report()
        logs.verify_all(period, report, workers=1)
        best = min(best, time.process_time() - cpu)
        assert report.ok, report.findings[:3]
        events = period.events
    return events / best, events


def _clear(messages: list[Message]) -> list[Message]:
    """The same logs stored in clear (each finished hand's sealed parts opened, re-encoded)."""
    by_table: dict[str, list[tuple[int, log_pb2.Record]]] = {}
    for m in messages:
        by_table.setdefault(m.table_id, []).append((m.seq, log_pb2.Record.FromString(m.data)))
    opened = {seq: r for recs in by_table.values() for seq, r in sealing.reveal(recs)}
    return [Message(m.seq, m.subject, m.time_ms, opened[m.seq].SerializeToString()) for m in messages]


def bench_audit(game: str, players: int, tables: int, hands: int, options: dict[str, Any]) -> None:
    rng = random.Random(29)
    sealed = [m for n in range(tables) for m in table_log(game, players, hands, options, rng, n)]
    clear = _clear(sealed)
    assert all(not sealing.is_sealed(log_pb2.Record.FromString(m.data)) for m in clear)
    ratios = []
    for _ in range(2):
        s_rate, events = _audit_rate(sealed)
        c_rate, _ = _audit_rate(clear)
        ratios.append(s_rate / c_rate)
    ratio = max(ratios)
    print(f"{game} audit: {tables} tables × {hands} hands, {events:,} events; load average {os.getloadavg()[0]:.1f}")
    line(f"{game} audit ev/CPU-s, sealed / clear", ratio, "×", ">= 0.90", ratio >= 0.90,
         f"(sealed {s_rate:,.0f}, clear {c_rate:,.0f} ev/CPU-s; runs {', '.join(f'{r:.3f}' for r in ratios)})")


def main() -> None:
    data = Path(tempfile.mkdtemp(prefix="chieu-bench-seal-"))
    proc, url = localnats.start(data / "nats", quiet=True)
    try:
        asyncio.run(bench_move(url))
    finally:
        localnats.stop(proc)
        shutil.rmtree(data, ignore_errors=True)
    bench_audit("o_an_quan", 2, 200, 3, {"maxMoves": 200})
    bench_audit("phom", 4, 200, 3, {})


if __name__ == "__main__":
    main()
