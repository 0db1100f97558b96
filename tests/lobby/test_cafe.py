"""A café is one address (issue 32, point 7), against a lobby with the default limits behind a
trusted proxy, on the real table service, ledger, NATS and PostgreSQL:

- 50 real people behind one address each get in, play three hands against each other, and each
  gets the welcome 金币 at the next sign-in (none before they have played);
- a script behind one address that makes accounts, plays their hands and dumps their welcome
  coins into one account moves at most one welcome bonus into it: the ledger's screen holds the
  rest, and the account is frozen out of coin tables.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence

import asyncpg
import grpc
import pytest

from chieu.games.xiangqi.v1 import xiangqi_pb2
from chieu.kit.settings import Settings
from chieu.lobby.v1 import lobby_service_pb2 as pb
from chieu.lobby.v1 import lobby_service_pb2_grpc as pb_grpc
from chieu.table.client import TableClient
from chieu.table.v1 import log_pb2
from tests.ladder.helpers import act
from tests.lobby.conftest import uid
from tests.lobby.test_abuse import _lobby, fresh_address, via
from tests.lobby.test_sessions import coins

pytestmark = pytest.mark.integration

HANDS = Settings().lobby_welcome_after_hands


@pytest.fixture(scope="module")
async def cafe(system: str, settings: Settings, database_url: str) -> AsyncIterator[pb_grpc.LobbyServiceStub]:
    """A lobby with the default limits that trusts loopback as its proxy."""
    defaults = Settings()
    async for stub in _lobby(settings, database_url, trusted_proxies="127.0.0.1/32",
                             lobby_welcome_after_hands=defaults.lobby_welcome_after_hands,
                             lobby_welcome_per_address=defaults.lobby_welcome_per_address):
        yield stub


async def sign_in(lobby: pb_grpc.LobbyServiceStub, device: str, address: str) -> pb.Session:
    return (await lobby.SignInGuest(pb.SignInGuestRequest(device_id=device), metadata=via(address))).session


async def play_points_hands(settings: Settings, a: pb.Session, b: pb.Session, hands: int) -> None:
    """``hands`` 中国象棋 hands at a points table: ``a`` hosts and resigns each."""
    host, other = (TableClient(settings.table_addr, s.access_token) for s in (a, b))
    try:
        view = await host.create("xiangqi", {})
        await other.sit(view.table_id)
        for _ in range(hands):
            await host.start(view.table_id)
            await act(host, view.table_id, xiangqi_pb2.Resign())
    finally:
        await host.close()
        await other.close()


async def played(database_url: str, players: Sequence[str], hands: int) -> None:
    """Wait until the lobby's projection counted ``hands`` hands for every player."""
    conn = await asyncpg.connect(database_url)
    try:
        for _ in range(600):
            n = await conn.fetchval("SELECT count(*) FROM lobby_hands_played WHERE player_id = ANY($1::text[])"
                                    " AND hands >= $2", list(players), hands)
            if n == len(players):
                return
            await asyncio.sleep(0.1)
    finally:
        await conn.close()
    raise AssertionError("the lobby did not count the hands")


async def test_fifty_cafe_players_behind_one_address_each_get_in_and_get_the_welcome_once_played(
        cafe: pb_grpc.LobbyServiceStub, settings: Settings, database_url: str) -> None:
    here = fresh_address()
    devices = [uid(f"cafe{i}-") for i in range(50)]
    first = await asyncio.gather(*(sign_in(cafe, d, here) for d in devices))  # all at once: opening time
    assert len({s.player.player_id for s in first}) == 50
    assert [s.welcome_coins for s in first] == [0] * 50  # nothing before they have played
    gate = asyncio.Semaphore(5)

    async def pair(i: int) -> None:
        async with gate:
            await play_points_hands(settings, first[i], first[i + 1], HANDS)

    await asyncio.gather(*(pair(i) for i in range(0, 50, 2)))
    await played(database_url, [s.player.player_id for s in first], HANDS)
    again = await asyncio.gather(*(sign_in(cafe, d, here) for d in devices))
    assert [s.welcome_coins for s in again] == [settings.welcome_coins] * 50
    assert [s.player.player_id for s in again] == [s.player.player_id for s in first]
    paid = await asyncio.gather(*(coins(settings, s.player.player_id) for s in again))
    assert paid == [settings.welcome_coins] * 50
    once = await asyncio.gather(*(sign_in(cafe, d, here) for d in devices[:5]))  # once only
    assert [s.welcome_coins for s in once] == [0] * 5


async def test_a_player_who_has_not_played_gets_the_welcome_at_the_refresh_after_its_hands(
        cafe: pb_grpc.LobbyServiceStub, settings: Settings, database_url: str) -> None:
    here = fresh_address()
    a, b = [await sign_in(cafe, uid("r-"), here) for _ in range(2)]
    r = await cafe.Refresh(pb.RefreshRequest(refresh_token=a.refresh_token))
    assert r.session.welcome_coins == 0 and await coins(settings, a.player.player_id) == 0
    await play_points_hands(settings, a, b, HANDS)
    await played(database_url, [a.player.player_id], HANDS)
    r = await cafe.Refresh(pb.RefreshRequest(refresh_token=r.session.refresh_token))
    assert r.session.welcome_coins == settings.welcome_coins
    assert await coins(settings, a.player.player_id) == settings.welcome_coins


async def dump(settings: Settings, guest: pb.Session, main: pb.Session) -> bool:
    """The guest makes a coin table at stake 100, the main account sits, the guest resigns: whether
    the table let the main account sit."""
    g, m = (TableClient(settings.table_addr, s.access_token) for s in (guest, main))
    try:
        view = await g.create("xiangqi", {}, stake=100, currency=log_pb2.CURRENCY_COINS)
        try:
            await m.sit(view.table_id)
        except grpc.aio.AioRpcError:
            return False
        await g.start(view.table_id)
        await act(g, view.table_id, xiangqi_pb2.Resign())
        return True
    finally:
        await g.close()
        await m.close()


async def test_a_script_behind_one_address_moves_at_most_one_welcome_bonus_into_an_account(
        cafe: pb_grpc.LobbyServiceStub, settings: Settings, database_url: str) -> None:
    here = fresh_address()
    devices = [uid("script-") for _ in range(6)]
    made = [await sign_in(cafe, d, here) for d in devices]
    for i in range(0, 6, 2):  # the script plays its own accounts' hands, to earn their welcome
        await play_points_hands(settings, made[i], made[i + 1], HANDS)
    await played(database_url, [s.player.player_id for s in made], HANDS)
    paid = [await sign_in(cafe, d, here) for d in devices]
    assert [s.welcome_coins for s in paid] == [settings.welcome_coins] * 6
    main, guests = paid[0], paid[1:]
    own = settings.welcome_coins
    seated = []
    for g in guests:
        seated.append(await dump(settings, g, main))
        await asyncio.sleep(0.3)
        for _ in range(100):  # the ledger posts the settlement from the log
            if await coins(settings, g.player.player_id) < settings.welcome_coins or not seated[-1]:
                break
            await asyncio.sleep(0.1)
        assert await coins(settings, main.player.player_id) - own <= settings.welcome_coins
    # the second dump was held with the first; then the main account is frozen out of coin tables
    assert seated[:2] == [True, True] and not any(seated[2:]), seated
    assert await coins(settings, main.player.player_id) == own
    conn = await asyncpg.connect(database_url)
    try:
        held = await conn.fetchval("SELECT balance FROM ledger_accounts WHERE id = $1",
                                   f"review/coins/{main.player.player_id}")
    finally:
        await conn.close()
    assert held == 2 * settings.welcome_coins  # both dumps (a resignation at stake 100 pays 200)
