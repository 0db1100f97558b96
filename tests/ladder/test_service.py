"""The ladder over the real path: xiangqi (and 够级) games finished, quit and disconnected over
gRPC at ladder tables, the table log consumed by the real ladder service, standings read back
over its API. Every worked scenario of shared/rules/ladder.md §5.4."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import grpc
import pytest
import yaml

from chieu.games.xiangqi.v1 import xiangqi_pb2
from chieu.kit.settings import Settings
from chieu.ladder.v1 import ladder_service_pb2 as lpb
from chieu.table.v1 import table_service_pb2 as tpb
from tests.ladder.helpers import Ladder, act, play, uid, until
from tests.table.helpers import client, refused
from tests.table.helpers import mirror as folded

pytestmark = pytest.mark.integration

SCENARIOS = yaml.safe_load((Path(__file__).parent / "scenarios.yaml").read_text())


@pytest.fixture
async def ladder(settings: Settings, ladder_server: str) -> Any:
    c = Ladder(settings, ladder_server)
    yield c
    await c.close()


@pytest.mark.parametrize("case", SCENARIOS, ids=[c["id"] for c in SCENARIOS])
async def test_worked_scenario_over_grpc(settings: Settings, table_server: str, ladder: Ladder,
                                         case: dict[str, Any]) -> None:
    me = uid(f"{case['id']}-")
    start = case["start"]
    if start != [1, 1, 0]:
        await ladder.set(me, *start)
    player = client(settings, table_server, me)
    state = list(start)
    seen: dict[int, list[int]] = {}
    try:
        for n, step in enumerate(case["steps"], 1):
            result, level = (step, state[0]) if isinstance(step, str) else (step["result"], step["table"])
            rival = uid("rival-")
            if level > 1:
                await ladder.set(rival, level, level, 0)
            other = client(settings, table_server, rival)
            try:
                await play(result, player, me, other, level)
            finally:
                await other.close()
            changes = await until(lambda n=n: _counted(ladder, me, n + (start != [1, 1, 0])))
            last = changes[-1]
            assert last.result == result and last.table_level == level
            state = [last.after.level, last.after.best, last.after.lp]
            seen[n] = state
        for n, expected in case["expect"]:
            assert seen[n] == expected, f"after {n} steps"
        assert list(await ladder.standing(me)) == state
    finally:
        await player.close()


async def _counted(ladder: Ladder, player: str, n: int) -> list[lpb.Change] | None:
    try:
        changes = await ladder.changes(player)
    except grpc.aio.AioRpcError as e:
        if e.code() == grpc.StatusCode.NOT_FOUND:
            return None
        raise
    return changes if len(changes) >= n else None


async def test_lv_11_refused_above_own_level_watching_allowed(settings: Settings, table_server: str,
                                                              ladder: Ladder) -> None:
    me, rival = uid("lv11-"), uid("rival-")
    await ladder.set(me, 1, 3, 0)
    await ladder.set(rival, 2, 2, 0)
    mine, theirs = client(settings, table_server, me), client(settings, table_server, rival)
    try:
        view = await theirs.create("xiangqi", {}, ladder_level=2)
        assert view.ladder_level == 2
        status, reason = await refused(mine.sit(view.table_id))
        assert (status, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "ladder_level_too_low")
        status, reason = await refused(mine.create("xiangqi", {}, ladder_level=2))
        assert (status, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "ladder_level_too_low")
        watched = await mine.get(view.table_id)  # watching is always allowed
        assert watched.ladder_level == 2 and me not in [s.player_id for s in watched.seats]
        async for seen in mine.watch(view.table_id):
            assert seen.ladder_level == 2
            break
        after = await theirs.get(view.table_id)
        assert after.version == view.version  # nothing appended for the refusal
    finally:
        await mine.close()
        await theirs.close()


async def test_a_demoted_player_is_stood_up_before_the_next_hand(settings: Settings, table_server: str,
                                                                 ladder: Ladder) -> None:
    me, rival = uid("demoted-"), uid("rival-")
    await ladder.set(me, 2, 2, -5)
    await ladder.set(rival, 2, 2, 0)
    mine, theirs = client(settings, table_server, me), client(settings, table_server, rival)
    auditor = client(settings, table_server, uid("aud-"), "auditor")
    try:
        view = await theirs.create("xiangqi", {}, ladder_level=2)
        await mine.sit(view.table_id)
        await theirs.start(view.table_id)
        await act(mine, view.table_id, xiangqi_pb2.Resign())  # lp −6 < −5: demoted to level 1
        _, reason = await refused(theirs.start(view.table_id))  # no opponent left
        assert reason == "not_enough_players"
        assert await ladder.standing(me) == (1, 2, 0)
        table = await theirs.get(view.table_id)
        assert me not in [s.player_id for s in table.seats]
        lefts = []
        async for r in auditor.stub.AuditLog(tpb.AuditLogRequest(table_id=view.table_id), metadata=auditor.metadata):
            lefts += [e.player_left for e in r.record.events if e.WhichOneof("kind") == "player_left"]
        assert [(e.player_id, e.reason) for e in lefts] == [(me, "ladder_level_too_low")]
    finally:
        for c in (mine, theirs, auditor):
            await c.close()


async def test_bad_input_gets_a_status_and_a_reason(settings: Settings, ladder_server: str, ladder: Ladder) -> None:
    s = ladder.stub
    md = ladder.md
    assert await refused(s.GetStanding(lpb.GetStandingRequest(player_id="x", game="chess"),
                                       metadata=md)) == (grpc.StatusCode.NOT_FOUND, "unknown_game")
    assert await refused(s.GetHistory(lpb.GetHistoryRequest(player_id="x", page_token="abc"),
                                      metadata=md)) == (grpc.StatusCode.INVALID_ARGUMENT, "bad_page_token")
    assert await refused(s.CheckSeat(lpb.CheckSeatRequest(game="xiangqi", table_level=0, player_ids=["a"]),
                                     metadata=md)) == (grpc.StatusCode.INVALID_ARGUMENT, "bad_level")
    me = uid("fix-")
    bad = lpb.CorrectRequest(correction_id=uid(), player_id=me, game="xiangqi",
                             standing=lpb.Standing(level=2, best=2, lp=0))
    assert await refused(s.Correct(bad, metadata=md)) == (grpc.StatusCode.INVALID_ARGUMENT, "reason_required")
    bad.reason = "see\x1b]8;;http://evil\x07"  # a terminal escape, for whoever reads the history
    assert await refused(s.Correct(bad, metadata=md)) == (grpc.StatusCode.INVALID_ARGUMENT, "bad_reason")
    bad.reason = "x" * 501
    assert await refused(s.Correct(bad, metadata=md)) == (grpc.StatusCode.INVALID_ARGUMENT, "bad_reason")
    bad.reason, bad.correction_id = "x", "id\x08\x08"
    assert await refused(s.Correct(bad, metadata=md)) == (grpc.StatusCode.INVALID_ARGUMENT, "bad_correction_id")
    bad.correction_id = uid()
    bad.standing.level = 3  # above best
    assert await refused(s.Correct(bad, metadata=md)) == (grpc.StatusCode.INVALID_ARGUMENT, "bad_standing")
    bad.standing.level = 0
    assert await refused(s.Correct(bad, metadata=md)) == (grpc.StatusCode.INVALID_ARGUMENT, "bad_level")
    # nothing changed: the player still stands where every player starts, with no history
    assert await ladder.standing(me) == (1, 1, 0)
    assert await ladder.changes(me) == []


async def test_lv_12_a_gouji_ladder_game_played_to_its_end(settings: Settings, table_server: str,
                                                          ladder: Ladder) -> None:
    """LV-12 over gRPC: six players at a level-1 够级 ladder table, random legal commands to the
    end; every member of the winning team records a win, the other team a loss (a 0:0 game a draw)."""
    import random

    from chieu.games import registry
    from chieu.tablelog.fold import Table

    game = registry.get("gouji")
    names = [uid(f"lv12-{i}-") for i in range(6)]
    players = {n: client(settings, table_server, n) for n in names}
    auditor = client(settings, table_server, uid("aud-"), "auditor")
    rng = random.Random(12)
    try:
        view = await players[names[0]].create("gouji", {}, ladder_level=1)
        table_id = view.table_id
        for n in names[1:]:
            await players[n].sit(table_id)
        await players[names[0]].start(table_id)
        mirror = Table(table_id)
        for _ in range(5000):
            await folded(auditor, table_id, mirror)  # the hand in play opened with the harness's keys
            if not mirror.playing:
                break
            moves = [(s, m) for s in range(6) for m in game.legal(mirror.game_state, s)]
            assert moves, "every seat waits on a clock"
            seat, move = rng.choice(moves)
            await players[mirror.hand_players[seat]].act(table_id, "gouji", move)
        assert not mirror.playing and mirror.last_outcome is not None
        scores = mirror.last_outcome.scores
        hand = mirror.last_hand_players
        for seat, n in enumerate(hand):
            expected = 1 if scores[seat] > 0 else -1 if scores[seat] < 0 else 0
            got = await until(lambda n=n: _played(ladder, n))
            assert got == (1, 1, expected), (seat, scores)
        signs = {(1 if s > 0 else -1 if s < 0 else 0) for s in scores[0::2]}
        assert len(signs) == 1  # a team's members share the result
    finally:
        for c in (*players.values(), auditor):
            await c.close()


async def _played(ladder: Ladder, player: str, game: str = "gouji") -> tuple[int, int, int] | None:
    try:
        r = await ladder.stub.GetStanding(lpb.GetStandingRequest(player_id=player, game=game), metadata=ladder.md)
    except grpc.aio.AioRpcError:
        return None
    return (r.standing.level, r.standing.best, r.standing.lp) if r.games else None


async def test_leaderboard_history_and_corrections(settings: Settings, ladder_server: str, ladder: Ladder) -> None:
    game = "lianliankan"  # other suites (the fuzzers) may rank players here too: compare with the whole board
    people = [uid("lb-") for _ in range(5)]

    async def board() -> lpb.GetLeaderboardResponse:
        return await ladder.stub.GetLeaderboard(lpb.GetLeaderboardRequest(game=game, top=1000, player_id=people[0]),
                                                metadata=ladder.md)

    before = (await ladder.stub.GetLeaderboard(lpb.GetLeaderboardRequest(game=game, top=1), metadata=ladder.md)).players
    for i, p in enumerate(people):
        await ladder.set(p, 1 + i % 3, 3, i - 2, game=game)
    top = await ladder.stub.GetLeaderboard(lpb.GetLeaderboardRequest(game=game, top=3, player_id=people[0]),
                                           metadata=ladder.md)
    assert top.players == before + 5
    order = [(r.standing.best, r.standing.level, r.standing.lp) for r in top.top]
    assert order == sorted(order, reverse=True) and [r.rank for r in top.top] == [1, 2, 3]
    full = await board()
    ids = [r.player_id for r in full.top]
    assert [r.rank for r in full.top] == list(range(1, len(ids) + 1))
    ours = [p for p in ids if p in people]  # best 3 each: level, then lp, decides
    assert ours == [people[2], people[4], people[1], people[3], people[0]]
    assert top.you.player_id == people[0] and top.you.rank == ids.index(people[0]) + 1  # (3, 1, −2): last of ours
    fix = lpb.CorrectRequest(correction_id=uid("c-"), player_id=people[0], game=game, reason="support ticket 7",
                             standing=lpb.Standing(level=3, best=3, lp=5))
    first = await ladder.stub.Correct(fix, metadata=ladder.md)
    again = await ladder.stub.Correct(fix, metadata=ladder.md)
    assert not first.replayed and again.replayed and again.change.id == first.change.id
    assert first.change.before.level == 1 and first.change.after.lp == 5 and first.change.actor == "ops"
    fix.reason = "another"
    assert await refused(ladder.stub.Correct(fix, metadata=ladder.md)) == (grpc.StatusCode.FAILED_PRECONDITION,
                                                                          "id_reused")
    full = await board()
    ids = [r.player_id for r in full.top]
    assert full.you.rank == ids.index(people[0]) + 1
    assert next(p for p in ids if p in people) == people[0]  # (3, 3, 5) now leads ours
    changes = await ladder.changes(people[0], game)
    assert [c.cause for c in changes] == ["correction", "correction"]  # a new row, never an update
    page = await ladder.stub.GetHistory(lpb.GetHistoryRequest(player_id=people[0], page_size=1), metadata=ladder.md)
    assert len(page.changes) == 1 and page.next_page_token
    mine = Ladder(settings, ladder_server, people[1], "player")
    try:
        code, reason = await refused(mine.stub.GetHistory(lpb.GetHistoryRequest(player_id=people[0]),
                                                          metadata=mine.md))
        assert (code, reason) == (grpc.StatusCode.PERMISSION_DENIED, "not_yours")
        code, reason = await refused(mine.stub.Correct(fix, metadata=mine.md))
        assert code == grpc.StatusCode.PERMISSION_DENIED
    finally:
        await mine.close()


def test_the_ladder_knows_every_registered_game() -> None:
    from chieu.games import registry
    from chieu.ladder import rules

    assert sorted(rules.GAMES) == sorted(registry.KEYS)
