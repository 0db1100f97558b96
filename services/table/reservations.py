"""A coin table's hand reserves each seat's largest possible loss before it starts.

Asked once per hand from the start-hand path (:meth:`TableService.StartHand`), at the same time
as the entry gates (:func:`gated`): the game's bound
(its descriptor's ``max_loss``, in stake units) × the table's stake, for every seated player, in
one ``ReserveHand`` call to the ledger (all seats or none, keyed by table and hand number, so a
retried start or another table process taking over reserves once). A seat the ledger cannot
reserve keeps the hand from starting (``not_enough_coins``). The reservations are logged in the
hand's ``HandStarted`` and cap every settlement of the hand (:mod:`chieu.tablelog.capped`); the
ledger releases them when the log ends the hand. docs/ledger.md, "Reservations".
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from chieu.games import registry
from chieu.kit.errors import precondition
from chieu.table.decide import NOT_ENOUGH_COINS, Reserved
from chieu.table.peers import Peers
from chieu.table.v1 import log_pb2
from chieu.tablelog.fold import Table

SHORT_RETRY_S = (0.1, 0.25, 0.4)
"""Pauses before asking again for a seat the ledger found short: a hand of the player's that just
ended (here or at another table) holds its reservation until the ledger reads its ``HandEnded``,
milliseconds later as a rule; a player really short is refused after them (¾ s)."""
MAX_COINS = 2**62
"""More than any balance can hold: a reservation above it is refused here, before the ledger."""


def seat_coins(table: Table, seats: int) -> int | None:
    """What one seat of a ``seats``-player hand at ``table`` reserves, in 金币 (``None``: the
    table is not a coin table, or the game sets no bound): ``Descriptor.seat_reservation``."""
    if table.currency != log_pb2.CURRENCY_COINS:
        return None
    return registry.descriptor(table.game_key).seat_reservation(table.options, seats, table.stake)


def seat_need(table: Table) -> int:
    """What a player must have free to sit at ``table`` (0 at a points table): the most one seat
    of any of its hands reserves (``Descriptor.most_reserved`` at the table's seats), asked of the
    ledger with the entry gates, so a seat granted is a hand that can start."""
    if table.currency != log_pb2.CURRENCY_COINS or table.options is None:
        return 0
    return registry.descriptor(table.game_key).most_reserved(table.options, table.stake, len(table.seats)) or 0


async def gated(stand_down: Callable[[Table], Awaitable[None]], peers: Peers, table: Table) -> Reserved | None:
    """The entry gates before a hand (``stand_down``: the seated players they no longer admit are
    stood up) and the hand's reservations (:func:`reserve`), asked at once: the start waits for
    the slower of the two, not for both. When the gates stood someone up, the hand is reserved
    again for the seats left (the ledger replaces a reservation whose hand has not started)."""
    players = [p for p in table.seats if p is not None]
    reserving = asyncio.ensure_future(reserve(peers, table, players))
    try:
        await stand_down(table)
    except BaseException:
        reserving.cancel()
        await asyncio.gather(reserving, return_exceptions=True)
        raise
    first = (await asyncio.gather(reserving, return_exceptions=True))[0]
    if [p for p in table.seats if p is not None] != players:
        return await reserve(peers, table)
    if isinstance(first, BaseException):
        raise first
    return first


async def reserve(peers: Peers, table: Table, players: list[str] | None = None) -> Reserved | None:
    """Reserve the next hand of ``table`` for ``players`` (default: every seated player; ``None``
    at a points table, or with too few players to start); FAILED_PRECONDITION /
    ``not_enough_coins`` when some player's free 金币 do not cover it."""
    players = [p for p in table.seats if p is not None] if players is None else players
    coins = seat_coins(table, len(players))
    if coins is None or len(players) < table.game.min_players:
        return None
    hand_no = table.hand_no + 1
    short = players
    for pause in (*SHORT_RETRY_S, None):
        if coins > MAX_COINS:
            break
        short = await peers.reserve_hand(table.table_id, hand_no, dict.fromkeys(players, coins))
        if not short or pause is None:
            break
        await asyncio.sleep(pause)  # a hand just ended elsewhere: the ledger releases it once it reads its end
    if short:
        raise precondition(NOT_ENOUGH_COINS, f"a hand here may cost each seat {coins} 金币; "
                           f"{', '.join(sorted(short))} cannot cover it with the 金币 not already in play")
    return hand_no, dict.fromkeys(players, coins)
