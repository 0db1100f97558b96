"""The log's money proven from the rules (issue 32): every hand's outcome and every settlement
leg derived again from the folded state and the table's options, from the log alone.

The verifier (``chieu.tablelog.verify.verify``) proves each record's game events; the ``Settlement``
and ``HandEnded`` beside them are the table's, not the game's, and nothing checked them: an
archive whose leg was raised, or whose outcome reason was changed, passed once signed again.
:class:`Proof` watches the verifier's fold (its ``observe``) and, after each record of a hand,
asks the same pure functions the table decided it with (``chieu.tablelog.money.rule_money`` and
``money_events``) what the record pays and whether it ends the hand:

* a move, a timeout or the deal: the legs the rules pay (the transfers its game events carry,
  or at the hand's end the rest of the outcome's), as one ``Settlement`` at the table's stake,
  currency and game, its ``first_leg`` the legs the hand settled before; and the ``HandEnded``
  with the rules' outcome (winner, ranking, scores, every transfer, reason, gà pot, first
  seat, carry), the hand's players and the table's ladder level;
* a record without a move (a seat, a quit, an operator's abort): no settlement, and a hand's
  end only as an abort (``money.aborted``: no winner, nothing paid, the pot kept);

and compares them with what the record logs: ``settlement_mismatch`` per leg (its table, hand,
leg, expected vs logged) or per settlement field, ``outcome_mismatch`` per hand. The ledger is
then held to the proven log (``chieu.audit.money``), so books edited with the log are found too.

What the auditor cannot fold it cannot prove: a hand still in play (its game events sealed) is
counted, not proven; its settlements are proven once its ``HandEnded`` opens it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from chieu.games.core import Transfer
from chieu.table.v1 import log_pb2
from chieu.tablelog import codec, money
from chieu.tablelog.fold import Table

AREA = "proof"
_OUTCOME_FIELDS = ("winner", "ranking", "scores", "transfers", "reason", "pot_balance", "first", "carry")


@dataclass
class Proof:
    """The money of one table's log, proven record by record (the verifier's ``observe``).
    ``findings`` are (code, subject, detail); plain data, so a worker process can send them back."""

    table_id: str
    findings: list[tuple[str, str, str]] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    _blind: int = -1
    """A hand whose game events the fold could not take (sealed: in play): not proven."""

    def __call__(self, table: Table, record: log_pb2.Record, settled: int, derived: list[Any] | None) -> None:
        settlements: list[log_pb2.Settlement] = []
        ended: list[log_pb2.HandEnded] = []
        game_events: list[Any] = []
        started = sealed = False
        for ev in record.events:  # one pass: this runs for every record of the period
            kind = ev.WhichOneof("kind")
            if kind == "game_event":
                game_events.append(ev.game_event)
            elif kind == "settlement":
                settlements.append(ev.settlement)
            elif kind == "hand_ended":
                ended.append(ev.hand_ended)
            elif kind == "hand_started":
                started = True
            elif kind == "sealed":
                sealed = True
        if settled < 0 and not started:  # no hand in play, and none starts
            for s in settlements:
                self._add("settlement_mismatch", f"{self.table_id} hand {s.hand_no} leg {s.first_leg}",
                          f"version {record.version}: a settlement ({_legs(s)}) while no hand is in play")
            for e in ended:
                self._add("outcome_mismatch", f"{self.table_id} hand {e.hand_no}",
                          f"version {record.version}: a hand's end ({e.outcome.reason!r}) while no hand is in play")
            return
        hand = table.hand_no
        if started:
            if settled >= 0:  # a hand is in play: its end (and the seed that opens it) is missing
                self._add("outcome_mismatch", f"{self.table_id} hand {hand - 1}",
                          f"version {record.version}: hand {hand} starts before this hand has ended (its money "
                          "cannot be proven without its end)")
            settled = 0
        cause = record.WhichOneof("cause")
        if sealed or cause == "sealed_command":
            self._blind = hand
        if self._blind == hand:
            self._count("money_records_in_play", len(settlements) + len(ended))
            return
        if not started and not game_events and cause is None:
            self._no_move(table, record, settlements, ended)
            return
        events = derived if derived is not None else [codec.unpack(e, table.game_key) for e in game_events]
        paid, outcome = money.rule_money(table.game, table.game_state, events, settled)
        if not paid and outcome is None and not settlements and not ended:
            return  # a move that pays nothing and does not end the hand, logged so
        paid = self.within_reservations(table, paid)
        seed = ended[0].server_seed if ended else b""
        # within the hand's reservations (a coin hand's: HandStarted.reserved), as the table capped it
        expected = money.money_events(table, paid, outcome, seed, table.hand_players, hand, settled,
                                      table.reserved, money.lost_before(table, settlements) if table.reserved else (),
                                      money.pot_before(table, settlements))
        self._settlements(record, hand, [e.settlement for e in expected if e.HasField("settlement")], settlements)
        self._ended(record, hand, [e.hand_ended for e in expected if e.HasField("hand_ended")], ended)

    def of_hand(self, hand: int) -> list[tuple[str, str, str]]:
        """The findings about hand ``hand``."""
        name = f"{self.table_id} hand {hand}"
        return [f for f in self.findings if f[1] == name or f[1].startswith(name + " ")]

    def within_reservations(self, table: Table, legs: list[Transfer]) -> list[Transfer]:
        """The rules' legs as the record's settlement carries them. Two-phase coins (issue 32, "a
        loser pays at most what is reserved for the hand, and the log says so") keep the legs the
        rules' and state the cap beside them (``Settlement.capped``): :func:`money.money_events`
        derives it from the reservations the log carries for the hand (``HandStarted.reserved``)
        exactly as the table does, so the legs pass through here unchanged."""
        return legs

    # -- comparisons -------------------------------------------------------------------------

    def _settlements(self, record: log_pb2.Record, hand: int, expected: list[log_pb2.Settlement],
                     logged: list[log_pb2.Settlement]) -> None:
        subject = f"{self.table_id} hand {hand}"
        at = f"version {record.version}"
        if len(logged) > 1:
            self._add("settlement_mismatch", subject, f"{at}: {len(logged)} settlements in one record (the table "
                                                      "writes at most one)")
        want = expected[0] if expected else None
        got = logged[0] if logged else None
        if want is None and got is None:
            return
        if want is None:
            assert got is not None
            self._add("settlement_mismatch", f"{subject} leg {got.first_leg}",
                      f"{at}: the rules pay nothing here; logged {_legs(got)}")
            return
        self._count("settlement_legs_proven", len(want.transfers))
        self._count("settlements_proven")
        if got is None:
            self._add("settlement_mismatch", f"{subject} leg {want.first_leg}",
                      f"{at}: the rules pay {_legs(want)}; the log has no settlement")
            return
        if got == want:
            return
        heads = [f"{name}: expected {_show(getattr(want, name))}, logged {_show(getattr(got, name))}"
                 for name in ("hand_no", "first_leg", "players", "stake", "currency", "game", "capped", "capped_pot")
                 if getattr(want, name) != getattr(got, name)]
        if heads:
            self._add("settlement_mismatch", subject, f"{at}: " + "; ".join(heads))
        for i in range(max(len(want.transfers), len(got.transfers))):
            w = want.transfers[i] if i < len(want.transfers) else None
            g = got.transfers[i] if i < len(got.transfers) else None
            if w != g:
                self._add("settlement_mismatch", f"{subject} leg {want.first_leg + i}",
                          f"{at}: expected {_leg(w, want.stake)}, logged {_leg(g, got.stake)}")

    def _ended(self, record: log_pb2.Record, hand: int, expected: list[log_pb2.HandEnded],
               logged: list[log_pb2.HandEnded]) -> None:
        subject = f"{self.table_id} hand {hand}"
        at = f"version {record.version}"
        if len(logged) > 1:
            self._add("outcome_mismatch", subject, f"{at}: {len(logged)} hand ends in one record")
        want = expected[0] if expected else None
        got = logged[0] if logged else None
        if want is None and got is None:
            return
        if want is None:
            assert got is not None
            self._add("outcome_mismatch", subject, f"{at}: the rules do not end the hand here; logged an end "
                                                   f"({got.outcome.reason!r})")
            return
        self._count("outcomes_proven")
        if got is None:
            self._add("outcome_mismatch", subject, f"{at}: the rules end the hand here ({want.outcome.reason!r}); "
                                                   "the log does not")
            return
        if got == want:
            return
        diffs = [f"{name}: expected {_show(getattr(want, name))}, logged {_show(getattr(got, name))}"
                 for name in ("hand_no", "players", "ladder_level") if getattr(want, name) != getattr(got, name)]
        diffs += [f"outcome {name}: expected {_field(want.outcome, name)}, logged {_field(got.outcome, name)}"
                  for name in _OUTCOME_FIELDS if _field(want.outcome, name) != _field(got.outcome, name)]
        self._add("outcome_mismatch", subject, f"{at}: " + "; ".join(diffs))

    def _no_move(self, table: Table, record: log_pb2.Record, settlements: list[log_pb2.Settlement],
                 ended: list[log_pb2.HandEnded]) -> None:
        """A record of a hand in play without a move: it pays nothing, and ends the hand only as
        an operator's abort."""
        hand = table.hand_no
        for s in settlements:
            self._add("settlement_mismatch", f"{self.table_id} hand {hand} leg {s.first_leg}",
                      f"version {record.version}: a settlement without a move (the rules pay only for a move, "
                      f"a timeout or the deal); logged {_legs(s)}")
        for e in ended:
            self._count("aborts_proven")
            reason = e.outcome.reason
            why = reason[len(money.ABORTED):]
            if not reason.startswith(money.ABORTED) or not why.strip() or why != why.strip() or len(why) > 200:
                self._add("outcome_mismatch", f"{self.table_id} hand {hand}",
                          f"version {record.version}: a hand ended without a move, so by an operator's abort "
                          f"(reason {money.ABORTED!r} and theirs); logged reason {reason!r}")
                continue
            want = money.money_events(table, [], money.aborted(len(table.hand_players), why, table.pot),
                                       e.server_seed, table.hand_players, hand, 0)
            self._ended(record, hand, [want[0].hand_ended], [e])

    def _add(self, code: str, subject: str, detail: str) -> None:
        self.findings.append((code, subject, detail))

    def _count(self, name: str, n: int = 1) -> None:
        if n:
            self.counts[name] = self.counts.get(name, 0) + n


def _seat(msg: Any, name: str) -> str:
    return f"seat {getattr(msg, name)}" if msg.HasField(name) else "the gà pot"


def _leg(t: Any, stake: int | None) -> str:
    """One leg as a reader says it: ``seat 1 → seat 0: 4 × 10 (rank)`` (× the stake if given)."""
    if t is None:
        return "no leg"
    times = "" if stake is None else f" × {stake}"
    return f"{_seat(t, 'from_seat')} → {_seat(t, 'to_seat')}: {t.amount}{times} ({t.reason})"


def _legs(s: log_pb2.Settlement) -> str:
    return ", ".join(f"leg {s.first_leg + i}: {_leg(t, s.stake)}" for i, t in enumerate(s.transfers)) or "no leg"


def _field(outcome: Any, name: str) -> str:
    if name in ("winner", "first") and not outcome.HasField(name):
        return "none"
    value = getattr(outcome, name)
    if name == "transfers":
        return "[" + ", ".join(_leg(t, None) for t in value) + "]"
    return _show(value)


def _show(value: Any) -> str:
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, int):
        return str(value)
    return "[" + ", ".join(str(v) for v in value) + "]"
