"""Reputation (信誉度) reconciled with its sources, read-only: the table logs' quits (强退) and
disconnects (断线不重连) at any table, and the paid resets (信誉度复位) in the ledger.

- Every ``ForcedQuit`` and ``Disconnected`` of the logs has exactly one change, keyed
  ``<stream>/<sequence>/<event index>``, of that player and cause; every reset change
  (``reset/<player>/<request>``) has its paid posting ``reputation_reset/<player>/<request>`` in the
  ledger, moving that player's 金币, and every such posting has its reset change.
- Each player's changes, in the order the ladder made them, follow on from the start (each
  ``before`` the previous ``after``), each ``after`` is the rule applied to its ``before`` (a quit or
  a disconnect lowers it, not below 0; a reset restores the start), and the quits and disconnects
  come in stream order; the player's reputation row is the last ``after`` with the counts of
  quits and disconnects.

A period (``--table`` or a period archive) checks the players the period names; the whole stream
checks every player, and every change must then have its source. Resets come from another
stream than the quits, so their place among them is the ladder's own order, checked for
continuity rather than derived.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from chieu.audit.logs import Logs
from chieu.audit.report import Report
from chieu.audit.snapshot import read_only
from chieu.kit import names
from chieu.ladder.terms import Terms

AREA = "reputation"


@dataclass(frozen=True, slots=True)
class Conduct:
    """A quit or a disconnect of the log: who, what, where (stream sequence, event index)."""

    player_id: str
    cause: str
    seq: int
    index: int
    table_id: str


def conducts(logs: Logs, stream: str = names.TABLES.name) -> dict[str, Conduct]:
    """Every quit and disconnect of the logs, by the key of the change it must cause."""
    out: dict[str, Conduct] = {}
    for table_id, records in logs.tables.items():
        for seq, rec in records:
            for i, e in enumerate(rec.events):
                kind = e.WhichOneof("kind")
                if kind in ("forced_quit", "disconnected"):
                    ev = getattr(e, kind)
                    cause = "quit" if kind == "forced_quit" else "disconnect"
                    out[f"{stream}/{seq}/{i}"] = Conduct(ev.player_id, cause, seq, i, table_id)
    return out


def _log_key(key: str, stream: str) -> tuple[int, int] | None:
    """(sequence, event index) of a change key on ``stream`` (None: another kind of key)."""
    head, _, rest = key.partition(f"{stream}/")
    seq, _, index = rest.partition("/")
    if head or not seq.isdigit() or not index.isdigit():
        return None
    return int(seq), int(index)


async def reconcile(conn: Any, logs: Logs, report: Report, terms: Terms | None = None,
                    stream: str = names.TABLES.name, ledger: Any = None) -> None:
    """Reconcile reputations on ``conn`` (asyncpg: the ladder's tables, and the ledger's unless
    ``ledger`` is given, the ledger's own database) with ``logs``."""
    terms = terms or Terms()
    books = conn if ledger is None else ledger
    async with read_only(conn, books):
        rows = await conn.fetch("SELECT player_id, score, quits, disconnects FROM ladder_reputation")
        changes = await conn.fetch(
            "SELECT id, player_id, cause, cause_key, before, after FROM ladder_reputation_changes ORDER BY id")
        cursor = int(await conn.fetchval("SELECT coalesce(max(seq), 0) FROM ladder_cursor WHERE stream = $1",
                                         stream) or 0)
        paid = {r["id"]: r for r in await books.fetch(
            "SELECT p.id, array_remove(array_agg(t.debit), NULL) AS debits FROM ledger_postings p"
            " LEFT JOIN ledger_transfers t ON t.posting_id = p.id"
            " WHERE p.kind = 'reputation_reset' GROUP BY p.id")}
    report.count("reputation_changes", len(changes))
    complete = logs.complete
    scope = logs.players()

    def mine(player: str) -> bool:
        return complete or player in scope

    # every quit and disconnect of the logs has its change (once applied by the ladder)
    expected = conducts(logs, stream)
    report.count("reputation_quits_and_disconnects", len(expected))
    behind = [c for c in expected.values() if c.seq > cursor]
    if behind:
        report.add(AREA, "ladder_behind", f"reputation: cursor {cursor}", f"{len(behind)} quits or disconnects "
                   f"after the ladder's cursor (the last at stream sequence {max(c.seq for c in behind)}) are not "
                   "applied")
    by_key = {r["cause_key"]: r for r in changes}
    for key, c in expected.items():
        if c.seq <= cursor and key not in by_key:
            report.add(AREA, "reputation_change_missing", f"{c.player_id} at {c.table_id}",
                       f"the {c.cause} at stream sequence {c.seq} (event {c.index}) has no reputation change {key}")
    resets = 0
    for pid, p in paid.items():
        payers = [d.removeprefix("player/coins/") for d in p["debits"] or [] if d.startswith("player/coins/")]
        if not any(mine(player) for player in payers):
            continue
        resets += 1
        key = pid.removeprefix("reputation_")
        if key not in by_key:
            report.add(AREA, "reputation_change_missing", ", ".join(payers),
                       f"the ledger's paid reset {pid} has no reputation change {key}")
    report.count("reputation_resets_paid", resets)

    # every change has its source and follows the rules, in order
    seqs = {seq for recs in logs.tables.values() for seq, _ in recs}
    by_player: dict[str, list[Any]] = defaultdict(list)
    for r in changes:
        by_player[r["player_id"]].append(r)
    for player, mine_rows in by_player.items():
        if not mine(player):
            continue
        score, last_conduct = terms.reputation_start, (0, -1)
        for r in mine_rows:
            key, cause = r["cause_key"], r["cause"]
            subject = f"{player} change {r['id']}"
            if cause == "reset":
                posting = f"reputation_{key}"
                p = paid.get(posting)
                if not key.startswith(f"reset/{player}/") or p is None:
                    report.add(AREA, "reputation_change_without_source", subject, f"a reset {key} with no paid "
                               f"posting {posting} in the ledger")
                elif f"player/coins/{player}" not in (p["debits"] or []):
                    report.add(AREA, "reputation_change_without_source", subject, f"a reset {key} whose posting "
                               f"{posting} does not take {player}'s 金币")
            else:
                at = _log_key(key, stream)
                source = expected.get(key)
                if source is None:
                    if complete or (at is not None and at[0] in seqs):
                        report.add(AREA, "reputation_change_without_source", subject,
                                   f"a {cause} {key} that no quit or disconnect of the log gives")
                elif (source.player_id, source.cause) != (player, cause):
                    report.add(AREA, "reputation_change_mismatch", subject, f"a {cause} of {player} for {key}, which "
                               f"the log says is a {source.cause} of {source.player_id}")
                if at is not None:
                    if at < last_conduct:
                        report.add(AREA, "reputation_change_mismatch", subject, f"{key} applied after stream "
                                   f"sequence {last_conduct[0]}: out of stream order")
                    last_conduct = max(last_conduct, at)
            want = terms.reputation_after(int(r["before"]), cause)
            if int(r["before"]) != score or int(r["after"]) != want:
                report.add(AREA, "reputation_change_mismatch", subject,
                           f"{cause} {r['before']} → {r['after']}; the previous change leaves {score}, and the rule "
                           f"gives {r['before']} → {want}")
            score = int(r["after"])

    # every reputation is what its changes give
    stored = {r["player_id"]: r for r in rows}
    checked = 0
    for player in sorted(set(stored) | set(by_player)):
        if not mine(player):
            continue
        checked += 1
        got = by_player.get(player, [])
        folded = (int(got[-1]["after"]) if got else terms.reputation_start,
                  sum(r["cause"] == "quit" for r in got), sum(r["cause"] == "disconnect" for r in got))
        row = stored.get(player)
        have = None if row is None else (int(row["score"]), int(row["quits"]), int(row["disconnects"]))
        if have != folded:
            report.add(AREA, "reputation_mismatch", player, f"the ladder says {_say(have)}, its {len(got)} changes "
                       f"give {_say(folded)}")
    report.count("reputations", checked)


def _say(r: tuple[int, int, int] | None) -> str:
    return "nothing" if r is None else f"reputation {r[0]} after {r[1]} quits and {r[2]} disconnects"
