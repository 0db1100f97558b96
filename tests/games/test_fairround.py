"""The commit–reveal round of client seeds (``chieu.games.fairround``, its pure state machine; the
table's round on its deciders and fold is tests/table/test_fair_round.py: docs/fairness.md). A
shill that knows the server seed and holds one of three seats grinds 10,000 candidate client
seeds: under ``chieu-fair-v1`` (the honest seeds in the clear before the deal) it gets the deal it
chooses every time; under the round it must commit before any seed is shown, and gets it no more
often than chance. Its one choice left, to reveal or withhold after the others revealed, costs a
forced quit."""

from __future__ import annotations

import hashlib
import random
from pathlib import Path

import pytest

from chieu.games import fair
from chieu.games.fairround import Round, RoundRefused, client_commitment

CANDIDATES = 10_000
TRIALS = 20
TARGET = 0
"""The deal the shill wants: the first card drawn (of 52) is card 0; chance 1/52."""
PLAYERS = ("alice", "shill", "bob")


def _deal(material: bytes) -> int:
    return fair.choice(material, range(52), "deal")


def _v1_trial(rng: random.Random, server_seed: bytes) -> bool:
    """chieu-fair-v1: the honest seeds are sent in the clear before the deal."""
    alice, bob = rng.randbytes(32), rng.randbytes(32)
    for i in range(CANDIDATES):
        mine = i.to_bytes(32, "big")
        if _deal(fair.seed_material(server_seed, [alice, mine, bob])) == TARGET:
            return True
    return False


def _round_trial(rng: random.Random, server_seed: bytes, hand_no: int) -> tuple[bool, bool]:
    """The round, the shill revealing last: (the deal it chose, reached by revealing alone;
    reached by revealing or withholding)."""
    r = Round("t", hand_no, PLAYERS)
    honest = {"alice": rng.randbytes(32), "bob": rng.randbytes(32)}
    r.commit("alice", client_commitment("t", hand_no, "alice", honest["alice"]))
    assert r.visible() == {}
    with pytest.raises(RoundRefused) as refused:  # nobody reveals before every seat committed
        r.reveal("alice", honest["alice"])
    assert refused.value.code == "reveal_too_early"
    # the shill grinds with what it can see: the server seed, and no honest seed
    guess = {p: r.visible().get(p, b"\0" * 32) for p in honest}
    mine = next((c for i in range(CANDIDATES) if _deal(fair.seed_material(
        server_seed, [guess["alice"], c := i.to_bytes(32, "big"), guess["bob"]])) == TARGET), b"\1" * 32)
    r.commit("shill", client_commitment("t", hand_no, "shill", mine))
    r.commit("bob", client_commitment("t", hand_no, "bob", honest["bob"]))
    r.reveal("alice", honest["alice"])
    r.reveal("bob", honest["bob"])
    with pytest.raises(RoundRefused) as refused:  # bound by its commitment: no other seed opens it
        r.reveal("shill", b"\2" * 32)
    assert refused.value.code == "reveal_mismatch"
    revealed = _deal(fair.seed_material(server_seed, [honest["alice"], mine, honest["bob"]])) == TARGET
    without = _deal(fair.seed_material(server_seed, [honest["alice"], honest["bob"]])) == TARGET
    return revealed, revealed or without


def test_a_shill_grinding_10000_seeds_gets_its_deal_always_under_v1_and_by_chance_under_the_round() -> None:
    rng = random.Random(33)
    server_seed = rng.randbytes(32)
    assert sum(_v1_trial(rng, server_seed) for _ in range(TRIALS)) == TRIALS
    results = [_round_trial(rng, server_seed, n) for n in range(1, TRIALS + 1)]
    # chance is TRIALS/52 ≈ 0.4 hits; 5 or more has probability about 4e-5
    assert sum(hit for hit, _ in results) < 5
    assert sum(either for _, either in results) < 6  # two deals to choose from, at a forced quit's price


def test_a_withheld_reveal_is_a_forced_quit_and_the_hand_is_dealt_without_it() -> None:
    rng = random.Random(1)
    seeds = {p: rng.randbytes(32) for p in PLAYERS}
    r = Round("t", 1, PLAYERS)
    for p in PLAYERS:
        r.commit(p, client_commitment("t", 1, p, seeds[p]))
    with pytest.raises(RoundRefused):
        r.material(b"s")  # no deal before every seat has revealed or withheld
    r.reveal("alice", seeds["alice"])
    r.reveal("bob", seeds["bob"])
    assert r.expire() == {"shill"} and r.withheld == {"shill"}
    assert r.material(b"s") == fair.seed_material(b"s", [seeds["alice"], seeds["bob"]])
    with pytest.raises(RoundRefused):
        r.reveal("shill", seeds["shill"])  # too late: withheld


def test_commitments_are_bound_to_their_table_hand_and_player_and_seeds_are_32_bytes() -> None:
    seed = bytes(range(32))
    c = client_commitment("t", 1, "alice", seed)
    assert len({c, client_commitment("u", 1, "alice", seed), client_commitment("t", 2, "alice", seed),
                client_commitment("t", 1, "bob", seed)}) == 4
    r = Round("t", 1, ("alice", "bob"))
    r.commit("alice", c)
    r.commit("bob", c)  # a copied commitment opens for nobody but alice
    with pytest.raises(RoundRefused) as refused:
        r.reveal("bob", seed)
    assert refused.value.code == "reveal_mismatch"
    with pytest.raises(RoundRefused) as refused:
        r.reveal("alice", seed[:16])
    assert refused.value.code == "bad_client_seed"
    r2 = Round("t", 1, ("alice", "bob"))
    r2.commit("alice", c)
    assert r2.drop_uncommitted() == ["bob"] and r2.revealing


def test_the_vector_of_docs_fairness_md() -> None:
    """The client commitment's vector printed on the page, and the page's formula computed
    from its own words (not with ``client_commitment``)."""
    page = (Path(__file__).parents[2] / "docs" / "fairness.md").read_text(encoding="utf-8")
    vector = client_commitment("t1", 1, "alice", bytes(range(32)))
    assert f"→ `{vector}`" in page
    by_page = hashlib.sha256(b"chieu-fair-v2 client" + b"\x00" + (2).to_bytes(4, "big") + b"t1" + (1).to_bytes(8, "big")
                             + (5).to_bytes(4, "big") + b"alice" + bytes(range(32))).hexdigest()
    assert by_page == vector
