"""The lobby's speed, each number beside a baseline measured in the same run:

- sign-in (SignIn over gRPC, Argon2id included) at 50/s: p99 ≤ 50 ms; beside it, the cost of one
  password check alone;
- ListTables of a room holding 10,000 open tables: p99 ≤ 10 ms; beside it, the same query on
  PostgreSQL directly;
- projection lag, from a record's append to the change on a WatchRoom stream, at 200 table
  changes/s: p99 ≤ 50 ms; beside it, the lag of a bare JetStream subscriber to the same records;
- QuickSeat: p99 ≤ 30 ms; beside it, the table service's own TakeSeat.

A nats-server, PostgreSQL, a table-service process and a lobby process (python -m chieu.lobby,
without ledger or ladder: points rooms need neither) on loopback.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import grpc
import nats

from chieu.kit import db, names
from chieu.lobby.accounts import HASHER
from chieu.lobby.v1 import lobby_service_pb2 as pb
from chieu.lobby.v1 import lobby_service_pb2_grpc as pb_grpc
from chieu.table.client import TableClient
from chieu.table.v1 import log_pb2
from chieu_tools import localnats, localpg
from tests.benchmarks.common import PRIVATE_KEY, another_table_service, credential, line, median, pct, token


def md(player: str) -> tuple[tuple[str, str]]:
    return (("authorization", f"Bearer {token(player)}"),)


def start_lobby(url: str, dburl: str, table_addr: str) -> tuple[subprocess.Popen[bytes], str]:
    port = localnats.free_port()
    env = {**os.environ, "NATS_URL": url, "DATABASE_URL": dburl, "CHIEU_LOBBY_ADDR": f"127.0.0.1:{port}",
           "CHIEU_TABLE_ADDR": table_addr, "CHIEU_LEDGER_ADDR": "", "CHIEU_LADDER_ADDR": "",
           "CHIEU_LOG_LEVEL": "error", "CHIEU_TOKEN_PRIVATE_KEY": str(PRIVATE_KEY),
           "CHIEU_SERVICE_TOKEN": credential("lobby"),
           # every account is registered from 127.0.0.1: no per-address new-player limit here
           "CHIEU_LOBBY_NEW_PLAYERS_PER_ADDRESS": "0"}
    proc = subprocess.Popen([sys.executable, "-m", "chieu.lobby"], env=env)
    localnats.wait_for_port(port, 60, proc)
    return proc, f"127.0.0.1:{port}"


async def paced(rate: float, n: int, one: object) -> None:
    """``n`` calls of ``one(i)`` at ``rate`` per second, each started at its own time."""
    tasks = []
    start = time.perf_counter()
    for i in range(n):
        delay = start + i / rate - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        tasks.append(asyncio.create_task(one(i)))  # type: ignore[operator]
    await asyncio.gather(*tasks)


async def bench_sign_in(stub: pb_grpc.LobbyServiceAsyncStub, pool: object) -> None:
    accounts = [f"bench{i}" for i in range(100)]
    for a in accounts:
        await stub.Register(pb.RegisterRequest(username=a, password="bench-password", device_id=f"device-{a}"))
    await pool.execute("UPDATE lobby_players SET welcome = 'claimed'")  # type: ignore[attr-defined]
    stored = HASHER.hash("bench-password")
    alone = []
    for _ in range(100):
        t = time.perf_counter()
        HASHER.verify(stored, "bench-password")
        alone.append(time.perf_counter() - t)
    lat: list[float] = []

    async def one(i: int) -> None:
        a = accounts[i % len(accounts)]
        t = time.perf_counter()
        await stub.SignIn(pb.SignInRequest(username=a, password="bench-password", device_id=f"device-{a}"))
        lat.append(time.perf_counter() - t)

    await paced(50, 500, one)
    p99, hp50 = pct(lat, 0.99), median(alone)
    line("password check alone p50 (Argon2id)", hp50 * 1e3, "ms", "", True, f"p99 {pct(alone, 0.99) * 1e3:.1f} ms")
    line("sign-in p50 (gRPC SignIn, 50/s)", median(lat) * 1e3, "ms", "", True)
    line("sign-in p99", p99 * 1e3, "ms", "<= 50", p99 <= 0.050,
         f"(ratio to the password check alone: {p99 / hp50:.1f}x)")


async def bench_list(stub: pb_grpc.LobbyServiceAsyncStub, pool: object) -> None:
    rows = [(f"bench{i:05d}", "phom", "phom.points", 0, 1, 1, f"h{i}",
             [f"h{i}"] + [f"q{i}-{s}" if s < i % 4 else "" for s in range(1, 4)], 1 + min(i % 4, 3), 1, 0, 1, 0, 0)
            for i in range(10_000)]
    async with pool.acquire() as c:  # type: ignore[attr-defined]
        await c.copy_records_to_table("lobby_tables", records=rows, columns=[
            "table_id", "game", "room_id", "ladder_level", "stake", "currency", "host", "seats", "taken", "status",
            "hand_no", "version", "updated_ms", "seated_ms"])
        await c.execute("ANALYZE lobby_tables")
    who = md("lister")
    query = ("SELECT table_id, game, room_id, ladder_level, stake, currency, host, seats, status, hand_no, version,"
             " updated_ms, seated_ms FROM lobby_tables WHERE room_id = $1 AND taken > 0"
             " ORDER BY taken DESC, table_id LIMIT 51")
    raw, lat = [], []
    for i in range(1100):
        t = time.perf_counter()
        await pool.fetch(query, "phom.points")  # type: ignore[attr-defined]
        if i >= 100:
            raw.append(time.perf_counter() - t)
    token = ""
    for i in range(1100):
        t = time.perf_counter()
        r = await stub.ListTables(pb.ListTablesRequest(room_id="phom.points", page_token=token), metadata=who)
        if i >= 100:
            lat.append(time.perf_counter() - t)
        token = r.next_page_token if i % 20 else ""  # first pages and deeper ones
        assert len(r.tables) == 50
    p99 = pct(lat, 0.99)
    line("the same query on PostgreSQL p99", pct(raw, 0.99) * 1e3, "ms", "", True)
    line("ListTables p50 (10,000 open tables)", median(lat) * 1e3, "ms", "", True)
    line("ListTables p99", p99 * 1e3, "ms", "<= 10", p99 <= 0.010,
         f"(ratio to the raw query's p99: {p99 / pct(raw, 0.99):.1f}x)")


async def bench_lag(stub: pb_grpc.LobbyServiceAsyncStub, url: str) -> None:
    nc = await nats.connect(url)
    js = nc.jetstream()
    bare: list[float] = []
    sub = await nc.subscribe(names.TABLES.subjects, cb=None)

    async def read_bare() -> None:
        async for m in sub.messages:
            rec = log_pb2.Record.FromString(m.data)
            if rec.table_id.startswith("lag"):
                bare.append(time.time() * 1000 - rec.server_time_ms)

    bare_task = asyncio.create_task(read_bare())
    lags: list[float] = []
    call = stub.WatchRoom(pb.WatchRoomRequest(room_id="xiangqi.points"), metadata=md("watcher"))

    async def read_watch() -> None:
        async for m in call:
            if m.WhichOneof("kind") in ("changed", "removed"):
                x = m.changed if m.WhichOneof("kind") == "changed" else m.removed
                lags.append(time.time() * 1000 - x.updated_ms)

    watch_task = asyncio.create_task(read_watch())
    await asyncio.sleep(0.5)
    tables = [f"lag{uuid.uuid4().hex[:12]}" for _ in range(40)]
    versions = dict.fromkeys(tables, 0)

    async def one(i: int) -> None:
        tid = tables[i % len(tables)]
        versions[tid] += 1
        v = versions[tid]
        rec = log_pb2.Record(table_id=tid, version=v, command_id=uuid.uuid4().hex, actor="p", game="xiangqi",
                             server_time_ms=int(time.time() * 1000))
        if v == 1:
            rec.events.add().table_created.CopyFrom(log_pb2.TableCreated(
                table_id=tid, game="xiangqi", host="p", seats=2, stake=1, currency=log_pb2.CURRENCY_POINTS))
            rec.events.add().player_seated.CopyFrom(log_pb2.PlayerSeated(player_id="p", seat=0))
        elif v % 2 == 0:
            rec.events.add().player_seated.CopyFrom(log_pb2.PlayerSeated(player_id="q", seat=1))
        else:
            rec.events.add().player_left.CopyFrom(log_pb2.PlayerLeft(player_id="q", seat=1))
        await js.publish(names.TABLES.subject(tid), rec.SerializeToString())

    await paced(200, 2000, one)
    await asyncio.sleep(1.0)
    call.cancel()
    watch_task.cancel()
    bare_task.cancel()
    await nc.close()
    p99 = pct(lags, 0.99)
    line("bare JetStream subscriber lag p99", pct(bare, 0.99), "ms", "", True, f"({len(bare)} records)")
    line("projection lag p50 (append → WatchRoom)", median(lags), "ms", "", True, f"({len(lags)} changes at 200/s)")
    line("projection lag p99", p99, "ms", "<= 50", p99 <= 50, f"(ratio to the bare subscriber's p99: "
         f"{p99 / max(pct(bare, 0.99), 0.001):.1f}x)")


async def bench_quick_seat(stub: pb_grpc.LobbyServiceAsyncStub, table_addr: str) -> None:
    lat: list[float] = []
    for i in range(400):
        t = time.perf_counter()
        await stub.QuickSeat(pb.QuickSeatRequest(room_id="dominoes.points"), metadata=md(f"qs{i}"))
        lat.append(time.perf_counter() - t)
        await asyncio.sleep(0.02)  # the projection shows the seat before the next player comes
    direct: list[float] = []
    for i in range(100):
        host = TableClient(table_addr, token(f"d{i}"))
        guest = TableClient(table_addr, token(f"e{i}"))
        view = await host.create("dominoes")
        t = time.perf_counter()
        await guest.sit(view.table_id)
        direct.append(time.perf_counter() - t)
        await host.close()
        await guest.close()
    p99 = pct(lat, 0.99)
    line("the table's own TakeSeat p99", pct(direct, 0.99) * 1e3, "ms", "", True)
    line("QuickSeat p50", median(lat) * 1e3, "ms", "", True)
    line("QuickSeat p99", p99 * 1e3, "ms", "<= 30", p99 <= 0.030,
         f"(ratio to TakeSeat's p99: {p99 / pct(direct, 0.99):.1f}x)")


async def run(data: Path) -> None:
    proc, url = localnats.start(data / "nats", quiet=True)
    pg, dburl = localpg.start(data / "pg")
    lobby = None
    try:
        with another_table_service(url) as table_addr:
            lobby, addr = start_lobby(url, dburl, table_addr)
            pool = await db.create_pool(dburl, max_size=4)
            ch = grpc.aio.insecure_channel(addr)
            stub = pb_grpc.LobbyServiceStub(ch)
            await bench_sign_in(stub, pool)
            await bench_lag(stub, url)
            await bench_quick_seat(stub, table_addr)
            await bench_list(stub, pool)
            await ch.close()
            await pool.close()
    finally:
        if lobby is not None:
            lobby.send_signal(signal.SIGTERM)
            lobby.wait(20)
        localnats.stop(proc)
        localpg.stop(pg)


def main() -> None:
    data = Path(tempfile.mkdtemp(prefix="chieu-bench-lobby-"))
    try:
        asyncio.run(run(data))
    finally:
        shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    main()
