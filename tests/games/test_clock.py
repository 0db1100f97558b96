"""The one turn clock of the games (:mod:`chieu.games.clock`): who acts first, when a clock runs out,
who is on it, and the refusal of an auto-play for a seat whose clock is not running."""

from __future__ import annotations

import pytest

from chieu.games import clock, fair
from chieu.games.core import Deadline, IllegalMove, Outcome, Setup

PREVIOUS = Outcome(winner=2, ranking=(2, 0, 1), scores=(0, 0, 1), transfers=(), reason="won", first=1)


def _setup(first: int | None = None, previous: Outcome | None = None) -> Setup:
    return Setup(options=None, players=3, seed=b"seed", now_ms=1000, previous=previous, first=first, owner=1)


def test_the_first_seat_is_asked_in_one_order() -> None:
    winner = lambda p: p.winner  # noqa: E731
    assert clock.first_seat(_setup(first=0, previous=PREVIOUS), winner, draw="x") == 0  # the table's (a scenario)
    assert clock.first_seat(_setup(previous=PREVIOUS), winner, draw="x") == 2  # the rotation
    assert clock.first_seat(_setup(previous=PREVIOUS), lambda p: None, otherwise=1, draw="x") == 1
    assert clock.first_seat(_setup(), winner, otherwise=1) == 1  # no previous hand
    drawn = clock.first_seat(_setup(), winner, draw="first_player")
    assert drawn == fair.choice(b"seed", (0, 1, 2), "first_player")
    with pytest.raises(ValueError):
        clock.first_seat(_setup())


def test_when_a_clock_runs_out() -> None:
    assert clock.due(1000, 30) == 31_000
    assert clock.due_if(1000, 30) == 31_000 and clock.due_if(1000, 0) == 0


def test_who_is_on_the_clock() -> None:
    assert clock.to_act(None, 5) == () and clock.to_act(2, 5) == (Deadline(2, 5),)
    assert clock.each([1, 0, 1], 5) == (Deadline(1, 5), Deadline(0, 5))
    assert clock.running((Deadline(1, 5),), 1) == Deadline(1, 5)
    with pytest.raises(IllegalMove) as e:
        clock.running((Deadline(1, 5),), 0, IllegalMove("not_on_the_clock", clock.OFF_CLOCK))
    assert e.value.code == "not_on_the_clock"
    with pytest.raises(IllegalMove) as e:
        clock.running((), 0)
    assert e.value.code == "not_your_turn"


def test_no_game_keeps_its_own_clock() -> None:
    """Deadlines are made, first seats chosen and clocks started by the one helper only."""
    from pathlib import Path

    from chieu.games import registry

    games = Path(__file__).resolve().parents[2] / "services" / "games"
    for key in registry.KEYS:
        for path in sorted((games / key).glob("*.py")):
            if path.name == "scenario.py":
                continue
            text = path.read_text(encoding="utf-8")
            for written in ("Deadline(", "setup.first", "* 1000"):
                assert written not in text, f"{path.name} of {key} writes {written!r}"
