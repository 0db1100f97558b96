"""A coin hand's settlements capped within its reservations (issue 32): the pure cap
(:func:`chieu.tablelog.capped.within`, coins.md §6.5 with what is left of each reservation in place of
a balance) and the deciders writing it in the log — a loser pays at most what was reserved, and
the log's ``Settlement.capped`` says so."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from chieu.audit.proof import Proof
from chieu.games.xiangqi.model import Resign
from chieu.table import decide, snapshot
from chieu.table.refusals import Refused
from chieu.table.v1 import log_pb2
from chieu.tablelog import capped, codec
from chieu.tablelog.fold import Table
from chieu.tablelog.verify import verify


def test_nobody_short_is_no_cap() -> None:
    assert capped.within([(1, 0, 200)], [300, 300]) is None
    assert capped.within([(1, 0, 200), (0, 1, 50)], [0, 150]) is None  # nets: seat 1 loses 150


def test_a_short_loser_pays_what_is_left_and_the_winners_share_it() -> None:
    # seat 2 owes 60 to seat 0 and 30 to seat 1, but has 45 left: 30 and 15, in proportion
    assert capped.within([(2, 0, 60), (2, 1, 30)], [0, 0, 45]) == ([30, 15, -45], 0)
    # 11 shared 5:5 rounded down; the leftover coin to the winners owed most, on a tie the lower seat
    assert capped.within([(2, 0, 30), (2, 1, 30)], [0, 0, 11]) == ([6, 5, -11], 0)
    # a seat that already lost part of its reservation has only the rest; the gà pot pays in full
    assert capped.within([(None, 0, 5), (1, 0, 100)], [10, 20]) == ([25, -20], -5)
    # nothing left: nothing paid, the log still says so
    assert capped.within([(1, 0, 10)], [10, 0]) == ([0, 0], 0)


LOG: dict[str, list[tuple[int, log_pb2.Record]]] = {}
"""Every record :func:`run` folded, per table (the log an auditor proves)."""


def run(table: Table, events: Any, actor: str = "system", command: Any = None) -> None:
    assert not isinstance(events, Refused), events
    record = log_pb2.Record(table_id=table.table_id, version=table.version + 1, events=events, actor=actor,
                            server_time_ms=2000, game=table.game_key or "xiangqi")
    if command is not None:
        record.game_command.CopyFrom(codec.pack(command, table.game_key))
    table.apply(record, table.last_seq + 1)
    LOG.setdefault(table.table_id, []).append((table.last_seq, record))


def coin_table(stake: int) -> Table:
    table = Table(f"capped-xq-{len(LOG)}")
    run(table, decide.create(table, "xiangqi", {}, "a", stake, log_pb2.CURRENCY_COINS))
    run(table, decide.take_seat(table, "b", None))
    return table


def test_the_log_caps_a_loss_at_the_reservation_and_says_so() -> None:
    table = coin_table(100)  # the loser owes 2 cược = 200 金币; b's seat reserved only 150 (a bound set lower)
    run(table, decide.start_hand(table, "a", 1000, b"\x01" * 32, reserved=(1, {"a": 200, "b": 150})))
    assert table.reserved == [200, 150] and table.hand_lost == [0, 0]
    events = decide.act(table, "b", Resign(), 2000)
    assert not isinstance(events, Refused)
    (s,) = [e.settlement for e in events if e.WhichOneof("kind") == "settlement"]
    assert [(t.from_seat, t.to_seat, t.amount) for t in s.transfers] == [(1, 0, 2)]  # what the rules said
    assert list(s.capped) == [150, -150] and s.capped_pot == 0  # what is paid
    run(table, events, "b", Resign())
    assert table.hand_lost == [-150, 150]
    again = snapshot.decode(snapshot.encode(table))  # a snapshot keeps them
    assert (again.reserved, again.hand_lost) == ([200, 150], [-150, 150])


def test_within_the_reservation_nothing_is_capped() -> None:
    table = coin_table(100)
    run(table, decide.start_hand(table, "a", 1000, b"\x01" * 32, reserved=(1, {"a": 200, "b": 200})))
    events = decide.act(table, "b", Resign(), 2000)
    assert not isinstance(events, Refused)
    (s,) = [e.settlement for e in events if e.WhichOneof("kind") == "settlement"]
    assert list(s.capped) == []


def test_a_reservation_for_other_seats_or_another_hand_is_refused() -> None:
    table = coin_table(10)
    for reserved in ((1, {"a": 20}), (2, {"a": 20, "b": 20}), (1, {"a": 20, "c": 20})):
        refused = decide.start_hand(table, "a", 1000, b"\x01" * 32, reserved=reserved)
        assert isinstance(refused, Refused) and refused.reason == "seats_changed"


def proven(table_id: str, change: Any = None) -> list[tuple[str, str, str]]:
    """The audit's proof of a table's money (chieu.audit.proof) over :data:`LOG`, after ``change``."""
    records = [(seq, log_pb2.Record.FromString(r.SerializeToString())) for seq, r in LOG[table_id]]
    if change is not None:
        for _, r in records:
            change(r)
    proof = Proof(table_id)
    verify(table_id, records, opened=True, observe=proof)
    return proof.findings


def test_the_audit_proves_a_capped_settlement_from_the_rules_and_the_reservations() -> None:
    table = coin_table(100)
    run(table, decide.start_hand(table, "a", 1000, b"\x02" * 32, reserved=(1, {"a": 200, "b": 150})))
    run(table, decide.act(table, "b", Resign(), 2000), "b", Resign())
    assert proven(table.table_id) == []

    def pay_less(r: log_pb2.Record) -> None:  # the capped nets edited: the loser paid 100, not 150
        for e in r.events:
            if e.WhichOneof("kind") == "settlement":
                e.settlement.capped[:] = [100, -100]

    def uncap(r: log_pb2.Record) -> None:  # the cap dropped: the log would say 200 was paid
        for e in r.events:
            if e.WhichOneof("kind") == "settlement":
                del e.settlement.capped[:]

    for change in (pay_less, uncap):
        assert [code for code, _, _ in proven(table.table_id, change)] == ["settlement_mismatch"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.one_of(st.none(), st.integers(0, 3)), st.one_of(st.none(), st.integers(0, 3)),
                          st.integers(1, 10_000)), min_size=1, max_size=8),
       st.lists(st.integers(-500, 20_000), min_size=4, max_size=4))
def test_no_seat_pays_more_than_is_left_and_the_cap_adds_up(legs: list[capped.Leg], left: list[int]) -> None:
    legs = [(a, b, n) for a, b, n in legs if a != b]
    owed, pot = capped.nets(legs, 4)
    cut = capped.within(legs, left)
    if cut is None:  # nobody short: paid as the rules say
        assert all(n >= 0 or -n <= max(left[i], 0) for i, n in enumerate(owed))
        return
    paid, paid_pot = cut
    assert sum(paid) + paid_pot == 0
    for i, (o, p) in enumerate(zip(owed, paid, strict=True)):
        assert -p <= max(left[i], 0) or p >= 0  # a loser pays at most what is left of its reservation
        assert (o <= p <= 0) if o <= 0 else (0 <= p <= o)  # nobody pays more, or gets more, than owed
    assert (pot <= paid_pot <= 0 and paid_pot == pot) if pot <= 0 else (0 <= paid_pot <= pot)  # the pot pays in full
