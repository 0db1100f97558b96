"""The ladder folded over the table log alone (:class:`chieu.ladder.results.Climb`, what the ledger's
reward proof and the auditor read): the record where a best level is reached, a penalty replacing a
hand's result, and wins that the only-lose rule counts for nothing."""

from __future__ import annotations

from chieu.ladder.results import Climb
from chieu.ladder.rules import Params, Standing
from chieu.table.v1 import log_pb2
from tests.ladder.conftest import hand_ended


def test_the_sixth_win_reaches_level_2_and_no_earlier_one() -> None:
    climb = Climb()
    for seq in range(1, 7):
        climb.fold(seq, hand_ended(f"t{seq}", 1, ["a", "b"], 0, level=1))
        assert (("xiangqi", "a", 2) in climb.reached) == (seq == 6)
    assert climb.reached[("xiangqi", "a", 2)] == 6
    assert climb.standings[("xiangqi", "a")] == Standing(2, 2, 0)
    assert climb.standings[("xiangqi", "b")] == Standing(1, 1, -6)  # six losses (the floor is -10)
    # one more win at level 2 is one level point, not level 3 (the forgery one level ahead)
    climb.fold(7, hand_ended("t7", 1, ["a", "c"], 0, level=2))
    assert ("xiangqi", "a", 3) not in climb.reached and climb.standings[("xiangqi", "a")] == Standing(2, 2, 1)


def test_a_penalty_replaces_the_hands_result_and_a_high_player_gains_nothing_below() -> None:
    climb = Climb(Params(up=1))
    quit_ = log_pb2.TableEvent(forced_quit=log_pb2.ForcedQuit(player_id="a", hand_no=1, ladder_level=1))
    climb.fold(1, hand_ended("t1", 1, ["a", "b"], 0, level=1, before=[quit_]))  # a quit, then "won": -2
    assert climb.standings[("xiangqi", "a")] == Standing(1, 1, -2)
    for seq in (2, 3, 4, 5):
        climb.fold(seq, hand_ended(f"t{seq}", 1, ["a", "b"], 0, level=1))
    assert climb.reached[("xiangqi", "a", 2)] == 5 and climb.standings[("xiangqi", "a")] == Standing(2, 2, 0)
    climb.fold(6, hand_ended("t6", 1, ["a", "b"], 0, level=1))  # a win below a's level counts nothing
    assert climb.standings[("xiangqi", "a")] == Standing(2, 2, 0)
