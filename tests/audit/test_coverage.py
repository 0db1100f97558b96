"""The coverage rule on archives built in memory (``chieu.audit.coverage``): each way entries can
fail to cover the stream as the signed header states has its own reason; the integration tests
(``test_signed_archive``) make the same forgeries on real play and sign them again."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from chieu.audit import coverage
from chieu.audit.archive import Message, period
from chieu.audit.v1 import archive_pb2 as pb


def _stream() -> list[Message]:
    """Ten messages of two tables: t0 at times 0, 20, 40, …; t1 at 10, 30, 50 and then quiet."""
    out = []
    for seq in range(1, 11):
        table = "t1" if seq in (2, 4, 6) else "t0"
        out.append(Message(seq, f"chieu.table.{table}", seq * 10, f"record {seq}".encode()))
    return out


def _header(**kw: Any) -> pb.Header:
    return pb.Header(stream="CHIEU_TABLES", stream_last_seq=10, covered=True, **kw)


def test_a_whole_stream_is_proven_and_each_fault_has_its_reason() -> None:
    msgs, header = _stream(), _header(complete=True)
    assert coverage.check(header, msgs)
    with pytest.raises(coverage.Truncated, match=r"stop at stream sequence 7.*3 records"):
        coverage.check(header, msgs[:7])
    with pytest.raises(coverage.Gap, match="stream sequence 5 missing"):
        coverage.check(header, msgs[:4] + msgs[5:])
    with pytest.raises(coverage.OutOfOrder):
        coverage.check(header, msgs[:4] + [msgs[5], msgs[4]] + msgs[6:])
    with pytest.raises(coverage.OutOfRange, match="past the stream's last sequence"):
        coverage.check(header, [*msgs, Message(11, "chieu.table.t0", 110, b"x")])
    omitted = Message(3, msgs[2].subject, msgs[2].time_ms, b"", hashlib.sha256(msgs[2].data).digest())
    with pytest.raises(coverage.OutOfRange, match="omitted in a complete archive"):
        coverage.check(header, msgs[:2] + [omitted] + msgs[3:])


def test_a_period_is_exactly_its_tables_up_to_until_and_proven() -> None:
    msgs = _stream()
    cut = period(msgs, since_ms=70, until_ms=95)  # t0 alone has a record in [70, 95): seq 7, 8, 9
    assert [m.seq for m in cut] == list(range(1, 11))
    assert [m.seq for m in cut if not m.omitted] == [1, 3, 5, 7, 8, 9]
    header = _header(since_ms=70, until_ms=95)
    assert coverage.check(header, cut)
    held = [i for i, m in enumerate(cut) if not m.omitted]
    withheld = list(cut)
    m = withheld[held[1]]
    withheld[held[1]] = Message(m.seq, m.subject, m.time_ms, b"", hashlib.sha256(m.data).digest())
    with pytest.raises(coverage.Gap, match="is omitted, yet its table has a record in the period"):
        coverage.check(header, withheld)
    extra = list(cut)
    extra[1] = msgs[1]  # t1's record, outside the period, given whole
    with pytest.raises(coverage.OutOfRange, match="outside the period"):
        coverage.check(header, extra)
    assert not coverage.check(pb.Header(stream="CHIEU_TABLES", stream_last_seq=10, since_ms=70),
                              [m for m in cut if not m.omitted])  # made before coverage: not proven
    assert "with a record from 70 ms to before 95 ms" in coverage.describe(header)
