"""Every table log of a period, replayed and verified: each hand's commitment, deal and every
move decided again by the rules core (``chieu.tablelog.verify``, the check behind ``chieu verify``),
each hand's outcome and settlements derived again from the rules (``chieu.audit.proof``), and
each table's records following on (version 1, 2, …, the subject's table id).

Tables are independent, so a long period is verified in worker processes (``forkserver``: one
fresh interpreter imports the rules, the workers fork from it), each given whole tables as the
record bytes stored; the findings are the same, in the same order, as one process gives.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field

from google.protobuf.message import DecodeError

from chieu.audit import seeds
from chieu.audit.archive import Message
from chieu.audit.proof import AREA as PROOF
from chieu.audit.proof import Proof
from chieu.audit.report import Report
from chieu.table.v1 import log_pb2
from chieu.tablelog import sealing
from chieu.tablelog.fold import Table
from chieu.tablelog.verify import Verdict, verify

AREA = "logs"


@dataclass
class Logs:
    """The table logs of a period: per table, its (stream sequence, record) in stream order."""

    tables: dict[str, list[tuple[int, log_pb2.Record]]] = field(default_factory=dict)
    raw: dict[str, list[tuple[int, bytes]]] = field(default_factory=dict)
    """The same records as stored (what a worker process is given)."""
    complete: bool = True
    """The whole stream (not a period of it): everything in the books must have its source here."""
    last_seq: int = 0

    @property
    def records(self) -> int:
        return sum(len(r) for r in self.tables.values())

    @property
    def events(self) -> int:
        return sum(len(rec.events) for recs in self.tables.values() for _, rec in recs)

    def players(self) -> set[str]:
        """Every player the logs name (seated, in a hand, quitting, disconnected, settled)."""
        out: set[str] = set()
        for recs in self.tables.values():
            for _, rec in recs:
                for e in rec.events:
                    kind = e.WhichOneof("kind")
                    if kind in ("player_seated", "player_left", "forced_quit", "disconnected"):
                        out.add(getattr(e, kind).player_id)
                    elif kind in ("hand_started", "hand_ended", "settlement"):
                        out.update(getattr(e, kind).players)
        return out

    def in_order(self) -> list[tuple[int, log_pb2.Record]]:
        """Every record of every table, in stream order."""
        return sorted((x for recs in self.tables.values() for x in recs), key=lambda x: x[0])


def load(messages: Iterable[Message], report: Report | None = None, *, complete: bool = True) -> Logs:
    """Parse the stream messages into per-table logs (an unreadable message is a finding), every
    finished hand opened with the seed its ``HandEnded`` revealed (a hand in play stays sealed)."""
    logs = Logs(complete=complete)
    for m in messages:
        record = log_pb2.Record()
        try:
            record.ParseFromString(m.data)
        except DecodeError as e:
            if report is not None:
                report.add(AREA, "log_unreadable", f"seq {m.seq}", str(e))
            continue
        logs.tables.setdefault(m.table_id, []).append((m.seq, record))
        logs.raw.setdefault(m.table_id, []).append((m.seq, m.data))
        logs.last_seq = max(logs.last_seq, m.seq)
    for records in logs.tables.values():
        sealing.reveal(records)
    return logs


PARALLEL_FROM = 50_000
"""Records from which the automatic choice verifies in worker processes: below, starting them
(a fresh interpreter importing the rules, about half a CPU-second) costs more than it saves."""
CHUNK = 4_000
"""Records per piece of work given to a worker (whole tables; the progress moves per piece)."""

Outcome = tuple[list[seeds.Finding], tuple[list[Verdict], Proof] | str]
"""A table's seed findings (:mod:`chieu.audit.seeds`), and its verdicts and the proof of its
money, or where its log cannot be folded (in words)."""


def processes(records: int, workers: int = 0) -> int:
    """How many processes verify ``records``: ``workers`` if given (1: this one), else one per
    core this process may use once the period is long enough."""
    if workers > 0:
        return workers
    return max(1, len(os.sched_getaffinity(0))) if records >= PARALLEL_FROM else 1


def verify_all(logs: Logs, report: Report, progress: Callable[[int], None] | None = None, *,
               workers: int = 1) -> None:
    """Verify every table's log into ``report``; ``progress(records)`` as tables are done.
    ``workers``: processes to use (1: this one; 0: :func:`processes` chooses). As with any
    ``multiprocessing`` start but fork, a program that uses workers has its main module guarded
    (``if __name__ == "__main__"``): each worker imports it."""
    n = processes(logs.records, workers)
    outcomes = _parallel(logs, n, progress) if n > 1 else _serial(logs, progress)
    for table_id, records in sorted(logs.tables.items()):
        _follows_on(table_id, records, report)
        found, outcome = outcomes[table_id]
        for code, subject, detail in found:
            report.add(AREA, code, subject, detail)
        named = {subject for _, subject, _ in found}  # hands whose seeds and commitment order are said there
        unopened = {subject for code, subject, _ in found if code == "seal_does_not_open"}
        undealt = {subject for code, subject, detail in found
                   if code == "seal_does_not_open" and detail.startswith(seeds.DEAL_SEALED)}
        if isinstance(outcome, str):  # a log the fold cannot take is itself a finding
            if not unopened:  # a hand that does not open cannot be folded past it: already said
                report.add(AREA, "log_unfoldable", table_id, outcome)
            continue
        verdicts, proof = outcome
        report.count("tables")
        report.count("records", len(records))
        report.count("events", sum(len(r.events) for _, r in records))
        for v in verdicts:
            report.count("hands")
            report.count("moves_redecided", v.moves_checked)
            subject = f"{table_id} hand {v.hand_no}"
            if not v.revealed:
                report.count("hands_in_play")
                if not v.moves_ok:
                    report.add(AREA, "move_mismatch", subject, v.detail)
                continue
            if not v.commitment_ok:
                report.add(AREA, "commitment_mismatch", subject, "the revealed server seed does not hash to the "
                           "commitment of HandStarted")
            if not v.committed_first and subject not in named:
                report.add(AREA, "commitment_late", subject, "the hand's commitment was not published before "
                           "the client seeds it mixes in (TableCreated or the previous HandStarted)")
            if not v.deal_ok and subject not in undealt:
                report.add(AREA, "deal_mismatch", subject, v.detail)
            if not v.moves_ok and subject not in unopened:
                report.add(AREA, "move_mismatch", subject, v.detail)
        for name, n in proof.counts.items():
            report.count(name, n)
        for code, subject, detail in proof.findings:
            report.add(PROOF, code, subject, detail)


def _verify(table_id: str, records: list[tuple[int, log_pb2.Record]], *, opened: bool = False) -> Outcome:
    if not opened:
        records = sealing.reveal(records)
    found = seeds.check(table_id, records)
    proof = Proof(table_id)
    try:
        return found, (verify(table_id, records, opened=True, observe=proof), proof)
    except Exception:  # a forged log trips the fold: where, in words (never a Python exception's name)
        return found, seeds.unfoldable(table_id, records)


def _serial(logs: Logs, progress: Callable[[int], None] | None) -> dict[str, Outcome]:
    out: dict[str, Outcome] = {}
    for table_id, records in sorted(logs.tables.items()):
        out[table_id] = _verify(table_id, records, opened=True)  # load opened the finished hands
        if progress is not None:
            progress(len(records))
    return out


def _chunks(logs: Logs) -> Iterator[list[tuple[str, list[tuple[int, bytes]]]]]:
    chunk: list[tuple[str, list[tuple[int, bytes]]]] = []
    size = 0
    for table_id, raw in sorted(logs.raw.items(), key=lambda t: -len(t[1])):  # the longest first
        chunk.append((table_id, raw))
        size += len(raw)
        if size >= CHUNK:
            yield chunk
            chunk, size = [], 0
    if chunk:
        yield chunk


def verify_chunk(chunk: list[tuple[str, list[tuple[int, bytes]]]]) -> list[tuple[str, Outcome]]:
    """A worker's piece: whole tables as stored, parsed and verified."""
    return [(table_id, _verify(table_id, [(seq, log_pb2.Record.FromString(data)) for seq, data in raw]))
            for table_id, raw in chunk]


def _parallel(logs: Logs, n: int, progress: Callable[[int], None] | None) -> dict[str, Outcome]:
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["chieu.audit.logs"])
    out: dict[str, Outcome] = {}
    with ProcessPoolExecutor(max_workers=n, mp_context=context) as pool:
        pending = {pool.submit(verify_chunk, chunk): sum(len(raw) for _, raw in chunk) for chunk in _chunks(logs)}
        for done in as_completed(pending):
            out.update(done.result())
            if progress is not None:
                progress(pending[done])
    return out


def _follows_on(table_id: str, records: list[tuple[int, log_pb2.Record]], report: Report) -> None:
    for i, (seq, rec) in enumerate(records):
        if rec.table_id != table_id or rec.version != i + 1:
            report.add(AREA, "log_broken", table_id, f"stream sequence {seq}: record of table {rec.table_id!r} "
                       f"version {rec.version}, expected version {i + 1}")
            return


def fold_only(logs: Logs) -> int:
    """Replay without verifying (the baseline of the audit's speed): every table folded."""
    n = 0
    for table_id, records in logs.tables.items():
        table = Table(table_id)
        for seq, rec in records:
            table.apply(rec, seq)
            n += len(rec.events)
    return n
