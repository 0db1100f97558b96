"""A load-generator process of ``bench_ccu`` (run as ``python -m tests.benchmarks.ccu_load ADDR``).

It holds Ô ăn quan tables on a table service: per table 2 players and 2 spectators, each with its
own ``Watch`` stream, and (while moving) one move per table every ``pace_s``, at a phase of its
own. A move's latency runs from sending ``Act`` to the moment all 4 streams hold its version.

Commands on stdin, one JSON object a line, each answered by one JSON line on stdout:

- ``{"op": "grow", "tables": [{"i": global index, "tokens": [a, b, s, t], "players": [a, b]}, ...]}``: set those
  tables up (create, sit, start, the 4 streams open with the first view); ``{"ok": n, "failed": [...]}``.
- ``{"op": "move", "on": true|false}``: start or stop moving; ``{}``.
- ``{"op": "collect", "since": t0, "until": t1}``: the latencies (s) of the moves sent between two
  ``time.monotonic()`` instants (the clock every process of the machine shares), the moves sent
  then, the errors since the last collect, this process's CPU seconds so far; ``{"lat": [...], ...}``.
- ``{"op": "stop"}``: close everything and exit.

Tokens come from the bench (signed with the run's key there): this process imports nothing of
the tests' fixtures, so it signs nothing.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import grpc
from google.protobuf import struct_pb2

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from chieu.games.o_an_quan.board import SIDES, Direction
from chieu.games.o_an_quan.model import Sow
from chieu.table.client import game_view
from chieu.table.v1 import table_service_pb2 as pb
from chieu.table.v1 import table_service_pb2_grpc as pb_grpc
from chieu.tablelog import codec

GOLDEN = 0.6180339887498949
"""Table ``i`` moves at phase ``frac(i * GOLDEN) * pace``: evenly spread for any number of tables."""

PLAYING = 2


def said(e: BaseException) -> str:
    """An error in one line."""
    if isinstance(e, grpc.aio.AioRpcError):
        return f"{e.code().name}: {e.details()}"
    return repr(e)[:200]


def sowing(view: pb.TableView) -> Sow:
    """The side to move's first sowing (a refill when its side is empty), from any seat's view."""
    gv = game_view(view)
    side = SIDES[gv.to_move]
    return Sow(next((i for i in side if gv.board[i]), side[0]), Direction.CW)


class Stream:
    """One ``Watch`` stream read in the background: the versions it reached and when."""

    def __init__(self, call: Any) -> None:
        self.call = call
        self.version = -1
        self.at: dict[int, float] = {}
        """Version → when it arrived (the last few)."""
        self.waiting: list[tuple[int, asyncio.Future[float]]] = []
        self.first: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.ended = ""
        """How the stream ended ("" while open)."""
        self.task = asyncio.create_task(self._read())

    async def _read(self) -> None:
        try:
            async for msg in self.call:
                now = time.monotonic()
                v = msg.table.version
                self.version = v
                self.at[v] = now
                if len(self.at) > 8:
                    del self.at[min(self.at)]
                if not self.first.done():
                    self.first.set_result(None)
                if self.waiting:
                    keep = []
                    for want, fut in self.waiting:
                        if v >= want:
                            if not fut.done():
                                fut.set_result(now)
                        else:
                            keep.append((want, fut))
                    self.waiting = keep
        except (grpc.aio.AioRpcError, asyncio.CancelledError) as e:
            err = e if isinstance(e, grpc.aio.AioRpcError) else None
            self.ended = f"{err.code().name}: {err.details()}" if err else "cancelled here"
            if not self.first.done():
                self.first.set_exception(RuntimeError(f"stream ended: {self.ended}"))
            for _, fut in self.waiting:
                if not fut.done():
                    fut.set_exception(RuntimeError(f"stream ended: {self.ended}"))

    async def reached(self, version: int) -> float:
        """When the stream first held ``version`` or later."""
        hits = [t for v, t in self.at.items() if v >= version]
        if hits:
            return min(hits)
        if self.ended:
            raise RuntimeError(f"stream ended: {self.ended}")
        fut: asyncio.Future[float] = asyncio.get_running_loop().create_future()
        self.waiting.append((version, fut))
        return await fut


class Load:
    def __init__(self, addr: str, per_connection: int, pace_s: float) -> None:
        self.addr = addr
        self.per_connection = per_connection
        self.pace_s = pace_s
        self.channels: list[grpc.aio.Channel] = []
        self.streams_on_last = per_connection
        self.moving = asyncio.Event()
        self.sent: list[tuple[float, float]] = []
        """(when sent, latency) of every move."""
        self.started: list[float] = []
        self.errors: list[str] = []
        self.tasks: list[asyncio.Task[None]] = []
        self.streams: list[Stream] = []

    def _stub(self) -> Any:
        """A stub on a connection with room for 4 more streams (a connection of its own per
        ``per_connection`` streams: gRPC would otherwise share one between channels)."""
        if self.streams_on_last + 4 > self.per_connection:
            self.channels.append(grpc.aio.insecure_channel(self.addr, options=[("grpc.use_local_subchannel_pool", 1)]))
            self.streams_on_last = 0
        self.streams_on_last += 4
        return pb_grpc.TableServiceStub(self.channels[-1])

    async def grow(self, tables: Sequence[dict[str, Any]]) -> dict[str, Any]:
        failed: list[str] = []

        async def one(spec: dict[str, Any]) -> None:
            try:
                await self._table(spec["i"], spec["tokens"], spec["players"])
            except Exception as e:
                failed.append(f"table {spec['i']}: {said(e)}")

        sem = asyncio.Semaphore(32)  # set-ups in flight at once

        async def limited(spec: dict[str, Any]) -> None:
            async with sem:
                await one(spec)

        await asyncio.gather(*(limited(s) for s in tables))
        return {"ok": len(tables) - len(failed), "failed": failed[:5], "n_failed": len(failed)}

    async def _table(self, i: int, tokens: list[str], players: list[str]) -> None:
        stub = self._stub()
        md = [(("authorization", f"Bearer {t}"),) for t in tokens]
        options = struct_pb2.Struct()
        options.update({"turnSeconds": 3600})  # no turn runs out while the bench holds the moves
        r = await stub.CreateTable(pb.CreateTableRequest(game="o_an_quan", options=options,
                                                         command_id=uuid.uuid4().hex), metadata=md[0])
        tid = r.table.table_id
        await stub.TakeSeat(pb.TakeSeatRequest(table_id=tid, command_id=uuid.uuid4().hex), metadata=md[1])
        view = (await stub.StartHand(pb.StartHandRequest(table_id=tid, command_id=uuid.uuid4().hex),
                                     metadata=md[0])).table
        streams = [Stream(stub.Watch(pb.WatchRequest(table_id=tid), metadata=m)) for m in md]
        self.streams.extend(streams)
        await asyncio.gather(*(s.first for s in streams))
        self.tasks.append(asyncio.create_task(self._play(i, tid, stub, md, streams, view, players)))

    async def _play(self, i: int, tid: str, stub: Any, md: list[Any],
                    streams: list[Stream], view: pb.TableView, players: list[str]) -> None:
        phase = (i * GOLDEN) % 1.0 * self.pace_s
        while True:
            await self.moving.wait()
            now = time.monotonic()
            # the next tick of this table: phase + k * pace (a missed tick is skipped, not made up)
            at = now + (phase - now) % self.pace_s
            await asyncio.sleep(max(0.0, at - time.monotonic()))
            if not self.moving.is_set():
                continue
            try:
                if view.status != PLAYING:
                    view = (await stub.StartHand(pb.StartHandRequest(table_id=tid, command_id=uuid.uuid4().hex),
                                                 metadata=md[0])).table
                    await asyncio.gather(*(s.reached(view.version) for s in streams))
                    self.started.append(time.monotonic())
                    continue
                who = players.index(view.hand_players[game_view(view).to_move])
                req = pb.ActRequest(table_id=tid, command_id=uuid.uuid4().hex,
                                    command=codec.pack(sowing(view), "o_an_quan"))
                t0 = time.monotonic()
                view = (await stub.Act(req, metadata=md[who])).table
                done = await asyncio.gather(*(s.reached(view.version) for s in streams))
                self.sent.append((t0, max(done) - t0))
            except Exception as e:
                self.errors.append(f"table {i}: {said(e)}")
                await asyncio.sleep(1)
                try:
                    view = (await stub.GetTable(pb.GetTableRequest(table_id=tid), metadata=md[0])).table
                except Exception as again:
                    self.errors.append(f"table {i} get: {said(again)}")

    def collect(self, since: float, until: float) -> dict[str, Any]:
        lat = [lt for t, lt in self.sent if since <= t < until]
        self.sent = [(t, lt) for t, lt in self.sent if t >= until]
        errors, self.errors = self.errors, []
        hands = sum(1 for t in self.started if since <= t < until)
        self.started = [t for t in self.started if t >= until]
        ended: dict[str, int] = {}
        for s in self.streams:
            if s.ended:
                ended[s.ended] = ended.get(s.ended, 0) + 1
        return {"lat": lat, "errors": errors[:5], "n_errors": len(errors), "hands": hands, "ended": ended,
                "cpu": time.process_time(), "streams": sum(1 for s in self.streams if not s.task.done())}

    async def close(self) -> None:
        for t in self.tasks:
            t.cancel()
        for s in self.streams:
            s.call.cancel()
        await asyncio.gather(*self.tasks, *(s.task for s in self.streams), return_exceptions=True)
        for c in self.channels:
            await c.close()


async def main(addr: str, per_connection: int, pace_s: float) -> None:
    load = Load(addr, per_connection, pace_s)
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=64 * 1024 * 1024)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)

    def answer(obj: dict[str, Any]) -> None:
        sys.stdout.write(json.dumps(obj) + "\n")
        sys.stdout.flush()

    while line := await reader.readline():
        cmd = json.loads(line)
        op = cmd["op"]
        if op == "grow":
            answer(await load.grow(cmd["tables"]))
        elif op == "move":
            if cmd["on"]:
                load.moving.set()
            else:
                load.moving.clear()
            answer({})
        elif op == "collect":
            answer(load.collect(cmd["since"], cmd["until"]))
        elif op == "stop":
            await load.close()
            answer({})
            return


if __name__ == "__main__":
    import uvloop

    uvloop.run(main(sys.argv[1], int(sys.argv[2]), float(sys.argv[3])))
