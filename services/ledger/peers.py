"""The ledger's one call to another service: the ladder, the authority on reputation (信誉度), asked
before a paid 信誉度复位 whether there is anything to reset, so a reset of nothing is refused and
charges nothing. Asked with the ledger's own service credential (``service:ledger``) within a
deadline; a ladder that does not answer refuses the purchase (``ladder_unavailable``): nothing is
charged blindly."""

from __future__ import annotations

import grpc

from chieu.kit import auth, channels
from chieu.kit.errors import ServiceError
from chieu.kit.settings import Settings
from chieu.ladder.v1 import ladder_service_pb2 as ladder_pb
from chieu.ladder.v1 import ladder_service_pb2_grpc as ladder_grpc

LADDER_TIMEOUT_S = 5.0
"""How long a reset waits for the ladder before it is refused."""


class Ladder:
    """A channel to the ladder (opened on first use, closed with the ledger)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._channel: grpc.aio.Channel | None = None

    async def resettable(self, player_id: str) -> bool:
        """Whether ``player_id``'s reputation is below the start a reset restores."""
        if self._channel is None:
            self._channel = channels.channel(self.settings, self.settings.ladder_addr)
        token = auth.service_token(self.settings)
        metadata = (("authorization", f"Bearer {token}"),) if token else ()
        try:
            r = await ladder_grpc.LadderServiceStub(self._channel).GetReputation(
                ladder_pb.GetReputationRequest(player_id=player_id), metadata=metadata, timeout=LADDER_TIMEOUT_S)
        except grpc.aio.AioRpcError as e:
            raise ServiceError(grpc.StatusCode.UNAVAILABLE, "ladder_unavailable",
                               f"the ladder did not say whether there is a reputation to reset ({e.code().name})",
                               ) from None
        return r.reputation < r.start

    async def close(self) -> None:
        if self._channel is not None:
            await self._channel.close()
            self._channel = None
