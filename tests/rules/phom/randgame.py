"""Random legal Phỏm games for property tests and the benchmark."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from chieu.games import fair
from chieu.games.core import Setup
from chieu.games.phom.game import GAME
from chieu.games.phom.model import Accuse, Phase, State
from chieu.games.phom.options import Options


def random_game(
    seed: bytes, players: int, options: Options | None = None,
    check: Callable[[State, list[Any]], None] | None = None, max_steps: int = 2000,
    accuse_rate: int = 0, timeout_rate: int = 0, previous: Any = None,
) -> tuple[State, list[Any], list[tuple[int, Any]]]:
    """Play one hand with random legal commands (and, at the given per-mille rates, random
    accusations and timeouts). ``check(state, log)`` runs after every step.

    Returns the final state, the event log and the commands played as ``(seat, command)``
    (a timeout is ``(seat, None)``)."""
    opts = options if options is not None else GAME.parse_options({})
    rnd = fair.Stream(seed, "random-play")
    state = GAME.initial(opts, players)
    log: list[Any] = []
    played: list[tuple[int, Any]] = []
    for e in GAME.start(Setup(opts, players, seed, 0, previous=previous)):
        state = GAME.evolve(state, e)
        log.append(e)
    now = 0
    for _ in range(max_steps):
        if check is not None:
            check(state, log)
        if state.phase is Phase.OVER:
            return state, log, played
        now += 100
        if state.phase is Phase.WINDOW:
            seat, cmd = state.dealer, None
            claims = [s for s in range(players) if GAME.legal(state, s)]
            if claims and rnd.below(2):
                seat = claims[rnd.below(len(claims))]
                cmd = GAME.legal(state, seat)[0]
        else:
            seat = state.turn
            moves = list(GAME.legal(state, seat))
            roll = rnd.below(1000)
            if roll < accuse_rate:
                accuser = rnd.below(players)
                target = (accuser + 1 + rnd.below(players - 1)) % players
                seat, cmd = accuser, Accuse(target)
            elif roll < accuse_rate + timeout_rate or not moves:
                cmd = None
            else:
                cmd = moves[rnd.below(len(moves))]
        events = (
            GAME.on_timeout(state, seat, now) if cmd is None else GAME.decide(state, seat, cmd, now)
        )
        played.append((seat, cmd))
        for e in events:
            state = GAME.evolve(state, e)
            log.append(e)
    raise AssertionError(f"no end after {max_steps} steps")
