"""What a table's log must show of its seeds, read from the records alone before any replay, so
that each forgery is named by its own finding even where the log can no longer be folded:

* ``client_seed_mismatch``: a hand mixes in (``HandStarted.client_seeds``) a client seed that is
  not the one its player last gave (``PlayerSeated`` / ``PlayerReady`` since the hand before,
  forgotten at ``PlayerLeft``), or one where they gave none;
* ``commitment_late``: the hand's commitment was not published (``TableCreated.next_seed``, the
  previous ``HandStarted.next_seed``), in log order (record version, event index), before every
  client seed the hand mixes in; or the one published is not its ``HandStarted.seed_commitment``;
* ``commitment_twice``: a second commitment published for a hand that already has one (a hand
  has exactly one: ``docs/fairness.md``);
* ``seal_does_not_open``: a sealed part of a finished hand that its revealed seed does not open
  (changed, or sealed under another key): the hand cannot be replayed past it;
* ``log_unfoldable``: a record the table's fold cannot take (:func:`unfoldable` says where).

Under ``chieu-fair-v2`` (the commit–reveal round, docs/fairness.md), for each hand:

* ``commitment_late``: a client commitment (``ClientCommitted``) made after its hand's reveals were
  asked (``RevealsAsked``), a reveal (``ClientRevealed``) before they were asked, or a server-seed
  commitment published after a client commitment of the hand;
* ``reveal_mismatch``: a revealed seed that is not 32 bytes or does not hash to its player's
  commitment for that hand (or a reveal with no commitment, or by a seat that was not asked);
* ``client_seed_mismatch``: the hand mixes in (``HandStarted.client_seeds``) other seeds than its
  players revealed, in seat order.
"""

from __future__ import annotations

from collections.abc import Sequence

from chieu.games import fairround
from chieu.table.v1 import log_pb2
from chieu.tablelog import sealing
from chieu.tablelog.fold import Table

DEAL_SEALED = "the deal: "
"""How a ``seal_does_not_open`` detail begins when the part is the hand's deal (so the deal cannot
be compared either)."""
Finding = tuple[str, str, str]
"""(code, subject, detail)."""
Place = tuple[int, int]
"""(record version, event index): log order."""


def _seed(b: bytes) -> str:
    return b.hex() if b else "none"


def check(table_id: str, records: Sequence[tuple[int, log_pb2.Record]]) -> list[Finding]:
    """The seed findings of one table's log (its finished hands already opened by
    :func:`sealing.reveal`), in log order."""
    out: list[Finding] = []
    committed: dict[int, tuple[Place, str]] = {}
    given: dict[str, tuple[bytes, Place]] = {}
    ended = sealing.revealed_seeds(record for _, record in records)
    promised: dict[tuple[int, str], tuple[str, Place]] = {}
    """(hand, player) → their client commitment and where (``chieu-fair-v2``)."""
    asked: dict[int, list[str]] = {}
    """Hand → the seats asked to reveal."""
    shown: dict[tuple[int, str], bytes] = {}
    """(hand, player) → the seed they revealed."""

    def commit(hand_no: int, place: Place, commitment: str) -> None:
        if hand_no in committed:
            out.append(("commitment_twice", f"{table_id} hand {hand_no}", f"record version {place[0]} publishes a "
                        f"second commitment for it (the first at version {committed[hand_no][0][0]})"))
            return
        committed[hand_no] = (place, commitment)

    for seq, record in records:
        version = int(record.version)
        unopened: set[int] = set()
        if record.WhichOneof("cause") == "sealed_command":
            unopened.add(int(record.sealed_command.hand_no))
        for i, ev in enumerate(record.events):
            kind = ev.WhichOneof("kind")
            if kind == "game_event":  # the most of a log: nothing to read here
                continue
            if kind == "sealed":
                unopened.add(int(ev.sealed.hand_no))
            elif kind == "table_created" and ev.table_created.HasField("next_seed"):
                commit(int(ev.table_created.next_seed.hand_no), (version, i), ev.table_created.next_seed.commitment)
            elif kind in ("player_seated", "player_ready"):
                e = getattr(ev, kind)
                if e.client_seed:
                    given[e.player_id] = (bytes(e.client_seed), (version, i))
            elif kind == "player_left":
                given.pop(ev.player_left.player_id, None)
            elif kind in ("client_committed", "reveals_asked", "client_revealed", "round_cancelled"):
                out.extend(_round(table_id, getattr(ev, kind), (version, i), promised, asked, shown, committed))
            elif kind == "hand_started" and ev.hand_started.algorithm == fairround.ALGORITHM:
                out.extend(_hand_v2(table_id, ev.hand_started, committed.get(int(ev.hand_started.hand_no)),
                                    promised, shown))
                given.clear()  # (the fold forgets every client seed at any HandStarted)
                if ev.hand_started.HasField("next_seed"):
                    commit(int(ev.hand_started.next_seed.hand_no), (version, i), ev.hand_started.next_seed.commitment)
            elif kind == "hand_started":
                out.extend(_hand(table_id, ev.hand_started, committed.get(int(ev.hand_started.hand_no)), given))
                given.clear()
                if ev.hand_started.HasField("next_seed"):
                    commit(int(ev.hand_started.next_seed.hand_no), (version, i), ev.hand_started.next_seed.commitment)
        for hand_no in sorted(unopened & ended.keys()):
            deal = any(ev.WhichOneof("kind") == "hand_started" for ev in record.events)
            out.append(("seal_does_not_open", f"{table_id} hand {hand_no}", f"{DEAL_SEALED if deal else ''}record "
                        f"version {version} (stream sequence {seq}): a sealed part does not open with the server "
                        "seed HandEnded revealed: changed, or sealed under another key"))
    return out


def _hand(table_id: str, h: log_pb2.HandStarted, published: tuple[Place, str] | None,
          given: dict[str, tuple[bytes, Place]]) -> list[Finding]:
    subject = f"{table_id} hand {h.hand_no}"
    out: list[Finding] = []
    players, mixed = list(h.players), [bytes(s) for s in h.client_seeds]
    wrong = [f"seat {s} ({p}): mixes in {_seed(mixed[s] if s < len(mixed) else b'')}, the player gave "
             f"{_seed(given.get(p, (b'', (0, 0)))[0])}" for s, p in enumerate(players)
             if (mixed[s] if s < len(mixed) else b"") != given.get(p, (b"", (0, 0)))[0]]
    if len(mixed) != len(players):
        wrong.insert(0, f"{len(mixed)} client seeds for {len(players)} players")
    if wrong:
        out.append(("client_seed_mismatch", subject, "; ".join(wrong)))
    if published is None:
        out.append(("commitment_late", subject, "no commitment for the hand was published before it started"))
        return out
    (at, commitment) = published
    if commitment != h.seed_commitment:
        out.append(("commitment_late", subject, f"the commitment published for it at record version {at[0]} is not "
                    "HandStarted's seed_commitment: the hand's commitment was not published before its seeds"))
        return out
    early = [f"{p}'s at record version {given[p][1][0]} event {given[p][1][1]}"
             for p, s in zip(players, mixed, strict=False) if s and p in given and given[p][1] < at]
    if early:
        out.append(("commitment_late", subject, f"its commitment is published at record version {at[0]} event "
                    f"{at[1]}, after client seeds it mixes in were given: {', '.join(early)}"))
    return out


RoundEvent = log_pb2.ClientCommitted | log_pb2.RevealsAsked | log_pb2.ClientRevealed | log_pb2.RoundCancelled


def _round(table_id: str, e: RoundEvent, place: Place, promised: dict[tuple[int, str], tuple[str, Place]],
           asked: dict[int, list[str]], shown: dict[tuple[int, str], bytes],
           committed: dict[int, tuple[Place, str]]) -> list[Finding]:
    """The findings of one event of a commit–reveal round, the round's state brought up to date."""
    hand_no = int(e.hand_no)
    subject = f"{table_id} hand {hand_no}"
    at = f"record version {place[0]} event {place[1]}"
    if isinstance(e, log_pb2.ClientCommitted):
        if hand_no in asked:
            return [("commitment_late", subject, f"{at}: {e.player_id} commits after the hand's reveals were asked")]
        promised[(hand_no, e.player_id)] = (e.commitment, place)
        return []
    if isinstance(e, log_pb2.RevealsAsked):
        asked[hand_no] = list(e.players)
        missing = [p for p in e.players if (hand_no, p) not in promised]
        return [("commitment_late", subject, f"{at}: reveals asked of seats that never committed: "
                 f"{', '.join(missing)}")] if missing else []
    if isinstance(e, log_pb2.RoundCancelled):
        asked.pop(hand_no, None)
        for k in [k for k in (*promised, *shown) if k[0] == hand_no]:
            promised.pop(k, None)
            shown.pop(k, None)
        committed[hand_no] = (place, e.next_seed.commitment)  # a fresh server seed for the same hand
        return []
    if hand_no not in asked:
        return [("commitment_late", subject, f"{at}: {e.player_id} reveals before the hand's reveals were asked "
                 "(before every commitment was in)")]
    commitment = promised.get((hand_no, e.player_id), ("", place))[0]
    if e.player_id not in asked[hand_no] or len(e.seed) != fairround.SEED_BYTES or \
            fairround.client_commitment(table_id, hand_no, e.player_id, e.seed) != commitment:
        return [("reveal_mismatch", subject, f"{at}: {e.player_id}'s revealed seed {_seed(e.seed)} does not "
                 f"open their commitment {commitment or '(none)'}")]
    shown[(hand_no, e.player_id)] = bytes(e.seed)
    return []


def _hand_v2(table_id: str, h: log_pb2.HandStarted, published: tuple[Place, str] | None,
             promised: dict[tuple[int, str], tuple[str, Place]], shown: dict[tuple[int, str], bytes]) -> list[Finding]:
    """A ``chieu-fair-v2`` hand: its seeds the ones revealed, its server seed committed before them."""
    hand_no = int(h.hand_no)
    subject = f"{table_id} hand {hand_no}"
    out: list[Finding] = []
    players, mixed = list(h.players), [bytes(s) for s in h.client_seeds]
    wrong = [f"seat {s} ({p}): mixes in {_seed(mixed[s] if s < len(mixed) else b'')}, the player revealed "
             f"{_seed(shown.get((hand_no, p), b''))}" for s, p in enumerate(players)
             if (mixed[s] if s < len(mixed) else b"") != shown.get((hand_no, p), b"")]
    if len(mixed) != len(players):
        wrong.insert(0, f"{len(mixed)} client seeds for {len(players)} players")
    if wrong:
        out.append(("client_seed_mismatch", subject, "; ".join(wrong)))
    if published is None or published[1] != h.seed_commitment:
        out.append(("commitment_late", subject, "no commitment to its server seed (HandStarted's seed_commitment) "
                    "was published before it started"))
        return out
    early = [f"{p}'s at record version {promised[(hand_no, p)][1][0]}" for p in players
             if (hand_no, p) in promised and promised[(hand_no, p)][1] < published[0]]
    if early:
        out.append(("commitment_late", subject, f"its server seed's commitment is published at record version "
                    f"{published[0][0]}, after client commitments: {', '.join(early)}"))
    return out


def unfoldable(table_id: str, records: Sequence[tuple[int, log_pb2.Record]]) -> str:
    """Where the table's fold first fails, in words (the records folded one by one: called only
    after the replay failed, so the common path folds once)."""
    table = Table(table_id)
    for seq, record in records:
        try:
            table.apply(record, seq)
        except Exception:  # the fold's own checks and anything a forged record trips over
            kinds = ", ".join(str(ev.WhichOneof("kind")) for ev in record.events) or "no events"
            return (f"record version {record.version} (stream sequence {seq}; events: {kinds}) cannot be applied "
                    "to the table as folded from the records before it")
    return "every record folds, but the replay of its hands does not: a hand's records contradict each other"
