"""What the table log gives the ladder, read from the log alone (pure): each ladder hand's results
and penalties (:func:`counted`), and the ladder's standings folded over them in stream order
(:class:`Climb`), by the rules of :mod:`chieu.ladder.rules`.

Two readers that must not trust the ladder's own tables fold the log with it: the auditor
(``chieu.audit.levels``, against the ladder's history) and the ledger (``chieu.ledger.climb``: a
best-level reward is paid only at the record where the fold reaches that level). A hand's end at a
ladder table gives each seat's result by :func:`rules.game_results` (an aborted hand counts for
nobody); a quit or a disconnect at a ladder table gives its penalty at once, which replaces that
player's result of the hand (one result or penalty per table, hand and player).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from chieu.ladder import rules
from chieu.ladder.rules import Params, Result, Standing
from chieu.table.v1 import log_pb2


@dataclass(frozen=True, slots=True)
class Counted:
    """A result or a penalty the log gives one ladder table's hand: its players' results."""

    seq: int
    game: str
    table_id: str
    hand_no: int
    table_level: int
    results: tuple[tuple[str, Result], ...]
    cause: str


def counted(seq: int, record: log_pb2.Record) -> list[Counted]:
    """What one record gives the ladder, in the order of its events."""
    out: list[Counted] = []
    for e in record.events:
        kind = e.WhichOneof("kind")
        if kind in ("forced_quit", "disconnected"):
            ev = e.forced_quit if kind == "forced_quit" else e.disconnected
            if ev.ladder_level > 0:
                result = Result.QUIT if kind == "forced_quit" else Result.DISCONNECT
                out.append(Counted(seq, record.game, record.table_id, int(ev.hand_no), int(ev.ladder_level),
                                   ((ev.player_id, result),), "penalty"))
        elif kind == "hand_ended" and e.hand_ended.ladder_level > 0:
            h = e.hand_ended
            o = h.outcome
            if o.reason.startswith("aborted") or not h.players:
                continue
            results = rules.game_results(len(h.players), o.winner if o.HasField("winner") else None,
                                         list(o.scores), teams=record.game in rules.TEAM_GAMES)
            out.append(Counted(seq, record.game, record.table_id, int(h.hand_no), int(h.ladder_level),
                               tuple(zip(h.players, results, strict=True)), "result"))
    return out


@dataclass
class Climb:
    """The ladder's standings folded over the table log's records, fed in stream order
    (:meth:`fold`), and where each player's best level was reached."""

    params: Params = field(default_factory=Params)
    standings: dict[tuple[str, str], Standing] = field(default_factory=dict)
    """(game, player) → standing."""
    reached: dict[tuple[str, str, int], int] = field(default_factory=dict)
    """(game, player, best) → the stream sequence of the record whose result raised the player's
    best level to ``best`` (a new best: the record a best-level reward is paid for)."""
    counted: set[tuple[str, int, str]] = field(default_factory=set)
    """(table, hand, player) already counted: a penalty replaces the hand's result."""

    def fold(self, seq: int, record: log_pb2.Record) -> None:
        """Count one record (the next in stream order)."""
        for c in counted(seq, record):
            before = {p: self.standings.get((c.game, p), Standing()) for p, _ in c.results}
            for p, result in c.results:
                if (c.table_id, c.hand_no, p) in self.counted:
                    continue
                self.counted.add((c.table_id, c.hand_no, p))
                others = [before[q].level for q, _ in c.results if q != p]
                change = rules.record(before[p], result, c.table_level, self.params, others)
                self.standings[(c.game, p)] = change.standing
                if change.best_level_up:
                    self.reached[(c.game, p, change.standing.best)] = c.seq
