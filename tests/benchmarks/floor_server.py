"""The same-shape floor of the table service, for bench_table.py: a gRPC server in its own
process that does only the unavoidable I/O of a move — take a unary ``Act``, publish one
message to JetStream with an expected subject sequence (sync_interval always), and push one
table view to each watcher of the table's ``Watch`` streams. No rules, no state, no decoding.

    python tests/benchmarks/floor_server.py PORT NATS_URL
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from typing import Any

import grpc
import nats

from chieu.kit.server import run
from chieu.kit.settings import from_env
from chieu.table.v1 import table_service_pb2 as pb
from chieu.table.v1 import table_service_pb2_grpc as pb_grpc


class Floor(pb_grpc.TableServiceServicer):
    def __init__(self, js: Any) -> None:
        self.js = js
        self.seq: dict[str, int] = {}
        self.version: dict[str, int] = {}
        self.watchers: dict[str, list[asyncio.Queue[pb.TableView]]] = {}
        # a view of the size the real service sends for Ô ăn quan (~400 bytes)
        self.template = pb.TableView(table_id="x" * 32, game="o_an_quan", host="h", hand_players=["a", "b"],
                                     seed_commitment="c" * 64)
        self.template.game_view.value = b"\x01" * 260

    async def Act(self, request: pb.ActRequest, context: Any) -> pb.ActResponse:
        tid = request.table_id
        ack = await self.js.publish(f"floor.{tid}", request.SerializeToString() + b"x" * 200, headers={
            "Nats-Expected-Last-Subject-Sequence": str(self.seq.get(tid, 0)), "Nats-Msg-Id": request.command_id})
        self.seq[tid] = ack.seq
        self.version[tid] = self.version.get(tid, 0) + 1
        view = pb.TableView()
        view.CopyFrom(self.template)
        view.version = self.version[tid]
        for q in self.watchers.get(tid, []):
            q.put_nowait(view)
        return pb.ActResponse(table=view)

    async def Watch(self, request: pb.WatchRequest, context: Any) -> AsyncIterator[pb.WatchResponse]:
        q: asyncio.Queue[pb.TableView] = asyncio.Queue()
        self.watchers.setdefault(request.table_id, []).append(q)
        view = pb.TableView()
        view.CopyFrom(self.template)
        view.version = self.version.get(request.table_id, 0)
        yield pb.WatchResponse(table=view)
        try:
            while True:
                yield pb.WatchResponse(table=await q.get())
        finally:
            self.watchers[request.table_id].remove(q)


async def main(port: int, url: str) -> None:
    nc = await nats.connect(url)
    js = nc.jetstream()
    await js.add_stream(name="BENCH_SAME_SHAPE", subjects=["floor.>"], storage="file")
    server = grpc.aio.server()
    pb_grpc.add_TableServiceServicer_to_server(Floor(js), server)
    server.add_insecure_port(f"127.0.0.1:{port}")
    await server.start()
    await server.wait_for_termination()


if __name__ == "__main__":
    run(from_env(), main(int(sys.argv[1]), sys.argv[2]))  # the service's own event loop
