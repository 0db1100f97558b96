"""Random legal 够级 games for property tests and the benchmark."""

from __future__ import annotations

from typing import Any

from chieu.games import fair
from chieu.games.core import Setup
from chieu.games.gouji import cards as C
from chieu.games.gouji.game import GAME
from chieu.games.gouji.model import (
    Burn,
    Dealt,
    DeclareRevolution,
    DeclineRevolution,
    Pass,
    Play,
    ReturnCards,
    SeatCards,
    State,
    TurnStarted,
)
from chieu.games.gouji.scenario import HOOKS


def random_game(seed: bytes, options: Any = None, check: Any = None, max_steps: int = 5000,
                previous: Any = None, timeouts: bool = False,
                hand_size: int | None = None, revolt: str = "random") -> tuple[State, list[Any]]:
    """Play one game with random legal commands; ``check(state)`` runs after every step.

    With 革命 on and small hands, only seats 0–2 get jokers (so others are often eligible);
    ``revolt``: ``random`` declarations, or ``one`` (the first eligible seat declares, the
    others decline: somebody sits out)."""
    opts = options if options is not None else GAME.parse_options({})
    state = GAME.initial(opts, 6)
    log: list[Any] = []
    if hand_size is None:
        start = list(GAME.start(Setup(opts, 6, seed, 0, previous=previous,
                                      hand_no=2 if previous else 1)))
    else:
        # small hands with the eight jokers spread over them, so that 捎牌 happens
        plain = [r for r in C.from_counts(C.DECK) if r < C.SJ]
        deck = fair.shuffled(seed, plain, "small-deal")
        jokers = fair.shuffled(seed, [C.SJ] * 4 + [C.BJ] * 4, "jokers")
        if opts.ge_ming:
            hands = [deck[i * hand_size:(i + 1) * hand_size] + (jokers[i::3] if i < 3 else [])
                     for i in range(6)]
            spec = {"hands": [" ".join(C.names(h)) for h in hands], "leader": 0,
                    "seed": seed.hex()}
            start = list(HOOKS.position(opts, 6, spec, 0))
        else:
            hands = [deck[i * hand_size:(i + 1) * hand_size] + jokers[i::6] for i in range(6)]
            start = [Dealt(1, tuple(SeatCards(i, C.names(h)) for i, h in enumerate(hands)), 0),
                     TurnStarted(0, True, False, 15000)]
    for e in start:
        state = GAME.evolve(state, e)
        log.append(e)
    rnd = fair.Stream(seed, "bots")
    now = 0
    for _ in range(max_steps):
        if state.phase == "over":
            break
        now += 1000
        if state.phase == "revolution":
            if revolt == "one":
                seat = state.eligible[0]
                cmd = DeclareRevolution() if not state.revolted else DeclineRevolution()
            else:
                seat = state.eligible[rnd.below(len(state.eligible))]
                cmd = DeclareRevolution() if rnd.below(3) == 0 else DeclineRevolution()
            if timeouts and rnd.below(4) == 0:
                events = GAME.on_timeout(state, seat, now)
            else:
                events = GAME.decide(state, seat, cmd, now)
        elif state.phase == "tribute":
            d = state.owed[0]
            cmd: Any = ReturnCards(GAME.legal(state, d.seat)[0].cards)
            events = GAME.decide(state, d.seat, cmd, now)
        else:
            seat = state.to_act
            assert seat is not None
            if timeouts and rnd.below(10) == 0:
                events = GAME.on_timeout(state, seat, now)
            else:
                opts_ = GAME.legal_sets(state, seat)
                burners = [(p, c) for p in range(6) if p != seat
                           for k, c in GAME.legal_sets(state, p) if k == "burn"]
                if burners and rnd.below(2) == 0:
                    p, c = burners[rnd.below(len(burners))]
                    events = GAME.decide(state, p, Burn(C.names(C.from_counts(c))), now)
                else:
                    kind, c = opts_[rnd.below(len(opts_))]
                    if kind == "pass" and len(opts_) > 1 and rnd.below(3) == 0:
                        kind, c = opts_[1 + rnd.below(len(opts_) - 1)]
                    cmd = Pass() if kind == "pass" else (
                        Play(C.names(C.from_counts(c))) if kind == "play"
                        else Burn(C.names(C.from_counts(c))))
                    events = GAME.decide(state, seat, cmd, now)
        for e in events:
            state = GAME.evolve(state, e)
            log.append(e)
        if check is not None:
            check(state)
    return state, log
