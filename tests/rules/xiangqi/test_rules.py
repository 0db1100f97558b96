"""Given–When–Then tests of the Xiangqi decider (shared/rules/xiangqi.md §3)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from chieu.games.core import BadOptions, Deadline, IllegalMove, InvalidCommand, Setup, Transfer, replay
from chieu.games.xiangqi.board import (
    START_FEN,
    parse_fen,
    parse_move,
    to_fen,
)
from chieu.games.xiangqi.game import GAME
from chieu.games.xiangqi.model import (
    AcceptDraw,
    Command,
    DeclineDraw,
    DrawAccepted,
    DrawDeclined,
    DrawOffered,
    Ended,
    Move,
    Moved,
    OfferDraw,
    Resign,
    Resigned,
    Started,
    State,
    TimedOut,
)
from chieu.games.xiangqi.notation import chinese
from chieu.games.xiangqi.options import option_values, parse_options
from chieu.games.xiangqi.scenario import HOOKS, query_chinese, query_is_legal

MIN = 60_000


def given(fen: str = START_FEN, options: dict[str, Any] | None = None, *, at: int = 0,
          moves_made: tuple[int, int] | None = None,
          clocks: tuple[int, int] | None = None) -> State:
    o = parse_options(options or {})
    spec: dict[str, Any] = {"fen": fen}
    if moves_made is not None:
        spec["moves_made"] = moves_made
    if clocks is not None:
        spec["clocks_ms"] = clocks
    state = GAME.initial(o, 2)
    for e in HOOKS.position(o, 2, spec, at):
        state = GAME.evolve(state, e)
    return state


def play(state: State, moves: Sequence[str], at: int = 0) -> tuple[State, list[Any]]:
    log: list[Any] = []
    for text in moves:
        assert state.to_move is not None, f"game over before {text}"
        events = GAME.decide(state, state.to_move, Move(text), at)
        for e in events:
            state = GAME.evolve(state, e)
        log.extend(events)
    return state, log


# ---------------------------------------------------------------- setup and options


def test_start_sets_up_the_seed_position_with_full_clocks() -> None:
    o = parse_options({})
    events = GAME.start(Setup(options=o, players=2, seed=b"x", now_ms=5_000))
    assert events == [Started(START_FEN, (60 * MIN, 60 * MIN), (0, 0), 5_000)]
    state = GAME.evolve(GAME.initial(o, 2), events[0])
    assert state.to_move == 0
    assert GAME.deadlines(state) == (Deadline(0, 5_000 + 60 * MIN),)


def test_options_default_and_round_trip() -> None:
    o = parse_options({})
    assert option_values(o) == {
        "facingKings": "illegal", "chaseRule": "none", "moveLimit": "120-per-side",
        "carryOver": "on", "timeControl": "60min/30+10min/10",
    }
    custom = {"facingKings": "mover-loses", "chaseRule": "axf", "moveLimit": "120-plies",
              "carryOver": "off", "timeControl": "15min/20+5min/5"}
    assert option_values(parse_options(custom)) == custom
    assert parse_options({"TIME_CONTROL": "none"}).timed is False


@pytest.mark.parametrize("raw", [
    {"FACING_KINGS": "draw"}, {"CHASE_RULE": "asian"}, {"MOVE_LIMIT": 100},
    {"TIME_CONTROL": "60/30"}, {"TIME_CONTROL": "0min/30+10min/10"}, {"SPEED": 1},
])
def test_bad_options_are_refused(raw: dict[str, Any]) -> None:
    with pytest.raises(BadOptions):
        parse_options(raw)


# ---------------------------------------------------------------- moves and refusals


def test_a_move_is_logged_in_both_notations_with_the_position_after() -> None:
    state, log = play(given(), ["h2e2"], at=1_000)
    assert log == [Moved(0, "h2e2", "炮二平五", "", False, False, 60 * MIN - 1_000, 1_000,
                         "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C2C4/9/RNBAKABNR b - - 1 1")]
    assert state.to_move == 1


@pytest.mark.parametrize(("seat", "command", "code"), [
    (1, Move("h7e7"), "not_your_turn"),
    (0, Move("h7e7"), "no_own_piece"),
    (0, Move("e0e2"), "illegal_move"),
    (0, Move("zz"), "bad_move"),
    (0, Move("j2e2"), "bad_move"),
    (1, OfferDraw(), "not_your_turn"),
    (1, AcceptDraw(), "no_draw_offer"),
    (0, "h2e2", "unknown_command"),
])
def test_refusals_have_stable_codes(seat: int, command: Any, code: str) -> None:
    state = given()
    with pytest.raises((IllegalMove, InvalidCommand)) as e:
        GAME.decide(state, seat, command, 0)
    assert e.value.code == code


def test_a_check_must_be_answered() -> None:
    # Red chariot on e5 checks the black king on e9; the black chariot a7 can block on e7;
    # e9d9 would face the red king on the open d-file.
    state = given("4k4/9/r8/9/4R4/9/9/9/9/3K5 b - - 0 1")
    legal = {m.move for m in GAME.legal(state, 1)}
    assert legal == {"a7e7", "e9f9"}
    with pytest.raises(IllegalMove, match="check"):
        GAME.decide(state, 1, Move("a7a6"), 0)


def test_a_horse_check_is_blocked_at_the_leg() -> None:
    # Red horse d7 checks e9 through its leg d8; the black chariot a8 may block on d8.
    state = given("4k4/r8/3N5/9/9/9/9/9/9/3K5 b - - 0 1")
    assert GAME.view(state, 1).in_check
    moves = {m.move for m in GAME.legal(state, 1)}
    assert moves == {"a8d8", "e9e8", "e9f9", "e9d9"}


def test_a_cannon_check_is_answered_by_moving_the_screen() -> None:
    # Red cannon e2, screen e4 (a black soldier that has crossed the river), black king e9:
    # moving the soldier sideways removes the screen; forward it stays one.
    state = given("4k4/9/9/9/9/4p4/9/4C4/9/3K5 b - - 0 1")
    assert GAME.view(state, None).in_check
    moves = {m.move for m in GAME.legal(state, 1)}
    assert {"e4d4", "e4f4"} <= moves
    assert "e4e3" not in moves


def test_the_chinese_notation_tells_like_pieces_apart() -> None:
    board, _ = parse_fen("4k4/9/9/9/9/4R4/9/9/4R4/3K5 w - - 0 1")
    assert chinese(board, parse_move("e4e6")) == "前车进二"
    assert chinese(board, parse_move("e1f1")) == "后车平四"
    board, _ = parse_fen(START_FEN)
    assert chinese(board, parse_move("h7e7")) == "炮８平５"
    assert chinese(board, parse_move("b9c7")) == "马２进３"
    assert chinese(board, parse_move("e0e1")) == "帅五进一"


def test_fen_round_trips() -> None:
    board, side = parse_fen(START_FEN)
    assert to_fen(board, side, 0, 1) == START_FEN


# ---------------------------------------------------------------- game ends


def test_checkmate_wins_two_points() -> None:
    state, log = play(given("r2k5/9/9/9/9/9/9/9/1r7/4K4 b - - 0 1"), ["a9a0"])
    assert log[-1] == Ended(1, "checkmate")
    out = GAME.outcome(state)
    assert out is not None
    assert out.scores == (-2, 2)
    assert out.transfers == (Transfer(0, 1, 2, "win"),)
    assert GAME.deadlines(state) == ()
    assert GAME.legal(state, 0) == []


def test_stalemate_is_a_loss_for_the_side_without_moves() -> None:
    # The black king d9 can reach neither d8 (chariot) nor e9 (the kings would face).
    state, log = play(given("3k5/9/9/9/R8/9/9/9/9/4K4 w - - 0 1"), ["a5a8"])
    assert log[-1] == Ended(0, "stalemate")
    assert GAME.outcome(state) is not None


PERPETUAL = "4k4/7R1/9/9/9/9/9/9/9/3K5 w - - 0 1"
CYCLE = ["h8h9", "e9e8", "h9h8", "e8e9"]


def test_perpetual_check_loses_at_the_third_occurrence() -> None:
    state, log = play(given(PERPETUAL), CYCLE)
    assert GAME.outcome(state) is None
    state, log = play(state, CYCLE)
    assert log[-1] == Ended(1, "perpetual_check")
    assert [e.check for e in log if isinstance(e, Moved)] == [True, False] * 2
    out = GAME.outcome(state)
    assert out is not None and out.winner == 1 and out.reason == "perpetual_check"


def test_a_repetition_without_perpetual_check_is_a_draw() -> None:
    _, log = play(given("4k4/7R1/9/9/9/9/9/9/9/3K5 w - - 0 1"),
                      ["h8h7", "e9e8", "h7h8", "e8e9"] * 2)
    # h7h8 checks the king on e8, h8h7 does not: Red did not check on every move.
    assert log[-1] == Ended(None, "repetition")


MUTUAL = "4k4/9/9/9/8c/9/3n5/9/3K2N2/4C4 b - - 0 1"
MUTUAL_CYCLE = ["g1e2", "d3e1", "e2g1", "e1d3"]


def test_mutual_perpetual_check_played_through_decide_is_a_draw() -> None:
    # Each side's horse is the screen of the other side's cannon: the red horse g1 screens
    # the black cannon i1 against the red king d1 and, on e2, the red cannon e0 against the
    # black king e9; the black horse on e1 blocks e0's line with e2 and screens i1 again.
    # Every move uncovers one check and answers the other.
    state, log = play(given(MUTUAL), ["i5i1"])
    assert log[0].check
    state, log = play(state, MUTUAL_CYCLE * 2)
    assert [e.check for e in log if isinstance(e, Moved)] == [True] * 8
    assert log[-1] == Ended(None, "mutual_perpetual_check")
    out = GAME.outcome(state)
    assert out is not None and out.winner is None and out.scores == (0, 0)


def test_perpetual_check_by_black_loses() -> None:
    cycle = ["h1h0", "e0e1", "h0h1", "e1e0"]
    _, log = play(given("3k5/9/9/9/9/9/9/9/7r1/4K4 b - - 0 1"), cycle * 2)
    assert [e.check for e in log if isinstance(e, Moved)] == [True, False] * 4
    assert log[-1] == Ended(0, "perpetual_check")


def test_the_repetition_procedure_on_a_built_history() -> None:
    from chieu.games.xiangqi.model import Ply
    from chieu.games.xiangqi.repetition import verdict

    key, o = "k w", parse_options({})
    keys = ("s", key, "x", "y", "z", key, "x", "y", "z", key)
    both = tuple(Ply(i % 2, i > 0, False) for i in range(9))  # the move before is no check
    assert verdict(o, keys, both) == Ended(None, "mutual_perpetual_check")
    black = tuple(Ply(i % 2, i % 2 == 1, False) for i in range(9))
    assert verdict(o, keys, black) == Ended(0, "perpetual_check")
    assert verdict(o, keys[:-1], both[:-1]) is None


def test_resignation_loses() -> None:
    state = given()
    events = GAME.decide(state, 1, Resign(), 0)
    assert events == [Resigned(1), Ended(0, "resignation")]


def test_draw_offer_only_by_the_side_to_move_then_accept() -> None:
    state = given()
    events = GAME.decide(state, 0, OfferDraw(), 0)
    assert events == [DrawOffered(0)]
    state = GAME.evolve(state, events[0])
    assert GAME.legal(state, 1) == [AcceptDraw(), DeclineDraw()]
    with pytest.raises(IllegalMove) as e:
        GAME.decide(state, 0, AcceptDraw(), 0)
    assert e.value.code == "no_draw_offer"
    events = GAME.decide(state, 1, AcceptDraw(), 0)
    assert events == [DrawAccepted(1), Ended(None, "agreement")]
    for ev in events:
        state = GAME.evolve(state, ev)
    out = GAME.outcome(state)
    assert out is not None and out.winner is None and out.scores == (0, 0)


def test_a_declined_offer_cannot_be_repeated_in_the_same_turn() -> None:
    state = GAME.evolve(given(), DrawOffered(0))
    events = GAME.decide(state, 1, DeclineDraw(), 0)
    assert events == [DrawDeclined(1)]
    state = GAME.evolve(state, events[0])
    with pytest.raises(IllegalMove) as e:
        GAME.decide(state, 0, OfferDraw(), 0)
    assert e.value.code == "draw_already_offered"
    state, _ = play(state, ["h2e2", "h7e7"])
    assert GAME.decide(state, 0, OfferDraw(), 0) == [DrawOffered(0)]


def test_a_move_lets_a_pending_offer_lapse() -> None:
    state = GAME.evolve(given(), DrawOffered(0))
    state, _ = play(state, ["h2e2"])
    assert state.draw_offer is None
    with pytest.raises(IllegalMove):
        GAME.decide(state, 1, AcceptDraw(), 0)


def test_facing_kings_mover_loses_option() -> None:
    fen = "3k5/9/9/9/9/9/9/9/9/4K4 w - - 0 1"
    with pytest.raises(IllegalMove, match="facing"):
        GAME.decide(given(fen), 0, Move("e0d0"), 0)
    state = given(fen, {"FACING_KINGS": "mover-loses"})
    events = GAME.decide(state, 0, Move("e0d0"), 0)
    assert events[-1] == Ended(1, "facing_kings")
    with pytest.raises(IllegalMove):  # still illegal: into a chariot's attack
        GAME.decide(given("3k5/9/9/9/9/9/9/9/r8/4K4 w - - 0 1",
                          {"FACING_KINGS": "mover-loses"}), 0, Move("e0e1"), 0)


def test_move_limit_120_plies_option() -> None:
    state = given(START_FEN, {"MOVE_LIMIT": "120-plies"}, moves_made=(59, 60))
    _, log = play(state, ["h2e2"])
    assert log[-1] == Ended(None, "move_limit")
    _, log = play(given(START_FEN, moves_made=(59, 60)), ["h2e2"])
    assert not isinstance(log[-1], Ended)


# ---------------------------------------------------------------- the clock


def test_the_clock_moves_into_repeating_periods_with_carry_over() -> None:
    o = {"TIME_CONTROL": "1min/2+1min/2"}
    state = given(START_FEN, o)
    state, log = play(state, ["h2e2", "h7e7"], at=10_000)
    state, log = play(state, ["b0c2"], at=30_000)  # Red's 2nd move: 10 s + 20 s used
    assert log[0].clock_ms == 60_000 + 30_000
    state, log = play(state, ["b9c7"], at=40_000)  # Black's 2nd: 10 s used, 50 s carried
    assert state.clocks_ms == (90_000, 60_000 + 50_000)
    off = given(START_FEN, {**o, "CARRY_OVER": "off"})
    off, _ = play(off, ["h2e2", "h7e7"], at=10_000)
    off, _ = play(off, ["b0c2"], at=30_000)
    assert off.clocks_ms[0] == 60_000


def test_sudden_death_keeps_the_main_time_for_the_whole_game() -> None:
    state = given(START_FEN, {"TIME_CONTROL": "1min/1"})
    state, _ = play(state, ["h2e2"], at=10_000)
    assert state.clocks_ms[0] == 50_000


def test_a_move_after_the_flag_is_refused_and_the_timeout_loses() -> None:
    state = given(START_FEN, {"TIME_CONTROL": "1min/40"}, at=0)
    with pytest.raises(IllegalMove) as e:
        GAME.decide(state, 0, Move("h2e2"), 60_000)
    assert e.value.code == "out_of_time"
    with pytest.raises(IllegalMove) as e:
        GAME.on_timeout(state, 0, 59_999)
    assert e.value.code == "not_timed_out"
    with pytest.raises(IllegalMove):
        GAME.on_timeout(state, 1, 60_000)
    assert GAME.on_timeout(state, 0, 60_000) == [TimedOut(0, 60_000), Ended(1, "time")]


def test_an_untimed_game_has_no_deadlines() -> None:
    state = given(START_FEN, {"TIME_CONTROL": "none"})
    assert GAME.deadlines(state) == ()
    state, _ = play(state, ["h2e2"], at=10**9)
    assert state.to_move == 1


# ---------------------------------------------------------------- view


def test_the_view_lists_the_side_to_moves_moves_per_piece() -> None:
    state, _ = play(given(), ["h2e2"], at=1_000)
    v = GAME.view(state, 1)
    moves = [pm.square + to for pm in v.legal_moves for to in pm.to]
    assert v.to_move == 1 and len(moves) == 45  # h7h2, h7h1 open; h7h0 lost its screen
    assert moves == [m.move for m in GAME.legal(state, 1)]
    assert "h7e7" in moves and len({pm.square for pm in v.legal_moves}) == len(v.legal_moves)
    assert v.legal == () and v.may_offer_draw
    assert v.moves[0].chinese == "炮二平五"
    assert v.deadline_ms == 1_000 + 60 * MIN
    assert v.fen.startswith("rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C2C4/9/RNBAKABNR b")
    for other in (GAME.view(state, 0), GAME.view(state, None)):  # the board is everyone's, the moves the mover's
        assert other.fen == v.fen and other.legal_moves == () and not other.may_offer_draw


def test_the_view_offers_the_draw_answers_to_the_seat_facing_an_offer() -> None:
    state, _ = play(given(), ["h2e2"], at=1_000)
    state = replay(GAME, state, GAME.decide(state, 1, OfferDraw(), 2_000))
    v = GAME.view(state, 0)
    assert v.legal == (Command(accept_draw=AcceptDraw()), Command(decline_draw=DeclineDraw()))
    assert not GAME.view(state, 1).may_offer_draw and GAME.view(state, 1).legal == ()


# ---------------------------------------------------------------- the chase rule


CHASE = "3k5/9/9/9/1r7/9/9/2N6/9/4K4 w - - 0 1"


def test_axf_chase_is_flagged_on_the_move_that_starts_it() -> None:
    # The red horse c2a3 newly attacks the black chariot b5 (leg a4 free): a horse
    # threatening a chariot is a chase (捉) whether or not the chariot is protected.
    state = given(CHASE, {"CHASE_RULE": "axf"})
    events = GAME.decide(state, 0, Move("c2a3"), 0)
    assert isinstance(events[0], Moved) and events[0].chase
    plain = given(CHASE)
    events = GAME.decide(plain, 0, Move("c2a3"), 0)
    assert isinstance(events[0], Moved) and not events[0].chase


CHASE_CYCLE = ("4k4/9/9/1r7/9/9/N8/9/9/3K5 w - - 0 1", ["a3c4", "b6b5", "c4a3", "b5b6"])


def test_perpetual_chase_loses_under_axf_and_draws_without() -> None:
    # The red horse attacks the black chariot on every move (a3c4 hits b6, c4a3 hits b5);
    # the chariot only flees.
    fen, cycle = CHASE_CYCLE
    _, log = play(given(fen, {"CHASE_RULE": "axf"}), cycle * 2)
    assert [e.chase for e in log if isinstance(e, Moved)] == [True, False] * 4
    assert log[-1] == Ended(1, "perpetual_chase")
    _, log = play(given(fen), cycle * 2)
    assert log[-1] == Ended(None, "repetition")


# ---------------------------------------------------------------- notation of like pieces


@pytest.mark.parametrize(("fen", "move", "text"), [
    # Red, one file: 前/中/后 for three, 一…五 from the front for four or five.
    ("3k5/9/4P4/4P4/4P4/9/9/9/9/4K4 w", "e7e8", "前兵进一"),
    ("3k5/9/4P4/4P4/4P4/9/9/9/9/4K4 w", "e6d6", "中兵平六"),
    ("3k5/9/4P4/4P4/4P4/9/9/9/9/4K4 w", "e5f5", "后兵平四"),
    ("3k5/4P4/4P4/4P4/4P4/9/9/9/9/4K4 w", "e8e9", "一兵进一"),
    ("3k5/4P4/4P4/4P4/4P4/9/9/9/9/4K4 w", "e5d5", "四兵平六"),
    ("2P1k4/2P6/2P6/2P6/2P6/9/9/9/9/3K5 w", "c9b9", "一兵平八"),
    ("2P1k4/2P6/2P6/2P6/2P6/9/9/9/9/3K5 w", "c7b7", "三兵平八"),
    ("2P1k4/2P6/2P6/2P6/2P6/9/9/9/9/3K5 w", "c5d5", "五兵平六"),
    # Red, files 四 and 六 doubled (the xqbase example): right to left, then front to rear;
    # the lone soldier on 九 keeps its file.
    ("3k5/9/3P1P3/P8/3P1P3/9/9/9/9/4K4 w", "f7e7", "一兵平五"),
    ("3k5/9/3P1P3/P8/3P1P3/9/9/9/9/4K4 w", "f5e5", "二兵平五"),
    ("3k5/9/3P1P3/P8/3P1P3/9/9/9/9/4K4 w", "d7e7", "三兵平五"),
    ("3k5/9/3P1P3/P8/3P1P3/9/9/9/9/4K4 w", "d5e5", "四兵平五"),
    ("3k5/9/3P1P3/P8/3P1P3/9/9/9/9/4K4 w", "a6a7", "兵九进一"),
    # Red, three on 五 and two on 三: all five numbered, 三 first.
    ("3k5/9/4P4/4P1P2/4P1P2/9/9/9/9/5K3 w", "g6g7", "一兵进一"),
    ("3k5/9/4P4/4P1P2/4P1P2/9/9/9/9/5K3 w", "g5h5", "二兵平二"),
    ("3k5/9/4P4/4P1P2/4P1P2/9/9/9/9/5K3 w", "e7e8", "三兵进一"),
    ("3k5/9/4P4/4P1P2/4P1P2/9/9/9/9/5K3 w", "e5d5", "五兵平六"),
    # Black (files １…９ from Black's right = a…i; front = nearer rank 0); ordinals stay
    # Chinese numerals: 一卒平２.
    ("3k5/9/9/9/9/2p6/2p6/2p6/9/4K4 b", "c2c1", "前卒进１"),
    ("3k5/9/9/9/9/2p6/2p6/2p6/9/4K4 b", "c3d3", "中卒平４"),
    ("3k5/9/9/9/9/2p6/2p6/2p6/9/4K4 b", "c4b4", "后卒平２"),
    ("3k5/9/9/9/9/2p6/2p6/2p6/2p6/4K4 b", "c1b1", "一卒平２"),
    ("3k5/9/9/9/9/2p6/2p6/2p6/2p6/4K4 b", "c4b4", "四卒平２"),
    ("3k5/9/9/9/9/2p2p3/9/2p2p3/9/4K4 b", "c2b2", "一卒平２"),
    ("3k5/9/9/9/9/2p2p3/9/2p2p3/9/4K4 b", "c4b4", "二卒平２"),
    ("3k5/9/9/9/9/2p2p3/9/2p2p3/9/4K4 b", "f2g2", "三卒平７"),
    ("3k5/9/9/9/9/2p2p3/9/2p2p3/9/4K4 b", "f4e4", "四卒平５"),
    ("3k5/9/9/9/9/2p2p3/2p6/2p2p3/9/4K4 b", "c3d3", "二卒平４"),
    ("3k5/9/9/9/9/2p2p3/2p6/2p2p3/9/4K4 b", "f4e4", "五卒平５"),
    # Other like pieces: 前/后, the file left out; 仕/士 and 相/象 keep the file.
    ("3k5/9/4n4/4n4/9/9/9/9/9/4K4 b", "e6d4", "前马进４"),
    ("3k5/9/4n4/4n4/9/9/9/9/9/4K4 b", "e7c8", "后马退３"),
    ("4k4/9/9/9/9/9/9/4C4/9/3KC4 w", "e2e5", "前炮进三"),
    ("3k5/9/9/9/9/9/9/3A5/9/3AK4 w", "d0e1", "仕六进五"),
    ("3k5/9/9/9/9/9/9/3A5/9/3AK4 w", "d2e1", "仕六退五"),
])
def test_chinese_notation_of_like_pieces_on_a_file(fen: str, move: str, text: str) -> None:
    full = fen + " - - 0 1"
    assert query_is_legal(full, move), "the move must be legal in the position"
    assert query_chinese(full, move) == text


def _chases(fen: str, moves: list[str]) -> tuple[list[bool], Any]:
    _, log = play(given(fen, {"CHASE_RULE": "axf"}), moves)
    return [e.chase for e in log if isinstance(e, Moved)], log[-1]


def test_axf_chasing_an_unprotected_piece_loses() -> None:
    # The red chariot follows the unprotected black cannon between c7 and c6.
    chases, end = _chases("4k4/9/R1c6/9/9/9/9/9/9/3K5 b - - 0 1",
                          ["c7c6", "a7a6", "c6c7", "a6a7"] * 2)
    assert chases == [False, True] * 4
    assert end == Ended(1, "perpetual_chase")


def test_axf_attacking_a_protected_piece_is_no_chase() -> None:
    # The same, but the black chariot c9 guards the cannon on both squares: a draw.
    chases, end = _chases("2r1k4/9/R1c6/9/9/9/9/9/9/3K5 b - - 0 1",
                          ["c7c6", "a7a6", "c6c7", "a6a7"] * 2)
    assert chases == [False] * 8
    assert end == Ended(None, "repetition")


def test_axf_a_weaker_piece_chases_a_chariot_even_if_it_is_protected() -> None:
    # The red horse keeps hitting the black chariot, which the chariot b9 protects.
    chases, end = _chases("1r2k4/9/9/1r7/9/9/N8/9/9/3K5 w - - 0 1",
                          ["a3c4", "b6b5", "c4a3", "b5b6"] * 2)
    assert chases == [True, False] * 4
    assert end == Ended(1, "perpetual_chase")


def test_axf_an_elephant_attacking_a_protected_horse_chases() -> None:
    fen = "4k1r2/9/9/9/9/6n2/9/9/9/2BK5 w - - 0 1"
    assert _chases(fen, ["c0e2"])[0] == [True]  # 相 against 马: weaker against stronger


def test_axf_offering_an_exchange_is_no_chase() -> None:
    # The red chariot attacks the unprotected black chariot a4, which could take it back.
    assert _chases("4k4/9/9/9/9/r8/9/9/9/3K3R1 w - - 0 1", ["h0h4"])[0] == [False]


def test_axf_mutual_chase_is_a_draw() -> None:
    # The red chariot hunts the black cannon; every flight of the cannon hits an unprotected
    # red horse over a red soldier (g6 over e6, g7 over e7).
    chases, end = _chases("4k4/9/R1c1P1N2/4P1N2/9/9/9/9/9/3K5 b - - 0 1",
                          ["c7c6", "a7a6", "c6c7", "a6a7"] * 2)
    assert chases == [True] * 8
    assert end == Ended(None, "mutual_perpetual_chase")


def test_axf_check_outranks_chase() -> None:
    # Red checks on every move: the cannon i9 fires over h9 when the cannon f9 steps off the
    # rank, over f9 when the black chariot has left h9. Black's chariot attacks the
    # unprotected red cannon (on f8, then f9) on every move. The perpetual checker loses.
    chases, end = _chases("3k1C1rC/9/1c7/9/9/9/9/4K4/9/C8 w - - 0 1",
                          ["f9f8", "h9h8", "f8f9", "h8h9"] * 2)
    assert chases == [False, True] * 4
    assert end == Ended(1, "perpetual_check")


def test_axf_escaping_check_is_no_chase() -> None:
    # After e8e9 (check) Black's cannon f0 could not capture the red chariot f4 legally;
    # once the king has stepped out of check it can, but that capture was there before.
    chases, _ = _chases("3k5/4R2cr/9/9/9/5R3/9/1N3K3/9/5c3 w - - 0 1", ["e8e9", "d9d8"])
    assert chases == [False, False]
