"""The auditor's check of a table's log: every hand's commitment, deal and moves, re-derived.

For each hand:

* its commitment was published before any client seed it mixes in was given (in ``TableCreated``
  for hand 1, in the previous ``HandStarted`` after): the server could not choose its seed after
  seeing the players';
* the hand's sealed parts open with the seed its ``HandEnded`` revealed (:func:`sealing.reveal`);
* the server seed revealed in ``HandEnded`` must hash to the commitment published in
  ``HandStarted`` (algorithm ``chieu-fair-v1`` or ``chieu-fair-v2``);
* under ``chieu-fair-v2`` the commitment came before every client commitment of the hand
  (``ClientCommitted``), and each client seed the hand mixes in is its player's reveal, hashing to
  their commitment (:func:`chieu.games.fairround.client_commitment`);
* ``start()`` of the rules core on the seed material (the revealed seed and the players' client
  seeds), the table's options and the previous result must give exactly the game events logged
  with ``HandStarted`` (the deal);
* every later record with a cause — a player's command (``game_command``) or a timeout
  (``timeout_seat``) — is decided again (``decide`` / ``on_timeout`` on the state folded from the
  log, at the record's server time) and must give exactly its logged game events: the rules'
  auto-play and every random choice they make from the seed material are checked this way too.

The table state each check needs is folded from the same log, so the check needs only the log
and the code.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from chieu.games import fair, fairround
from chieu.games.core import RuleViolation
from chieu.table.v1 import log_pb2
from chieu.tablelog import codec, sealing
from chieu.tablelog.fold import Table, hand_setup


@dataclass(frozen=True, slots=True)
class Verdict:
    """One hand's verdict."""

    hand_no: int
    revealed: bool
    commitment_ok: bool
    deal_ok: bool
    detail: str = ""
    moves_checked: int = 0
    moves_ok: bool = True
    committed_first: bool = True
    reveals_ok: bool = True
    """``chieu-fair-v2``: every client seed mixed in opens its player's commitment."""

    @property
    def ok(self) -> bool:
        return (self.revealed and self.commitment_ok and self.deal_ok and self.moves_ok and self.committed_first
                and self.reveals_ok)


@dataclass
class _Hand:
    started: log_pb2.HandStarted
    dealt: list[tuple[str, bytes]]
    at_ms: int
    before: Table
    committed_first: bool
    reveals: str = ""
    """Why the hand's client seeds do not open their commitments (``chieu-fair-v2``), else empty."""
    moves: int = 0
    bad_moves: list[str] = field(default_factory=list)


def _game_events(record: log_pb2.Record) -> list[tuple[str, bytes]]:
    """The record's game events as (type URL, bytes): compared as logged, never re-encoded."""
    return [(e.game_event.type_url, e.game_event.value) for e in record.events if e.WhichOneof("kind") == "game_event"]


def _encoded(events: Iterable[Any], game_key: str) -> list[tuple[str, bytes]]:
    """Derived game events as they would be logged (``codec.pack``'s type URL and bytes)."""
    out = []
    for e in events:
        msg = codec.to_message(e, game_key)
        out.append((_TYPE_URL + msg.DESCRIPTOR.full_name, msg.SerializeToString()))
    return out


_TYPE_URL = "type.googleapis.com/"
ALGORITHMS = (fair.ALGORITHM, fairround.ALGORITHM)
"""The algorithms a hand may carry: ``chieu-fair-v1`` and ``chieu-fair-v2`` (the commit–reveal round)."""


def _redecide(table: Table, record: log_pb2.Record) -> list[Any] | str:
    """The game events the rules give for the record's cause, or why they give none."""
    game = table.game
    try:
        if record.WhichOneof("cause") == "game_command":
            seat = table.seat_of(record.actor)
            if seat is None:
                return f"{record.actor} does not play in this hand"
            command = codec.unpack(record.game_command, table.game_key, commands_only=True)
            events = game.decide(table.game_state, seat, command, int(record.server_time_ms))
        else:
            events = game.on_timeout(table.game_state, int(record.timeout_seat), int(record.server_time_ms))
    except RuleViolation as e:
        return f"the rules refuse it now ({e.code})"
    return list(events)


Observer = Callable[[Table, log_pb2.Record, int, list[Any] | None], None]
"""Shown each record once it is folded: the table, the record, how many legs of the hand in play
were settled before it (-1: no hand was in play before it) and the game events derived for it
(None: folded from the log's). The auditor's proof of the money (``chieu.audit.proof``) is one."""


def verify(table_id: str, records: Iterable[tuple[int, log_pb2.Record]], *, opened: bool = False,
           observe: Observer | None = None) -> list[Verdict]:
    """Verdicts for every hand of the log ``records`` (stream sequence, record; the finished hands'
    sealed parts are opened in place, unless ``opened`` says :func:`sealing.reveal` did already).

    A move whose events the rules give again byte for byte is folded with the events just
    derived (they encode to the logged bytes), so its game events are not decoded a second time."""
    table = Table(table_id)
    hands: dict[int, _Hand] = {}
    committed: dict[int, tuple[tuple[int, int], str]] = {}
    """Hand → where its commitment was published (version, event index) and the commitment."""
    seeded: dict[str, tuple[int, int]] = {}
    """Player → where they last gave a client seed since the last hand started."""
    promised: Promised = {}
    asked: set[int] = set()
    """Hands whose reveals were asked (``RevealsAsked``)."""
    log = list(records) if opened else sealing.reveal(records)
    ended = sealing.revealed_seeds(record for _, record in log)
    for seq, record in log:
        version = int(record.version)
        for i, ev in enumerate(record.events):
            kind = ev.WhichOneof("kind")
            if kind == "hand_started":
                h = ev.hand_started
                published = committed.get(int(h.hand_no))
                seeds = zip(h.players, h.client_seeds, strict=False)
                v2 = h.algorithm == fairround.ALGORITHM
                first = published is not None and published[1] == h.seed_commitment and all(
                    (promised.get((int(h.hand_no), p), ((-1, -1), ""))[0] if v2 else seeded.get(p, (-1, -1)))
                    > published[0] for p, s in seeds if s or v2)
                # the deal is checked at the hand's end with the table as it was: what set-up reads of
                # it (options, the last outcome and players) is replaced by the fold, never changed
                hands[int(h.hand_no)] = _Hand(h, _game_events(record), int(record.server_time_ms), copy.copy(table),
                                              first, _reveals(table_id, h, promised) if v2 else "")
                seeded.clear()
                if h.HasField("next_seed"):
                    committed[int(h.next_seed.hand_no)] = ((version, i), h.next_seed.commitment)
            elif kind == "table_created" and ev.table_created.HasField("next_seed"):
                nxt = ev.table_created.next_seed
                committed[int(nxt.hand_no)] = ((version, i), nxt.commitment)
            elif kind in ("player_seated", "player_ready") and getattr(ev, kind).client_seed:
                seeded[getattr(ev, kind).player_id] = (version, i)
            elif kind == "client_committed":
                c = ev.client_committed
                if int(c.hand_no) not in asked:  # (after its hand's reveals were asked: counts for nothing)
                    promised[(int(c.hand_no), c.player_id)] = ((version, i), c.commitment)
            elif kind == "reveals_asked":
                asked.add(int(ev.reveals_asked.hand_no))
            elif kind == "round_cancelled":  # the seats commit again for the same hand number
                committed[int(ev.round_cancelled.hand_no)] = ((version, i), ev.round_cancelled.next_seed.commitment)
                promised = {k: v for k, v in promised.items() if k[0] != int(ev.round_cancelled.hand_no)}
                asked.discard(int(ev.round_cancelled.hand_no))
        derived: list[Any] | None = None
        if table.playing and sealing.is_sealed(record):
            hand = hands[table.hand_no]
            if table.hand_no in ended:  # revealed, yet a part did not open: changed, or sealed wrongly
                hand.bad_moves.append(f"version {record.version}: a sealed part does not open with the revealed seed")
                hand.moves += 1
        elif record.WhichOneof("cause") is not None and table.playing:
            hand = hands[table.hand_no]
            hand.moves += 1
            got = _redecide(table, record)
            if isinstance(got, str):
                hand.bad_moves.append(f"version {record.version}: {got}")
            elif _encoded(got, table.game_key) != _game_events(record):
                hand.bad_moves.append(f"version {record.version}: other events")
            else:
                derived = got
        settled = table.settled_legs if table.playing else -1
        table.apply(record, seq, derived)
        if observe is not None:
            observe(table, record, settled, derived)
    out: list[Verdict] = []
    for hand_no, hand in sorted(hands.items()):
        seed = ended.get(hand_no)
        if seed is None:
            out.append(Verdict(hand_no, False, False, False, "the hand is not over: its seed is not revealed",
                               hand.moves, not hand.bad_moves))
            continue
        h = hand.started
        commitment_ok = fair.commitment(seed) == h.seed_commitment and h.algorithm in ALGORITHMS
        players = list(h.players)
        material = fair.seed_material(seed, list(h.client_seeds))
        setup = hand_setup(hand.before, players, material, hand.at_ms, hand_no, int(h.owner_seat))
        dealt = _encoded(hand.before.game.start(setup), hand.before.game_key)
        deal_ok = dealt == hand.dealt
        details = [] if deal_ok else [f"derived {len(dealt)} start events, logged {len(hand.dealt)}; they differ"]
        if not hand.committed_first:
            details.append("its commitment was not published before the players' client seeds")
        if hand.reveals:
            details.append(hand.reveals)
        details += hand.bad_moves[:5]
        out.append(Verdict(hand_no, True, commitment_ok, deal_ok, "; ".join(details), hand.moves, not hand.bad_moves,
                           hand.committed_first, not hand.reveals))
    return out


Promised = dict[tuple[int, str], tuple[tuple[int, int], str]]
"""(hand, player) → where they committed to a client seed (``chieu-fair-v2``) and the commitment."""


def _reveals(table_id: str, h: log_pb2.HandStarted, promised: Promised) -> str:
    """Why a ``chieu-fair-v2`` hand's client seeds do not open their players' commitments (empty: they do)."""
    wrong = []
    for p, s in zip(h.players, h.client_seeds, strict=False):
        commitment = promised.get((int(h.hand_no), p), ((0, 0), ""))[1]
        if fairround.client_commitment(table_id, int(h.hand_no), p, s) != commitment:
            wrong.append(p)
    if len(h.client_seeds) != len(h.players):
        wrong.append(f"{len(h.client_seeds)} client seeds for {len(h.players)} players")
    return f"client seeds that do not open their commitments: {', '.join(wrong)}" if wrong else ""
