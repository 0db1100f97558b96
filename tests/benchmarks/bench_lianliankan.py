"""连连看 benchmarks (issue 9).

1. A path check on an 18×8 board: median ≤ 20 µs, over same-pattern pairs of half-cleared
   generated layouts (the hard case: different patterns return at once). Baseline in the same
   run: the plain breadth-first search ``brute_turns`` on the same pairs.
2. Layout generation (shuffle + greedy solver + re-shuffles, §4.1.3): median ≤ 20 ms. Baseline
   in the same run: the bare fair shuffle of the 144 tiles that every generation starts with.
3. Four players each sending 20 moves/s to one table through the real stack (gRPC Act →
   JetStream append with sync_interval always → reply): p99 acceptance latency ≤ 20 ms, and
   no valid move lost or refused. Baseline in the same run: a bare gRPC round trip plus a bare
   JetStream publish with an expected subject sequence on the same servers.
"""

from __future__ import annotations

import asyncio
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from chieu.games.fair import Stream
from chieu.games.lianliankan.board import (
    Board,
    brute_turns,
    find_pair,
    generate,
    tile_set,
)
from chieu.games.lianliankan.model import Cell, Remove
from tests.benchmarks.common import line, median, pct, running_table_service, token

ROWS, COLS = 8, 18


def half_cleared(seed: int, rng: random.Random) -> Board:
    board = Board.of(ROWS, COLS, generate(ROWS, COLS, Stream(seed.to_bytes(4, "big"), "layout")))
    for _ in range(rng.randrange(0, 50)):
        pair = find_pair(board)
        if pair is None:
            break
        board = board.without(*pair)
    return board


def bench_path() -> None:
    rng = random.Random(9)
    cases: list[tuple[Board, int, int]] = []
    for seed in range(40):
        b = half_cleared(seed, rng)
        by: dict[int, list[int]] = {}
        for i, p in enumerate(b.cells):
            if p:
                by.setdefault(p, []).append(i)
        for cells in by.values():
            for x in range(len(cells)):
                for y in range(x + 1, len(cells)):
                    cases.append((b, cells[x], cells[y]))
    rng.shuffle(cases)
    cases = cases[:3000]
    fast: list[float] = []
    slow: list[float] = []
    found = 0
    hits: list[tuple[float, float]] = []
    for b, x, y in cases:
        t = time.perf_counter_ns()
        r = b.turns(x, y)
        fast.append((time.perf_counter_ns() - t) / 1000)
        t = time.perf_counter_ns()
        r2 = brute_turns(b.rows, b.cols, b.cells, x, y)
        slow.append((time.perf_counter_ns() - t) / 1000)
        assert r == r2
        if r is not None:
            found += 1
            hits.append((fast[-1], slow[-1]))
    m, mb = median(fast), median(slow)
    print(f"path check on 18x8: {len(cases)} same-pattern pairs of half-cleared boards, "
          f"{found} connectable")
    line("path check median", m, "µs", "<= 20 µs", m <= 20,
         f"(p99 {pct(fast, 0.99):.2f} µs; baseline BFS median {mb:.2f} µs: {mb / m:.1f}x faster; "
         f"{20 / m:.1f}x under target)")
    hm, hb = median([h[0] for h in hits]), median([h[1] for h in hits])
    line("path check median, connectable pairs only", hm, "µs", "<= 20 µs", hm <= 20,
         f"(baseline BFS median {hb:.2f} µs: {hb / hm:.1f}x faster)")


def bench_generation() -> None:
    gen: list[float] = []
    base: list[float] = []
    tiles = tile_set(ROWS, COLS)
    for seed in range(100):
        material = seed.to_bytes(4, "big")
        t = time.perf_counter()
        generate(ROWS, COLS, Stream(material, "layout"))
        gen.append((time.perf_counter() - t) * 1e3)
        t = time.perf_counter()
        Stream(material, "layout").shuffle(tiles)
        base.append((time.perf_counter() - t) * 1e3)
    m, mb = median(gen), median(base)
    print(f"layout generation 18x8: {len(gen)} seeds")
    line("generation median", m, "ms", "<= 20 ms", m <= 20,
         f"(p99 {pct(gen, 0.99):.2f} ms; baseline bare shuffle {mb:.3f} ms: {m / mb:.1f}x; "
         f"{20 / m:.1f}x under target)")


def bench_table() -> None:
    """Start a real nats-server (JetStream) and the table service, then measure."""
    with running_table_service() as (url, addr):
        asyncio.run(_table_load(addr, url))


async def _table_load(addr: str, url: str, rounds: int = 3, moves_each: int = 60,
                      rate: float = 20.0) -> None:
    import grpc
    import nats
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    from chieu.table.client import TableClient, game_view

    # -- the floor: a bare gRPC round trip + a bare JetStream publish with expected sequence
    channel = grpc.aio.insecure_channel(addr)
    health = health_pb2_grpc.HealthStub(channel)
    rtt = []
    for i in range(350):
        t = time.perf_counter()
        await health.Check(health_pb2.HealthCheckRequest())
        if i >= 50:
            rtt.append(time.perf_counter() - t)
    nc = await nats.connect(url)
    js = nc.jetstream()
    await js.add_stream(name="BENCH_LK_FLOOR", subjects=["bench.lk.>"], storage="file")
    seq, pub = 0, []
    for i in range(350):
        t = time.perf_counter()
        ack = await js.publish("bench.lk.t", b"x" * 300, headers={
            "Nats-Expected-Last-Subject-Sequence": str(seq), "Nats-Msg-Id": f"m{i}"})
        if i >= 50:
            pub.append(time.perf_counter() - t)
        seq = ack.seq
    await nc.close()
    await channel.close()
    floor = median(rtt) + median(pub)

    # -- four players, each on its own board, 20 moves/s each, all at once
    names = ["p1", "p2", "p3", "p4"]
    clients = [TableClient(addr, token(n)) for n in names]
    lat: list[float] = []
    refused: list[str] = []
    accepted = 0
    for _ in range(rounds):
        t0 = await clients[0].create("lianliankan", {"BOARD": "18x8"})
        for c in clients[1:]:
            await c.sit(t0.table_id)
        await clients[0].start(t0.table_id)
        views = [await c.get(t0.table_id) for c in clients]

        async def player(c: TableClient, table_id: str, view: object, k: int) -> None:
            nonlocal accepted
            gv = game_view(view)  # type: ignore[arg-type]
            board = Board.of(gv.rows, gv.cols, gv.board)
            start = time.perf_counter() + k * (1 / rate / 4)
            for n in range(moves_each):
                due = start + n / rate
                await asyncio.sleep(max(0.0, due - time.perf_counter()))
                pair = find_pair(board)
                assert pair is not None
                a, b = (Cell(*divmod(i, board.cols)) for i in pair)
                t = time.perf_counter()
                try:
                    v = await c.act(table_id, "lianliankan", Remove(a, b))
                except grpc.aio.AioRpcError as e:
                    refused.append(f"{e.code()}: {e.details()}")
                    return
                lat.append(time.perf_counter() - t)
                accepted += 1
                mine = game_view(v)
                board = Board.of(mine.rows, mine.cols, mine.board)

        await asyncio.gather(
            *(player(c, t0.table_id, v, k) for k, (c, v) in enumerate(zip(clients, views, strict=True)))
        )
    for c in clients:
        await c.close()
    sent = rounds * moves_each * len(clients)
    print(f"four players x {rate:.0f} moves/s on one table: {rounds} tables, {sent} moves sent, "
          f"{accepted} accepted, {len(refused)} refused")
    for r in refused[:5]:
        print("    refused:", r)
    p99 = pct(lat, 0.99)
    line("floor: gRPC round trip + JetStream publish p50", floor * 1e3, "ms", "", True)
    line("acceptance latency p99", p99 * 1e3, "ms", "<= 20 ms", p99 <= 0.020 and not refused,
         f"(p50 {median(lat) * 1e3:.2f} ms; p99 is {p99 / floor:.1f}x the floor; "
         f"{0.020 / p99:.1f}x under target)")


def main() -> None:
    bench_path()
    bench_generation()
    bench_table()


if __name__ == "__main__":
    main()
