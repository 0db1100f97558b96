"""The auditor's check of a table's log: every hand's commitment and deal, re-derived.

For each hand: the server seed revealed in ``HandEnded`` must hash to the commitment published
in ``HandStarted``, and ``start()`` of the rules core on the seed material (the revealed seed
and the players' client seeds, ``chieu-fair-v1``), the table's options and the previous result
must give exactly the game events that were logged with ``HandStarted``. The table state the
set-up needs is folded from the same log, so the check needs only the log and the code.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from chieu.table import codec
from chieu.table.aggregate import Table
from chieu.table.rules import fair
from chieu.table.v1 import log_pb2


@dataclass(frozen=True, slots=True)
class Verdict:
    """One hand's verdict."""

    hand_no: int
    revealed: bool
    commitment_ok: bool
    deal_ok: bool
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.revealed and self.commitment_ok and self.deal_ok


def verify(table_id: str, records: Iterable[tuple[int, log_pb2.Record]]) -> list[Verdict]:
    """Verdicts for every hand of the log ``records`` (stream sequence, record)."""
    table = Table(table_id)
    started: dict[int, tuple[log_pb2.HandStarted, list[bytes], int, Table]] = {}
    ended: dict[int, bytes] = {}
    for seq, record in records:
        for i, ev in enumerate(record.events):
            kind = ev.WhichOneof("kind")
            if kind == "hand_started":
                h = ev.hand_started
                dealt = [e.game_event.SerializeToString() for e in record.events[i + 1:]
                         if e.WhichOneof("kind") == "game_event"]
                snapshot = Table(table_id)
                snapshot.__dict__.update({k: v for k, v in table.__dict__.items()})
                started[int(h.hand_no)] = (h, dealt, int(record.server_time_ms), snapshot)
            elif kind == "hand_ended":
                ended[int(ev.hand_ended.hand_no)] = ev.hand_ended.server_seed
        table.apply(record, seq)
    out: list[Verdict] = []
    for hand_no, (h, dealt, at_ms, before) in sorted(started.items()):
        seed = ended.get(hand_no)
        if seed is None:
            out.append(Verdict(hand_no, False, False, False, "the hand is not over: its seed is not revealed"))
            continue
        commitment_ok = fair.commitment(seed) == h.seed_commitment and h.algorithm == fair.ALGORITHM
        players = list(h.players)
        material = fair.seed_material(seed, list(h.client_seeds))
        setup = before.setup(players, material, at_ms, hand_no, int(h.owner_seat))
        derived = [codec.pack(e, before.game_key).SerializeToString() for e in before.game.start(setup)]
        deal_ok = derived == dealt
        detail = "" if deal_ok else f"derived {len(derived)} start events, logged {len(dealt)}; they differ"
        out.append(Verdict(hand_no, True, commitment_ok, deal_ok, detail))
    return out
