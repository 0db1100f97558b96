"""Hands dealt on purpose for the browser tests that must reach a rare position (a 革命 window,
a 硬扣 offer …): the table service runs in this process (tests/conftest.py), and its server seeds
come from ``SealKeys.new_seed``; :func:`deal_with` replaces that for the test's duration by a
function choosing the seed by hand number, and deals every hand under ``chieu-fair-v1`` with the
client seeds left out (the page commits to a random seed per hand, which under the commit–reveal
round would make the deal nobody's choice: what the round is for). The seed material, and with it
the whole deal, then follows from the server seed alone
(``chieu.games.fair.seed_material``). Each test finds its seed with :func:`find`: the first of a
fixed sequence of candidates that gives the position, from a hint where the search last ended, so
a change of the rules that moves it is found again (more slowly) rather than silently missed."""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable

import pytest

from chieu.games import fair
from chieu.table import decide
from chieu.table.v1 import log_pb2
from chieu.tablelog import sealing


def candidate(label: str, i: int) -> bytes:
    """The ``i``-th candidate server seed of a search named ``label``."""
    return hashlib.sha256(f"chieu-web-{label}-{i}".encode()).digest()


def material(seed: bytes, players: int) -> bytes:
    """A hand's seed material with no client seed (what the table derives the deal from)."""
    return fair.seed_material(seed, [b""] * players)


def find(label: str, fits: Callable[[bytes], bool], hint: int = 0, limit: int = 400_000) -> bytes:
    """The first candidate from ``hint`` on (then from 0) that ``fits``."""
    for i in [*range(hint, limit), *range(0, hint)]:
        seed = candidate(label, i)
        if fits(seed):
            return seed
    raise AssertionError(f"no seed of {label!r} fits in {limit} candidates")


def deal_with(monkeypatch: pytest.MonkeyPatch, seeds: dict[int, bytes]) -> None:
    """Until the test ends, hand ``n`` of every new table is dealt from ``seeds[n]`` (any other
    hand from a fresh random seed), committed and sealed as the table service does."""
    def new_seed(self: sealing.SealKeys, table_id: str, hand_no: int) -> log_pb2.NextSeed:
        return self.seal_seed(table_id, hand_no, seeds.get(hand_no) or secrets.token_bytes(sealing.SEED_BYTES))

    monkeypatch.setattr(sealing.SealKeys, "new_seed", new_seed)
    monkeypatch.setattr(decide, "committing", lambda t, players: False)
