"""Wiring of the table service process: settings, logging, the event store, the gRPC server."""

from __future__ import annotations

from chieu.games import registry
from chieu.kit import logs, metrics, names, natsauth
from chieu.kit.eventstore import EventStore
from chieu.kit.server import Server, nats_check, run
from chieu.kit.settings import Settings, SettingsError, from_env
from chieu.table.peers import Peers
from chieu.table.servicer import TableService, register
from chieu.table.tables import Tables
from chieu.table.v1 import table_service_pb2
from chieu.tablelog import codec, sealing


async def build(settings: Settings) -> Server:
    """A ready (not yet started) table server connected to its event store."""
    keys = seal_keys(settings)
    nc = await natsauth.connect(settings, "table", max_reconnect_attempts=-1)
    store = EventStore(nc, stream=names.TABLES, replicas=settings.stream_replicas,
                       duplicate_window_s=settings.duplicate_window_s)
    await store.ensure()
    for key in registry.KEYS:  # every game's messages in the descriptor pool, for reflection clients
        codec.game_module(key)
    tables = Tables(store, settings, keys)
    await tables.resume()
    peers = Peers(settings)
    revocations = peers.revocations()
    servicer = TableService(tables, settings, peers, revocations)
    await servicer.quotas.connect(store.js, settings.stream_replicas)  # the count every table process shares
    health = metrics.StreamHealth(store.js, names.TABLES.name, settings.metrics_refresh_s)
    name = table_service_pb2.DESCRIPTOR.services_by_name["TableService"].full_name
    return Server(
        settings, addr=settings.table_addr, services=[name],
        register=[lambda s: register(servicer, s)],
        on_shutdown=[health.stop, tables.close, store.close, revocations.stop, peers.close],
        on_stopping=[tables.stopping],  # before the watch streams close: no ConnectionLost for the stop
        background=[revocations.start, health.start],
        dependencies={"nats": nats_check(nc)},
    )


def seal_keys(settings: Settings) -> sealing.SealKeys:
    """The seal keyset of ``CHIEU_SEAL_KEYS``; a table service without one does not start."""
    if not settings.seal_keys:
        raise SettingsError("CHIEU_SEAL_KEYS is not set: the table service seals the secrets of the hands "
                            "in play with it (docs/fairness.md); ./chieu up makes one")
    try:
        return sealing.SealKeys.load(settings.seal_keys)
    except ValueError as e:
        raise SettingsError(str(e)) from None


async def serve(settings: Settings) -> None:
    server = await build(settings)
    await server.run_until_signalled()


def main() -> None:
    settings = from_env()
    logs.configure(settings, "table")
    run(settings, serve(settings))
