"""Ô ăn quan benchmarks (issue 2).

1. Rules-core replay: events folded per second on one core (target ≥ 100,000/s), beside a
   baseline measured in the same run: the bare cost of calling a function per event.
2. A whole move through the stack — gRPC Act → JetStream append (sync_interval always) → the
   opponent's watch stream has the new view — beside the floor measured in the same run:
   a bare gRPC round trip (health Check on the same server) plus a bare JetStream publish with
   an expected subject sequence on the same nats-server. Target: p50 ≤ 2× the floor.
"""

from __future__ import annotations

import asyncio
import random
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from chieu.games.core import Setup, replay
from chieu.games.o_an_quan import GAME
from chieu.games.o_an_quan.options import parse_options
from tests.benchmarks.common import line, median, pct, running_table_service, token
from tests.table.helpers import sowings


def random_games(n: int, rng: random.Random) -> list[list[Any]]:
    options = parse_options({})
    games = []
    for i in range(n):
        state = GAME.initial(options, 2)
        log = list(GAME.start(Setup(options=options, players=2, seed=i.to_bytes(4, "big"), now_ms=0)))
        state = replay(GAME, state, log)
        while GAME.outcome(state) is None:
            assert state.to_move is not None
            events = GAME.decide(state, state.to_move, rng.choice(GAME.legal(state, state.to_move)), 0)
            state = replay(GAME, state, events)
            log.extend(events)
        games.append(log)
    return games


def bench_replay() -> None:
    games = random_games(200, random.Random(7))
    events = sum(len(g) for g in games)
    options = parse_options({})

    def fold() -> float:
        t = time.perf_counter()
        for log in games:
            state = GAME.initial(options, 2)
            for e in log:
                state = GAME.evolve(state, e)
        return time.perf_counter() - t

    def baseline() -> float:
        def noop(s: object, e: object) -> object:
            return s

        t = time.perf_counter()
        for log in games:
            state: object = None
            for e in log:
                state = noop(state, e)
        return time.perf_counter() - t

    rate = events / min(fold() for _ in range(5))
    floor = events / min(baseline() for _ in range(5))
    print(f"rules-core replay: {len(games)} random games, {events} events")
    line("replay events/s", rate, "ev/s", ">= 100000", rate >= 100_000,
         f"(ratio to a bare per-event call: {floor / rate:.1f}x slower; to target {rate / 100_000:.2f}x)")


async def bench_stack(url: str, addr: str, rounds: int = 500) -> None:
    """Floor samples and move samples taken in turn, so both see the same machine conditions."""
    import grpc
    import nats
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    from chieu.table.client import TableClient, game_view

    channel = grpc.aio.insecure_channel(addr)
    health = health_pb2_grpc.HealthStub(channel)
    nc = await nats.connect(url)
    js = nc.jetstream()
    await js.add_stream(name="BENCH_FLOOR", subjects=["bench.floor.>"], storage="file")
    seq = 0
    rtt: list[float] = []
    pub: list[float] = []

    async def floor_sample(i: int) -> None:
        """The floor: a bare gRPC round trip + a bare JetStream publish with an expected sequence."""
        nonlocal seq
        t = time.perf_counter()
        await health.Check(health_pb2.HealthCheckRequest())
        rtt.append(time.perf_counter() - t)
        t = time.perf_counter()
        ack = await js.publish("bench.floor.t", b"x" * 200,
                               headers={"Nats-Expected-Last-Subject-Sequence": str(seq), "Nats-Msg-Id": f"m{i}"})
        pub.append(time.perf_counter() - t)
        seq = ack.seq

    # -- the whole move: A acts, B's watch stream has the new view
    a = TableClient(addr, token("a"))
    b = TableClient(addr, token("b"))
    players = {"a": a, "b": b}
    lat: list[float] = []
    warm = 30
    while len(lat) < rounds + warm:
        t0 = await a.create("o_an_quan", {"maxMoves": 300})
        await b.sit(t0.table_id)
        view = await a.start(t0.table_id)
        streams = {p: c.watch(t0.table_id).__aiter__() for p, c in players.items()}
        for s in streams.values():
            await s.__anext__()  # the full view first
        while view.status == 2 and len(lat) < rounds + warm:
            await floor_sample(len(lat))
            gv = game_view(view)
            mover = view.hand_players[gv.to_move]
            other = "b" if mover == "a" else "a"
            cmd = sowings(gv)[0]
            t = time.perf_counter()
            act = asyncio.create_task(players[mover].act(t0.table_id, "o_an_quan", cmd))
            seen = await streams[other].__anext__()
            lat.append(time.perf_counter() - t)
            view = await act
            await streams[mover].__anext__()
            assert seen.version == view.version
    await a.close()
    await b.close()
    await nc.close()
    await channel.close()
    rtt, pub, lat = rtt[warm:], pub[warm:], lat[warm:]
    floor = median(rtt) + median(pub)
    p50 = median(lat)
    print(f"whole move through the stack: {len(lat)} moves, each beside one floor sample")
    line("floor: gRPC round trip p50", median(rtt) * 1e3, "ms", "", True)
    line("floor: JetStream publish (expected seq) p50", median(pub) * 1e3, "ms", "", True)
    line("move: Act -> opponent's watch p50", p50 * 1e3, "ms", "<= 2x floor", p50 <= 2 * floor,
         f"(ratio {p50 / floor:.2f}x floor; p99 {pct(lat, 0.99) * 1e3:.2f} ms)")


def main() -> None:
    bench_replay()
    with running_table_service() as (url, addr):
        asyncio.run(bench_stack(url, addr))


if __name__ == "__main__":
    main()
