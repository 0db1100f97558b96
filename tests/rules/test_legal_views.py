"""Every game's views carry their viewer's legal commands (issue 24): through random reachable
states of every registered game, each seat's view lists exactly what ``legal()`` gives for that
seat, in order (the compact forms expanded: 象棋's ``legal_moves``, 连连看's ``legal_pairs``,
够级's ``legal_leads``), a spectator's view lists nothing, every listed command is accepted by
``decide``, and every entry, packed into ``Any`` as it is, reads back through the codec as the
command it holds. Odd seeds play with other options (够级's 憋三 and 革命, the other mahjong
wild modes, 连连看 with a clock)."""

from __future__ import annotations

import random
from typing import Any

import pytest
from google.protobuf import any_pb2
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chieu.games import registry
from chieu.games.core import RuleViolation, Setup
from chieu.tablelog import codec


def offered(key: str, view: Any) -> list[Any]:
    """The commands a view offers, as a client that knows no rule reads them: the compact
    forms expanded (``PieceMoves`` → ``Move``, ``Pair`` → ``Remove``, 够级's ``Leads`` → ``Play``),
    then every entry of
    ``legal`` unwrapped."""
    game = registry.get(key)
    out: list[Any] = []
    for pm in getattr(view, "legal_moves", ()):
        move = next(t for t in game.commands if t.__name__ == "Move")
        out += [move(pm.square + to) for to in pm.to]
    for pair in getattr(view, "legal_pairs", ()):
        remove = next(t for t in game.commands if t.__name__ == "Remove")
        out.append(remove(pair.first, pair.second))
    leads = getattr(view, "legal_leads", None)
    if leads is not None:
        play = next(t for t in game.commands if t.__name__ == "Play")
        out += [play(w.cards + b.cards) for w in leads.wilds for b in leads.bases if w.cards or b.cards]
    out += [codec.unwrap(entry) for entry in view.legal]
    return out


VARIANTS: dict[str, list[dict[str, Any]]] = {
    "gouji": [{"BIE_SAN": "on", "GE_MING": "on", "TRIBUTE": "none"}],
    "mahjong": [{"LAIZI_MODE": m} for m in ("色牌", "一支王", "小手王", "大将王黑风报", "对王大将报")],
    "lianliankan": [{"TIME_LIMIT": 60}],
    "phom": [{"taiGui": False, "ga": True}],
}


def options_of(key: str, seed: int) -> dict[str, Any]:
    variants = VARIANTS.get(key, [])
    return variants[(seed // 2) % len(variants)] if variants and seed % 2 else {}


def players_of(key: str, rng: random.Random) -> int:
    game = registry.get(key)
    return rng.randint(game.min_players, min(game.max_players, 4 if key != "gouji" else 6))


def check_views(key: str, state: Any, players: int, now_ms: int) -> int:
    """The property at one state; returns how many commands the views offered."""
    game = registry.get(key)
    assert offered(key, game.view(state, None)) == []
    total = 0
    for seat in range(players):
        view = game.view(state, seat)
        mine = offered(key, view)
        assert mine == list(game.legal(state, seat)), f"{key} seat {seat}"
        for command in mine:
            game.decide(state, seat, command, now_ms)  # raises if refused
        for entry in view.legal:  # an entry as it is, sent in Act
            packed = any_pb2.Any()
            packed.Pack(codec.to_message(entry, key))
            assert codec.unpack(packed, key, commands_only=True) == codec.unwrap(entry)
        # the view's wire form decodes to the same view
        message = codec.to_message(view, key)
        assert codec.read(type(message).FromString(message.SerializeToString()), type(view)) == view
        total += len(mine)
    return total


def walk(key: str, seed: int, steps: int, *, check_every: int = 1) -> int:
    """A random hand of ``key``: the property after every ``check_every``-th step; each step a
    random offered command of a random seat, or a timeout when nothing is offered."""
    game = registry.get(key)
    rng = random.Random(seed)
    players = players_of(key, rng)
    options = game.parse_options(options_of(key, seed))
    now = 1_000_000
    state = game.initial(options, players)
    for e in game.start(Setup(options, players, rng.randbytes(32), now)):
        state = game.evolve(state, e)
    offers = 0
    for step in range(steps):
        if game.outcome(state) is not None:
            break
        now += 10
        if step % check_every == 0:
            offers += check_views(key, state, players, now)
        moves = [(s, c) for s in range(players) for c in offered(key, game.view(state, s))]
        if moves:
            seat, command = rng.choice(moves)
            events = game.decide(state, seat, command, now)
        else:
            deadlines = game.deadlines(state)
            if not deadlines:
                break
            d = min(deadlines, key=lambda d: d.at_ms)
            now = max(now, d.at_ms)
            try:
                events = game.on_timeout(state, d.seat, now)
            except RuleViolation:
                break
        for e in events:
            state = game.evolve(state, e)
    return offers


@pytest.mark.parametrize("key", sorted(registry.KEYS))
@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(seed=st.integers(0, 2**32))
def test_each_view_lists_exactly_its_seats_legal_commands(key: str, seed: int) -> None:
    walk(key, seed, 60 if key in ("gouji", "mahjong") else 120, check_every=3 if key == "gouji" else 1)


@pytest.mark.parametrize("key", sorted(registry.KEYS))
def test_views_offer_something_to_play(key: str) -> None:
    """The property is not vacuous: the views of a random hand offer commands."""
    assert walk(key, 1, 40) > 0
