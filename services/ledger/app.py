"""Wiring of the ledger service process: settings, PostgreSQL (migrated at start), the table-log
consumer, the ladder's reward records' consumer, the outbox relay, the channel to the ladder
(asked before a paid reputation reset) and the gRPC server."""

from __future__ import annotations

from chieu.kit import db, logs, metrics, names, natsauth, revocations
from chieu.kit.outbox import OutboxRelay
from chieu.kit.server import Server, nats_check, run
from chieu.kit.settings import Settings, from_env
from chieu.ladder.rules import Params
from chieu.ledger.books import Books
from chieu.ledger.consumer import SettlementConsumer
from chieu.ledger.holds import Screen
from chieu.ledger.peers import Ladder
from chieu.ledger.reservations import Reservations
from chieu.ledger.rewards import RewardConsumer
from chieu.ledger.schema import MIGRATIONS
from chieu.ledger.service import LedgerService, self_audit
from chieu.ledger.v1 import ledger_service_pb2, ledger_service_pb2_grpc
from chieu.lobby.v1 import lobby_service_pb2


async def build(settings: Settings) -> Server:
    """A ready (not yet started) ledger server; its consumer and relay start with it."""
    if not settings.database_url:
        raise RuntimeError("DATABASE_URL is not set: the ledger needs PostgreSQL")
    pool = await db.create_pool(settings.database_url, max_size=10)
    async with pool.acquire() as conn:
        await db.migrate(conn, "ledger", MIGRATIONS)
    nc = await natsauth.connect(settings, "ledger", max_reconnect_attempts=-1)
    screen = Screen(settings.screen_payers, settings.screen_min_coins, settings.screen_share, settings.screen_drain,
                    settings.screen_window_days, settings.screen_welcome_payers) if settings.screen_payers > 0 else None
    books = Books(pool, screen)
    reservations = Reservations(pool, names.TABLES.name)
    books.holds_back = reservations.held
    consumer = SettlementConsumer(books, nc.jetstream(), ack_wait_s=settings.ledger_ack_wait_s,
                                  metrics_every_s=settings.metrics_refresh_s)
    rewards = RewardConsumer(books, nc.jetstream(), daily_cap=settings.reward_daily_cap,
                             best_coins=settings.ladder_reward_best_coins,
                             params=Params(settings.ladder_up, settings.ladder_down, settings.ladder_floor_style,
                                           settings.ladder_only_lose_basis),
                             ack_wait_s=settings.ledger_ack_wait_s, metrics_every_s=settings.metrics_refresh_s)
    audit = metrics.Every(settings.ledger_audit_every_s, lambda: self_audit(books), name="ledger-self-audit")
    relay = OutboxRelay(pool, nc.jetstream(), service="ledger", stream=names.LEDGER,
                        replicas=settings.stream_replicas)
    revoked = revocations.from_lobby(settings, lobby_service_pb2.ListRevocationsRequest,
                                     lobby_service_pb2.ListRevocationsResponse)
    ladder = Ladder(settings)
    servicer = LedgerService(books, settings, revoked, reservations, resettable=ladder.resettable)
    name = ledger_service_pb2.DESCRIPTOR.services_by_name["LedgerService"].full_name
    return Server(
        settings, addr=settings.ledger_addr, services=[name],
        register=[lambda s: ledger_service_pb2_grpc.add_LedgerServiceServicer_to_server(servicer, s)],
        on_shutdown=[consumer.stop, rewards.stop, relay.stop, audit.stop, revoked.stop, ladder.close, nc.close,
                     pool.close],
        background=[consumer.start, rewards.start, relay.start, audit.start, revoked.start],
        dependencies={"database": db.database_check(settings.database_url), "nats": nats_check(nc)},
    )


async def serve(settings: Settings) -> None:
    server = await build(settings)
    await server.run_until_signalled()


def main() -> None:
    settings = from_env()
    logs.configure(settings, "ledger")
    run(settings, serve(settings))
