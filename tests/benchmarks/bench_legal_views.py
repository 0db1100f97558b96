"""The cost of the legal lists in the views (issue 24).

1. The rules' share, in process, for every game (no target: what the lists cost without the
   service around them): ``decide`` + ``evolve`` + every viewer's game view built and encoded
   (each seat and a spectator, as the table service does after a move), over the same recorded
   random hands, beside the same views with the legal lists left out (neither computed nor
   encoded). The ratio of the total times, the best of seven alternating rounds each, the
   rules' caches emptied before each round.
2. The whole move through the table service, for every game: a client's Act over gRPC until
   every player's watch stream (and a spectator's) has the new version, so every view of it is
   built, encoded and sent; the table service in this process on a real nats-server. Moves with
   and without the legal lists are mixed at random in the same hands (the baseline's views built without
   them, as in 1.). Target: at most 10% slower, in the CPU time this process (the service and
   its clients) spends per move — what the lists cost, which a loaded machine's waits do not
   blur; the wall-clock ratios (mean and median per move) are given beside it.
3. The view encoding of a 够级 seat (six seats, four decks): the seat's game view built and
   packed into ``Any`` as the service packs it, at every step of random games, for the seat to
   act (the best of three runs per position, so that a loaded machine's preemptions do not
   count as the code's). Target: p99 ≤ 2 ms.
"""

from __future__ import annotations

import asyncio
import gc
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

from chieu.games import registry
from chieu.games.core import RuleViolation, Setup
from chieu.games.lianliankan.game import removable
from chieu.games.mahjong.scoring import waits_of
from chieu.kit.settings import Settings
from chieu.table.app import build
from chieu.table.client import TableClient
from chieu.table.v1 import table_service_pb2 as pb
from chieu.tablelog import codec
from chieu.tablelog.fold import Table
from chieu_tools import localnats
from tests.benchmarks.common import PUBLIC_KEYS, credential, line, pct, token
from tests.rules.test_legal_views import offered
from tests.table.helpers import mirror

ROUNDS = 7
KEYS = [a for a in sys.argv[1:] if a in registry.KEYS]
"""Games named on the command line (all by default); ``served`` skips the in-process part."""
PLAYERS = {"gouji": 6, "mahjong": 4, "phom": 4, "dominoes": 4, "lianliankan": 4}


def record(key: str, hands: int, steps: int) -> list[tuple[Any, int, Any, int, int]]:
    """Random moves of ``hands`` hands: (state before, seat, command, now, players)."""
    game = registry.get(key)
    players = PLAYERS.get(key, game.min_players)
    options = game.parse_options({})
    out: list[tuple[Any, int, Any, int, int]] = []
    for h in range(hands):
        rng = random.Random(f"{key}-{h}")
        now = 1_000_000
        state = game.initial(options, players)
        for e in game.start(Setup(options, players, rng.randbytes(32), now)):
            state = game.evolve(state, e)
        for _ in range(steps):
            if game.outcome(state) is not None:
                break
            now += 10
            moves = [(s, c) for s in range(players) for c in offered(key, game.view(state, s))]
            if moves:
                seat, command = rng.choice(moves)
                events = game.decide(state, seat, command, now)
                out.append((state, seat, command, now, players))
            else:
                deadlines = game.deadlines(state)
                if not deadlines:
                    break
                now = max(now, deadlines[0].at_ms)
                try:
                    events = game.on_timeout(state, deadlines[0].seat, now)
                except RuleViolation:
                    break
            for e in events:
                state = game.evolve(state, e)
    return out


@contextmanager
def without_legal(game: Any) -> Iterator[None]:
    """The baseline: the views built without their legal lists (``legal`` answers nothing, or,
    where a view builds its lists itself — 连连看's pairs, 够级's leads — that part is skipped)."""
    if hasattr(game, "_legal_view"):
        game._legal_view = lambda state, seat: {"legal": (), "legal_pairs": ()} if game.key == "lianliankan" else {}
    else:
        game.legal = lambda state, seat: ()
    try:
        yield
    finally:
        for name in ("_legal_view", "legal"):
            if name in vars(game):
                delattr(game, name)


def cold() -> None:
    """Empty the rules' caches (a seat's waits, a board's removable pairs), so a round pays for
    what it asks as the service would, once per version."""
    waits_of.cache_clear()
    removable.cache_clear()


def whole_moves(key: str, moves: list[tuple[Any, int, Any, int, int]], *, legal: bool) -> float:
    """Seconds for every recorded move: decide, evolve, and every viewer's view encoded."""
    game = registry.get(key)
    cold()
    total = 0.0
    for state, seat, command, now, players in moves:
        t0 = time.perf_counter()
        events = game.decide(state, seat, command, now)
        for e in events:
            state = game.evolve(state, e)
        if legal:
            for viewer in (*range(players), None):
                codec.pack(game.view(state, viewer), key).SerializeToString()
        else:
            with without_legal(game):
                for viewer in (*range(players), None):
                    codec.pack(game.view(state, viewer), key).SerializeToString()
        total += time.perf_counter() - t0
    return total


def bench_whole_move() -> None:
    for key in sorted(registry.KEYS):
        if KEYS and key not in KEYS:
            continue
        moves = record(key, 6, 150)
        with_, without = [], []
        for _ in range(ROUNDS):
            with_.append(whole_moves(key, moves, legal=True))
            without.append(whole_moves(key, moves, legal=False))
        a, b = min(with_), min(without)
        print(f"  {key + ': rules + views in process (ratio)':<44} {a / b:>12.3f} ×          "
              f"(the lists' share without the service) {a / len(moves) * 1000:.3f} ms/move with, "
              f"{b / len(moves) * 1000:.3f} without, {len(moves)} moves")


def bench_gouji_seat_view() -> None:
    game = registry.get("gouji")
    samples: list[float] = []
    sizes: list[int] = []
    cold()
    for state, seat, _command, _now, _players in record("gouji", 12, 400):
        best = float("inf")
        for _ in range(3):  # the best of three: a busy machine's preemptions are not the code's
            t0 = time.perf_counter()
            packed = codec.pack(game.view(state, seat), "gouji")
            best = min(best, (time.perf_counter() - t0) * 1000)
        samples.append(best)
        sizes.append(packed.ByteSize())
    p99, p50 = pct(samples, 0.99), pct(samples, 0.5)
    line("够级 seat view built + encoded (p99)", p99, "ms", "≤ 2 ms", p99 <= 2.0,
         f"p50 {p50:.3f} ms, max {max(samples):.3f} ms, {len(samples)} views, "
         f"up to {max(sizes)} bytes")


async def _mirror(auditor: TableClient, table_id: str) -> Table:
    return await mirror(auditor, table_id)  # the hand in play opened with the run's seal keys


async def _served_hands(addr: str, key: str, hands: int
                        ) -> tuple[list[tuple[float, float]], list[tuple[float, float]]]:
    """Per move (act → every watcher has the version), with and without legal lists: the wall
    time and the CPU time of this process (the service and its clients; nats-server aside)."""
    game = registry.get(key)
    n = PLAYERS.get(key, game.min_players)
    names = [f"{key}-b{i}" for i in range(n)]
    players = {p: TableClient(addr, token(p)) for p in names}
    spectator = TableClient(addr, token(f"{key}-watcher"))
    auditor = TableClient(addr, token(f"{key}-auditor", "auditor"))
    with_: list[tuple[float, float]] = []
    without: list[tuple[float, float]] = []
    rng = random.Random(key)
    coin = random.Random(f"{key}-coin")
    try:
        table_id = (await players[names[0]].create(key, SHORT.get(key, {}))).table_id
        for p in names[1:]:
            await players[p].sit(table_id)
        for h in range(hands):
            await players[names[0]].start(table_id)
            streams = [c.watch(table_id).__aiter__() for c in (*players.values(), spectator)]
            for st in streams:
                await st.__anext__()
            for _ in range(400):
                mirror = await _mirror(auditor, table_id)
                if not mirror.playing or mirror.hand_no != h + 1:
                    break
                moves = [(s, m) for s in range(n) for m in type(game).legal(game, mirror.game_state, s)
                         if type(m).__name__ != "Leave"]  # 连连看: play the board, do not walk out
                if not moves:
                    break
                seat, move = rng.choice(moves)
                legal = coin.random() < 0.5  # at random: no link with the moves' kinds
                t0, c0 = time.perf_counter(), time.process_time()
                if legal:
                    view = await players[mirror.hand_players[seat]].act(table_id, key, move)
                    await asyncio.gather(*(_until(st, view.version) for st in streams))
                else:
                    with without_legal(game):
                        view = await players[mirror.hand_players[seat]].act(table_id, key, move)
                        await asyncio.gather(*(_until(st, view.version) for st in streams))
                (with_ if legal else without).append((time.perf_counter() - t0, time.process_time() - c0))
            for st in streams:
                await st.aclose()  # type: ignore[attr-defined]
            if (await players[names[0]].get(table_id)).status == pb.TABLE_STATUS_PLAYING:
                break  # a hand cut short by the step limit: no next hand
    finally:
        for c in (*players.values(), spectator, auditor):
            await c.close()
    return with_, without


async def _until(stream: Any, version: int) -> None:
    while True:
        v = await stream.__anext__()
        if v.version >= version:
            return


HANDS = {"gouji": 1, "xiangqi": 2, "mahjong": 8}
"""Hands per game through the service (more of the short ones, for some 100 moves each way;
mahjong's some 300 each way: its lists cost a few per cent of a move, which 100 moves of mixed
kinds do not tell from noise)."""

SHORT = {"o_an_quan": {"maxMoves": 120}, "phom": {"uWindowSeconds": 0}, "xiangqi": {"MOVE_LIMIT": "120-plies"},
         "lianliankan": {"BOARD": "14x6"}}


async def _bench_served() -> None:
    data = Path(tempfile.mkdtemp(prefix="chieu-bench-legal-"))
    proc, url = localnats.start(data / "nats", quiet=True)
    settings = replace(Settings(), nats_url=url, table_addr=f"127.0.0.1:{localnats.free_port()}",
                       seal_keys=os.environ["CHIEU_SEAL_KEYS"],
                       token_public_keys=str(PUBLIC_KEYS), service_token=credential("table"))
    server = await build(settings)
    await server.start()
    try:
        for key in sorted(registry.KEYS):
            if KEYS and key not in KEYS:
                continue
            with_, without = await _served_hands(settings.table_addr, key, HANDS.get(key, 4))
            if not with_ or not without:
                continue
            cpu = statistics.fmean(c for _, c in with_) / statistics.fmean(c for _, c in without)
            wall = statistics.fmean(w for w, _ in with_) / statistics.fmean(w for w, _ in without)
            median = statistics.median(w for w, _ in with_) / statistics.median(w for w, _ in without)
            line(f"{key}: served move, CPU with lists (ratio)", cpu, "×", "≤ 1.10", cpu <= 1.10,
                 f"{statistics.fmean(c for _, c in with_) * 1000:.2f} ms CPU/move with, "
                 f"{statistics.fmean(c for _, c in without) * 1000:.2f} without; wall clock: mean ratio "
                 f"{wall:.3f}, median ratio {median:.3f} ({statistics.fmean(w for w, _ in without) * 1000:.2f} ms "
                 f"a move without); {len(with_)}+{len(without)} moves")
    finally:
        await server.shutdown()
        localnats.stop(proc)
        shutil.rmtree(data, ignore_errors=True)


def main() -> None:
    print("legal lists in views (issue 24)")
    gc.collect()
    gc.freeze()  # as the services do (chieu.kit.server.tune_gc): no collection of the setup
    if "served" not in sys.argv[1:]:
        bench_whole_move()
    asyncio.run(_bench_served())
    bench_gouji_seat_view()


if __name__ == "__main__":
    main()
