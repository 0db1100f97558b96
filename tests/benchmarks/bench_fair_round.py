"""The commit–reveal round of client seeds (``chieu-fair-v2``, docs/fairness.md) against dealing at
once (``chieu-fair-v1``), in the same run on one table-service process: StartHand sent → every
player's Watch stream has the dealt view (status PLAYING), p50/p99, and the ratio v2/v1 (target:
p99 within 1.2×).

Ô ăn quan, two players, each watching. Under v2 the players' clients take part as the portal does
(``TableClient.watch(take_part=True)``): they commit during the previous hand (not timed), and
reveal when StartHand asks (timed: the round trip the round adds). Half the tables run each
scheme, all at once, so both see the same load; each hand is aborted once dealt.

Environment: BENCH_TABLES (40: 20 a scheme), BENCH_HANDS (10 a table).
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from chieu.table.client import TableClient
from chieu.table.v1 import table_service_pb2 as pb
from tests.benchmarks.common import line, pct, running_table_service, token

TABLES = int(os.environ.get("BENCH_TABLES", "40"))
HANDS = int(os.environ.get("BENCH_HANDS", "10"))
TARGET = 1.2


async def one_table(addr: str, i: int, v2: bool, operator: TableClient, out: list[float]) -> None:
    names = [f"{'v2' if v2 else 'v1'}-a{i}", f"{'v2' if v2 else 'v1'}-b{i}"]
    players = [TableClient(addr, token(n), player_id=n) for n in names]
    host = players[0]
    view = await host.create("o_an_quan", {"maxMoves": 300})
    tid = view.table_id
    await players[1].sit(tid)
    latest: dict[str, pb.TableView] = {}
    changed = asyncio.Event()

    async def watching(c: TableClient) -> None:
        async for v in c.watch(tid, take_part=v2):
            latest[c.player_id] = v
            changed.set()

    async def until(ok: Callable[[pb.TableView], bool]) -> None:
        """Until every player's Watch stream has shown a view that is ``ok``."""
        while not all(n in latest and ok(latest[n]) for n in names):
            changed.clear()
            await asyncio.wait_for(changed.wait(), 30)

    watchers = [asyncio.create_task(watching(c)) for c in players]
    try:
        for hand in range(1, HANDS + 1):
            if v2:  # the commitments travel before StartHand (during the previous hand): not timed
                await until(lambda v, n=hand: sorted(v.committed) == sorted(names) and v.round_hand_no == n)
            t0 = time.perf_counter()
            await host.start(tid)
            await until(lambda v, n=hand: v.status == pb.TABLE_STATUS_PLAYING and v.hand_no == n)
            out.append(time.perf_counter() - t0)
            await operator.stub.AbortHand(pb.AbortHandRequest(table_id=tid, reason="bench", command_id=f"end-{hand}"),
                                          metadata=operator.metadata)
    finally:
        for w in watchers:
            w.cancel()
        for c in players:
            await c.close()


async def bench(addr: str) -> None:
    operator = TableClient(addr, token("bench-operator", "operator"))
    v1: list[float] = []
    v2: list[float] = []
    half = max(TABLES // 2, 1)
    await asyncio.gather(*(one_table(addr, i, False, operator, v1) for i in range(half)),
                         *(one_table(addr, i, True, operator, v2) for i in range(half)))
    await operator.close()
    print(f"StartHand → the dealt view, {half} tables a scheme × {HANDS} hands, Ô ăn quan, both at once:")
    for name, s in (("chieu-fair-v1 (dealt at once)", v1), ("chieu-fair-v2 (commit–reveal round)", v2)):
        print(f"  {name:<40} p50 {pct(s, 0.5) * 1000:7.2f} ms  p99 {pct(s, 0.99) * 1000:7.2f} ms  (n={len(s)})")
    ratio = pct(v2, 0.99) / pct(v1, 0.99)
    line("StartHand → dealt view p99, v2 / v1", ratio, "×", f"<= {TARGET}×", ratio <= TARGET,
         f"(p50 ratio {pct(v2, 0.5) / pct(v1, 0.5):.2f})")


def main() -> None:
    with running_table_service() as (_url, addr):
        asyncio.run(bench(addr))


if __name__ == "__main__":
    main()
