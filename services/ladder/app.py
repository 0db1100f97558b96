"""Wiring of the ladder service process: settings, PostgreSQL (migrated at start), the
table-log consumer, the reputation-reset consumer, the outbox relay (its announcements and its
reward records, which the ledger pays) and the gRPC server."""

from __future__ import annotations

from chieu.kit import db, logs, names, natsauth, revocations
from chieu.kit.outbox import OutboxRelay
from chieu.kit.server import Server, nats_check, run
from chieu.kit.settings import Settings, from_env
from chieu.ladder.consumer import STREAM, LadderConsumer, ResetConsumer
from chieu.ladder.peers import Ledger
from chieu.ladder.schema import MIGRATIONS
from chieu.ladder.service import LadderService
from chieu.ladder.standings import Store
from chieu.ladder.terms import Terms
from chieu.ladder.v1 import ladder_service_pb2, ladder_service_pb2_grpc
from chieu.lobby.v1 import lobby_service_pb2


async def build(settings: Settings) -> Server:
    """A ready (not yet started) ladder server; its consumers and relay start with it."""
    if not settings.database_url:
        raise RuntimeError("DATABASE_URL is not set: the ladder needs PostgreSQL")
    pool = await db.create_pool(settings.database_url, max_size=10)
    async with pool.acquire() as conn:
        await db.migrate(conn, "ladder", MIGRATIONS)
    nc = await natsauth.connect(settings, "ladder", max_reconnect_attempts=-1)
    store = Store(pool, Terms.from_settings(settings))
    consumer = LadderConsumer(store, nc.jetstream(), ack_wait_s=settings.ladder_ack_wait_s,
                              metrics_every_s=settings.metrics_refresh_s)
    resets = ResetConsumer(store, nc.jetstream(), ack_wait_s=settings.ladder_ack_wait_s,
                           metrics_every_s=settings.metrics_refresh_s)
    relay = OutboxRelay(pool, nc.jetstream(), service="ladder", stream=names.LADDER,
                        replicas=settings.stream_replicas)
    revoked = revocations.from_lobby(settings, lobby_service_pb2.ListRevocationsRequest,
                                     lobby_service_pb2.ListRevocationsResponse)
    ledger = Ledger(settings)
    servicer = LadderService(store, settings, STREAM, revoked, ledger)
    name = ladder_service_pb2.DESCRIPTOR.services_by_name["LadderService"].full_name
    return Server(
        settings, addr=settings.ladder_addr, services=[name],
        register=[lambda s: ladder_service_pb2_grpc.add_LadderServiceServicer_to_server(servicer, s)],
        on_shutdown=[consumer.stop, resets.stop, relay.stop, revoked.stop, ledger.close, nc.close, pool.close],
        background=[consumer.start, resets.start, relay.start, revoked.start],
        dependencies={"database": db.database_check(settings.database_url), "nats": nats_check(nc)},
    )


async def serve(settings: Settings) -> None:
    server = await build(settings)
    await server.run_until_signalled()


def main() -> None:
    settings = from_env()
    logs.configure(settings, "ladder")
    run(settings, serve(settings))
