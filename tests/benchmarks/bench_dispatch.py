"""What a checked contract would cost a move (issue 23): ``evolve`` dispatching on the event's
type by identity (``t = type(event); if t is Drew: ...``, as every game does) against a ``match``
statement with class patterns over a typed union (what lets mypy check that every event is
handled), over Phỏm's event types (``GAME.events``, in that order), each event
drawn as often as in a replay of random games. Baseline in the same run: the identity chain.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from chieu.games.phom.game import GAME
from tests.rules.phom.randgame import random_game

EVENT_TYPES: tuple[type, ...] = tuple(GAME.events)


def _chain_source(kind: str) -> str:
    """A function returning the index of the event's type: an identity chain or a match."""
    names = [f"E{i}" for i in range(len(EVENT_TYPES))]
    if kind == "identity":
        body = ["def f(e):", "    t = type(e)"]
        body += [f"    if t is {n}:\n        return {i}" for i, n in enumerate(names)]
        body.append("    return -1")
    else:
        body = ["def f(e):", "    match e:"]
        body += [f"        case {n}():\n            return {i}" for i, n in enumerate(names)]
        body.append("        case _:\n            return -1")
    return "\n".join(body)


def _compile(kind: str) -> Any:
    space: dict[str, Any] = {f"E{i}": t for i, t in enumerate(EVENT_TYPES)}
    exec(_chain_source(kind), space)
    return space["f"]


def main() -> None:
    opts = GAME.parse_options({})
    events: list[Any] = []
    for i in range(60):
        _, log, _ = random_game(i.to_bytes(4, "big"), 4, opts, timeout_rate=20)
        events += list(log)
    identity, match = _compile("identity"), _compile("match")
    assert [identity(e) for e in events] == [match(e) for e in events]
    ratios, per_event = [], {"identity": [], "match": []}
    for _ in range(15):  # alternating rounds, the ratio taken round by round
        t0 = time.perf_counter()
        for e in events:
            identity(e)
        a = time.perf_counter() - t0
        t0 = time.perf_counter()
        for e in events:
            match(e)
        b = time.perf_counter() - t0
        ratios.append(b / a)
        per_event["identity"].append(a / len(events) * 1e9)
        per_event["match"].append(b / len(events) * 1e9)
    print(f"dispatch over Phỏm's {len(EVENT_TYPES)} event types, {len(events)} events of 60 random games, 15 rounds")
    print(f"  identity chain (baseline)   {statistics.median(per_event['identity']):8.1f} ns/event")
    print(f"  match with class patterns   {statistics.median(per_event['match']):8.1f} ns/event"
          f"   ratio to baseline {statistics.median(ratios):.2f}x (quartiles "
          f"{statistics.quantiles(ratios, n=4)[0]:.2f}-{statistics.quantiles(ratios, n=4)[2]:.2f})")


if __name__ == "__main__":
    main()
