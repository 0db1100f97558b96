"""One contract (issue 24): a player the ladder never counted has the standing every player
starts with (level 1, as the lobby's home screen shows), and the ladder gate has one code."""

from __future__ import annotations

from collections.abc import AsyncIterator

import grpc
import pytest

from chieu.kit.settings import Settings
from chieu.ladder.v1 import ladder_service_pb2 as lpb
from tests.conftest import credential
from tests.ladder.helpers import Ladder, uid

pytestmark = pytest.mark.integration


@pytest.fixture
async def ladder(settings: Settings, ladder_server: str) -> AsyncIterator[Ladder]:
    c = Ladder(settings, ladder_server)
    yield c
    await c.close()


async def test_a_player_who_never_played_stands_at_level_1(settings: Settings, ladder_server: str,
                                                          ladder: Ladder) -> None:
    """Was NOT_FOUND / unknown_player while GetHome showed level 1."""
    nobody = uid("never-")
    own = Ladder(settings, ladder_server, nobody, "player")
    try:
        for client in (own, ladder):
            r = await client.stub.GetStanding(lpb.GetStandingRequest(player_id=nobody, game="xiangqi"),
                                              metadata=client.md)
            assert (r.standing.level, r.standing.best, r.standing.lp, r.games) == (1, 1, 0, 0)
            assert r.reputation == settings.ladder_reputation_start
        rep = await own.stub.GetReputation(lpb.GetReputationRequest(player_id=nobody), metadata=own.md)
        assert (rep.reputation, rep.quits, rep.disconnects, rep.below_threshold) == (
            settings.ladder_reputation_start, 0, 0, False)
        history = await own.stub.GetHistory(lpb.GetHistoryRequest(player_id=nobody), metadata=own.md)
        assert list(history.changes) == [] and history.next_page_token == ""
        board = await own.stub.GetLeaderboard(lpb.GetLeaderboardRequest(game="xiangqi", player_id=nobody),
                                              metadata=own.md)
        assert not board.HasField("you")
    finally:
        await own.close()


async def test_the_ladder_gate_has_one_code_in_every_service(settings: Settings, ladder: Ladder) -> None:
    """The seat check said level_too_low while the table refused (and logged) ladder_level_too_low."""
    table = (("authorization", f"Bearer {credential('table')}"),)
    r = await ladder.stub.CheckSeat(lpb.CheckSeatRequest(game="xiangqi", table_level=7, player_ids=[uid("low-")]),
                                    metadata=table)
    assert [(v.allowed, v.level, v.reason) for v in r.verdicts] == [(False, 1, "ladder_level_too_low")]


async def test_a_bad_game_is_still_refused_for_an_unknown_player(ladder: Ladder) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as e:
        await ladder.stub.GetStanding(lpb.GetStandingRequest(player_id=uid("x-"), game="chess"), metadata=ladder.md)
    assert e.value.code() == grpc.StatusCode.NOT_FOUND
    assert dict(e.value.trailing_metadata() or ())["chieu-reason"] == "unknown_game"
