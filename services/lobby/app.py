"""Wiring of the lobby service process: settings, PostgreSQL (migrated at start, default rooms on
first start), the table-list projection and its feed, the peers, and the gRPC server."""

from __future__ import annotations

from chieu.kit import db, logs, natsauth
from chieu.kit.server import Server, nats_check, run
from chieu.kit.settings import Settings, coin_stakes, from_env
from chieu.lobby.peers import Peers
from chieu.lobby.projection import Feed, Projection
from chieu.lobby.rooms import COIN_STAKES, Rooms
from chieu.lobby.schema import MIGRATIONS
from chieu.lobby.service import LobbyService
from chieu.lobby.v1 import lobby_service_pb2, lobby_service_pb2_grpc

log = logs.get("chieu.lobby.app")


async def build(settings: Settings) -> Server:
    """A ready (not yet started) lobby server; its projection and feed start with it."""
    if not settings.database_url:
        raise RuntimeError("DATABASE_URL is not set: the lobby needs PostgreSQL")
    pool = await db.create_pool(settings.database_url, max_size=20)
    async with pool.acquire() as conn:
        await db.migrate(conn, "lobby", MIGRATIONS)
    offered = coin_stakes(settings)  # the default coin rooms: those of 1, 10, 100 the operators offer
    loaded = await Rooms(pool).load_defaults([s for s in COIN_STAKES if s in offered])
    if loaded:
        log.info("default rooms loaded", rooms=loaded)
    nc = await natsauth.connect(settings, "lobby", max_reconnect_attempts=-1)
    projection = Projection(settings.database_url, nc.jetstream(), ack_wait_s=settings.lobby_ack_wait_s,
                            metrics_every_s=settings.metrics_refresh_s)
    feed = Feed(settings.database_url)
    peers = Peers(settings)
    servicer = LobbyService(pool, settings, peers, feed)
    name = lobby_service_pb2.DESCRIPTOR.services_by_name["LobbyService"].full_name
    return Server(
        settings, addr=settings.lobby_addr, services=[name],
        register=[lambda s: lobby_service_pb2_grpc.add_LobbyServiceServicer_to_server(servicer, s)],
        on_shutdown=[servicer.revocations.stop, servicer.spectators.stop, projection.stop, feed.stop, peers.close,
                     nc.close, pool.close],
        background=[feed.start, projection.start, servicer.revocations.start, lambda: servicer.spectators.start(nc)],
        dependencies={"database": db.database_check(settings.database_url), "nats": nats_check(nc)},
    )


async def serve(settings: Settings) -> None:
    server = await build(settings)
    await server.run_until_signalled()


def main() -> None:
    settings = from_env()
    logs.configure(settings, "lobby")
    run(settings, serve(settings))
