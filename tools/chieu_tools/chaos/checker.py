"""The chaos run's checker: every promise checked at the end, from the clients' records
(:mod:`chieu_tools.chaos.records`) and the stores alone (the table stream, the ledger's and the ladder's
PostgreSQL, the lobby's table list).

- **Commands**: every acknowledged command is in its table's log exactly once (and the view it was
  answered with is at or after its record); every refused command is not in it (it changed
  nothing: each record names its command); a command whose outcome the client never learnt is in
  it at most once. No command id appears twice in any log.
- **Logs**: every table's records follow on (versions 1, 2, …: no fork, no gap); every hand passes
  the auditor's check (``chieu.audit``: the commitment, the deal from the revealed seeds, every
  move decided again).
- **Money and levels** (the auditor's reconciliation): every settlement posted exactly once as
  logged, balances equal to their transfers, every currency sums to zero, no 金币 balance below 0;
  every hand's outcome and settlement proven from the rules (the audit's proof); every ladder
  standing equal to the pure rules folded over the logs.
- **Coin hands and the screen**: every reservation of a hand the log ended is released; the
  ledger's collusion screen, at its real settings, holds none of the bots' winnings (honest play:
  a hold is a false positive, or bots that play as a farm). Counted: coin hands, and how many were
  in play while one of their players had another at another table (:func:`coin_hands`).
- **The lobby**: once all is quiet, its table list equals the tables' state folded from the logs
  (seats, host, status, hand, stake), and lists no table without a seated player.
- **Views**: every view a client received is exactly the view the rules give that viewer at that
  version of the log (so no card, tile or seat it could not see, no other viewer's view); no view
  holds the server seed (or the seed material) of a hand not yet revealed; a watch stream's views
  only go forward.

Each violation names its table, version and time, and the nearest fault.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import grpc

from chieu.audit import run as audit_run
from chieu.audit.logs import Logs
from chieu.audit.report import Report
from chieu.games import fair, registry
from chieu.ladder.rules import Params
from chieu.lobby.v1 import lobby_service_pb2 as lobby_pb
from chieu.lobby.v1 import lobby_service_pb2_grpc as lobby_grpc
from chieu.table import views
from chieu.table.v1 import log_pb2
from chieu.table.v1 import table_service_pb2 as pb
from chieu.tablelog import codec
from chieu.tablelog.fold import Table
from chieu_tools.chaos.client import ACKED, REFUSED, UNKNOWN
from chieu_tools.chaos.records import AppliedFault, Command, View, read_commands, read_faults, read_views


@dataclass(frozen=True, slots=True)
class Violation:
    check: str
    table: str
    version: int
    at_ms: int
    detail: str
    fault: str = ""


@dataclass
class Result:
    """The checker's findings and what it counted."""

    violations: list[Violation] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    audit: Report | None = None

    @property
    def ok(self) -> bool:
        return not self.violations

    def count(self, name: str, n: int = 1) -> None:
        self.counts[name] = self.counts.get(name, 0) + n


class _Checker:
    def __init__(self, logs: Logs, faults: list[AppliedFault], t0_ms: int) -> None:
        self.logs = logs
        self.faults = faults
        self.t0_ms = t0_ms
        self.result = Result()

    def time_of(self, table_id: str, version: int) -> int:
        records = self.logs.tables.get(table_id, [])
        if 1 <= version <= len(records):
            return int(records[version - 1][1].server_time_ms)
        return int(records[-1][1].server_time_ms) if records else 0

    def nearest(self, at_ms: int) -> str:
        if not self.faults or not at_ms:
            return ""
        best = min(self.faults, key=lambda f: 0 if f.start_ms <= at_ms <= f.end_ms
                   else min(abs(at_ms - f.start_ms), abs(at_ms - f.end_ms)))
        when = ("during it" if best.start_ms <= at_ms <= best.end_ms else
                f"{(at_ms - best.end_ms) / 1000:+.1f} s after its end" if at_ms > best.end_ms else
                f"{(best.start_ms - at_ms) / 1000:.1f} s before it")
        return f"{best.kind} {best.target} at +{(best.start_ms - self.t0_ms) / 1000:.1f} s ({when})"

    def add(self, check: str, table: str, version: int, detail: str, at_ms: int = 0) -> None:
        at_ms = at_ms or self.time_of(table, version)
        self.result.violations.append(Violation(check, table, version, at_ms, detail, self.nearest(at_ms)))

    # ------------------------------------------------------------ commands and logs

    def commands(self, commands: list[Command]) -> None:
        placed: dict[str, dict[str, list[int]]] = {}
        for table_id, records in self.logs.tables.items():
            index: dict[str, list[int]] = defaultdict(list)
            for i, (seq, rec) in enumerate(records):
                if rec.version != i + 1 or rec.table_id != table_id:
                    self.add("log_forked", table_id, i + 1,
                             f"stream sequence {seq} holds version {rec.version} of {rec.table_id!r}")
                if rec.command_id:
                    index[f"{rec.actor}/{rec.command_id}"].append(int(rec.version))
            for key, versions in index.items():
                if len(versions) > 1:
                    self.add("applied_twice", table_id, versions[1], f"command {key} is in the log at {versions}")
            placed[table_id] = index
        for c in commands:
            self.result.count(f"commands_{c.outcome}")
            versions = placed.get(c.table_id, {}).get(c.key, [])
            if c.outcome == ACKED:
                if len(versions) != 1:
                    self.add("acked_not_once", c.table_id, c.version,
                             f"{c.method} {c.key} acknowledged, in the log {len(versions)} times", c.settled_ms)
                elif c.version < versions[0]:
                    self.add("answer_before_record", c.table_id, versions[0],
                             f"{c.method} {c.key} answered with version {c.version}, its record is {versions[0]}",
                             c.settled_ms)
            elif c.outcome == REFUSED and versions:
                self.add("refused_but_applied", c.table_id, versions[0],
                         f"{c.method} {c.key} refused ({c.code} {c.reason}) but in the log", c.settled_ms)
            elif c.outcome == UNKNOWN:
                self.result.count("unknown_applied" if versions else "unknown_not_applied")

    # ------------------------------------------------------------ views

    def views(self, received: dict[str, list[View]]) -> None:
        last_of_stream: dict[tuple[str, int], int] = {}
        for table_id, seen in received.items():
            records = self.logs.tables.get(table_id, [])
            parsed = sorted(((int(pb.WatchResponse.FromString(v.data).table.version), v) for v in seen),
                            key=lambda x: x[0])
            table = Table(table_id)
            secret: list[bytes] = []
            i = 0
            for version, v in parsed:
                self.result.count("views")
                if version > len(records) or version < 1:
                    self.add("view_of_no_record", table_id, version, f"{v.player} got version {version}; the log "
                             f"has {len(records)}", v.received_ms)
                    continue
                while table.version < version:
                    seq, rec = records[i]
                    table.apply(rec, seq)
                    i += 1
                    secret = _secrets(rec, secret)
                self.view(table, v, secret)
            for version, v in sorted(((int(pb.WatchResponse.FromString(v.data).table.version), v) for v in seen
                                      if v.source == "watch"), key=lambda x: (x[1].stream, x[1].received_ms)):
                before = last_of_stream.get((v.player, v.stream), 0)
                if version <= before:
                    self.add("watch_went_back", table_id, version,
                             f"{v.player}'s stream {v.stream} sent version {version} after {before}", v.received_ms)
                last_of_stream[(v.player, v.stream)] = version

    def view(self, table: Table, v: View, secret: list[bytes]) -> None:
        got = pb.WatchResponse.FromString(v.data).table
        for s in secret:
            if s and s in v.data:
                self.add("seed_leaked", table.table_id, table.version,
                         f"{v.player}'s {v.source} view holds the unrevealed seed of hand {table.hand_no}",
                         v.received_ms)
        expected = views.view(table, v.player)
        if got == expected:
            return
        plain_got, plain_expected = pb.TableView(), pb.TableView()
        plain_got.CopyFrom(got)
        plain_expected.CopyFrom(expected)
        plain_got.ClearField("game_view")
        plain_expected.ClearField("game_view")
        differs = [f.name for f in pb.TableView.DESCRIPTOR.fields
                   if f.name != "game_view" and getattr(plain_got, f.name) != getattr(plain_expected, f.name)]
        if table.playing and not table.server_seed:
            # a hand still in play at the end of the run is sealed in the log: its game views cannot
            # be derived by an auditor (only the table processes hold the seal keys)
            self.result.count("game_views_of_sealed_hands")
        elif got.HasField("game_view") != expected.HasField("game_view"):
            differs.append("game_view")
        elif got.HasField("game_view"):
            try:
                if codec.unpack(got.game_view, table.game_key) != codec.unpack(expected.game_view, table.game_key):
                    differs.append("game_view")
            except Exception as e:
                differs.append(f"game_view ({type(e).__name__})")
        if differs:
            self.add("view_mismatch", table.table_id, table.version,
                     f"{v.player}'s {v.source} view differs from the rules' view for them in: {', '.join(differs)}",
                     v.received_ms)

    # ------------------------------------------------------------ lobby

    def lobby(self, listed: dict[str, lobby_pb.TableSummary]) -> None:
        for table_id, records in self.logs.tables.items():
            table = Table(table_id)
            try:
                for seq, rec in records:
                    table.apply(rec, seq)
            except Exception:
                continue  # the log check reports it
            seated = [p or "" for p in table.seats]
            line = listed.get(table_id)
            if not any(seated):
                if line is not None:
                    self.add("lobby_lists_empty_table", table_id, table.version, "listed with no seated player")
                continue
            if line is None:
                self.add("lobby_missing_table", table_id, table.version, f"seated {seated} but not listed")
                continue
            status = pb.TABLE_STATUS_PLAYING if table.playing else pb.TABLE_STATUS_WAITING
            want = {"seats": seated, "host": table.host, "status": status, "hand_no": table.hand_no,
                    "stake": table.stake}
            have = {"seats": list(line.seats), "host": line.host, "status": line.status, "hand_no": line.hand_no,
                    "stake": line.stake}
            wrong = [k for k in want if want[k] != have[k]]
            if wrong:
                self.add("lobby_differs", table_id, table.version,
                         "; ".join(f"{k}: listed {have[k]!r}, log {want[k]!r}" for k in wrong))
        for table_id in set(listed) - set(self.logs.tables):
            self.add("lobby_lists_unknown_table", table_id, 0, "listed, but no such table in the log")


def _secrets(record: log_pb2.Record, before: list[bytes]) -> list[bytes]:
    """What no view may hold after ``record``: the server seed of the hand in play and its seed
    material, from its ``HandStarted`` until its ``HandEnded`` reveals them."""
    out = before
    for e in record.events:
        kind = e.WhichOneof("kind")
        if kind == "hand_started":
            h = e.hand_started  # a hand still sealed at the end of the run: its seed is nobody's to check
            seed = bytes(h.server_seed)
            out = [seed, fair.seed_material(seed, list(h.client_seeds))] if seed else []
        elif kind == "hand_ended":
            out = []
    return out


async def lobby_tables(target: str, token: str) -> dict[str, lobby_pb.TableSummary]:
    """Every table the lobby lists, for every game (all pages)."""
    out: dict[str, lobby_pb.TableSummary] = {}
    async with grpc.aio.insecure_channel(target) as ch:
        stub = lobby_grpc.LobbyServiceStub(ch)
        meta = (("authorization", f"Bearer {token}"),)
        for game in registry.KEYS:
            page = ""
            while True:
                r = await stub.ListTables(lobby_pb.ListTablesRequest(game=game, page_size=500, page_token=page),
                                          timeout=10, metadata=meta)
                for t in r.tables:
                    out[t.table_id] = t
                page = r.next_page_token
                if not page:
                    break
    return out


async def check(folder: Path, *, nats_url: str, database_url: str, lobby_target: str, token: str,
                params: Params, t0_ms: int) -> Result:
    """Every check of the run recorded in ``folder``, against the stores as they are now."""
    options = audit_run.Options(nats_url=nats_url, database_url=database_url, params=params)
    report = await audit_run.audit(options)
    period = await audit_run.load(options, Report())
    listed = await lobby_tables(lobby_target, token)
    c = _Checker(period, read_faults(folder), t0_ms)
    c.result.audit = report
    for f in report.findings:
        table = f.subject.split(" ", 1)[0]
        c.add(f"audit_{f.code}", table if table in period.tables else f.subject, 0, f.detail)
    for flag in report.flags:  # the bots' ordinary play is no chip dumping (issue 27)
        c.add(f"collusion_{flag.code}", flag.account, 0, f"{flag.detail}: {'; '.join(flag.evidence[:3])}")
    for name, n in coin_hands(period).items():
        c.result.count(name, n)
    await books(c, database_url, period)
    commands = read_commands(folder)
    c.result.count("starts_refused_not_enough_coins", sum(
        1 for x in commands if x.method == "StartHand" and x.outcome == REFUSED and x.reason == "not_enough_coins"))
    c.commands(commands)
    received: dict[str, list[View]] = defaultdict(list)
    for v in read_views(folder):
        received[v.table_id].append(v)
    c.views(received)
    c.lobby(listed)
    c.result.count("tables", len(period.tables))
    c.result.count("records", period.records)
    for recs in period.tables.values():
        for _, r in recs:
            if r.WhichOneof("cause") in ("game_command", "sealed_command"):
                c.result.count(f"moves_{r.game}")
    hands = hands_by_game(period)
    c.result.count("hands_ended", sum(hands.values()))
    for game, n in hands.items():
        c.result.count(f"hands_ended_{game}", n)
    c.result.count("listed_tables", len(listed))
    for name, n in report.counts.items():
        c.result.count(f"audit_{name}", n)
    return c.result


def coin_hands(logs: Logs) -> dict[str, int]:
    """The coin hands of the logs (from ``HandStarted`` to ``HandEnded``, by the records' server
    times) and how they overlapped: ``coin_hands``; ``coin_hands_reserved`` (their ``HandStarted``
    logs the ledger's reservations); ``coin_hands_concurrent``, the hands during which one of
    their players had another coin hand in play at another table; ``coin_players_concurrent``;
    ``coin_hands_at_once``, the most coin hands one player had in play at one time."""
    spans: dict[str, list[tuple[int, int, str]]] = defaultdict(list)
    hands = reserved = 0
    for table_id, recs in logs.tables.items():
        started: dict[int, tuple[int, list[str]]] = {}
        last = 0
        for _, r in recs:
            last = max(last, r.server_time_ms)
            for e in r.events:
                kind = e.WhichOneof("kind")
                if kind == "hand_started" and e.hand_started.currency == log_pb2.CURRENCY_COINS:
                    hs = e.hand_started
                    started[hs.hand_no] = (r.server_time_ms, list(hs.players))
                    hands += 1
                    reserved += 1 if len(hs.reserved) == len(hs.players) else 0
                elif kind == "hand_ended" and e.hand_ended.hand_no in started:
                    begun, players = started.pop(e.hand_ended.hand_no)
                    for p in players:
                        spans[p].append((begun, r.server_time_ms, table_id))
        for begun, players in started.values():  # not ended (yet): in play to the log's end
            for p in players:
                spans[p].append((begun, max(last, begun) + 1, table_id))
    concurrent: set[tuple[str, int]] = set()  # (table, start) of a hand that overlapped
    overlapping = 0
    most = 1 if hands else 0
    for mine in spans.values():
        mine.sort()
        overlapped = False
        for i, (a0, a1, at) in enumerate(mine):
            for b0, b1, bt in mine[i + 1:]:
                if b0 >= a1:
                    break
                if bt != at and b0 < a1 and a0 < b1:
                    concurrent |= {(at, a0), (bt, b0)}
                    overlapped = True
        overlapping += overlapped
        edges = sorted([(a, 1) for a, _, _ in mine] + [(b, -1) for _, b, _ in mine])  # an end before a start
        level = 0
        for _, step in edges:
            level += step
            most = max(most, level)
    return {"coin_hands": hands, "coin_hands_reserved": reserved, "coin_hands_concurrent": len(concurrent),
            "coin_players_concurrent": overlapping, "coin_hands_at_once": most}


async def books(c: _Checker, database_url: str, logs: Logs) -> None:
    """The ledger's side of the coin hands: every reservation of a hand the log ended is released
    (``reservation_not_released``), and the collusion screen holds nobody (``screen_held``, per
    hold: the bots play honestly). Counted: the screen's holds and freezes, and how near it came
    to flagging anyone — the largest net 金币 one player lost to another over the window
    (``screen_top_net``) and the most payers netting ``CHIEU_SCREEN_MIN_COINS`` or more into one
    account (``screen_top_payers``)."""
    import asyncpg

    from chieu.kit.settings import from_env

    s = from_env()
    ended = {(t, e.hand_ended.hand_no) for t, recs in logs.tables.items() for _, r in recs for e in r.events
             if e.WhichOneof("kind") == "hand_ended"}
    conn = await asyncpg.connect(database_url)
    try:
        open_ = await conn.fetch("SELECT table_id, hand_no, player_id, coins FROM ledger_reservations"
                                 " WHERE closed_at IS NULL ORDER BY table_id, hand_no, player_id")
        holds = await conn.fetch("SELECT id, player_id, coins, detail FROM ledger_review_holds ORDER BY id")
        frozen = await conn.fetchval("SELECT count(*) FROM ledger_holds WHERE held_by = 'screen:collusion'")
        near = await conn.fetchrow(
            """WITH n AS (SELECT p, q, sum(c)::bigint AS net FROM (
                   SELECT payer AS p, receiver AS q, coins AS c FROM ledger_flows
                   WHERE day > current_date - $2::int
                   UNION ALL SELECT receiver, payer, -coins FROM ledger_flows
                   WHERE day > current_date - $2::int) x GROUP BY p, q)
               SELECT coalesce(max(net), 0)::bigint AS top_net,
                      coalesce((SELECT max(k) FROM (SELECT q, count(*) AS k FROM n WHERE net >= $1 GROUP BY q) y),
                               0)::bigint AS top_payers,
                      (SELECT count(*) FROM ledger_flows)::bigint AS flows FROM n""",
            s.screen_min_coins, s.screen_window_days)
    finally:
        await conn.close()
    for r in open_:
        if (r["table_id"], int(r["hand_no"])) in ended:
            c.add("reservation_not_released", r["table_id"], 0,
                  f"{r['player_id']}'s {r['coins']} 金币 reserved for hand {r['hand_no']} after it ended")
    for h in holds:
        c.add("screen_held", h["player_id"], 0, f"hold {h['id']}: {h['coins']} 金币: {h['detail']}")
    c.result.count("reservations_open", len(open_))
    c.result.count("screen_holds", len(holds))
    c.result.count("screen_frozen", int(frozen or 0))
    c.result.count("screen_flows", int(near["flows"]) if near else 0)
    c.result.count("screen_top_net", int(near["top_net"]) if near else 0)
    c.result.count("screen_top_payers", int(near["top_payers"]) if near else 0)


def hands_by_game(logs: Logs) -> dict[str, int]:
    """Hands ended, by game."""
    out: dict[str, int] = defaultdict(int)
    for recs in logs.tables.values():
        game = recs[0][1].game if recs else ""
        for _, r in recs:
            for e in r.events:
                if e.WhichOneof("kind") == "hand_ended":
                    out[r.game or game] += 1
    return dict(out)
