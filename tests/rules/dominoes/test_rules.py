"""Given–When–Then tests of Đô Mi Nô rules that the worked scenarios do not pin down."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import pytest

from chieu.games.core import BadOptions, IllegalMove, InvalidCommand, Outcome, Setup
from chieu.games.dominoes import GAME
from chieu.games.dominoes.model import Dealt, Draw, Ended, Hand, Pass, Play, State
from chieu.games.dominoes.options import Options
from chieu.games.dominoes.scenario import HOOKS
from chieu.games.dominoes.scoring import forced_block_winner, settle_blocker
from chieu.games.dominoes.tiles import End, Option, Tile, Turn, find_assistant, parse_tiles

DM04 = [
    "[0|0][0|2][5|6][2|3][1|4][3|3][2|4]",
    "[0|1][3|4][0|6][3|6][1|1][1|3][2|2]",
    "[0|3][0|4][1|5][2|5][3|5][4|4][6|6]",
    "[1|2][0|5][1|6][2|6][4|5][4|6][5|5]",
]
DM08 = [
    "[0|0][0|2][5|6][2|3][1|4][2|2][1|6]",
    "[0|1][3|4][0|6][3|6][1|1][1|3][2|4]",
    "[0|3][0|4][1|5][2|5][3|5][4|4][6|6]",
    "[1|2][0|5][2|6][3|3][4|5][4|6][5|5]",
]
MOVES_4P = ["[0|0] L", "[0|1] L", "[0|3] R", "[1|2] L", "[0|2] L", "[3|4] R", "[0|4] R",
            "[0|5] L", "[5|6] L", "[0|6] L"]


def given(hands: Sequence[str], boneyard: str = "", options: dict[str, Any] | None = None,
          leader: int = 0) -> State:
    o = GAME.parse_options(options or {})
    s = GAME.initial(o, len(hands))
    for e in HOOKS.position(o, len(hands), {"hands": list(hands), "boneyard": boneyard,
                                                    "leader": leader}, 0):
        s = GAME.evolve(s, e)
    return s


def play(s: State, moves: Sequence[str]) -> State:
    for m in moves:
        assert s.to_move is not None
        assert HOOKS.command is not None
        for e in GAME.decide(s, s.to_move, HOOKS.command(m), 0):
            s = GAME.evolve(s, e)
    return s


def test_options_default_to_the_rules_file() -> None:
    o = GAME.parse_options({})
    assert GAME.option_values(o) == {
        "pipStake": 1, "blockTie": "noWinner", "blockerTieCountsAsLoss": True,
        "assistantSameTileCounts": False, "turnSeconds": 20,
    }


@pytest.mark.parametrize("raw", [{"pipStake": 0}, {"blockTie": "coin"}, {"turnSeconds": -1},
                                 {"blockerTieCountsAsLoss": "yes"}, {"spinner": True}])
def test_bad_options_are_refused(raw: dict[str, Any]) -> None:
    with pytest.raises(BadOptions):
        GAME.parse_options(raw)


def test_pip_stake_multiplies_every_payment() -> None:
    s = play(given(DM04, options={"pipStake": 3}), MOVES_4P)
    out = GAME.outcome(s)
    assert out is not None and out.net(4) == (-132, 642, -246, -264)


def test_blocker_tie_can_count_as_a_win() -> None:
    # DM-08 with blockerTieCountsAsLoss = no: P2 ties P1 at 21 pips and wins double.
    s = play(given(DM08, options={"blockerTieCountsAsLoss": False}), MOVES_4P)
    out = GAME.outcome(s)
    assert out is not None and out.winner == 1 and out.reason == "triet_win"
    assert out.net(4) == (-42, 42 + 82 + 86, -82, -86)


def test_forced_block_ties_follow_the_block_tie_option() -> None:
    pips = [10, 10, 30]
    tiles = [3, 2, 5]
    assert forced_block_winner(pips, Options(), 2, tiles) is None
    assert forced_block_winner(pips, Options(block_tie="fewerTiles"), 2, tiles) == 1
    assert forced_block_winner(pips, Options(block_tie="afterLastMover"), 0, tiles) == 1
    assert forced_block_winner(pips, Options(block_tie="afterLastMover"), 1, tiles) == 0
    assert forced_block_winner([12, 10, 30], Options(), 0, tiles) == 1


def _legs(t: Sequence[Any]) -> list[tuple[Any, ...]]:
    return [(x.from_seat, x.to_seat, x.amount, x.reason) for x in t]


def test_the_four_blocker_formulas() -> None:
    pips = [5, 20, 30, 40]
    o = Options()
    wins, t = settle_blocker(0, None, pips, o)
    assert wins and _legs(t) == [(1, 0, 40, "triet"), (2, 0, 60, "triet"), (3, 0, 80, "triet")]
    wins, t = settle_blocker(0, 3, pips, o)
    assert wins and _legs(t) == [(3, 0, 180, "gai_triet")]
    wins, t = settle_blocker(2, None, pips, o)
    assert not wins
    assert _legs(t) == [(2, 0, 5, "triet_loss"), (2, 1, 20, "triet_loss"), (2, 3, 40, "triet_loss")]
    wins, t = settle_blocker(2, 1, pips, o)
    assert not wins and _legs(t) == [(2, 1, 65, "triet_loss_gai")]


def _turn(mover: int, hand: str, ends: tuple[int, int], played: str | None) -> Turn:
    hands = tuple(parse_tiles(hand) if i == mover else () for i in range(3))
    t = parse_tiles(played)[0] if played else None
    opt = None if t is None else Option(t, End.LEFT, ends)
    return Turn(mover, hands, (), ends, opt)


def test_assistant_needs_another_playable_tile() -> None:
    # Given P3 (seat 2) placed [0|6] on ends (0, 6) while also holding [6|6]
    turns = [_turn(2, "[0|6] [6|6] [1|1]", (0, 6), "[0|6]"), _turn(0, "", (6, 6), None)]
    # Then P3 is gài triệt of the blocker P1 (seat 0)
    assert find_assistant(turns, 1, 0, same_tile_counts=False) == 2
    # But a second placement of the same tile is not another tile unless the option says so
    turns = [_turn(2, "[0|6] [1|1]", (0, 6), "[0|6]"), _turn(0, "", (6, 6), None)]
    assert find_assistant(turns, 1, 0, same_tile_counts=False) is None
    assert find_assistant(turns, 1, 0, same_tile_counts=True) == 2
    # And a pass never makes an assistant
    turns = [_turn(2, "[1|1]", (0, 6), None), _turn(0, "", (6, 6), None)]
    assert find_assistant(turns, 1, 0, same_tile_counts=True) is None


def test_a_rejected_command_changes_nothing() -> None:
    s = given(DM04)
    with pytest.raises(IllegalMove) as e:
        GAME.decide(s, 1, Play(Tile(0, 1), End.LEFT), 0)
    assert e.value.code == "not_your_turn"
    with pytest.raises(IllegalMove) as e:
        GAME.decide(s, 0, Play(Tile(0, 1), End.LEFT), 0)
    assert e.value.code == "not_your_tile"
    with pytest.raises(InvalidCommand) as ei:
        GAME.decide(s, 0, Play(Tile(5, 2), End.LEFT), 0)
    assert ei.value.code == "bad_tile"
    assert s == given(DM04)


def test_views_hide_the_others_tiles_and_the_boneyard() -> None:
    s = given(["[5|6] [1|3] [1|6] [1|5] [2|2] [1|4] [3|6]",
               "[4|5] [3|5] [0|0] [1|2] [0|1] [0|2] [0|4]"],
              "[1|1] [0|3] [3|4] [2|4] [4|4] [0|5] [0|6] [3|3] [2|5] [5|5] [6|6] [4|6] [2|6] [2|3]")
    s = play(s, ["[5|6]"])
    v = GAME.view(s, 1)
    assert v.hand == parse_tiles("[4|5] [3|5] [0|0] [1|2] [0|1] [0|2] [0|4]")
    assert v.counts == (6, 7) and v.boneyard == 14
    assert v.ends is not None and (v.ends.left, v.ends.right) == (5, 6)
    assert {(m.play.tile, m.play.end) for m in v.legal if m.play} == {(Tile(4, 5), End.LEFT), (Tile(3, 5), End.LEFT)}
    assert len(v.legal) == 2
    text = repr(v)
    assert "Tile(a=1, b=3)" not in text and "Tile(a=1, b=1)" not in text
    spectator = GAME.view(s, None)
    assert spectator.hand == () and spectator.legal == () and spectator.counts == (6, 7)


def test_leader_is_the_previous_winner_or_random() -> None:
    o = Options()
    prev = Outcome(winner=2, ranking=(2, 0, 1), scores=(5, 9, 0), transfers=(), reason="out")
    (deal,) = GAME.start(Setup(o, 3, b"seed", 0, previous=prev))
    assert isinstance(deal, Dealt) and deal.leader == 2
    lost = Outcome(None, (0, 1, 2), (4, 9, 12), (), "triet_loss")
    (deal,) = GAME.start(Setup(o, 3, b"seed", 0, previous=lost))
    assert isinstance(deal, Dealt) and deal.leader == 0
    leaders = set()
    for k in range(20):
        (deal,) = GAME.start(Setup(o, 4, bytes([k]), 0))
        assert isinstance(deal, Dealt)
        leaders.add(deal.leader)
    assert len(leaders) > 1


def test_deadlines_follow_the_turn() -> None:
    s = given(DM04, options={"turnSeconds": 7})
    assert [(d.seat, d.at_ms) for d in GAME.deadlines(s)] == [(0, 7000)]
    for e in GAME.decide(s, 0, Play(Tile(0, 0), End.LEFT), 1000):
        s = GAME.evolve(s, e)
    assert [(d.seat, d.at_ms) for d in GAME.deadlines(s)] == [(1, 8000)]


def test_a_finished_hand_has_no_deadline_and_refuses_moves() -> None:
    s = play(given(DM04), MOVES_4P)
    assert isinstance(s.ended, Ended) and GAME.deadlines(s) == ()
    for cmd in (Draw(), Pass(), Play(Tile(1, 1), End.LEFT)):
        with pytest.raises(IllegalMove) as e:
            GAME.decide(s, 2, cmd, 0)
        assert e.value.code == "game_over"
    v = GAME.view(s, 0)
    assert v.finished and v.revealed == tuple(Hand(h) for h in s.hands)
    assert v.result is not None and v.result.pips == (22, 19, 41, 44)


def test_replay_of_a_dealt_hand_equals_live() -> None:
    s0 = GAME.initial(Options(), 2)
    events = list(GAME.start(Setup(Options(), 2, b"abc", 0, first=0)))
    s = s0
    for e in events:
        s = GAME.evolve(s, e)
    while s.ended is None:
        assert s.to_move is not None
        new = list(GAME.on_timeout(s, s.to_move, 0))
        events += new
        for e in new:
            s = GAME.evolve(s, e)
    r = s0
    for e in events:
        r = GAME.evolve(r, e)
    assert r == s and replace(r) == s
