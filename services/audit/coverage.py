"""What an archive covers, proven from the archive alone: a complete archive runs without a gap
from stream sequence 1 to ``Header.stream_last_seq``; a period's archive does too, the messages
outside its period being omitted entries (sequence, subject, time and the record's SHA-256), so
that exactly the period's records are there (``archive.proto``, "Coverage").

The table stream deletes and purges nothing (``deny_delete``, ``deny_purge``, no limits), so its
sequences have no hole: a missing sequence is a record taken out. The rule binds the archive to
its own signed header; it cannot tell an operator who re-signs a header that claims a shorter
stream (``docs/auditing.md``: what an auditor compares ``stream_last_seq`` with).
"""

from __future__ import annotations

from collections.abc import Sequence

from chieu.audit.archive import ArchiveError, Message
from chieu.audit.v1 import archive_pb2 as pb


class Truncated(ArchiveError):
    """The entries stop before the stream's last sequence the header states."""

    reason = "truncated"


class Gap(ArchiveError):
    """A stream sequence is missing, or a record of the period is left out."""

    reason = "gap"


class OutOfOrder(ArchiveError):
    """An entry's sequence is not above the one before it."""

    reason = "out_of_order"


class OutOfRange(ArchiveError):
    """A record outside the archive's period, past its last sequence, or an omitted entry in a
    complete archive."""

    reason = "out_of_range"


def _at(i: int, m: Message) -> str:
    return f"entry {i + 1} (stream sequence {m.seq}, table {m.table_id})"


def check(header: pb.Header, messages: Sequence[Message]) -> bool:
    """Refuse ``messages`` (:class:`Truncated`, :class:`Gap`, :class:`OutOfOrder`,
    :class:`OutOfRange`) unless they cover the stream as ``header`` states; True when the
    coverage is proven, False for a period's archive made before coverage was written (its range
    cannot be proven)."""
    if not header.covered and not header.complete:
        return False
    last = int(header.stream_last_seq)
    seqs = {m.seq for m in messages}
    expected = 1
    for i, m in enumerate(messages):
        if m.seq < expected:
            raise OutOfOrder(f"{_at(i, m)} follows stream sequence {expected - 1}: the records are not in "
                             "stream order (moved)")
        if m.seq > last:
            raise OutOfRange(f"{_at(i, m)} is past the stream's last sequence {last} the header states")
        if m.seq > expected and expected in seqs:
            raise OutOfOrder(f"{_at(i, m)} comes before stream sequence {expected}: the records are not in "
                             "stream order (moved)")
        if m.seq > expected:
            missing = f"{expected}" if m.seq == expected + 1 else f"{expected}..{m.seq - 1}"
            raise Gap(f"stream sequence {missing} missing before {_at(i, m)}: a record was taken out")
        expected = m.seq + 1
    if expected <= last:
        raise Truncated(f"the entries stop at stream sequence {expected - 1}; the header says the stream ran to "
                        f"{last}: {last - expected + 1} records at the end are missing")
    if header.complete:
        omitted = next((i for i, m in enumerate(messages) if m.omitted), None)
        if omitted is not None:
            raise OutOfRange(f"{_at(omitted, messages[omitted])} is omitted in a complete archive")
        return True
    since, until = int(header.since_ms), int(header.until_ms)
    active = {m.subject for m in messages if m.time_ms >= since and (not until or m.time_ms < until)}
    for i, m in enumerate(messages):
        inside = m.subject in active and (not until or m.time_ms < until)
        if inside and m.omitted:
            raise Gap(f"{_at(i, m)} is omitted, yet its table has a record in the period: a record of the "
                      "period was taken out")
        if not inside and not m.omitted:
            raise OutOfRange(f"{_at(i, m)} is outside the period {describe(header)}")
    return True


def describe(header: pb.Header) -> str:
    """The archive's range in words: the whole stream, or its period, up to its last sequence."""
    if header.complete:
        return f"the whole stream {header.stream}, sequences 1..{header.stream_last_seq}"
    since = f"{header.since_ms} ms" if header.since_ms else "its start"
    until = f"{header.until_ms} ms" if header.until_ms else "the export"
    return (f"the tables of {header.stream} with a record from {since} to before {until}, the stream's "
            f"sequences 1..{header.stream_last_seq} covered")
