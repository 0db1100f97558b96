"""The ladder's 金币 rewards reconciled with its rules and with the ledger, read-only.

- **The rules → the ladder's records.** Every history row that raised a player's best level
  gives ``ladder/best/<game>/<player>/<best>`` of ``best × CHIEU_LADDER_REWARD_BEST_COINS`` (once
  per best, however often it is reached); every decided month (``ladder_months``) gives
  ``ladder/monthly/<game>/<month>/<player>`` to the month's ranking's first places, the configured
  amounts by place (``CHIEU_LADDER_REWARD_MONTHLY``). The ranking is computed again here from the
  history: each player's last change of the month, by best, level, lp, then who reached it first.
  A reward the rules give and the ladder does not record is ``reward_missing``; one recorded
  without its rule ``reward_without_source``; another amount, player or game ``reward_altered``.
- **The ladder's records ↔ the ledger.** Every recorded reward is posted once in the ledger as
  ``reward/<reward id>``: one transfer of its 金币 from the rewards account to its player, with
  its reason (``reward_unpaid`` when not posted — saying whether the ladder's record for the
  ledger is published, or the ledger refused it, e.g. over the daily cap —, ``reward_altered``
  when posted otherwise); every
  ladder reward posting in the ledger (``reward/ladder/…`` or made by ``service:ladder``) has its
  record (``reward_without_source``).

The history rows themselves are held to the logs by :mod:`chieu.audit.levels`. A period checks
the rewards of the players it names; the whole stream checks all.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from chieu.audit.logs import Logs
from chieu.audit.report import Report
from chieu.audit.snapshot import read_only
from chieu.ladder.terms import Terms

AREA = "rewards"
LADDER_SERVICE = "service:ladder"


@dataclass(frozen=True, slots=True)
class Reward:
    """A reward: its id, player, game, kind (best, monthly) and 金币."""

    reward_id: str
    player_id: str
    game: str
    kind: str
    coins: int


def best_reward_id(game: str, player_id: str, best: int) -> str:
    return f"ladder/best/{game}/{player_id}/{best}"


def monthly_reward_id(game: str, month: str, player_id: str) -> str:
    return f"ladder/monthly/{game}/{month}/{player_id}"


def ranking(rows: list[Any]) -> list[str]:
    """A month's ranking from its history rows (in id order): each player's last change, by best,
    level, lp (highest first), then who reached that standing first (its history id), then id."""
    last: dict[str, Any] = {}
    for r in rows:
        last[r["player_id"]] = r

    def key(r: Any) -> tuple[int, int, int, int, str]:
        reached = int(r["reached"]) or int(r["id"])
        return -int(r["best_after"]), -int(r["level_after"]), -int(r["lp_after"]), reached, str(r["player_id"])

    return [r["player_id"] for r in sorted(last.values(), key=key)]


def expected(best_ups: list[Any], months: dict[tuple[str, str], list[Any]], terms: Terms) -> dict[str, Reward]:
    """Every reward the rules give, by id."""
    out: dict[str, Reward] = {}
    if terms.reward_best_coins > 0:
        for r in best_ups:
            best = int(r["best_after"])
            rid = best_reward_id(r["game"], r["player_id"], best)
            out.setdefault(rid, Reward(rid, r["player_id"], r["game"], "best", best * terms.reward_best_coins))
    for (game, month), rows in months.items():
        for player, coins in zip(ranking(rows), terms.reward_monthly, strict=False):
            rid = monthly_reward_id(game, month, player)
            out[rid] = Reward(rid, player, game, "monthly", coins)
    return out


def _unpaid_state(r: Any, refused: str | None, recorded: bool, published: Any) -> str:
    """Why a recorded reward has no posting, as far as the books tell."""
    if refused:
        return f"the ledger refused its record ({refused})"
    if r["paid_at"] is not None:  # paid through the ledger's RPC (before the records on NATS)
        return f"the ladder marks it paid at {r['paid_at']:%Y-%m-%d %H:%M:%S}"
    if r["attempts"]:
        return f"unpaid after {r['attempts']} attempts" + (f" ({r['last_error']})" if r["last_error"] else "")
    if not recorded and r["kind"] == "monthly":
        return "a month's place is paid by an operator's PayMonthlyRewards, which has not paid it"
    if not recorded:
        return "the ladder wrote no record of it for the ledger"
    if published is None:
        return "its record for the ledger is not published yet"
    return f"its record for the ledger was published at {published:%Y-%m-%d %H:%M:%S}"


async def reconcile(conn: Any, logs: Logs, report: Report, terms: Terms | None = None, ledger: Any = None) -> None:
    """Reconcile the ladder's rewards on ``conn`` (asyncpg: the ladder's tables, and the ledger's
    unless ``ledger`` is given, the ledger's own database)."""
    terms = terms or Terms()
    books = conn if ledger is None else ledger
    async with read_only(conn, books):
        recorded = await conn.fetch(
            "SELECT reward_id, player_id, game, kind, coins, reason, paid_at, attempts, last_error FROM ladder_rewards")
        best_ups = await conn.fetch(
            "SELECT id, game, player_id, best_after FROM ladder_history"
            " WHERE cause IN ('result', 'penalty') AND best_after > best_before ORDER BY id")
        decided = await conn.fetch("SELECT game, month FROM ladder_months")
        month_rows = await conn.fetch(
            "SELECT h.id, h.game, h.month, h.player_id, h.level_after, h.best_after, h.lp_after, h.reached"
            " FROM ladder_history h JOIN ladder_months m ON m.game = h.game AND m.month = h.month ORDER BY h.id")
        announced = {r["rid"]: r["published_at"] for r in await conn.fetch(
            "SELECT payload->>'reward_id' AS rid, published_at FROM ladder_outbox WHERE topic = 'reward'")}
        refusals = {r["posting_id"]: r["outcome"] for r in await books.fetch(
            "SELECT posting_id, outcome FROM ledger_inbox WHERE posting_id LIKE 'reward/%'"
            " AND outcome LIKE 'refused:%'")}
        postings = await books.fetch(
            "SELECT p.id, p.actor, p.memo, t.debit, t.credit, t.amount, t.reason FROM ledger_postings p"
            " LEFT JOIN ledger_transfers t ON t.posting_id = p.id WHERE p.kind = 'reward' ORDER BY p.id, t.seq")
    complete, scope = logs.complete, logs.players()

    def mine(player: str) -> bool:
        return complete or player in scope

    months: dict[tuple[str, str], list[Any]] = {(r["game"], r["month"]): [] for r in decided}
    for r in month_rows:
        months[(r["game"], r["month"])].append(r)
    want = {rid: w for rid, w in expected(list(best_ups), months, terms).items() if mine(w.player_id)}
    have = {r["reward_id"]: r for r in recorded if mine(r["player_id"])}
    report.count("ladder_rewards", len(have))
    report.count("ladder_months_decided", len(months))

    # the rules and the ladder's records
    for rid, w in sorted(want.items()):
        r = have.get(rid)
        if r is None:
            report.add(AREA, "reward_missing", rid, f"the rules give {w.player_id} {w.coins} 金币 ({w.kind}); the "
                       "ladder records no such reward")
            continue
        got = Reward(rid, r["player_id"], r["game"], r["kind"], int(r["coins"]))
        if got != w:
            diffs = [f"{f} {getattr(got, f)} (rules: {getattr(w, f)})" for f in ("player_id", "game", "kind", "coins")
                     if getattr(got, f) != getattr(w, f)]
            report.add(AREA, "reward_altered", rid, ", ".join(diffs))
    for rid, r in sorted(have.items()):
        if rid not in want:
            why = ("its month is not decided, or the player holds no rewarded place of it" if r["kind"] == "monthly"
                   else "no history row raised the player's best to that level" if terms.reward_best_coins > 0
                   else "no best-level rewards are configured")
            report.add(AREA, "reward_without_source", rid, f"a {r['kind']} reward of {r['coins']} 金币 to "
                       f"{r['player_id']}: {why}")

    # the ladder's records and the ledger
    legs: dict[str, list[Any]] = defaultdict(list)
    actors: dict[str, str] = {}
    for p in postings:
        actors[p["id"]] = p["actor"]
        if p["debit"] is not None:
            legs[p["id"]].append(p)
    paid = 0
    for rid, r in sorted(have.items()):
        pid = f"reward/{rid}"
        if pid not in actors:
            state = _unpaid_state(r, refusals.get(pid), rid in announced, announced.get(rid))
            report.add(AREA, "reward_unpaid", rid, f"no posting {pid} in the ledger; {state}")
            continue
        paid += 1
        moved = [(t["debit"], t["credit"], int(t["amount"]), t["reason"]) for t in legs[pid]]
        owed = [("system/coins/rewards", f"player/coins/{r['player_id']}", int(r["coins"]), r["reason"])]
        if moved != owed:
            report.add(AREA, "reward_altered", rid, f"the ledger's posting {pid} moves {moved}; the ladder's record "
                       f"says {owed}")
    report.count("ladder_rewards_posted", paid)
    owners = {r["reward_id"]: r["player_id"] for r in recorded}
    for pid, actor in sorted(actors.items()):
        rid = pid.removeprefix("reward/")
        if not (rid.startswith("ladder/") or actor == LADDER_SERVICE) or rid in have:
            continue
        players = {t["credit"].removeprefix("player/coins/") for t in legs[pid]}
        if not complete and not any(p in scope for p in players):
            continue
        if rid in owners:
            report.add(AREA, "reward_altered", rid, f"the ledger's posting {pid} pays {', '.join(sorted(players))}; "
                       f"the ladder's record names {owners[rid]}")
        else:
            report.add(AREA, "reward_without_source", pid, f"a ladder reward posting by {actor or 'nobody'} to "
                       f"{', '.join(sorted(players)) or 'nobody'} that the ladder has no record of")
