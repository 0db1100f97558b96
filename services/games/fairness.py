"""A game's provably fair randomness as docs/fairness.md shows it: the labels its rules draw
from (``chieu-fair-v1``, :mod:`chieu.games.fair`) and what each decides, and the test vectors
its code gives on the page's fixed seeds.

A game's descriptor holds its :class:`Fairness` (``DESCRIPTOR.fairness``): its one home.
``scripts/fairvectors`` writes the page's games table and every ``vector`` block from the
descriptors (``--check`` in ``./chieu test``), and tests/games/test_fairness_vectors.py checks
that a game draws from no label its descriptor does not name.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from chieu.games import fair
from chieu.games.core import Outcome, Setup

SERVER_SEED = bytes(range(32))
"""The server seed of every vector on the page."""
CLIENT_SEEDS = (b"alice", b"", "Chiếu".encode(), bytes([0, 255, 16]), "nguyễn".encode(), "张三".encode())
"""The client seeds of the page's vectors, seat 0's first; a hand of n players takes the first n."""


def material(players: int) -> bytes:
    """The seed material of a vector's hand of ``players`` (the fixed seeds above)."""
    return fair.seed_material(SERVER_SEED, CLIENT_SEEDS[:players])


class ReadsOptions(Protocol):
    """A game's rules as far as a vector's setup needs them."""

    def parse_options(self, raw: Mapping[str, Any]) -> Any: ...


def setup(game: ReadsOptions, players: int, options: Mapping[str, Any] | None = None, owner: int = 0,
          previous: Mapping[str, Any] | None = None) -> Setup:
    """A vector's hand: hand 1 at time 0 on the fixed seeds, the options parsed by the game;
    ``previous`` the previous outcome's ``winner``, ``first``, ``scores`` and ``reason`` (else none)."""
    prev = None
    if previous is not None:
        prev = Outcome(winner=previous.get("winner"), ranking=(), scores=tuple(previous.get("scores", ())),
                       transfers=(), reason=previous.get("reason", ""), first=previous.get("first"))
    return Setup(options=game.parse_options(dict(options or {})), players=players, seed=material(players),
                 now_ms=0, hand_no=1, previous=prev, owner=owner)


_PART = re.compile(r"<[a-z_]+>")


@dataclass(frozen=True, slots=True)
class Label:
    """One label the game's rules draw from, as the page writes it: fixed text, with ``<name>``
    for a part filled in at the draw (``timeout:<k>``, ``djw:<seat>:<d>``), and what it decides."""

    name: str
    decides: str

    def __post_init__(self) -> None:
        if not self.name or not self.decides or any(c in self.name for c in "`|\n"):
            raise ValueError(f"a label has a name and says what it decides: {self.name!r}")

    def matches(self, label: str) -> bool:
        """Whether a label drawn at play (``timeout:7``) is this one (``timeout:<k>``)."""
        parts = _PART.split(self.name)
        return re.fullmatch("[^:]+".join(map(re.escape, parts)), label) is not None


Vector = Callable[[], dict[str, Any]]
"""Derives one vector from the code on the fixed seeds (:func:`setup`, :func:`material`): the
JSON the page shows in its block, which a verifier written from the page alone must reproduce."""


@dataclass(frozen=True, slots=True)
class Fairness:
    """What a game draws at random, for docs/fairness.md: no labels, nothing is random."""

    labels: tuple[Label, ...] = ()
    vectors: Mapping[str, Vector] = field(default_factory=dict)
    """The game's vectors by name; on the page, the block ``vector name=<key>-<name>``."""

    def __post_init__(self) -> None:
        names = [label.name for label in self.labels]
        if len(names) != len(set(names)):
            raise ValueError("a label is named once")
        if self.vectors and not self.labels:
            raise ValueError("a game that draws nothing has no vectors")

    def allows(self, label: str) -> bool:
        """Whether a label drawn at play is one of the game's."""
        return any(mine.matches(label) for mine in self.labels)


def row(key: str, title: str, fairness: Fairness) -> str:
    """The game's row of the page's games table."""
    labels = "; ".join(f"`{label.name}`" for label in fairness.labels) or "none"
    decides = "; ".join(label.decides for label in fairness.labels) or "nothing is random"
    return f"| {title} | `{key}` | {labels} | {decides} |"


def table(games: Sequence[tuple[str, str, Fairness]]) -> str:
    """The page's games table: a row for each (key, title, fairness), in that order."""
    return "\n".join(["| game | key | labels | what they decide |", "|---|---|---|---|",
                      *(row(key, title, f) for key, title, f in games)])
