"""The log's money proven from the rules (``chieu.audit.proof``, issue 32 point 6), on logs the
table's own deciders write (``bench_audit.table_log``: random legal moves, now and then a
timeout, sealed as the table seals them): an honest log of every game proves clean, and a
settlement leg, an outcome or a hand's end edited in the log — what an operator who re-signs an
archive can do — is found from the log alone, with its table, hand, leg, expected and logged.
``test_signed_archive.py`` does the same through ``chieu audit --archive`` on real play."""

from __future__ import annotations

import dataclasses
import functools
import random
import secrets
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chieu.audit import logs
from chieu.audit.archive import Message
from chieu.audit.proof import Proof
from chieu.audit.report import Report
from chieu.games.core import Transfer
from chieu.table import decide
from chieu.table.v1 import log_pb2
from chieu.tablelog import codec, sealing
from chieu.tablelog.fold import Table
from chieu.tablelog.verify import verify
from tests.benchmarks.bench_audit import KEYS, table_log

GAMES: dict[str, tuple[int, dict[str, Any]]] = {
    "o_an_quan": (2, {"maxMoves": 200}), "xiangqi": (2, {}), "phom": (4, {}), "dominoes": (4, {}),
    "gouji": (6, {}), "mahjong": (4, {}), "lianliankan": (2, {"timeLimitSeconds": 600}),
}
"""Every game of the registry, with the seats and options its random play ends with."""
SETTLING = ("o_an_quan", "xiangqi", "phom", "dominoes", "lianliankan")
"""Games whose random hands pay (麻将's random hands end drawn at the wall: :class:`Greedy` wins them)."""


def audited(messages: list[Message], workers: int = 1) -> Report:
    report = Report()
    logs.verify_all(logs.load(messages), report, workers=workers)
    return report


def edit(messages: list[Message], change: Callable[[log_pb2.Record], bool]) -> tuple[list[Message], str]:
    """The messages with the first record ``change`` edits (it returns True) edited in place;
    and that record's table id."""
    out = list(messages)
    for i, m in enumerate(out):
        record = log_pb2.Record.FromString(m.data)
        if change(record):
            out[i] = dataclasses.replace(m, data=record.SerializeToString())
            return out, record.table_id
    raise AssertionError("nothing to edit")


def kind_of(record: log_pb2.Record, kind: str) -> list[Any]:
    return [getattr(ev, kind) for ev in record.events if ev.WhichOneof("kind") == kind]


def proof_findings(report: Report) -> list[tuple[str, str, str]]:
    return [(f.code, f.subject, f.detail) for f in report.findings if f.area == "proof"]


@pytest.mark.parametrize("game", sorted(GAMES))
def test_an_honest_log_of_every_game_proves_clean(game: str) -> None:
    players, options = GAMES[game]
    rng = random.Random(7)
    report = audited([m for n in range(2) for m in table_log(game, players, 2, options, rng, n)])
    assert report.ok, report.findings
    c = report.counts
    assert c["hands"] == 4 and c["outcomes_proven"] == 4, c  # every hand's end derived again
    if game in SETTLING:
        assert c["settlements_proven"] >= 2 and c["settlement_legs_proven"] >= c["settlements_proven"], c


class Greedy(random.Random):
    """Random play that takes a win, a gang or a peng whenever it may, and times out only when
    nobody may move (so 麻将 hands are won, not drawn at the wall)."""

    def choice(self, seq: Any) -> Any:
        for kind in ("Win", "Gang", "Peng"):
            if best := [x for x in seq if type(x).__name__ == kind]:
                return best[0]
        return super().choice(seq)

    def random(self) -> float:
        return 0.5


def test_won_mahjong_hands_prove_clean() -> None:
    # the deals come from fresh server seeds, so a run of six tables went without a win about one
    # time in twelve: play tables until one is won (each table's chance is about a third)
    legs = tables = 0
    while not legs and tables < 40:
        report = audited(table_log("mahjong", 4, 3, {}, Greedy(tables), 0))
        assert report.ok, report.findings
        legs += report.counts.get("settlement_legs_proven", 0)
        tables += 1
    assert legs > 0  # some hand was won, and paid as the rules say


def test_a_coin_table_with_the_ga_pot_proves_clean_and_its_stake_and_pot_legs_are_held(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Phỏm at a 金币 table of stake 10 with nuôi gà: the deal's and the eats' payments into the
    pot, the Ù's out of it, every leg at the stake. The stake or the currency of a settlement
    changed, or a pot leg sent to a player, is a ``settlement_mismatch``."""
    monkeypatch.setattr(decide, "create", functools.partial(decide.create, stake=10,
                                                            currency=log_pb2.CURRENCY_COINS))
    rng = random.Random(12)
    honest = [m for n in range(3) for m in table_log("phom", 3, 3, {"ga": True}, rng, n)]
    report = audited(honest)
    assert report.ok, report.findings
    legs = [(s, t) for m in honest for s in kind_of(log_pb2.Record.FromString(m.data), "settlement")
            for t in s.transfers]
    assert legs and all(s.stake == 10 and s.currency == log_pb2.CURRENCY_COINS for s, _ in legs)
    assert any(not t.HasField("to_seat") for _, t in legs)  # paid into the gà pot

    def stake(record: log_pb2.Record) -> bool:
        for s in kind_of(record, "settlement"):
            s.stake = 11
            return True
        return False

    def to_a_player(record: log_pb2.Record) -> bool:
        for s in kind_of(record, "settlement"):
            for t in s.transfers:
                if not t.HasField("to_seat"):
                    t.to_seat = 0 if t.from_seat != 0 else 1
                    return True
        return False

    for change, words in ((stake, "stake: expected 10, logged 11"), (to_a_player, "→ the gà pot")):
        messages, _ = edit(honest, change)
        found = proof_findings(audited(messages))
        assert [c for c, _, _ in found] == ["settlement_mismatch"] and words in found[0][2], found


def test_a_raised_leg_is_a_settlement_mismatch_with_its_table_hand_leg_expected_and_logged() -> None:
    rng = random.Random(3)
    honest = [m for n in range(2) for m in table_log("phom", 4, 2, {}, rng, n)]
    raised: list[int] = []

    def raise_leg(record: log_pb2.Record) -> bool:
        for s in kind_of(record, "settlement"):
            if record.table_id.endswith("-1") and len(s.transfers) > 1:
                s.transfers[1].amount += 5
                raised.extend([int(s.hand_no), int(s.first_leg) + 1, int(s.transfers[1].amount)])
                return True
        return False

    messages, table = edit(honest, raise_leg)
    hand, leg, amount = raised
    found = proof_findings(audited(messages))
    assert [(c, s) for c, s, _ in found] == [("settlement_mismatch", f"{table} hand {hand} leg {leg}")], found
    detail = found[0][2]
    assert f": {amount - 5} × 1 (" in detail.split("logged")[0] and f": {amount} × 1 (" in detail.split("logged")[1]
    assert audited(messages).counts == audited(honest).counts  # nothing else changed


def test_a_changed_outcome_is_an_outcome_mismatch() -> None:
    rng = random.Random(4)
    honest = table_log("o_an_quan", 2, 2, {"maxMoves": 200}, rng, 0)

    def reason(record: log_pb2.Record) -> bool:
        for e in kind_of(record, "hand_ended"):
            e.outcome.reason = "resign" if e.outcome.reason != "resign" else "captured"
            return True
        return False

    messages, table = edit(honest, reason)
    found = proof_findings(audited(messages))
    assert [(c, s) for c, s, _ in found] == [("outcome_mismatch", f"{table} hand 1")], found
    assert "outcome reason: expected" in found[0][2]

    def winner(record: log_pb2.Record) -> bool:  # the ranking the ladder counts, turned round
        for e in kind_of(record, "hand_ended"):
            if len(e.outcome.ranking) == 2:
                e.outcome.ranking.reverse()
                return True
        return False

    messages, table = edit(honest, winner)
    assert [c for c, _, d in proof_findings(audited(messages)) if "outcome ranking" in d] == ["outcome_mismatch"]


def test_a_removed_moved_or_added_settlement_and_end_are_found() -> None:
    rng = random.Random(5)
    honest = table_log("dominoes", 4, 1, {}, rng, 0)

    def drop(kind: str) -> Callable[[log_pb2.Record], bool]:
        def change(record: log_pb2.Record) -> bool:
            keep = [ev for ev in record.events if ev.WhichOneof("kind") != kind]
            if len(keep) == len(record.events):
                return False
            del record.events[:]
            record.events.extend(keep)
            return True
        return change

    messages, _ = edit(honest, drop("settlement"))
    assert "the log has no settlement" in proof_findings(audited(messages))[0][2]
    end = next(kind_of(r, "hand_ended")[0] for r in (log_pb2.Record.FromString(m.data) for m in honest)
               if kind_of(r, "hand_ended"))

    def early_end(record: log_pb2.Record) -> bool:  # the hand's end logged on a move that does not end it
        if record.WhichOneof("cause") is None or record.version < 8:
            return False
        record.events.add().hand_ended.CopyFrom(end)
        return True

    messages, table = edit(honest, early_end)
    found = proof_findings(audited(messages))
    assert found[0][:2] == ("outcome_mismatch", f"{table} hand 1") and "do not end the hand here" in found[0][2], found

    two = table_log("dominoes", 4, 2, {}, random.Random(5), 0)

    def end_removed(record: log_pb2.Record) -> bool:  # hand 1 left "in play", its legs unprovable
        keep = [ev for ev in record.events if ev.WhichOneof("kind") != "hand_ended"]
        if len(keep) == len(record.events) or record.events[-1].hand_ended.hand_no != 1:
            return False
        del record.events[:]
        record.events.extend(keep)
        return True

    messages, table = edit(two, end_removed)
    found = proof_findings(audited(messages))
    assert [(c, s) for c, s, _ in found] == [("outcome_mismatch", f"{table} hand 1")], found
    assert "hand 2 starts before this hand has ended" in found[0][2]

    def pay_on_a_seat(record: log_pb2.Record) -> bool:  # a settlement where no move pays
        if not kind_of(record, "player_seated"):
            return False
        record.events.add().settlement.CopyFrom(log_pb2.Settlement(hand_no=1, players=["p0", "p1"], stake=1))
        record.events[-1].settlement.transfers.add(from_seat=1, to_seat=0, amount=50, reason="cuoc")
        return True

    messages, _ = edit(honest, pay_on_a_seat)
    found = proof_findings(audited(messages))
    assert [c for c, _, _ in found] == ["settlement_mismatch"] and "no hand is in play" in found[0][2], found


def aborted_log(rng: random.Random, moves: int) -> list[Message]:
    """A Phỏm table: a hand of ``moves`` random moves, aborted by an operator, then a hand played
    to its end (the pot and the previous outcome carried), sealed as the table seals them."""
    table_id = "aborted"
    table = Table(table_id)
    out: list[Message] = []
    now = 1_700_000_000_000

    def run(actor: str, events: Any, *, command: Any = None, timeout: int | None = None) -> None:
        assert isinstance(events, list), events
        rec = log_pb2.Record(table_id=table_id, version=table.version + 1, actor=actor, server_time_ms=now,
                             game="phom", events=events)
        if command is not None:
            rec.game_command.CopyFrom(codec.pack(command, "phom"))
        if timeout is not None:
            rec.timeout_seat = timeout
        logged = sealing.seal_record(rec, table)
        table.apply(rec, len(out) + 1)
        out.append(Message(len(out) + 1, f"chieu.table.{table_id}", now, logged.SerializeToString()))

    def play(limit: int) -> None:
        nonlocal now
        for _ in range(limit):
            if not table.playing:
                return
            now += 700
            movers = [(s, m) for s in range(len(table.hand_players)) if (m := table.game.legal(table.game_state, s))]
            if not movers:  # a wait: the first deadline passes
                due = min(table.game.deadlines(table.game_state), key=lambda d: d.at_ms)
                now = max(now, due.at_ms)
                run("system", decide.time_out(table, due.seat, now), timeout=due.seat)
                continue
            seat, legal = rng.choice(movers)
            move = rng.choice(list(legal))
            player = table.hand_players[seat]
            run(player, decide.act(table, player, move, now), command=move)

    run("p0", decide.create(table, "phom", {}, "p0", next_seed=KEYS.new_seed(table_id, 1)))
    for p in ("p1", "p2"):
        run(p, decide.take_seat(table, p, None, secrets.token_bytes(8)))
    for hand in (1, 2):
        assert table.next_seed is not None
        run("p0", decide.start_hand(table, "p0", now, KEYS.open_seed(table_id, table.next_seed),
                                    KEYS.new_seed(table_id, hand + 1)))
        play(moves if hand == 1 else 5000)
        if hand == 1:
            assert table.playing
            run("ops", decide.abort_hand(table, "the server room flooded"))
    assert not table.playing
    return out


def test_an_operators_abort_proves_and_a_forged_abort_does_not() -> None:
    honest = aborted_log(random.Random(6), 9)
    report = audited(honest)
    assert report.ok and report.counts["aborts_proven"] == 1 and report.counts["outcomes_proven"] == 2, report

    def no_abort(record: log_pb2.Record) -> bool:  # an abort that pays: no abort pays
        for e in kind_of(record, "hand_ended"):
            if e.outcome.reason.startswith("aborted: "):
                e.outcome.transfers.add(from_seat=1, to_seat=0, amount=3, reason="rank")
                return True
        return False

    messages, _ = edit(honest, no_abort)
    found = proof_findings(audited(messages))
    assert [c for c, _, _ in found] == ["outcome_mismatch"] and "outcome transfers" in found[0][2], found

    def renamed(record: log_pb2.Record) -> bool:  # an end without a move that is not an abort
        for e in kind_of(record, "hand_ended"):
            if e.outcome.reason.startswith("aborted: "):
                e.outcome.reason = "u"
                return True
        return False

    messages, _ = edit(honest, renamed)
    found = proof_findings(audited(messages))
    assert [c for c, _, _ in found] == ["outcome_mismatch"] and "operator's abort" in found[0][2], found

    def faked(record: log_pb2.Record) -> bool:  # a hand the rules ended, logged as aborted
        for e in kind_of(record, "hand_ended"):
            if not e.outcome.reason.startswith("aborted: "):
                e.outcome.reason = "aborted: nobody won"
                return True
        return False

    messages, _ = edit(honest, faked)
    assert [c for c, _, _ in proof_findings(audited(messages))] == ["outcome_mismatch"]


def test_the_reservations_hook_caps_the_rules_legs_before_they_are_compared() -> None:
    """Two-phase coins (issue 32) will cap each loser's legs at what they reserved; the cap is
    applied to the rules' uncapped legs by ``Proof.within_reservations`` before the comparison."""

    class AtMostOne(Proof):
        def within_reservations(self, table: Table, legs: list[Transfer]) -> list[Transfer]:
            return [dataclasses.replace(t, amount=min(t.amount, 1)) for t in legs]

    rng = random.Random(8)
    messages = table_log("dominoes", 4, 1, {}, rng, 0)
    records = sealing.reveal((m.seq, log_pb2.Record.FromString(m.data)) for m in messages)
    plain, capped = Proof("dominoes-0"), AtMostOne("dominoes-0")
    verify("dominoes-0", [(s, log_pb2.Record.FromString(r.SerializeToString())) for s, r in records],
           opened=True, observe=plain)
    verify("dominoes-0", records, opened=True, observe=capped)
    assert plain.findings == [] and plain.counts["settlement_legs_proven"] > 0
    assert capped.findings and all(code == "settlement_mismatch" and "expected" in detail
                                   for code, _, detail in capped.findings)


def test_worker_processes_prove_what_one_process_proves() -> None:
    rng = random.Random(9)
    messages = [m for n in range(6) for m in table_log("phom", 3, 1, {}, rng, n)]

    def raise_first(record: log_pb2.Record) -> bool:
        for s in kind_of(record, "settlement"):
            s.transfers[0].amount += 5
            return True
        return False

    messages, _ = edit(messages, raise_first)
    one = audited(messages)
    logs_before, logs.CHUNK = logs.CHUNK, 60
    try:
        two = audited(messages, workers=2)
    finally:
        logs.CHUNK = logs_before
    assert two.findings == one.findings and two.counts == one.counts
    assert [f.code for f in one.findings] == ["settlement_mismatch"]


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(game=st.sampled_from(SETTLING), seed=st.integers(0, 2**32 - 1), bump=st.integers(1, 10**6),
       pick=st.integers(0, 10**6))
def test_the_derived_settlement_is_the_logged_one_and_any_raised_leg_is_found(
        game: str, seed: int, bump: int, pick: int) -> None:
    """For random finished hands, the settlements the rules derive are the logged ones (a clean
    proof); any leg of them raised by any amount is found, naming that leg."""
    players, options = GAMES[game]
    honest = table_log(game, players, 2, options, random.Random(seed), 0)
    report = audited(honest)
    assert report.ok, report.findings
    legs = [(i, j) for i, m in enumerate(honest) for s in kind_of(log_pb2.Record.FromString(m.data), "settlement")
            for j in range(len(s.transfers))]
    if not legs:
        return
    i, j = legs[pick % len(legs)]
    record = log_pb2.Record.FromString(honest[i].data)
    s = kind_of(record, "settlement")[0]
    s.transfers[j].amount += bump
    messages = [*honest[:i], dataclasses.replace(honest[i], data=record.SerializeToString()), *honest[i + 1:]]
    found = proof_findings(audited(messages))
    assert [(c, sub) for c, sub, _ in found] == [("settlement_mismatch",
                                                  f"{game}-0 hand {s.hand_no} leg {s.first_leg + j}")], found


def test_the_replay_page_says_whether_each_hands_money_is_proven() -> None:
    from chieu.audit import replay

    honest = table_log("o_an_quan", 2, 2, {"maxMoves": 200}, random.Random(13), 0)

    def raise_leg(record: log_pb2.Record) -> bool:
        for s in kind_of(record, "settlement"):
            if s.hand_no == 2:
                s.transfers[0].amount += 5
                return True
        return False

    def page(messages: list[Message]) -> str:
        return replay.render("o_an_quan-0", [(m.seq, log_pb2.Record.FromString(m.data)) for m in messages])

    assert page(honest).count("moves and the money</span>") == 2
    edited, _ = edit(honest, raise_leg)
    html = page(edited)
    assert html.count("moves and the money</span>") == 1
    assert "FAILED: settlement_mismatch o_an_quan-0 hand 2 leg" in html
