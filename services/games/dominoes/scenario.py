"""Đô Mi Nô scenario hooks: an exact deal, what a scenario asserts (``describe``), the queries
and the command reader. Seats are named P1, P2, ... in turn order, as in the rules file.

A position is an exact deal::

    position: {hands: ["[5|6] [1|3] ...", ...], boneyard: "[1|1] ... (top first)", leader: 0}

seven tiles to each player; hands and boneyard hold the 28 tiles of the set exactly once;
``leader`` is the seat (0 = P1) who leads. Commands: ``"[4|5] L"`` / ``"[4|5] R"``, ``"[5|6]"``
(the lead), ``draw``, ``pass``, or ``{play: "[4|5]", end: L}``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from chieu.games.core import InvalidCommand, ScenarioHooks
from chieu.games.dominoes.model import Dealt, Draw, Hand, Pass, Play, State
from chieu.games.dominoes.options import Options
from chieu.games.dominoes.tiles import (
    ALL_TILES,
    HAND_SIZE,
    End,
    format_tiles,
    parse_tile,
    parse_tiles,
    pip_count,
)


def position(options: Options, players: int, spec: Mapping[str, Any], now_ms: int) -> Sequence[Any]:
    """A scenario deal: ``{hands: ["[5|6] [1|3] ...", ...], boneyard: "...", leader: 0}``."""
    hands = tuple(Hand(parse_tiles(str(h))) for h in spec["hands"])
    boneyard = parse_tiles(str(spec.get("boneyard", "")))
    if len(hands) != players or any(len(h.tiles) != HAND_SIZE for h in hands):
        raise ValueError(f"a deal gives {HAND_SIZE} tiles to each of {players} players")
    every = [t for h in hands for t in h.tiles] + list(boneyard)
    if sorted(every) != sorted(ALL_TILES):
        raise ValueError("hands and boneyard must hold the 28 tiles of the set exactly once")
    leader = int(spec.get("leader", 0))
    return [Dealt(leader, hands, boneyard, now_ms + options.turn_seconds * 1000)]


def _name(seat: int | None) -> str | None:
    return None if seat is None else f"P{seat + 1}"


def describe(state: State) -> Mapping[str, Any]:
    """What scenarios assert; seats are named P1, P2, ... as in the rules file."""
    out: dict[str, Any] = {
        "to_move": _name(state.to_move),
        "ends": None if state.ends is None else list(state.ends),
        "hands": [format_tiles(h) for h in state.hands],
        "hand_sizes": [len(h) for h in state.hands],
        "pips": [pip_count(h) for h in state.hands],
        "boneyard": len(state.boneyard),
        "total_pips": sum(pip_count(h) for h in state.hands) + pip_count(state.boneyard)
        + sum(a + b for a, b in state.line),
        "tiles": sum(len(h) for h in state.hands) + len(state.boneyard) + len(state.line),
        "ended": None if state.ended is None else state.ended.reason,
    }
    if state.ended is not None:
        out["blocker"] = _name(state.ended.blocker)
        out["assistant"] = _name(state.ended.assistant)
        out["next_leader"] = _name(state.ended.next_leader)
    return out


def parse_command(raw: Any) -> Play | Draw | Pass:
    """Scenario notation: ``draw``, ``pass``, ``"[4|5] L"`` / ``"[4|5] R"`` (the lead: ``"[5|6]"``),
    or ``{play: "[4|5]", end: L}``."""
    try:
        if isinstance(raw, Mapping):
            if "play" in raw:
                return Play(parse_tile(str(raw["play"])), End(str(raw.get("end", "L")).upper()))
            if raw.get("draw"):
                return Draw()
            if raw.get("pass"):
                return Pass()
            raise ValueError("expected play, draw or pass")
        text = str(raw).strip()
        if text.lower() == "draw":
            return Draw()
        if text.lower() == "pass":
            return Pass()
        parts = text.replace("on ", "").split()
        end = End(parts[1].upper()) if len(parts) > 1 else End.LEFT
        return Play(parse_tile(parts[0]), end)
    except (KeyError, ValueError, IndexError) as e:
        raise InvalidCommand("bad_command", f"cannot read {raw!r}: {e}") from None


HOOKS = ScenarioHooks(
    position=position,
    describe=describe,
    queries={
        "set_pips": lambda: pip_count(ALL_TILES),
        "set_size": lambda: len(ALL_TILES),
    },
    command=parse_command,
)
