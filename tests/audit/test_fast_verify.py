"""What makes the audit fast must not make it weaker:

- ``replacer`` (the rules cores' fast ``dataclasses.replace``) gives exactly what ``replace`` gives,
  and refuses what it cannot do;
- the verifier folds a move with the events it derived (they encode to the logged bytes) instead
  of decoding them again: on real logs of several games that fold equals the plain fold, record by
  record, so the audit checks the state the table had;
- Phỏm's ``evolve`` remembers its last look-ahead by identity only: an equal, decoded event is
  computed again, and equal results come back;
- worker processes report what one process reports, in the same order.
"""

from __future__ import annotations

import dataclasses
import random
from dataclasses import dataclass
from typing import Any

import pytest

from chieu.audit import logs
from chieu.audit.report import Report
from chieu.games import registry
from chieu.games.common import replacer
from chieu.games.phom.model import State, replace
from chieu.games.phom.options import parse_options
from chieu.table.v1 import log_pb2
from chieu.tablelog import codec, sealing
from chieu.tablelog.fold import Table
from chieu.tablelog.verify import verify
from tests.benchmarks.bench_audit import table_log

GAMES = {"phom": (4, {}), "o_an_quan": (2, {"maxMoves": 200}), "xiangqi": (2, {}), "dominoes": (4, {})}


def test_replacer_is_replace() -> None:
    rng = random.Random(5)
    s = State(options=parse_options({}), players=3, hands=(1, 2, 3), stock=(4, 5))
    names = [f.name for f in dataclasses.fields(State)]
    samples = {"players": 2, "turn": 1, "taken": True, "hands": (7, 8, 9), "end": "scored", "pot": -3,
               "melds": ((0, 7, -1),), "winner": 2}
    for _ in range(200):
        changes = dict(rng.sample(sorted(samples.items()), rng.randint(0, 4)))
        got, want = replace(s, **changes), dataclasses.replace(s, **changes)
        assert got == want and type(got) is State and got is not s
        assert all(getattr(got, n) is getattr(want, n) or getattr(got, n) == getattr(want, n) for n in names)
    with pytest.raises(TypeError, match="no field 'turns'"):
        replace(s, turns=1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        replace(s).turn = 2  # type: ignore[misc]  # still frozen


def test_replacer_refuses_what_it_cannot_copy() -> None:
    @dataclass
    class Loose:
        a: int = 0

    @dataclass(slots=True)
    class Checked:
        a: int = 0

        def __post_init__(self) -> None:
            pass

    for cls in (Loose, Checked):
        with pytest.raises(TypeError):
            replacer(cls)


@pytest.mark.parametrize("game", sorted(GAMES))
def test_folding_the_derived_events_is_the_plain_fold(game: str) -> None:
    players, options = GAMES[game]
    rng = random.Random(23)
    rules = registry.get(game)
    derived_moves = 0
    for n in range(3):
        messages = table_log(game, players, 2, options, rng, n)
        plain, fast = Table(f"{game}-{n}"), Table(f"{game}-{n}")
        for m, (_, record) in zip(messages, sealing.reveal((m.seq, log_pb2.Record.FromString(m.data))
                                                           for m in messages), strict=True):
            derived: list[Any] | None = None
            if record.WhichOneof("cause") is not None and fast.playing:
                if record.WhichOneof("cause") == "game_command":
                    seat = fast.seat_of(record.actor)
                    assert seat is not None
                    command = codec.unpack(record.game_command, game, commands_only=True)
                    derived = list(rules.decide(fast.game_state, seat, command, int(record.server_time_ms)))
                else:
                    derived = list(rules.on_timeout(fast.game_state, int(record.timeout_seat),
                                                    int(record.server_time_ms)))
                derived_moves += 1
            plain.apply(record, m.seq)
            fast.apply(record, m.seq, derived)
            assert fast.game_state == plain.game_state, f"{game} version {record.version}"
        assert all(v.ok for v in verify(plain.table_id, [(m.seq, log_pb2.Record.FromString(m.data))
                                                          for m in messages]))
    assert derived_moves > 20


def test_phom_remembers_its_look_ahead_by_identity_only() -> None:
    phom = registry.get("phom")
    rng = random.Random(3)
    messages = table_log("phom", 3, 1, {}, rng, 0, sealed=False)
    table = Table("t")
    for m in messages:
        table.apply(log_pb2.Record.FromString(m.data), m.seq)
        if table.playing and table.game_state.turn >= 0 and table.game_state.stock:
            break
    s = table.game_state
    seat = s.turn
    moves = sorted(phom.legal(s, seat), key=repr)
    assert moves
    events = list(phom.decide(s, seat, moves[0], 0))
    first = phom.evolve(s, events[0])
    assert phom.evolve(s, events[0]) is first  # the same object on the same state: remembered
    again = codec.unpack(codec.pack(events[0], "phom"), "phom")  # equal, not the same
    assert again == events[0] and again is not events[0]
    recomputed = phom.evolve(s, again)
    assert recomputed == first and recomputed is not first
    other = dataclasses.replace(s, timeouts=s.timeouts + 1)  # an equal event on another state
    assert phom.evolve(other, events[0]).timeouts == s.timeouts + 1


def test_worker_processes_find_what_one_process_finds(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(11)
    messages = [m for n in range(8) for m in table_log("phom", 3, 1, {}, rng, n, sealed=False)]  # edited in clear
    tampered = broken = ""
    for i, m in enumerate(messages):
        record = log_pb2.Record.FromString(m.data)
        if not tampered and record.game_command.TypeName().endswith(".Discard"):
            discard = codec.unpack(record.game_command, "phom")
            other = type(discard)("2♠" if discard.card != "2♠" else "3♠")
            record.game_command.CopyFrom(codec.pack(other, "phom"))  # the logged events no longer follow
            tampered = record.table_id
        elif tampered and not broken and record.table_id != tampered and record.version == 5:
            record.version = 50  # a log that does not follow on
            broken = record.table_id
        else:
            continue
        messages[i] = dataclasses.replace(m, data=record.SerializeToString())
    period = logs.load(messages)
    monkeypatch.setattr(logs, "CHUNK", 60)  # several pieces, so both workers have tables
    one, two = Report(), Report()
    logs.verify_all(period, one, workers=1)
    done: list[int] = []
    logs.verify_all(period, two, done.append, workers=2)
    assert sum(done) == period.records and len(done) > 2
    assert two.findings == one.findings and two.counts == one.counts
    assert {(f.code, f.subject.split(" ")[0]) for f in one.findings} == {("move_mismatch", tampered),
                                                                          ("log_broken", broken)}
