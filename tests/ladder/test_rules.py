"""过关斩将: the worked scenarios of shared/rules/ladder.md §5.4 and what must always hold."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from chieu.games import registry
from chieu.kit import auth, fields
from chieu.ladder.rules import DELTA, Params, Result, Standing, game_results, may_sit, record
from chieu.ladder.standings import best_reward_id, monthly_reward_id

SCENARIOS = yaml.safe_load((Path(__file__).parent / "scenarios.yaml").read_text())


@pytest.mark.parametrize("case", SCENARIOS, ids=[c["id"] for c in SCENARIOS])
def test_worked_scenario(case: dict[str, Any]) -> None:
    standing = Standing(*case["start"])
    seen = {}
    for n, step in enumerate(case["steps"], 1):
        result, table = (step, standing.level) if isinstance(step, str) else (step["result"], step["table"])
        standing = record(standing, Result(result), table).standing
        seen[n] = [standing.level, standing.best, standing.lp]
    for n, state in case["expect"]:
        assert seen[n] == state, f"after {n} steps"


def test_lv_11_a_player_sits_only_at_his_level_or_below() -> None:
    player = Standing(level=1, best=3, lp=0)
    assert not may_sit(player, 2)  # refused: the table's level is above his current level
    assert may_sit(player, 1)
    assert may_sit(Standing(level=3), 2)


def test_lv_12_a_gouji_team_win_is_a_win_for_each_member() -> None:
    results = game_results(6, 0, (2, -2, 2, -2, 2, -2), teams=True)
    after = [record(Standing(), r, 1).standing for r in results]
    assert [(s.level, s.best, s.lp) for s in after] == [(1, 1, 1), (1, 1, -1)] * 3


def test_a_0_0_team_game_is_a_draw_and_penalties_replace_results() -> None:
    assert game_results(6, None, (0,) * 6, teams=True) == (Result.DRAW,) * 6
    results = game_results(4, 2, (0, 0, 5, 0), teams=False, quit_seats=[0], lost_seats=[1])
    assert results == (Result.QUIT, Result.DISCONNECT, Result.WIN, Result.LOSS)
    assert game_results(2, None, (0, 0), teams=False) == (Result.DRAW, Result.DRAW)


def test_best_level_up_is_reported_only_for_a_new_best() -> None:
    assert record(Standing(1, 1, 5), Result.WIN, 1).best_level_up
    assert not record(Standing(2, 4, 5), Result.WIN, 2).best_level_up  # LV-8: best stays 4


def test_the_options() -> None:
    below = Params(floor_style="below")
    assert record(Standing(1, 1, -10), Result.LOSS, 1, below).standing.lp == -11
    assert record(Standing(1, 1, -11), Result.LOSS, 1, below).standing.lp == -11
    by_opponents = Params(only_lose_basis="opponent-level")
    assert record(Standing(3, 3, 0), Result.WIN, 1, by_opponents, opponent_levels=[2, 3]).standing.lp == 1
    assert record(Standing(3, 3, 0), Result.WIN, 3, by_opponents, opponent_levels=[1, 2]).standing.lp == 0
    with pytest.raises(ValueError):
        Params(floor_style="never")


results = st.sampled_from(list(Result))


@given(st.lists(st.tuples(results, st.integers(1, 8)), max_size=60))
def test_what_always_holds(games: list[tuple[Result, int]]) -> None:
    """Levels stay ≥ 1, best is the highest level reached, lp stays in its bounds, and a level
    changes only by one, with lp back at 0."""
    params = Params()
    s = Standing()
    highest = 1
    for result, table in games:
        change = record(s, result, min(table, s.level) if result is Result.WIN else table, params)
        n = change.standing
        assert n.level >= 1 and n.best >= n.level and params.floor <= n.lp <= params.up
        assert abs(n.level - s.level) <= 1
        if n.level != s.level:
            assert n.lp == 0
        else:
            assert n.lp - s.lp in (DELTA[result], 0) or n.lp == params.floor
        highest = max(highest, n.level)
        assert n.best == highest and change.best_level_up == (n.best > s.best)
        s = n


def test_the_ids_built_from_a_player_id_fit_the_ledgers_id_field() -> None:
    """A reward id is the ledger's ``reward_id``: built from the longest player id a token can name
    in the longest game name, it is still a valid id (else the reward could never be paid)."""
    player = "p" * auth.MAX_SUBJECT
    game = max(registry.KEYS, key=len)
    for rid in (monthly_reward_id(game, "2026-11", player), best_reward_id(game, player, 10_000)):
        assert fields.ident(rid, "reward_id") == rid
