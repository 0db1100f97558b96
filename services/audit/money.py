"""The ledger reconciled with the table logs, read-only.

- Every ``Settlement`` of the logs is posted exactly once, as the log says: the posting
  ``<table>/<hand>/<first_leg>``, its transfers ``<table>/<hand>/<first_leg + i>`` from seat to
  seat (an absent seat: the table's gà pot) of ``amount × stake`` in the table's currency
  (金币 at coin tables, ``points:<game>`` elsewhere) with the game's reason. A 金币 settlement a
  loser could not pay in full is posted capped (coins.md §6.5): then what each party was owed
  (``owed``) must net to exactly the log's amounts, and nobody receives more than owed.
- Nothing in the books without a source: a settlement posting without its log settlement, an
  operator's posting (adjustment, reward, purchase) without an actor and a reason, a player's
  paid request whose id does not name the player whose accounts it moves, or a kind the ledger
  does not make, is a finding.
- Every balance equals the sum of its transfers, every currency sums to zero, no player's or
  pot's 金币 / 红心币 is below zero, no transfer joins accounts of another currency.

This is an independent reading of the ledger's rules (``docs/ledger.md``), not the ledger's
code: it imports none of it. It runs in one read-only, repeatable-read transaction.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from chieu.audit.logs import Logs
from chieu.audit.report import Report
from chieu.kit import names
from chieu.table.v1 import log_pb2

AREA = "ledger"
OPERATOR_KINDS = ("adjust", "reward", "purchase", "review")
"""Postings an operator makes (with an actor and a reason: the memo)."""
PLAYER_KINDS = ("welcome", "convert", "negative_reset", "reputation_reset", "song", "membership")
"""Postings a player's own request makes: ``<kind>/<player>[/<request>]``, moving that player's money."""
WALLETS = ("coins", "hearts")


@dataclass(frozen=True, slots=True)
class Leg:
    id: str
    debit: str
    credit: str
    amount: int
    reason: str


def currency_of(s: log_pb2.Settlement) -> str:
    return "coins" if s.currency == log_pb2.CURRENCY_COINS else f"points:{s.game}"


def expected_legs(table_id: str, s: log_pb2.Settlement) -> list[Leg] | str:
    """The legs the log says a settlement posts (or why it cannot say: a seat with no player)."""
    currency = currency_of(s)
    out: list[Leg] = []
    for i, t in enumerate(s.transfers):
        ends = []
        for has, seat in ((t.HasField("from_seat"), t.from_seat), (t.HasField("to_seat"), t.to_seat)):
            if not has:
                ends.append(f"pot/{currency}/{table_id}")
            elif 0 <= seat < len(s.players):
                ends.append(f"player/{currency}/{s.players[seat]}")
            else:
                return f"transfer {i} names seat {seat}, which has no player"
        out.append(Leg(f"{table_id}/{s.hand_no}/{s.first_leg + i}", ends[0], ends[1], int(t.amount) * int(s.stake),
                       t.reason))
    return out


def settlements(logs: Logs) -> dict[str, tuple[str, int, log_pb2.Settlement]]:
    """Every settlement with a transfer, by its posting id: (table, hand, settlement)."""
    out: dict[str, tuple[str, int, log_pb2.Settlement]] = {}
    for table_id, records in logs.tables.items():
        for _, rec in records:
            for ev in rec.events:
                if ev.WhichOneof("kind") == "settlement" and len(ev.settlement.transfers) > 0:
                    s = ev.settlement
                    out[f"{table_id}/{s.hand_no}/{s.first_leg}"] = (table_id, int(s.hand_no), s)
    return out


def _net(legs: Sequence[tuple[str, str, int]]) -> dict[str, int]:
    net: dict[str, int] = defaultdict(int)
    for debit, credit, amount in legs:
        net[debit] -= amount
        net[credit] += amount
    return {a: n for a, n in net.items() if n}


def _compare(pid: str, want: list[Leg], got: list[Any]) -> str:
    """What differs between the log's legs and the posted transfers ("" when nothing)."""
    if any("/pay/" in r["id"] or "/get/" in r["id"] for r in got):
        # capped (coins.md §6.5): through the clearing account; owed must net to the log's amounts
        owed = _net([(r["debit"], r["credit"], int(r["owed"])) for r in got])
        owed.pop("system/coins/clearing", None)
        want_net = _net([(leg.debit, leg.credit, leg.amount) for leg in want])
        if owed != want_net:
            return f"capped posting owes {owed}, the log says {want_net}"
        for r in got:
            if r["reason"] != "capped" or int(r["amount"]) > int(r["owed"]):
                return f"capped transfer {r['id']} pays {r['amount']} of {r['owed']} owed ({r['reason']})"
        if _net([(r["debit"], r["credit"], int(r["amount"])) for r in got]).get("system/coins/clearing"):
            return "the clearing account does not net to 0 in the posting"
        return ""
    posted = {r["id"]: Leg(r["id"], r["debit"], r["credit"], int(r["amount"]), r["reason"]) for r in got}
    logged = {leg.id: leg for leg in want}
    diffs = []
    for leg_id in sorted(set(posted) | set(logged)):
        a, b = logged.get(leg_id), posted.get(leg_id)
        if a == b:
            continue
        if a is None:
            diffs.append(f"{leg_id} posted but not in the log")
        elif b is None:
            diffs.append(f"{leg_id} in the log but not posted")
        else:
            fields = [f"{f} {getattr(b, f)} (log: {getattr(a, f)})" for f in ("debit", "credit", "amount", "reason")
                      if getattr(a, f) != getattr(b, f)]
            diffs.append(f"{leg_id}: " + ", ".join(fields))
    return "; ".join(diffs)


def _owner(account: str) -> tuple[str, str, str]:
    kind, currency, owner = account.split("/", 2)
    return kind, currency, owner


def _unsourced(p: Any, legs: list[Any]) -> tuple[str, str] | None:
    """(code, why) when a posting that is no settlement has no acceptable source."""
    kind = p["kind"]
    if kind in OPERATOR_KINDS:
        if not p["actor"] or not (p["memo"] or "").strip():
            return "operator_without_reason", f"{kind} by {p['actor'] or 'nobody'} with reason {p['memo']!r}"
        if not p["id"].startswith(f"{kind}/" if kind != "adjust" else "adjust/"):
            return "posting_without_source", f"a {kind} posting under the id {p['id']}"
        return None
    if kind in PLAYER_KINDS:
        players = {_owner(a)[2] for r in legs for a in (r["debit"], r["credit"]) if _owner(a)[0] == "player"}
        if len(players) != 1:
            return "posting_without_source", f"a {kind} posting moving the money of {sorted(players)}"
        (who,) = players
        if p["id"] != f"{kind}/{who}" and not p["id"].startswith(f"{kind}/{who}/"):
            return "posting_without_source", f"a {kind} posting {p['id']} moving the money of {who}"
        return None
    return "posting_without_source", f"a posting of kind {kind!r}, which no source makes"


def _posting_ids(table_id: str, data: bytes) -> list[str]:
    """The posting ids of a record's settlements (none if it does not parse)."""
    try:
        record = log_pb2.Record.FromString(data)
    except Exception:  # a record that does not parse is still listed, by its sequence
        return []
    return [f"{table_id}/{e.settlement.hand_no}/{e.settlement.first_leg}" for e in record.events
            if e.WhichOneof("kind") == "settlement" and e.settlement.transfers]


async def reconcile(conn: Any, logs: Logs, report: Report, stream: str = names.TABLES.name) -> None:
    """Reconcile the ledger on ``conn`` (asyncpg) with ``logs`` into ``report``."""
    await conn.execute("SET default_transaction_read_only = on")
    async with conn.transaction(isolation="repeatable_read", readonly=True):
        accounts = await conn.fetch("SELECT id, kind, currency, balance FROM ledger_accounts")
        postings = {r["id"]: r for r in await conn.fetch(
            "SELECT id, kind, table_id, hand_no, actor, memo FROM ledger_postings")}
        transfers = await conn.fetch(
            "SELECT id, posting_id, debit, credit, currency, amount, owed, reason FROM ledger_transfers ORDER BY seq")
        refused = {r["posting_id"]: r["outcome"] for r in await conn.fetch(
            "SELECT posting_id, outcome FROM ledger_inbox WHERE stream = $1 AND outcome LIKE 'refused%'", stream)}
        parked = await conn.fetch(
            "SELECT seq, table_id, error, message, data FROM ledger_parked WHERE stream = $1 AND resolved_at IS NULL"
            " ORDER BY seq", stream) if await conn.fetchval("SELECT to_regclass('ledger_parked')") else []
    report.count("accounts", len(accounts))
    report.count("postings", len(postings))
    report.count("transfers", len(transfers))
    by_posting: dict[str, list[Any]] = defaultdict(list)
    for t in transfers:
        by_posting[t["posting_id"]].append(t)

    # the records the ledger parked (it could not post them): each one finding, its postings not missing
    waiting = set()
    for r in parked:
        report.add(AREA, "settlement_parked", f"{r['table_id']} stream sequence {r['seq']}",
                   f"the ledger parked it ({r['error']}: {r['message']}); chieu ledger-parked retry after a fix")
        waiting.update(_posting_ids(r["table_id"], bytes(r["data"])))

    # every settlement of the logs, posted once and as logged
    logged = settlements(logs)
    report.count("settlements", len(logged))
    for pid, (table_id, hand_no, s) in logged.items():
        subject = f"{table_id} hand {hand_no} legs {s.first_leg}..{s.first_leg + len(s.transfers) - 1}"
        want = expected_legs(table_id, s)
        p = postings.get(pid)
        if p is None:
            if pid in waiting:
                continue
            if pid in refused:
                report.add(AREA, "settlement_refused", subject, f"the ledger's inbox says {refused[pid]}")
            else:
                report.add(AREA, "settlement_missing", subject, f"no posting {pid}")
            continue
        if isinstance(want, str):
            report.add(AREA, "settlement_altered", subject, f"posted, but the log's settlement is malformed: {want}")
            continue
        why = _compare(pid, want, by_posting.get(pid, []))
        if p["kind"] != "settlement" or p["table_id"] != table_id or p["hand_no"] != hand_no:
            why = f"posting {pid} is a {p['kind']} of table {p['table_id']} hand {p['hand_no']}; " + why
        if why:
            report.add(AREA, "settlement_altered", subject, why)

    # nothing without a source
    outside = 0
    for pid, p in postings.items():
        legs = by_posting.get(pid, [])
        if p["kind"] == "settlement":
            if pid in logged:
                continue
            if not logs.complete and p["table_id"] not in logs.tables:
                outside += 1
                continue
            report.add(AREA, "posting_without_source", pid, f"a settlement posting of table {p['table_id']} hand "
                       f"{p['hand_no']} that no settlement of the log makes ({len(legs)} transfers)")
            continue
        found = _unsourced(p, legs)
        if found is not None:
            report.add(AREA, found[0], pid, found[1])
        report.count(f"postings_{p['kind']}" if p["kind"] in OPERATOR_KINDS else "postings_requests")
    if outside:
        report.count("settlement_postings_outside_the_period", outside)

    # balances, zero sums, wallets, currencies
    computed: dict[str, int] = defaultdict(int)
    currency = {a["id"]: a["currency"] for a in accounts}
    for t in transfers:
        computed[t["debit"]] -= int(t["amount"])
        computed[t["credit"]] += int(t["amount"])
        if currency.get(t["debit"]) != t["currency"] or currency.get(t["credit"]) != t["currency"]:
            report.add(AREA, "transfer_currency", t["id"], f"{t['currency']} from {t['debit']} to {t['credit']}")
    sums: dict[str, int] = defaultdict(int)
    for a in accounts:
        balance = int(a["balance"])
        sums[a["currency"]] += balance
        if balance != computed.get(a["id"], 0):
            report.add(AREA, "balance_mismatch", a["id"], f"balance {balance}, the transfers give "
                       f"{computed.get(a['id'], 0)}")
        if balance < 0 and a["kind"] in ("player", "pot") and a["currency"] in WALLETS:
            report.add(AREA, "negative_wallet", a["id"], f"balance {balance}")
    for cur, total in sorted(sums.items()):
        if total != 0:
            report.add(AREA, "currency_not_zero", cur, f"the accounts sum to {total}")
    report.count("currencies", len(sums))
