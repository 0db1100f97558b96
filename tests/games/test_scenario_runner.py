"""The scenario runner's own checks: an ``events`` list means exactly those events, and
``{contains: [...]}`` means those in order among others; a wrong expectation fails."""

from __future__ import annotations

from typing import Any

import pytest

from chieu.games.scenarios import run_scenario

SOWED = {"type": "Sowed", "seat": 0, "square": 1}
CAPTURED = {"type": "Captured", "quan": True}
PASSED = {"type": "TurnPassed", "seat": 1}


def _scenario(events: Any) -> dict[str, Any]:
    return {"id": "runner", "game": "o_an_quan", "seats": ["A", "B"],
            "position": {"position": "[Q+0 | 5 5 5 5 5 | Q+0 | 5 5 5 5 5]", "to_move": "A", "moves": [0, 0]},
            "steps": [{"seat": "A", "command": {"square": "S1", "direction": "CW"}, "events": events}]}


@pytest.mark.parametrize("events", [
    [SOWED, CAPTURED, PASSED],
    {"exactly": [SOWED, CAPTURED, PASSED]},
    {"contains": [CAPTURED]},
    {"contains": [SOWED, PASSED]},
    {"contains": []},
])
def test_what_happened_passes(events: Any) -> None:
    result = run_scenario(_scenario(events))
    assert result.passed, result.failures


@pytest.mark.parametrize("events", [
    [SOWED, CAPTURED],                        # exactly: one event is missing from the list
    [SOWED, PASSED, CAPTURED],                # exactly: the order matters
    {"contains": [PASSED, SOWED]},            # contains: in order
    {"contains": [{"type": "Captured", "quan": False}]},
    {"contains": [SOWED, SOWED]},             # each expected event is a different one
    {"includes": [SOWED]},                    # not a mode
])
def test_what_did_not_happen_fails(events: Any) -> None:
    assert not run_scenario(_scenario(events)).passed
