"""The one loop of a consumer that handles its messages one at a time (:meth:`Durable.consume`), and
the floor every ordered consumer keeps; the ladder's and the ledger's consumers use them instead of
their own copies."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest

from chieu.kit.durable import Durable
from chieu.ladder.consumer import LadderConsumer, ResetConsumer
from chieu.ledger.consumer import SettlementConsumer
from chieu.ledger.rewards import RewardConsumer


def _msg(seq: int) -> Any:
    return SimpleNamespace(metadata=SimpleNamespace(sequence=SimpleNamespace(stream=seq)), seq=seq)


class Scripted(Durable):
    """A durable whose fetches are written in advance (no NATS); it stops when they run out."""

    def __init__(self, batches: list[list[int]], floor: int | None = None) -> None:
        super().__init__(None, stream="S", subjects="s.>", durable="d")  # type: ignore[arg-type]
        self.batches = batches
        self.floor_answer = floor

    async def subscribe(self) -> Any:
        return None

    async def fetch(self, sub: Any, batch: int, wait_s: float = 1.0, *, retry_failures: bool = True) -> list[Any]:
        if not self.batches:
            self._stopping = True
            return []
        return [_msg(s) for s in self.batches.pop(0)]

    async def ack_floor(self) -> int | None:
        return self.floor_answer


@pytest.mark.parametrize(("in_order", "handled"), [(False, [1, 2, 3, 4]), (True, [1, 2, 4])])
def test_a_failed_message_is_left_for_redelivery(in_order: bool, handled: list[int]) -> None:
    seen: list[int] = []

    async def handle(msg: Any) -> None:
        seen.append(msg.seq)
        if msg.seq == 2:
            raise RuntimeError("the database is away")

    d = Scripted([[1, 2, 3], [4]])
    asyncio.run(d.consume(handle, batch=8, what="test record", in_order=in_order))
    assert seen == handled


def test_cancelling_the_loop_is_not_a_failure() -> None:
    async def handle(msg: Any) -> None:
        raise asyncio.CancelledError

    with pytest.raises(asyncio.CancelledError):
        asyncio.run(Scripted([[1, 2]]).consume(handle, batch=8, what="test record"))


def test_the_floor_follows_finished_messages_and_the_ack_floor() -> None:
    d = Scripted([], floor=None)
    d.done(2)
    assert d.floor == 0  # 1 is not done: 2 is not right above the floor
    d.done(1)
    assert d.floor == 1
    asyncio.run(d.refresh_floor())  # NATS did not answer
    assert d.floor == 1
    d.floor_answer = 7
    asyncio.run(d.refresh_floor())
    assert d.floor == 7
    d.floor_answer = 3
    asyncio.run(d.refresh_floor())
    assert d.floor == 7


def test_no_consumer_keeps_its_own_copy() -> None:
    for cls in (LadderConsumer, ResetConsumer, RewardConsumer, SettlementConsumer):
        assert "_refresh_floor" not in vars(cls) and "refresh_floor" not in vars(cls), cls
    for cls in (LadderConsumer, ResetConsumer, RewardConsumer):
        assert "_consume" not in vars(cls) and "consume" not in vars(cls), cls
