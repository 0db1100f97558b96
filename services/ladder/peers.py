"""The ladder's one call to another service: the ledger's ``CreditReward``, made when an operator
asks ``PayMonthlyRewards``, with the operator's own token passed on. A month's places are an
operator's decision; the ladder holds no credential that pays (issue 32: no service credential
alone creates money), so without the operator's token nothing is paid. A ledger that does not
answer leaves the reward unpaid (``PayMonthlyRewards`` says so and may be asked again)."""

from __future__ import annotations

import grpc

from chieu.kit import channels
from chieu.kit.settings import Settings
from chieu.ledger.v1 import ledger_service_pb2 as ledger_pb
from chieu.ledger.v1 import ledger_service_pb2_grpc as ledger_grpc

LEDGER_TIMEOUT_S = 10.0


class Ledger:
    """A channel to the ledger (opened on first use, closed with the ladder)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._channel: grpc.aio.Channel | None = None

    async def credit(self, authorization: str, reward_id: str, player_id: str, coins: int, reason: str) -> str:
        """Pay one reward as the operator whose ``authorization`` header is passed on: ``""`` when
        paid (or paid before), else why not (the ledger's reason)."""
        if self._channel is None:
            self._channel = channels.channel(self.settings, self.settings.ledger_addr)
        try:
            await ledger_grpc.LedgerServiceStub(self._channel).CreditReward(
                ledger_pb.CreditRewardRequest(reward_id=reward_id, player_id=player_id, coins=coins, reason=reason),
                metadata=(("authorization", authorization),), timeout=LEDGER_TIMEOUT_S)
        except grpc.aio.AioRpcError as e:
            return e.details() or e.code().name
        return ""

    async def close(self) -> None:
        if self._channel is not None:
            await self._channel.close()
            self._channel = None
