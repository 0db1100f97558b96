"""The ladder (过关斩将) reconciled with the table logs, read-only: the pure rules
(``chieu.ladder.rules``) folded over every ``HandEnded``, ``ForcedQuit`` and ``Disconnected`` of
the ladder tables in stream order, compared with the ladder's history and standings.

What the ladder counts is read from the logs here again (not by the ladder's consumer code): a
hand's end at a ladder table gives each seat's result by ``rules.game_results`` (an aborted hand
counts for nobody); a quit or a disconnect at a ladder table gives its penalty at once, which
replaces that player's result of the hand (one result or penalty per table, hand and player).
Each player's standing is ``rules.record`` folded over their results in stream order, with the
ladder's parameters (``CHIEU_LADDER_*``). An operator's correction (a history row with an actor
and a reason) sets a standing at its place among the results; one without a reason is a finding.

That fold from the start needs the whole stream. A period (``--table``, a period archive) holds
only some of its players' results, so there each of its history rows is checked against its
record and the rules applied to the row's own ``before``, and each of its players' rows must
follow on (``before`` = the previous ``after``, in stream order) up to the standing.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from chieu.audit.logs import Logs
from chieu.audit.report import Report
from chieu.kit import names
from chieu.ladder import rules
from chieu.ladder.results import Counted, counted
from chieu.ladder.rules import Params, Standing

AREA = "ladder"


@dataclass(frozen=True, slots=True)
class Row:
    """An expected history row: cause, result, table level, before → after, stream sequence."""

    cause: str
    result: str
    table_level: int
    before: Standing
    after: Standing
    seq: int


def _standing(r: Any, suffix: str) -> Standing:
    return Standing(int(r[f"level{suffix}"]), int(r[f"best{suffix}"]), int(r[f"lp{suffix}"]))


async def reconcile(conn: Any, logs: Logs, report: Report, params: Params | None = None,
                    stream: str = names.TABLES.name) -> None:
    """Fold the rules over ``logs`` and compare with the ladder's tables on ``conn`` (asyncpg)."""
    params = params or Params()
    await conn.execute("SET default_transaction_read_only = on")
    async with conn.transaction(isolation="repeatable_read", readonly=True):
        history = await conn.fetch(
            "SELECT id, player_id, game, cause, result, table_id, hand_no, table_level, level_before, best_before,"
            " lp_before, level_after, best_after, lp_after, stream_seq, actor, reason FROM ladder_history ORDER BY id")
        standings = await conn.fetch("SELECT game, player_id, level, best, lp, games FROM ladder_standings")
        cursor = int(await conn.fetchval("SELECT coalesce(max(seq), 0) FROM ladder_cursor WHERE stream = $1",
                                         stream) or 0)
    report.count("ladder_history_rows", len(history))
    report.count("ladder_standings", len(standings))

    items = [c for seq, rec in logs.in_order() for c in counted(seq, rec)]
    if items and items[-1].seq > cursor:
        behind = [c for c in items if c.seq > cursor]
        report.add(AREA, "ladder_behind", f"cursor {cursor}", f"{len(behind)} results or penalties after the "
                   f"ladder's cursor (the last at stream sequence {behind[-1].seq}) are not applied")
        items = [c for c in items if c.seq <= cursor]
    report.count("ladder_results", sum(len(c.results) for c in items))

    # corrections take their place after the results written before them
    corrections: list[tuple[int, Any]] = []
    last_seq = 0
    for r in history:
        if r["cause"] == "correction":
            corrections.append((last_seq, r))
            if not (r["actor"] or "").strip() or not (r["reason"] or "").strip():
                report.add(AREA, "correction_without_reason", f"{r['game']}/{r['player_id']}",
                           f"history row {r['id']} by {r['actor'] or 'nobody'} with reason {r['reason']!r}")
        elif r["stream_seq"] is not None:
            last_seq = max(last_seq, int(r["stream_seq"]))

    if not logs.complete:
        _period(logs, items, history, standings, report, params)
        return

    state: dict[tuple[str, str], Standing] = {}
    games: dict[tuple[str, str], int] = defaultdict(int)
    expected: dict[tuple[str, int, str], Row] = {}
    pending = list(corrections)

    def correct_upto(seq: int) -> None:
        while pending and pending[0][0] < seq:
            _, r = pending.pop(0)
            key = (r["game"], r["player_id"])
            before = state.get(key, Standing())
            if _standing(r, "_before") != before:
                report.add(AREA, "ladder_history_mismatch", f"{key[0]}/{key[1]}", f"correction row {r['id']} says "
                           f"before {_standing(r, '_before')}, the fold gives {before}")
            state[key] = _standing(r, "_after")

    for c in items:
        correct_upto(c.seq)
        before = {p: state.get((c.game, p), Standing()) for p, _ in c.results}
        for p, result in c.results:
            if (c.table_id, c.hand_no, p) in expected:
                continue  # a penalty replaced this player's result of the hand
            others = [before[q].level for q, _ in c.results if q != p]
            after = rules.record(before[p], result, c.table_level, params, others).standing
            expected[(c.table_id, c.hand_no, p)] = Row(c.cause, result.value, c.table_level, before[p], after, c.seq)
            state[(c.game, p)] = after
            games[(c.game, p)] += 1
    correct_upto(cursor + 1)

    # every history row equal to the fold, every fold's row in the history
    seen: set[tuple[str, int, str]] = set()
    for r in history:
        if r["cause"] == "correction":
            continue
        key = (r["table_id"], int(r["hand_no"] or 0), r["player_id"])
        subject = f"{r['game']}/{r['player_id']} at {r['table_id']} hand {r['hand_no']}"
        want = expected.get(key)
        if want is None:
            if logs.complete or r["table_id"] in logs.tables:
                report.add(AREA, "ladder_row_without_source", subject, f"history row {r['id']} ({r['cause']} "
                           f"{r['result']}) that no record of the log gives")
            continue
        seen.add(key)
        got = Row(r["cause"], r["result"], int(r["table_level"]), _standing(r, "_before"), _standing(r, "_after"),
                  int(r["stream_seq"] or 0))
        if got != want:
            diffs = [f"{f} {getattr(got, f)} (rules: {getattr(want, f)})" for f in Row.__slots__
                     if getattr(got, f) != getattr(want, f)]
            report.add(AREA, "ladder_history_mismatch", subject, f"history row {r['id']}: " + ", ".join(diffs))
    for key, want in expected.items():
        if key not in seen:
            report.add(AREA, "ladder_result_missing", f"{key[2]} at {key[0]} hand {key[1]}",
                       f"{want.cause} {want.result} at stream sequence {want.seq} is not in the history")

    # every standing equal to the fold
    rows = {(r["game"], r["player_id"]): r for r in standings}
    for who, r in rows.items():
        now = _standing(r, "")
        if who not in state:
            if logs.complete:
                report.add(AREA, "standing_without_source", f"{who[0]}/{who[1]}",
                           f"standing {now} with no result, penalty or correction behind it")
            continue
        if now != state[who] or int(r["games"]) != games.get(who, 0):
            report.add(AREA, "standing_mismatch", f"{who[0]}/{who[1]}",
                       f"the ladder says {now} after {r['games']} games, the rules folded over the logs give "
                       f"{state[who]} after {games.get(who, 0)}")
    for who, folded in state.items():
        if who not in rows:
            report.add(AREA, "standing_mismatch", f"{who[0]}/{who[1]}", f"no standing; the rules give {folded}")


def _period(logs: Logs, items: list[Counted], history: list[Any], standings: list[Any], report: Report,
            params: Params) -> None:
    """A period (``--table``, a period archive): its players' standings also hold results of tables
    outside it, so the rules are not folded from the start. Instead every history row the period
    gives is checked against its record and the rules applied to the row's own ``before``; each of
    the period's players' rows follows on from the one before (``before`` = the previous
    ``after``, results in stream order), and their standings are their last rows."""
    by_key = {(r["table_id"], int(r["hand_no"] or 0), r["player_id"]): r for r in history
              if r["cause"] != "correction"}
    seen: set[tuple[str, int, str]] = set()
    for c in items:
        rows = {p: by_key.get((c.table_id, c.hand_no, p)) for p, _ in c.results}
        penalized = {p for p, _ in c.results if (c.table_id, c.hand_no, p) in seen}
        # each player's level when the hand's results are counted (after a penalty of the same hand)
        levels = {q: _standing(r, "_after" if q in penalized else "_before").level
                  for q, r in rows.items() if r is not None}
        for p, result in c.results:
            key = (c.table_id, c.hand_no, p)
            if key in seen:
                continue  # a penalty replaced this player's result of the hand
            seen.add(key)
            r = rows[p]
            if r is None:
                report.add(AREA, "ladder_result_missing", f"{p} at {c.table_id} hand {c.hand_no}",
                           f"{c.cause} {result.value} at stream sequence {c.seq} is not in the history")
                continue
            before = _standing(r, "_before")
            others = [lv for q, lv in levels.items() if q != p]
            after = rules.record(before, result, c.table_level, params, others).standing
            want = Row(c.cause, result.value, c.table_level, before, after, c.seq)
            got = Row(r["cause"], r["result"], int(r["table_level"]), before, _standing(r, "_after"),
                      int(r["stream_seq"] or 0))
            if got != want:
                diffs = [f"{f} {getattr(got, f)} (rules: {getattr(want, f)})" for f in Row.__slots__
                         if getattr(got, f) != getattr(want, f)]
                report.add(AREA, "ladder_history_mismatch", f"{c.game}/{p} at {c.table_id} hand {c.hand_no}",
                           f"history row {r['id']}: " + ", ".join(diffs))
    for r in history:  # the period's tables' rows that no record gives
        key = (r["table_id"], int(r["hand_no"] or 0), r["player_id"])
        if r["cause"] != "correction" and r["table_id"] in logs.tables and key not in seen:
            report.add(AREA, "ladder_row_without_source", f"{r['game']}/{r['player_id']} at {r['table_id']} hand "
                       f"{r['hand_no']}", f"history row {r['id']} ({r['cause']} {r['result']}) that no record of the "
                       "log gives")

    players = logs.players()
    chains: dict[tuple[str, str], list[Any]] = defaultdict(list)
    for r in history:
        if r["player_id"] in players:
            chains[(r["game"], r["player_id"])].append(r)
    for (game, p), chain in chains.items():
        last_seq = 0
        for prev, r in zip([None, *chain], chain, strict=False):
            if prev is not None and _standing(r, "_before") != _standing(prev, "_after"):
                report.add(AREA, "ladder_history_mismatch", f"{game}/{p}", f"history row {r['id']} starts from "
                           f"{_standing(r, '_before')}, row {prev['id']} ended at {_standing(prev, '_after')}")
            if r["cause"] != "correction" and r["stream_seq"] is not None:
                if int(r["stream_seq"]) < last_seq:
                    report.add(AREA, "ladder_history_mismatch", f"{game}/{p}", f"history row {r['id']} (stream "
                               f"sequence {r['stream_seq']}) applied after stream sequence {last_seq}")
                last_seq = max(last_seq, int(r["stream_seq"]))
    report.count("ladder_players_in_period", len({p for _, p in chains}))
    for st in standings:
        who = (st["game"], st["player_id"])
        if st["player_id"] not in players:
            continue
        chain = chains.get(who, [])
        now = _standing(st, "")
        counted_games = sum(r["cause"] != "correction" for r in chain)
        if not chain or now != _standing(chain[-1], "_after") or int(st["games"]) != counted_games:
            last = f"{_standing(chain[-1], '_after')} after {counted_games} games" if chain else "no history"
            report.add(AREA, "standing_mismatch", f"{who[0]}/{who[1]}", f"the ladder says {now} after "
                       f"{st['games']} games, its history {last}")
    for who in chains.keys() - {(st["game"], st["player_id"]) for st in standings}:
        report.add(AREA, "standing_mismatch", f"{who[0]}/{who[1]}", f"no standing; its history ends at "
                   f"{_standing(chains[who][-1], '_after')}")
