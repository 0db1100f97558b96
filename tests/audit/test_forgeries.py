"""Each forgery of a hand's seeds, seals and order a test can make is named by its own finding
(``chieu.audit.seeds``), never by a ``replay_failed`` carrying a Python exception's name: on
logs the table's own deciders write (``bench_audit.table_log``), edited as an operator who
re-signs an archive can edit them."""

from __future__ import annotations

import dataclasses
import random

from chieu.audit.archive import Message
from chieu.audit.report import CODES, Report
from chieu.table.v1 import log_pb2
from tests.audit.test_proof import audited, edit, kind_of
from tests.benchmarks.bench_audit import table_log


def _log() -> list[Message]:
    return table_log("phom", 4, 2, {}, random.Random(3), 0)


def findings(report: Report) -> list[tuple[str, str]]:
    assert all("Error" not in f.detail and "Exception" not in f.detail for f in report.findings), report.findings
    assert "replay_failed" not in CODES
    return [(f.code, f.subject) for f in report.findings]


def test_the_honest_log_has_no_finding() -> None:
    assert findings(audited(_log())) == []


def test_a_changed_client_seed_where_the_player_gave_it_is_a_client_seed_mismatch() -> None:
    def change(r: log_pb2.Record) -> bool:
        for p in kind_of(r, "player_seated"):
            if p.client_seed:
                p.client_seed = b"another"
                return True
        return False

    messages, table = edit(_log(), change)
    report = audited(messages)
    assert findings(report) == [("client_seed_mismatch", f"{table} hand 1")]
    assert "mixes in" in report.findings[0].detail and "the player gave 616e6f74686572" in report.findings[0].detail


def test_a_changed_client_seed_in_hand_started_is_a_client_seed_mismatch_and_not_a_commitment_mismatch() -> None:
    def change(r: log_pb2.Record) -> bool:
        for h in kind_of(r, "hand_started"):
            if h.hand_no == 1:
                h.client_seeds[1] = b"another"
                return True
        return False

    messages, table = edit(_log(), change)
    got = findings(audited(messages))
    assert ("client_seed_mismatch", f"{table} hand 1") in got and ("commitment_mismatch", f"{table} hand 1") not in got
    assert set(got) <= {("client_seed_mismatch", f"{table} hand 1"), ("deal_mismatch", f"{table} hand 1")}, got


def test_a_client_seed_moved_before_its_commitment_is_commitment_late() -> None:
    """The seat that gave a client seed moved into the record of TableCreated, before the
    commitment of hand 1: the fold cannot take a seat before the table (said in words), and the
    hand's finding is ``commitment_late``."""
    messages = _log()
    records = [log_pb2.Record.FromString(m.data) for m in messages]
    i = next(i for i, r in enumerate(records) if any(p.client_seed for p in kind_of(r, "player_seated")))
    seated = records[i].events[0]
    first = records[0]
    events = [seated, *first.events]
    del first.events[:]
    first.events.extend(events)
    del records[i].events[0]
    for j in (0, i):
        messages[j] = dataclasses.replace(messages[j], data=records[j].SerializeToString())
    report = audited(messages)
    table = first.table_id
    assert ("commitment_late", f"{table} hand 1") in findings(report)
    late = next(f for f in report.findings if f.code == "commitment_late")
    assert "after client seeds it mixes in were given" in late.detail, late.detail
    assert {code for code, _ in findings(report)} == {"commitment_late", "log_unfoldable"}
    unfoldable = next(f for f in report.findings if f.code == "log_unfoldable")
    assert "record version 1" in unfoldable.detail and "cannot be applied" in unfoldable.detail


def test_a_flipped_sealed_box_of_a_finished_hand_is_seal_does_not_open() -> None:
    def flip(r: log_pb2.Record) -> bool:
        for ev in r.events:
            if ev.WhichOneof("kind") == "sealed" and ev.sealed.hand_no == 1 and ev.sealed.data:
                data = bytearray(ev.sealed.data)
                data[20] ^= 1
                ev.sealed.data = bytes(data)
                return True
        return False

    messages, table = edit(_log(), flip)
    report = audited(messages)
    assert findings(report) == [("seal_does_not_open", f"{table} hand 1")]
    assert "does not open with the server seed HandEnded revealed" in report.findings[0].detail


def test_a_second_commitment_for_a_hand_is_commitment_twice() -> None:
    """A hand has exactly one commitment: hand 2's HandStarted publishing another for hand 2."""
    def twice(r: log_pb2.Record) -> bool:
        for h in kind_of(r, "hand_started"):
            if h.hand_no == 2:
                h.next_seed.hand_no = 2
                return True
        return False

    messages, table = edit(_log(), twice)
    assert findings(audited(messages)) == [("commitment_twice", f"{table} hand 2")]


def test_chieu_verify_names_the_same_forgeries_in_words() -> None:
    """``chieu verify``'s report (``cli.verify_lines``) of the honest log, of a seat moved before
    the commitment (the fold fails: said in words) and of a flipped sealed box."""
    from chieu.cli import verify_lines

    def records(messages: list[Message]) -> list[tuple[int, log_pb2.Record]]:
        return [(m.seq, log_pb2.Record.FromString(m.data)) for m in messages]

    honest = _log()
    table = log_pb2.Record.FromString(honest[0].data).table_id
    lines, ok = verify_lines(table, records(honest))
    assert ok and any(line.startswith("hand 1: OK") for line in lines), lines

    def flip(r: log_pb2.Record) -> bool:
        for ev in r.events:
            if ev.WhichOneof("kind") == "sealed" and ev.sealed.hand_no == 2 and ev.sealed.data:
                data = bytearray(ev.sealed.data)
                data[-1] ^= 1
                ev.sealed.data = bytes(data)
                return True
        return False

    lines, ok = verify_lines(table, records(edit(honest, flip)[0]))
    assert not ok and any(line.startswith("hand 2: BAD seal_does_not_open") for line in lines), lines
    assert not any("Error" in line for line in lines), lines
    moved = _log()
    rs = [log_pb2.Record.FromString(m.data) for m in moved]
    i = next(i for i, r in enumerate(rs) if any(p.client_seed for p in kind_of(r, "player_seated")))
    events = [rs[i].events[0], *rs[0].events]
    del rs[0].events[:]
    rs[0].events.extend(events)
    del rs[i].events[0]
    lines, ok = verify_lines(rs[0].table_id, [(n + 1, r) for n, r in enumerate(rs)])
    assert not ok and "hand 1: BAD commitment_late" in lines[0], lines
    assert "BAD log_unfoldable: record version 1" in lines[-1] and not any("Error" in line for line in lines), lines
