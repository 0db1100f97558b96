"""The table's calls to the other services, through their generated gRPC APIs only.

- The ledger: a table's gà pot (before the stake or a gà option changes), whether a player
  has more 金币 than the minimum (a coin table's gate, GC-1), and a coin hand's reservations
  (``ReserveHand``, before it starts).
- The ladder: a player's reputation (信誉度) and whether their level admits them to a ladder
  table (过关斩将).
- The lobby: the sessions it revoked, polled by a :class:`~chieu.kit.revocations.RevocationList`;
  a player's display name and avatar when they sit (``GetProfiles``), logged with the seat.

Each is asked with the table's own service credential (``CHIEU_SERVICE_TOKEN``,
``service:table``), never a token it signs (it holds no private key), and within a deadline.
A peer that does not answer is ``UNAVAILABLE`` (``ledger_unavailable``, ``ladder_unavailable``):
a gate is never passed blindly.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import grpc

from chieu.kit import auth, channels, logs, revocations, tracing
from chieu.kit.errors import ServiceError
from chieu.kit.revocations import RevocationList
from chieu.kit.settings import Settings
from chieu.ladder.v1 import ladder_service_pb2 as ladder_pb
from chieu.ladder.v1 import ladder_service_pb2_grpc as ladder_grpc
from chieu.ledger.v1 import ledger_service_pb2 as ledger_pb
from chieu.ledger.v1 import ledger_service_pb2_grpc as ledger_grpc
from chieu.lobby.v1 import lobby_service_pb2 as lobby_pb
from chieu.lobby.v1 import lobby_service_pb2_grpc as lobby_grpc

LEDGER_TIMEOUT_S = 5.0
"""How long the table waits for the ledger (the gà pot, a player's 金币) before it refuses."""
PROFILE_TIMEOUT_S = 1.0
"""How long a seat waits for the player's name: a name never holds a seat back (without one the
seat shows the player id)."""
PROFILE_CACHE_S = 60.0
PROFILE_RETRY_S = 5.0
"""After the lobby did not answer, how long seats go without asking it again (so a lobby that is
down costs each seat nothing rather than the whole timeout)."""
PROFILE_CACHE_SIZE = 10_000

log = logs.get("chieu.table")

R = TypeVar("R")


def unavailable(service: str, why: str) -> ServiceError:
    return ServiceError(grpc.StatusCode.UNAVAILABLE, f"{service}_unavailable", why)


class Peers:
    """Channels to the ledger, the ladder and the lobby (opened on first use, closed with the table)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._channels: dict[tuple[str, bool], grpc.aio.Channel] = {}
        self._profiles: dict[str, tuple[float, tuple[str, str]]] = {}

    def _channel(self, addr: str, *, own_subchannels: bool = False) -> grpc.aio.Channel:
        ch = self._channels.get((addr, own_subchannels))
        if ch is None:
            options = [("grpc.use_local_subchannel_pool", 1)] if own_subchannels else []
            ch = self._channels[addr, own_subchannels] = channels.channel(self.settings, addr, options=options)
        return ch

    def _metadata(self) -> tuple[tuple[str, str], ...]:
        """The credentials of every call to a peer: the table's own service credential (without
        one, the peers refuse the call and the gate answers ``UNAVAILABLE``), and when tracing,
        the call's ``traceparent``: the peer's span is part of the caller's trace."""
        token = auth.service_token(self.settings)  # its own key's, renewed as it goes, or CHIEU_SERVICE_TOKEN
        if not token:
            return tracing.outgoing()
        return (("authorization", f"Bearer {token}"), *tracing.outgoing())

    async def _call(self, service: str, what: str, method: Callable[..., Awaitable[R]], request: Any,
                    deadline_s: float, *, not_found: Callable[[], R] | None = None) -> R:
        """``method(request)`` within ``deadline_s``; any failure → ``UNAVAILABLE`` / ``<service>_unavailable``
        ("the <service> cannot <what> now"), NOT_FOUND → ``not_found()`` where the peer's "never
        heard of them" has an answer."""
        try:
            return await method(request, timeout=deadline_s, metadata=self._metadata())
        except grpc.aio.AioRpcError as e:
            if not_found is not None and e.code() == grpc.StatusCode.NOT_FOUND:
                return not_found()
            raise unavailable(service, f"the {service} cannot {what} now ({e.code().name}); try again") from None

    async def close(self) -> None:
        for ch in self._channels.values():
            await ch.close()
        self._channels.clear()

    # -- ledger -------------------------------------------------------------------------------

    def _ledger(self) -> ledger_grpc.LedgerServiceAsyncStub:
        if not self.settings.ledger_addr:
            raise unavailable("ledger", "no ledger service is configured (CHIEU_LEDGER_ADDR)")
        return ledger_grpc.LedgerServiceStub(self._channel(self.settings.ledger_addr))

    async def ledger_pot(self, table_id: str) -> int:
        """The table's gà pot as the ledger has it (0 with no ledger configured: no money moves)."""
        if not self.settings.ledger_addr:
            return 0
        r = await self._call("ledger", "tell the gà pot", self._ledger().GetPot,
                             ledger_pb.GetPotRequest(table_id=table_id), LEDGER_TIMEOUT_S)
        return int(r.balance)

    async def coins_short(self, player: str, need: int = 0) -> bool:
        """Whether ``player`` has too few 金币 for a coin table: the minimum or fewer (GC-1), or
        fewer not already reserved for hands in play than ``need`` (what one seat of a hand here
        reserves: :func:`chieu.table.reservations.seat_need`), as the ledger finds."""
        r = await self._call("ledger", "tell a player's 金币", self._ledger().CheckEligibility,
                             ledger_pb.CheckEligibilityRequest(player_id=player, need=need), LEDGER_TIMEOUT_S)
        return not r.eligible

    async def reserve_hand(self, table_id: str, hand_no: int, coins: dict[str, int]) -> list[str]:
        """Reserve ``coins`` per player for the hand, all or none, once per table and hand
        (:mod:`chieu.table.reservations`); the players whose 金币 do not cover theirs."""
        r = await self._call("ledger", "reserve the hand's 金币", self._ledger().ReserveHand,
                             ledger_pb.ReserveHandRequest(table_id=table_id, hand_no=hand_no, seats=[
                                 ledger_pb.SeatReservation(player_id=p, coins=c) for p, c in coins.items()]),
                             LEDGER_TIMEOUT_S)
        return list(r.short_players)

    # -- ladder -------------------------------------------------------------------------------

    def _ladder(self) -> ladder_grpc.LadderServiceAsyncStub:
        if not self.settings.ladder_addr:
            raise unavailable("ladder", "no ladder service is configured (CHIEU_LADDER_ADDR)")
        return ladder_grpc.LadderServiceStub(self._channel(self.settings.ladder_addr))

    async def reputation(self, player: str) -> int:
        """``player``'s reputation (信誉度); a player the ladder never counted has the starting one."""
        start = self.settings.ladder_reputation_start
        r = await self._call("ladder", "tell a reputation", self._ladder().GetReputation,
                             ladder_pb.GetReputationRequest(player_id=player), self.settings.ladder_check_timeout_s,
                             not_found=lambda: ladder_pb.GetReputationResponse(reputation=start))
        return int(r.reputation)

    async def ladder_check(self, game: str, level: int, after_seq: int, players: list[str]) -> list[str]:
        """The players the ladder refuses at a ladder table of ``level`` (their level is below it),
        asked with the table's last counted record ``after_seq``, so a hand just finished counts."""
        r = await self._call("ladder", "check the seat", self._ladder().CheckSeat,
                             ladder_pb.CheckSeatRequest(game=game, table_level=level, player_ids=players,
                                                        after_seq=after_seq),
                             self.settings.ladder_check_timeout_s)
        return [v.player_id for v in r.verdicts if not v.allowed]

    # -- lobby --------------------------------------------------------------------------------

    async def profile(self, player: str) -> tuple[str, str]:
        """``player``'s (display name, avatar key) as the lobby has them, kept ``PROFILE_CACHE_S``;
        ``("", "")`` when no lobby is configured, it does not know the player, or it does not answer
        within ``PROFILE_TIMEOUT_S`` (logged: the seat is taken all the same)."""
        now = time.monotonic()
        hit = self._profiles.get(player)
        if hit is not None and hit[0] > now:
            return hit[1]
        if not self.settings.lobby_addr:
            return "", ""
        # its own subchannels: a lobby not up yet (or restarting) puts only this channel in
        # connection backoff, not every other channel of the process to the lobby's address
        stub = lobby_grpc.LobbyServiceStub(self._channel(self.settings.lobby_addr, own_subchannels=True))
        try:
            r = await stub.GetProfiles(lobby_pb.GetProfilesRequest(player_ids=[player]), timeout=PROFILE_TIMEOUT_S,
                                       metadata=self._metadata())
        except grpc.aio.AioRpcError as e:
            log.info("no name for a seat: the lobby did not say", player_id=player, code=e.code().name)
            self._profiles[player] = (now + PROFILE_RETRY_S, ("", ""))
            return "", ""
        found = next(((p.name, p.avatar) for p in r.profiles if p.player_id == player), ("", ""))
        if len(self._profiles) >= PROFILE_CACHE_SIZE:
            self._profiles.clear()
        self._profiles[player] = (now + PROFILE_CACHE_S, found)
        return found

    def revocations(self) -> RevocationList:
        """The sessions the lobby revoked, polled every ``CHIEU_REVOCATION_POLL_S`` seconds by the
        kit's one mechanism, as the ledger and the ladder poll them (start and stop it with the
        server; its failures are the list's to log, not a caller's)."""
        return revocations.from_lobby(self.settings, lobby_pb.ListRevocationsRequest,
                                      lobby_pb.ListRevocationsResponse)
