"""Wiring of the table service process: settings, logging, the event store, the gRPC server."""

from __future__ import annotations

import grpc

from chieu.games import registry
from chieu.kit import channels, logs, names, natsauth
from chieu.kit.eventstore import EventStore
from chieu.kit.revocations import RevocationList
from chieu.kit.server import Server, run
from chieu.kit.settings import Settings, from_env
from chieu.table import codec
from chieu.table.service import Tables, TableService, register
from chieu.table.v1 import table_service_pb2


async def build(settings: Settings) -> Server:
    """A ready (not yet started) table server connected to its event store."""
    nc = await natsauth.connect(settings, "table", max_reconnect_attempts=-1)
    store = EventStore(nc, stream=names.TABLES, replicas=settings.stream_replicas,
                       duplicate_window_s=settings.duplicate_window_s)
    await store.ensure()
    for key in registry.KEYS:  # every game's messages in the descriptor pool, for reflection clients
        codec.game_module(key)
    tables = Tables(store, settings)
    await tables.resume()
    revocations, lobby = revocation_list(settings)
    servicer = TableService(tables, settings, revocations)
    name = table_service_pb2.DESCRIPTOR.services_by_name["TableService"].full_name
    return Server(
        settings, addr=settings.table_addr, services=[name],
        register=[lambda s: register(servicer, s)],
        on_shutdown=[tables.close, servicer.close, store.close, revocations.stop, lobby.close],
        background=[revocations.start],
    )


def revocation_list(settings: Settings) -> tuple[RevocationList, grpc.aio.Channel]:
    """The sessions the lobby revoked, polled with the table's own credential."""
    from chieu.lobby.v1 import lobby_service_pb2, lobby_service_pb2_grpc

    # its own subchannels: a lobby not up yet puts only this channel in connection backoff
    channel = channels.channel(settings, settings.lobby_addr, options=[("grpc.use_local_subchannel_pool", 1)])
    stub = lobby_service_pb2_grpc.LobbyServiceStub(channel)
    metadata = (("authorization", f"Bearer {settings.service_token}"),) if settings.service_token else ()

    async def fetch(after: int) -> tuple[list[tuple[bytes, int]], int]:
        got = await stub.ListRevocations(lobby_service_pb2.ListRevocationsRequest(after_cursor=after, limit=1000),
                                         timeout=5, metadata=metadata)
        return [(r.token_sha256, r.expires_ms) for r in got.revocations], got.next_cursor

    return RevocationList(fetch, settings.revocation_poll_s), channel


async def serve(settings: Settings) -> None:
    server = await build(settings)
    await server.run_until_signalled()


def main() -> None:
    settings = from_env()
    logs.configure(settings, "table")
    run(settings, serve(settings))
