"""Every amount is bounded (issue 32, attacks 1 and 2): at every offered stake and any options
the games' schemas accept, no reachable settlement overflows a 64-bit integer (the log's
``int64``, PostgreSQL's ``bigint``), and no single move settles more than the table's documented
maximum (docs/ledger.md, "Bounded amounts"): random options within the bounds (the money options
drawn up to their bounds), random hands played to their end through every legal command (and
Phỏm's bắt báo, right and wrong), each move's settlement measured as the table logs it."""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chieu.games import registry
from chieu.games.core import BadOptions, RuleViolation, Setup, Transfer
from chieu.games.dominoes.options import MAX_PIP_STAKE
from chieu.games.o_an_quan.options import MAX_MOVES
from chieu.games.phom.model import Accuse
from chieu.games.phom.options import MAX_AMOUNT
from chieu.kit.settings import Settings, coin_stakes
from chieu.table.decide import INT64_MAX, MAX_STAKE
from chieu.tablelog import codec

STAKES = sorted({*coin_stakes(Settings()), MAX_STAKE})
"""The stakes a table may be played at: the coin rooms' (the default ``CHIEU_COIN_STAKES``) and
the largest a points table may have."""

amount = st.integers(0, MAX_AMOUNT)
OPTIONS: dict[str, st.SearchStrategy[dict[str, Any]]] = {
    "phom": st.fixed_dictionaries({
        "ga": st.booleans(), "uDen": st.booleans(), "allowULao": st.booleans(), "taiGui": st.booleans(),
        "amounts": st.fixed_dictionaries({
            "uThuong": amount, "uKhan": amount, "bao": amount, "uLao": amount, "mom": amount, "chot": amount,
            "eat1": amount, "eat2": amount, "wrongAccusation": amount, "rank": st.lists(amount, min_size=3, max_size=3),
        })}),
    "dominoes": st.fixed_dictionaries({
        "pipStake": st.integers(1, MAX_PIP_STAKE),
        "blockTie": st.sampled_from(["noWinner", "fewerTiles", "afterLastMover"]),
        "blockerTieCountsAsLoss": st.booleans()}),
    "o_an_quan": st.fixed_dictionaries({
        "payout": st.sampled_from(["fixed", "perPoint"]), "quanValue": st.sampled_from([5, 10]),
        "maxMoves": st.integers(1, MAX_MOVES), "quanNon": st.booleans()}),
    "mahjong": st.fixed_dictionaries({
        "dealerBonus": st.integers(0, 1),
        "laiziMode": st.sampled_from(["普通", "色牌", "一支王", "小手王", "大将王黑风报", "对王大将报"])}),
    "gouji": st.fixed_dictionaries({"bieSan": st.sampled_from(["on", "off"]), "geMing": st.sampled_from(["on", "off"]),
                                    "shaoGong": st.sampled_from(["on", "off"])}),
    "xiangqi": st.just({}),
    "lianliankan": st.fixed_dictionaries({"board": st.sampled_from(["14x6", "18x8"])}),
}


def documented_max(key: str, values: Mapping[str, Any]) -> int:
    """The most stake units one move settles at a table of these options, the gà pot's payout
    aside: the table of docs/ledger.md, "Bounded amounts"."""
    if key == "phom":
        a = values["amounts"]
        return 4 * max(*(v for k, v in a.items() if k != "rank"), *a["rank"])
    if key == "dominoes":
        return 2 * int(values["pipStake"]) * 168
    if key == "o_an_quan":
        return 1 if values["payout"] == "fixed" else 70 + 10 * int(values["maxMoves"])
    return {"mahjong": 400, "gouji": 36, "xiangqi": 2, "lianliankan": 10}[key]


def move_settlement(game: Any, state: Any, events: list[Any], settled: int) -> tuple[list[Transfer], int]:
    """What the table logs for one move (``chieu.table.decide``): the events' transfers, or at
    the hand's end the outcome's from the legs settled so far; and the legs settled after it."""
    for e in events:
        state = game.evolve(state, e)
    paid = [x for e in events for x in getattr(e, "transfers", ())]
    outcome = game.outcome(state)
    if outcome is not None:
        paid = list(outcome.transfers[settled:])
    return paid, settled + len(paid)


def play(key: str, raw: dict[str, Any], seed: int, steps: int) -> int:
    """A random hand at ``raw``'s options; asserts the property at every move; returns the moves."""
    game = registry.get(key)
    rng = random.Random(seed)
    options = game.parse_options(raw)
    values = game.option_values(options)
    limit = documented_max(key, values)
    assert limit <= registry.descriptor(key).max_move_units
    players = rng.randint(game.min_players, game.max_players)
    now = 1_000_000
    state = game.initial(options, players)
    events = list(game.start(Setup(options, players, rng.randbytes(32), now)))
    settled, moves = 0, 0
    for step in range(steps + 1):
        paid, after = move_settlement(game, state, events, settled)
        pot_out = sum(x.amount for x in paid if x.from_seat is None)
        moved = sum(x.amount for x in paid) - pot_out
        assert moved <= limit, f"{key}: one move settled {moved} > {limit} at {raw}"
        for x in paid:
            assert 0 < x.amount <= INT64_MAX // max(STAKES), f"{key}: {x} overflows at stake {max(STAKES)}"
            codec.transfer_message(x)  # the log's int64 holds it
        for e in events:
            state = game.evolve(state, e)
        settled, moves = after, moves + 1
        if game.outcome(state) is not None or step == steps:
            break
        now += 10
        legal = [(s, c) for s in range(players) for c in game.legal(state, s)]
        if key == "phom" and rng.random() < 0.05:
            legal.append((rng.randrange(players), Accuse(rng.randrange(players))))
        try:
            if legal:
                seat, command = rng.choice(legal)
                events = list(game.decide(state, seat, command, now))
            else:
                deadlines = game.deadlines(state)
                if not deadlines:
                    break
                d = min(deadlines, key=lambda d: d.at_ms)
                now = max(now, d.at_ms)
                events = list(game.on_timeout(state, d.seat, now))
        except RuleViolation:  # a refused accusation (of oneself, or after the end)
            events = []
    return moves


@pytest.mark.parametrize("key", sorted(registry.KEYS))
@settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data(), seed=st.integers(0, 2**32))
def test_no_move_settles_more_than_documented_and_nothing_overflows(key: str, data: st.DataObject,
                                                                    seed: int) -> None:
    raw = data.draw(OPTIONS[key])
    play(key, raw, seed, 400 if key not in ("gouji", "mahjong") else 250)


@pytest.mark.parametrize("key", ["phom", "dominoes", "o_an_quan"])
def test_at_the_bounds_too(key: str) -> None:
    """The money options at their bounds: hands still settle within the documented maximum."""
    at_bound = {"phom": {"ga": True, "amounts": {k: MAX_AMOUNT for k in (
        "uThuong", "uKhan", "bao", "uLao", "mom", "chot", "eat1", "eat2", "wrongAccusation")}},
        "dominoes": {"pipStake": MAX_PIP_STAKE}, "o_an_quan": {"payout": "perPoint", "maxMoves": MAX_MOVES}}[key]
    assert sum(play(key, at_bound, seed, 400) for seed in range(6)) > 6


@pytest.mark.parametrize("raw", [
    {"amounts": {"wrongAccusation": 9e18}}, {"amounts": {"wrongAccusation": 1e9}},
    {"amounts": {"wrongAccusation": 1e19}}, {"amounts": {"uThuong": MAX_AMOUNT + 1}},
    {"amounts": {"rank": [1, 2, 10**6]}}, {"stake": 10**19},
], ids=repr)
def test_phom_refuses_amounts_past_the_bound(raw: dict[str, Any]) -> None:
    with pytest.raises(BadOptions):
        registry.get("phom").parse_options(raw)


@pytest.mark.parametrize(("key", "raw"), [
    ("dominoes", {"pipStake": MAX_PIP_STAKE + 1}), ("dominoes", {"pipStake": 1e18}),
    ("o_an_quan", {"maxMoves": MAX_MOVES + 1}),
], ids=repr)
def test_other_money_options_are_bounded(key: str, raw: dict[str, Any]) -> None:
    with pytest.raises(BadOptions):
        registry.get(key).parse_options(raw)


@pytest.mark.parametrize("key", sorted(registry.KEYS))
def test_every_game_declares_what_one_move_can_settle(key: str) -> None:
    """Every game names its maximum, and at the largest stake it fits the books 100,000 times
    over (a player's balance is a sum of moves)."""
    units = registry.descriptor(key).max_move_units
    assert units > 0
    assert MAX_STAKE * units * 100_000 <= INT64_MAX
