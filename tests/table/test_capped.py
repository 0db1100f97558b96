"""A coin hand's settlements capped within its reservations (issue 32): the pure cap
(:func:`chieu.tablelog.capped.within`, coins.md §6.5 with what is left of each reservation in place of
a balance) and the deciders writing it in the log — a loser pays at most what was reserved, and
the log's ``Settlement.capped`` says so."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from chieu.audit.proof import Proof
from chieu.games.core import Transfer
from chieu.games.xiangqi.model import Resign
from chieu.table import decide, snapshot
from chieu.table.refusals import Refused
from chieu.table.v1 import log_pb2
from chieu.tablelog import capped, codec, money
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


# -- the gà pot, capped (issue 32) ----------------------------------------------------------------

PHOM_PLAYERS = ("a", "b", "c")
Op = tuple[str, int, int, int]
"""("feed", seat, -, units): a seat pays the pot (a gà deal, an eat, a wrong bắt báo with gà on);
("pay", seat, to, units): a seat pays another; ("win", seat, -, -): the pot pays a seat the whole
count the rules keep (an Ù with gà on takes the pot)."""


def phom_ga_table(stake: int) -> Table:
    table = Table(f"capped-phom-{len(LOG)}")
    run(table, decide.create(table, "phom", {"ga": True}, "a", stake, log_pb2.CURRENCY_COINS))
    for p in PHOM_PLAYERS[1:]:
        run(table, decide.take_seat(table, p, None))
    return table


def post(books: dict[str, int], table: Table, events: Any) -> None:
    """What the ledger's consumer posts of ``events``' settlements, applied to ``books`` (account →
    balance), exactly as it builds the postings (:func:`chieu.ledger.consumer.settlement_posting`)."""
    from chieu.ledger.consumer import settlement_posting

    for e in events:
        if e.WhichOneof("kind") == "settlement":
            posting = settlement_posting(table.table_id, e.settlement)
            for leg in posting.legs if posting is not None else ():
                books[leg.debit] = books.get(leg.debit, 0) - leg.amount
                books[leg.credit] = books.get(leg.credit, 0) + leg.amount


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 5),
       st.lists(st.tuples(st.lists(st.integers(1, 40), min_size=3, max_size=3),
                          st.lists(st.tuples(st.sampled_from(("feed", "pay", "win")), st.integers(0, 2),
                                             st.integers(0, 2), st.integers(1, 6)), max_size=8)),
                min_size=1, max_size=4))
def test_the_ga_pot_the_log_says_is_what_the_books_hold(stake: int, hands: list[tuple[list[int], list[Op]]]) -> None:
    """A Phỏm coin table with gà on, over several hands with random reservations: seats feed the
    pot (capped when their reservation is spent), pay each other, and an Ù takes the pot's whole
    count. The pot the log says (``Table.pot_coins``) is, after every record, what the ledger's pot
    account holds when it posts the log; the books are never asked for more than the pot holds
    (they refuse ``pot_short`` and park the record: the drift of before, where a capped feed left
    the books' pot short of the rules' count and the Ù's payout of the count overdrew it); the pot
    is empty in the books whenever the rules' count is 0."""
    table = phom_ga_table(stake)
    pot = f"pot/coins/{table.table_id}"
    books: dict[str, int] = {}

    def check() -> None:
        assert books.get(pot, 0) >= 0  # the ledger would refuse pot_short
        assert books.get(pot, 0) == table.pot_coins  # the log and the books agree to the coin
        assert 0 <= table.pot_coins <= table.pot * stake
        if table.pot == 0:
            assert books.get(pot, 0) == 0

    for hand, (reserved, ops) in enumerate(hands, 1):
        events = decide.start_hand(table, "a", 1000, bytes([hand]) * 32, reserved=(hand, dict(zip(
            PHOM_PLAYERS, (r * stake for r in reserved), strict=True))))
        assert not isinstance(events, Refused), events
        post(books, table, events)
        run(table, events)
        check()
        for kind, seat, to, units in ops:
            if kind == "win":
                paid = [Transfer(None, seat, table.pot, "ga_win")] if table.pot > 0 else []
            elif kind == "feed":
                paid = [Transfer(seat, None, units, "ga_deal")]
            else:
                paid = [Transfer(seat, to, units, "eat_1")] if seat != to else []
            if not paid:
                continue
            events = money.money_events(table, paid, None, b"", table.hand_players, table.hand_no,
                                        table.settled_legs, table.reserved, table.hand_lost, table.pot_coins)
            post(books, table, events)
            run(table, events)
            check()
        run(table, decide.abort_hand(table, "the next hand"))
        check()


def test_a_capped_feed_then_the_u_takes_what_the_pot_holds() -> None:
    """The scenario: seat b's reservation is spent, its third wrong bắt báo pays the pot 0 of the 2
    cược the rules say; the Ù then takes the pot: the rules' count (the gà deal's 3 and the 2) is 5
    cược, the pot holds 3 — the Ù's settlement is capped to the 3 and says so, and the books' pot
    ends at 0 where before they were asked for 5 and refused it (pot_short, parked)."""
    table = phom_ga_table(10)
    books: dict[str, int] = {}
    events = decide.start_hand(table, "a", 1000, b"\x05" * 32, reserved=(1, {"a": 200, "b": 10, "c": 200}))
    assert not isinstance(events, Refused)
    post(books, table, events)
    run(table, events)
    assert (table.pot, table.pot_coins) == (3, 30)  # the gà deal: a cược from each seat
    for paid in ([Transfer(1, None, 2, "wrong_accusation")], [Transfer(None, 0, 5, "ga_win")]):
        events = money.money_events(table, paid, None, b"", table.hand_players, table.hand_no, table.settled_legs,
                                    table.reserved, table.hand_lost, table.pot_coins)
        post(books, table, events)
        run(table, events)
    (s,) = [e.settlement for e in events if e.WhichOneof("kind") == "settlement"]
    assert [(t.HasField("from_seat"), t.to_seat, t.amount) for t in s.transfers] == [(False, 0, 5)]  # the rules'
    assert (list(s.capped), s.capped_pot) == ([30, 0, 0], -30)
    assert (table.pot, table.pot_coins, books[f"pot/coins/{table.table_id}"]) == (0, 0, 0)
