"""The lobby's calls to the other services, through their generated gRPC APIs only.

- The ledger and the ladder are asked with the lobby's own credential (:func:`service_token`:
  ``CHIEU_SERVICE_TOKEN``, subject ``service:lobby``, role ``service``): welcome 金币,
  eligibility, balances, levels and reputation, each allowed to ``service:lobby`` by its callee.
- The table is asked *as the player*, with the player's own access token: ``CreateTable`` and
  ``TakeSeat`` seat their caller and there is no call that seats someone else, so quick seat
  does exactly what the player's own client would do (the table's gates apply to it unchanged).

A service that does not answer in time is ``UNAVAILABLE`` (``ledger_unavailable``,
``ladder_unavailable``, ``table_unavailable``): a gate is never passed blindly.
"""

from __future__ import annotations

from dataclasses import dataclass

import grpc

from chieu.kit import channels
from chieu.kit.errors import ServiceError
from chieu.kit.ratelimit import RELAY
from chieu.kit.settings import Settings
from chieu.ladder.v1 import ladder_service_pb2 as ladder_pb
from chieu.ladder.v1 import ladder_service_pb2_grpc as ladder_grpc
from chieu.ledger.v1 import ledger_service_pb2 as ledger_pb
from chieu.ledger.v1 import ledger_service_pb2_grpc as ledger_grpc
from chieu.lobby.sessions import service_token
from chieu.table.v1 import table_service_pb2 as table_pb
from chieu.table.v1 import table_service_pb2_grpc as table_grpc

TIMEOUT_S = 3.0


RELAYED = frozenset({grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.OUT_OF_RANGE})
"""A peer's refusals of the request itself: passed on as they are (retrying cannot help)."""


def unavailable(service: str, e: grpc.aio.AioRpcError | str) -> ServiceError:
    """What the caller is told when a peer did not give what was asked: its refusal of the request
    itself (invalid argument) as it is, with its reason; anything else as ``UNAVAILABLE``."""
    if not isinstance(e, str) and e.code() in RELAYED:
        reason = dict(e.trailing_metadata() or ()).get("chieu-reason", "")
        if isinstance(reason, bytes):
            reason = reason.decode()
        text = e.details() or ""
        if reason and text.startswith(f"{reason}: "):
            text = text[len(reason) + 2:]
        return ServiceError(e.code(), str(reason) or f"{service}_refused", text)
    why = e if isinstance(e, str) else e.code().name
    return ServiceError(grpc.StatusCode.UNAVAILABLE, f"{service}_unavailable",
                        f"the {service} cannot answer now ({why}); try again")


@dataclass(frozen=True, slots=True)
class Standing:
    level: int
    best: int
    lp: int


class Peers:
    """Channels to the table, the ledger and the ladder (opened once, closed with the lobby)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._channels: dict[str, grpc.aio.Channel] = {}

    def _channel(self, addr: str) -> grpc.aio.Channel:
        ch = self._channels.get(addr)
        if ch is None:
            ch = self._channels[addr] = channels.channel(self.settings, addr)
        return ch

    def _own(self) -> tuple[tuple[str, str]]:
        return (("authorization", f"Bearer {service_token(self.settings)}"),)

    async def close(self) -> None:
        for ch in self._channels.values():
            await ch.close()
        self._channels.clear()

    # -- ledger -------------------------------------------------------------------------------

    def _ledger(self) -> ledger_grpc.LedgerServiceAsyncStub:
        if not self.settings.ledger_addr:
            raise unavailable("ledger", "no ledger is configured (CHIEU_LEDGER_ADDR)")
        return ledger_grpc.LedgerServiceStub(self._channel(self.settings.ledger_addr))

    async def claim_welcome(self, player_id: str) -> tuple[int, bool]:
        """(coins paid by this call, whether the campaign paid at all); ``(0, False)`` once it is over."""
        try:
            r = await self._ledger().ClaimWelcome(ledger_pb.ClaimWelcomeRequest(player_id=player_id),
                                                  timeout=TIMEOUT_S, metadata=self._own())
        except grpc.aio.AioRpcError as e:
            if e.code() == grpc.StatusCode.FAILED_PRECONDITION:  # campaign_over
                return 0, False
            raise unavailable("ledger", e) from None
        if r.result.replayed:
            return 0, True
        return self.settings.welcome_coins, True

    async def coins(self, player_id: str) -> tuple[int, bool, int]:
        """(金币, eligible for a coin table: more than the minimum (GC-1), not held, 金币 not
        already reserved for hands in play), as the ledger finds."""
        try:
            r = await self._ledger().CheckEligibility(
                ledger_pb.CheckEligibilityRequest(player_id=player_id),
                timeout=TIMEOUT_S, metadata=self._own())
        except grpc.aio.AioRpcError as e:
            raise unavailable("ledger", e) from None
        return int(r.coins), bool(r.eligible), int(r.free)

    async def balances(self, player_id: str) -> tuple[dict[str, int], int]:
        """A player's balances by currency, and their membership days, as the ledger has them."""
        try:
            r = await self._ledger().GetBalances(ledger_pb.GetBalancesRequest(player_id=player_id),
                                                 timeout=TIMEOUT_S, metadata=self._own())
        except grpc.aio.AioRpcError as e:
            raise unavailable("ledger", e) from None
        return {b.currency: int(b.amount) for b in r.balances}, int(r.membership_days)

    async def points_rank(self, player_id: str, game: str) -> ledger_pb.BoardRow | None:
        """A player's row of a game's all-time points board (rank 0: beyond the ledger's rank bound);
        ``None``: not on it."""
        try:
            r = await self._ledger().GetBoard(
                ledger_pb.GetBoardRequest(game=game, kind=ledger_pb.BOARD_KIND_POINTS,
                                          period=ledger_pb.BOARD_PERIOD_ALL, page_size=1, player_id=player_id),
                timeout=TIMEOUT_S, metadata=self._own())
        except grpc.aio.AioRpcError as e:
            raise unavailable("ledger", e) from None
        return r.you if r.HasField("you") else None

    # -- ladder -------------------------------------------------------------------------------

    def _ladder(self) -> ladder_grpc.LadderServiceAsyncStub:
        if not self.settings.ladder_addr:
            raise unavailable("ladder", "no ladder is configured (CHIEU_LADDER_ADDR)")
        return ladder_grpc.LadderServiceStub(self._channel(self.settings.ladder_addr))

    async def standing(self, player_id: str, game: str) -> Standing:
        """A player's level in a game; a player the ladder never saw is (1, 1, 0)."""
        try:
            r = await self._ladder().GetStanding(ladder_pb.GetStandingRequest(player_id=player_id, game=game),
                                                 timeout=TIMEOUT_S, metadata=self._own())
        except grpc.aio.AioRpcError as e:
            if e.code() == grpc.StatusCode.NOT_FOUND:
                return Standing(1, 1, 0)
            raise unavailable("ladder", e) from None
        return Standing(int(r.standing.level) or 1, int(r.standing.best) or 1, int(r.standing.lp))

    async def reputation(self, player_id: str) -> int:
        """A player's reputation (信誉度); a player the ladder never saw has the starting value."""
        try:
            r = await self._ladder().GetReputation(ladder_pb.GetReputationRequest(player_id=player_id),
                                                   timeout=TIMEOUT_S, metadata=self._own())
        except grpc.aio.AioRpcError as e:
            if e.code() == grpc.StatusCode.NOT_FOUND:
                return self.settings.ladder_reputation_start
            raise unavailable("ladder", e) from None
        return int(r.reputation)

    # -- table (as the player) ----------------------------------------------------------------

    def table(self) -> table_grpc.TableServiceAsyncStub:
        return table_grpc.TableServiceStub(self._channel(self.settings.table_addr))

    def as_player(self, token: str) -> tuple[tuple[str, str], tuple[str, str]]:
        """The player's token, and the lobby's own credential as the relay (the table then counts
        the call under the player, not under the lobby's address: ``chieu.kit.ratelimit.RELAY``)."""
        return (("authorization", f"Bearer {token}"), (RELAY, f"Bearer {service_token(self.settings)}"))

    async def create_table(self, token: str, req: table_pb.CreateTableRequest) -> table_pb.TableView:
        r = await self.table().CreateTable(req, timeout=TIMEOUT_S, metadata=self.as_player(token))
        return r.table

    async def take_seat(self, token: str, req: table_pb.TakeSeatRequest) -> table_pb.TakeSeatResponse:
        return await self.table().TakeSeat(req, timeout=TIMEOUT_S, metadata=self.as_player(token))
