"""The commit–reveal round of client seeds (``chieu-fair-v2``, ``docs/fairness.md``): the client
commitment (:func:`client_commitment`, what the table checks a reveal against), and the round as a
pure state machine so that its order — no reveal is accepted, and none is shown, before every seat
has committed — can be tested on its own. The table service runs the round on its log
(``chieu.table.decide``: ``commit_seed``, ``reveal_seed``, ``reveals_due``).

Under ``chieu-fair-v1`` a client seed is sent in the clear before the deal, and whoever knows the
server seed (the operator, a holder of the seal keyset, a table process) can grind a seat's
client seed offline against the honest players' seeds and choose the deal. In the round:

1. every seat of the hand sends ``client_commitment(table, hand, player, seed)`` (a 32-byte
   random seed: a short one could be found again from its commitment);
2. once every seat has committed (or the commit deadline dropped it from the hand), each sends
   its seed, which must hash to its commitment;
3. the deal's material is ``fair.seed_material(server seed, the revealed seeds in seat order)``
   (the formula of ``chieu-fair-v1``: only the order of the messages is new), made only when
   every commitment is revealed. A seat that committed and withholds its reveal past the deadline
   is treated as a quit (:attr:`Round.withheld`), and the hand is dealt without it or not at all.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field

from chieu.games import fair

ALGORITHM = "chieu-fair-v2"
"""The id a hand dealt after a commit–reveal round carries (its material is v1's formula)."""
SEED_BYTES = 32
"""A revealed client seed's exact length: a guessable seed would let a shill open an honest
seat's commitment before revealing its own."""
_PREFIX = b"chieu-fair-v2 client\x00"


def client_commitment(table_id: str, hand_no: int, player_id: str, seed: bytes) -> str:
    """Hex SHA-256 of ``"chieu-fair-v2 client" || 0x00 || uint32-be(len table id) || table id ||
    uint64-be(hand) || uint32-be(len player id) || player id || seed`` (ids in UTF-8): bound to its
    table, hand and player, so a commitment copied from another seat opens for nobody else."""
    t, p = table_id.encode(), player_id.encode()
    return hashlib.sha256(b"".join((_PREFIX, len(t).to_bytes(4, "big"), t, hand_no.to_bytes(8, "big"),
                                    len(p).to_bytes(4, "big"), p, seed))).hexdigest()


class RoundRefused(ValueError):
    """A message the round does not take now; ``code`` is a stable reason."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass
class Round:
    """One hand's round: ``players`` in seat order."""

    table_id: str
    hand_no: int
    players: Sequence[str]
    commitments: dict[str, str] = field(default_factory=dict)
    seeds: dict[str, bytes] = field(default_factory=dict)
    withheld: set[str] = field(default_factory=set)
    """Seats that committed and did not reveal by the deadline: a forced quit each."""

    @property
    def revealing(self) -> bool:
        """Every seat has committed: reveals are taken from now on, and only now."""
        return all(p in self.commitments for p in self.players)

    def commit(self, player: str, commitment: str) -> None:
        if player not in self.players:
            raise RoundRefused("not_in_hand", f"{player} does not play hand {self.hand_no}")
        if player in self.commitments:
            raise RoundRefused("committed", f"{player} has committed already")
        if len(commitment) != 64 or any(c not in "0123456789abcdef" for c in commitment):
            raise RoundRefused("bad_commitment", "a commitment is 64 lowercase hex digits")
        self.commitments[player] = commitment

    def reveal(self, player: str, seed: bytes) -> None:
        if not self.revealing:
            raise RoundRefused("reveal_too_early", "no seed is revealed before every seat has committed")
        if player in self.seeds or player in self.withheld:
            raise RoundRefused("revealed", f"{player} has revealed already (or withheld)")
        if player not in self.commitments:
            raise RoundRefused("not_in_hand", f"{player} does not play hand {self.hand_no}")
        if len(seed) != SEED_BYTES:
            raise RoundRefused("bad_client_seed", f"a revealed client seed is exactly {SEED_BYTES} bytes")
        if client_commitment(self.table_id, self.hand_no, player, seed) != self.commitments[player]:
            raise RoundRefused("reveal_mismatch", f"{player}'s seed does not hash to their commitment")
        self.seeds[player] = seed

    def visible(self) -> dict[str, bytes]:
        """The revealed seeds anyone may see: none until every commitment is in."""
        return dict(self.seeds) if self.revealing else {}

    def drop_uncommitted(self) -> list[str]:
        """The commit deadline passed: seats that did not commit leave the hand (as a seat that is
        not ready does: no quit, they were never dealt in); the seats dropped."""
        dropped = [p for p in self.players if p not in self.commitments]
        self.players = [p for p in self.players if p in self.commitments]
        return dropped

    def expire(self) -> set[str]:
        """The reveal deadline passed: every seat that committed and did not reveal is withheld
        (a forced quit); the seats withheld now."""
        late = {p for p in self.commitments if p not in self.seeds and p not in self.withheld}
        self.withheld |= late
        return late

    def material(self, server_seed: bytes) -> bytes:
        """The deal's seed material, once every seat still in the hand has revealed."""
        missing = [p for p in self.players if p not in self.seeds and p not in self.withheld]
        if missing or not self.revealing:
            raise RoundRefused("reveal_too_early",
                               f"no deal before every seat reveals (waiting for {', '.join(missing)})")
        return fair.seed_material(server_seed, [self.seeds[p] for p in self.players if p in self.seeds])
