"""``chieu chaos``: one bounded chaos run on loopback, stopping by itself.

1. The local cluster (:mod:`chieu_tools.cluster`: 3 NATS nodes at R3, PostgreSQL, two processes of every
   service) under the run's folder, the third node behind the latency proxy.
2. The chaos rooms put in the lobby; the players, spectators and probes started.
3. The fault schedule of the seed applied (:mod:`chieu_tools.chaos.schedule`) after a calm phase; the
   run lasts ``minutes``.
4. The clients stopped, every process healed, the system left to go quiet (every durable consumer
   caught up, the stream still).
5. The checker (:mod:`chieu_tools.chaos.checker`), then the report: moves, hands, faults by kind,
   throughput in and out of fault windows, recovery times, every violation with its nearest
   fault. ``summary.json`` in the folder keeps it all; exit code 1 on a violation.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import os
import random
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import grpc

from chieu.games import registry
from chieu.kit import names, natsauth
from chieu.kit.settings import from_env
from chieu.ladder.rules import Params
from chieu.lobby.v1 import lobby_service_pb2 as lobby_pb
from chieu.lobby.v1 import lobby_service_pb2_grpc as lobby_grpc
from chieu.tablelog.sealing import SealKeys
from chieu_tools import localnats
from chieu_tools.chaos import checker, schedule
from chieu_tools.chaos import client as calls
from chieu_tools.chaos.bots import ROOM_OPTIONS, Behaviour, Group, Player, Probe, Shared, Spectator, coin_stake, rooms
from chieu_tools.chaos.faults import Injector
from chieu_tools.chaos.oracle import Oracle
from chieu_tools.chaos.records import AppliedFault, Command, Journal
from chieu_tools.cluster import Cluster

COIN_TABLES = 3
"""Coin rooms per coin group: each of its players sits in two or three of them at once."""
COIN_PLAYERS = 4
"""The fewest players of a coin group (the CI run's Phỏm: 4, each at two or three tables)."""
LONG_COIN = (8, 4)
"""A long run's coin groups (over :data:`LONG_AFTER_MIN`): 8 players in 4 rooms. Four players who
live on their welcome alone and only ever meet each other lose their 金币 to one or two of the
others: over a few hundred hands two of them may each lose half their welcome, and nearly all
their net losses, to one account, which is the collusion screen's farm (a model of the rule over
random Phỏm hands: held in 5.5 % of 1,000 runs of 200 hands with 4 players in 3 rooms, 0.6 % with
8 in 4, none with 12 in 4; docs/chaos.md)."""
LONG_AFTER_MIN = 5.0
WELCOME = 200
"""The welcome 金币 every bot lives on (``CHIEU_WELCOME_COINS``'s default, kept)."""


def group(game: str, kind: str, players: int, coin: tuple[int, int] = (COIN_PLAYERS, COIN_TABLES)) -> Group:
    """The players of ``game`` in one kind of room; a coin group has ``coin[0]`` players or more in
    ``coin[1]`` rooms, at a stake where two hands' reservations fit in the welcome bonus and a third
    does not (:func:`~chieu_tools.chaos.bots.coin_stake`; for a hand of three seats, or two)."""
    if kind != "coins":
        return Group(game, kind, players)
    d = registry.descriptor(game)
    seats = min(d.max_seats, max(d.min_seats, 3))
    bound = d.max_loss(registry.get(game).parse_options(ROOM_OPTIONS[game]), seats) if d.max_loss else 1
    return Group(game, kind, max(players, coin[0]), coin[1], coin_stake(bound, WELCOME))


SHORT = [group(d.key, d.exercise.short_room, d.exercise.players) for d in registry.descriptors()]
"""The CI run: every game once, in the room its descriptor names for it (a coin room and a ladder
room among them)."""
FULL = [group(d.key, kind, d.exercise.full_players) for d in registry.descriptors() for kind in d.exercise.full_rooms]
"""Every game in several kinds of room (`chieu chaos --full`)."""


def groups(full: bool, minutes: float) -> list[Group]:
    """The run's groups: :data:`FULL` or :data:`SHORT`, with :data:`LONG_COIN` coin groups in a
    run longer than :data:`LONG_AFTER_MIN` minutes."""
    if minutes <= LONG_AFTER_MIN:
        return list(FULL if full else SHORT)
    return [group(d.key, kind, d.exercise.full_players if full else d.exercise.players, LONG_COIN)
            for d in registry.descriptors() for kind in (d.exercise.full_rooms if full else (d.exercise.short_room,))]
SLOW_NODE = 2
"""The node (0-based) behind the latency proxy: ``n3``."""
WINDOW_AFTER_S = 5.0
"""A fault's window lasts until this long after its end (throughput outside the windows)."""
SERVICE_ENV = {"CHIEU_LOG_FORMAT": "json", "CHIEU_LEDGER_ACK_WAIT_S": "5", "CHIEU_LADDER_ACK_WAIT_S": "5",
               "CHIEU_LOBBY_ACK_WAIT_S": "5", "CHIEU_LOBBY_ACCESS_TTL_S": "240",
               "CHIEU_TRUSTED_PROXIES": "127.0.0.1", "CHIEU_LOBBY_WELCOME_AFTER_HANDS": "0",
               "CHIEU_WELCOME_COINS": str(WELCOME)}
"""Short ack waits (a message held by a killed consumer comes back within 5 s) and 4-minute access
tokens (every player refreshes its session, and its watch streams end with their token, every
two minutes or so). The bots connect from 127.0.0.1 as a gateway would, and say each player's
own address in ``X-Forwarded-For`` (:func:`~chieu_tools.chaos.bots.address`), so the lobby's
limit of new players per address and of welcome 金币 per address are at their real settings, and
so is the ledger's collusion screen, and the welcome per device. One setting is not: the welcome
is paid at the first sign-in, not after three hands (a 3-minute run has no minute to spare for
them)."""


def service_env(groups: list[Group]) -> dict[str, str]:
    """:data:`SERVICE_ENV` and the coin stakes the groups' rooms play at, offered with the default
    ones (``CHIEU_COIN_STAKES``, as an operator offers a stake)."""
    stakes = {1, 10, 100} | {g.stake for g in groups if g.kind == "coins"}
    return {**SERVICE_ENV, "CHIEU_COIN_STAKES": ",".join(str(x) for x in sorted(stakes))}


@dataclass
class Config:
    seed: int
    minutes: float
    folder: Path
    groups: list[Group] = field(default_factory=lambda: list(SHORT))
    spectators: int = 2
    probes: int = 2
    behaviour: Behaviour = field(default_factory=Behaviour)
    quiet_s: float | None = None
    """How long the system may take to go quiet after the clients stop (None: :func:`quiet_limit_s`
    of the run's length)."""
    keep: bool = False
    """Keep the cluster up after the report, until Ctrl-C (to look at a failure with the audit tools)."""


def say(text: str) -> None:
    print(f"chieu chaos: {text}", file=sys.stderr, flush=True)


def now_ms() -> int:
    return int(time.time() * 1000)


def percentile(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(p / 100 * len(ordered)) - 1))]


# ---------------------------------------------------------------- measures


def throughput(commands: list[Command], faults: list[AppliedFault], t0_ms: int, calm_s: float,
               end_ms: int) -> dict[str, float]:
    """Acknowledged moves per second: in the calm phase (from the first move on) and in the fault
    phase outside every fault's window (its start to 5 s after its end)."""
    moves = sorted(c.settled_ms for c in commands if c.method == "Act" and c.outcome == calls.ACKED and not c.probe)
    calm_end = t0_ms + int(calm_s * 1000)
    if not moves:
        return {"calm_per_s": 0.0, "outside_per_s": 0.0, "ratio": 0.0, "outside_s": 0.0, "calm_s": 0.0}
    warm = moves[0] + 5000  # the first hands are being dealt
    calm = [m for m in moves if warm <= m < calm_end]
    calm_len = max(0.001, (calm_end - warm) / 1000)
    windows = [(f.start_ms, f.end_ms + int(WINDOW_AFTER_S * 1000)) for f in faults]

    def outside(t: int) -> bool:
        return all(not a <= t < b for a, b in windows)

    step = 100
    outside_len = sum(step for t in range(calm_end, end_ms, step) if outside(t)) / 1000
    out = [m for m in moves if calm_end <= m < end_ms and outside(m)]
    calm_rate = len(calm) / calm_len
    out_rate = len(out) / outside_len if outside_len else 0.0
    return {"calm_per_s": round(calm_rate, 2), "outside_per_s": round(out_rate, 2),
            "ratio": round(out_rate / calm_rate, 3) if calm_rate else 0.0,
            "calm_s": round(calm_len, 1), "outside_s": round(outside_len, 1)}


def recoveries(commands: list[Command], faults: list[AppliedFault]) -> dict[str, list[float]]:
    """Per fault and probe: seconds from the fault's start until the probe's table answered a
    command again (a table process killed; a NATS node killed, split by whether it led the table
    stream)."""
    acks: dict[str, list[int]] = {}
    for c in commands:
        if c.probe and c.outcome == calls.ACKED:
            acks.setdefault(c.player, []).append(c.settled_ms)
    for v in acks.values():
        v.sort()
    out: dict[str, list[float]] = {"table_kill": [], "nats_kill": [], "nats_leader_kill": [], "nats_follower_kill": [],
                                   "table_pause": []}
    for f in faults:
        if f.kind == "kill_service" and f.target.startswith("table-"):
            names_ = ["table_kill"]
        elif f.kind == "pause_service" and f.target.startswith("table-"):
            names_ = ["table_pause"]
        elif f.kind == "kill_nats":
            names_ = ["nats_kill", "nats_leader_kill" if "(killed)" in f.note else "nats_follower_kill"]
        else:
            continue
        for settled in acks.values():
            after = [t for t in settled if t > f.start_ms]
            if after:
                for n in names_:
                    out[n].append((after[0] - f.start_ms) / 1000)
    return out


# ---------------------------------------------------------------- the run


async def _put_rooms(target: str, token: str, groups: list[Group]) -> None:
    async with grpc.aio.insecure_channel(target) as ch:
        stub = lobby_grpc.LobbyServiceStub(ch)
        for room in rooms(groups):
            req = lobby_pb.PutRoomRequest(room=room, reason="chaos run")
            r = await calls.call(lambda t, req=req: stub.PutRoom(  # type: ignore[misc]
                req, timeout=t, metadata=(("authorization", f"Bearer {token}"),)), give_up_s=60)
            if r.outcome != calls.ACKED:
                raise RuntimeError(f"cannot put room {room.room_id}: {r.code} {r.reason}")


def quiet_limit_s(total_s: float) -> float:
    """The longest wait for quiet after a run of ``total_s`` seconds: 4 minutes plus as long again as
    the run (a longer run leaves more hands of players gone to end by auto-play, and more backlog
    after its faults), at most an hour. A 4-minute run with no violation once ran out of a fixed
    240 s wait while the stream was still moving."""
    return min(3600.0, 240.0 + total_s)


async def quiesce(nats_url: str, creds: str, limit_s: float, still_s: float = 5.0, stall_s: float = 180.0) -> bool:
    """Wait until the table stream has been still for ``still_s`` and every durable consumer of it
    (ledger, ladder, lobby) has nothing pending nor unacknowledged (read as the ``audit`` user).
    False after ``limit_s``, or sooner when nothing at all has changed for ``stall_s`` while work is
    still pending (a stuck consumer: waiting longer would not help)."""
    nc = await natsauth.connect_url(nats_url, "chieu-chaos", creds=creds, max_reconnect_attempts=-1)
    try:
        js = nc.jetstream()
        deadline = time.monotonic() + limit_s
        last, since = (-1, -1), time.monotonic()
        changed = since
        while time.monotonic() < deadline:
            try:
                seq = int((await js.stream_info(names.TABLES.name)).state.last_seq)
                pending = 0
                for durable in (names.LEDGER_DURABLE, names.LADDER_DURABLE, names.LOBBY_DURABLE):
                    ci = await js.consumer_info(names.TABLES.name, durable)
                    pending += int(ci.num_pending or 0) + int(ci.num_ack_pending or 0)
            except Exception:
                await asyncio.sleep(1)
                continue
            now = time.monotonic()
            if (seq, pending) != last:
                changed = now
            if seq != last[0] or pending:
                since = now
            elif now - since >= still_s:
                return True
            if pending and now - changed >= stall_s:
                return False
            last = (seq, pending)
            await asyncio.sleep(0.5)
        return False
    finally:
        await nc.close()


async def run(config: Config) -> dict[str, Any]:
    """The whole run; returns its summary (``ok`` false on a violation)."""
    folder = config.folder.resolve()
    folder.mkdir(parents=True, exist_ok=True)
    total_s = config.minutes * 60
    cluster = Cluster(folder / "cluster", env=service_env(config.groups))
    delay_file = folder / "slow-n3.ms"
    delay_file.write_text("0")
    proxy_port = localnats.free_port()
    proxy = _start_proxy(proxy_port, cluster.nodes[SLOW_NODE].port, delay_file)
    cluster.client_urls[SLOW_NODE] = f"nats://127.0.0.1:{proxy_port}"
    targets = schedule.Targets(services=[f"{s}-{i}" for s in ("table", "ledger", "ladder", "lobby") for i in (1, 2)],
                               nodes=[n.name for n in cluster.nodes], slow=cluster.nodes[SLOW_NODE].name)
    faults = schedule.plan(config.seed, config.minutes, targets)
    calm_s = schedule.calm_seconds(total_s)
    say(f"seed {config.seed}, {config.minutes:g} min, {sum(g.players for g in config.groups)} players in "
        f"{len(config.groups)} rooms, {config.spectators} spectators, {config.probes} probes; "
        f"{len(faults)} faults planned ({schedule.by_kind(faults)}); folder {folder}")
    journal = Journal(folder)
    (folder / "schedule.json").write_text(json.dumps([f.as_json() for f in faults], indent=1))
    oracle: Oracle | None = None
    summary: dict[str, Any] = {}
    try:
        started_setup = time.monotonic()
        await asyncio.to_thread(localnats.wait_for_port, proxy_port, 15.0)
        await asyncio.to_thread(cluster.start)
        say(f"cluster up in {time.monotonic() - started_setup:.1f} s: NATS {cluster.nats_url} "
            f"(n3 through the latency proxy), table {cluster.target('table')}")
        operator = cluster.signer.sign("chaos-operator", ("operator",), 24 * 3600)
        await _put_rooms(cluster.target("lobby"), operator, config.groups)
        os.environ["CHIEU_NATS_CREDS"] = cluster.audit_creds  # the checker's audit reads as the audit user
        oracle = Oracle(cluster.nats_url, cluster.audit_creds, SealKeys.load(cluster.seal_keys))
        await oracle.start()
        shared = Shared(cluster.target("table"), cluster.target("lobby"), journal, oracle)
        clients: list[Any] = []
        for g in config.groups:
            clients += [Player(shared, g, i, config.seed, config.behaviour) for i in range(g.players)]
        clients += [Spectator(shared, i, config.seed, sorted({g.game for g in config.groups}))
                    for i in range(config.spectators)]
        clients += [Probe(shared, i, cluster.signer.sign(f"chaos-probe-{i}", ("player",), 24 * 3600))
                    for i in range(config.probes)]
        t0 = time.monotonic()
        t0_ms = now_ms()
        tasks = [asyncio.create_task(c.run()) for c in clients]
        injector = Injector(cluster, journal, delay_file, say)
        chaos = asyncio.create_task(injector.run(faults, t0))
        progress = asyncio.create_task(_progress(journal, t0, total_s))
        await asyncio.sleep(total_s)
        end_ms = now_ms()
        say("time is up: the clients finish and stop")
        shared.stop.set()
        progress.cancel()
        if not chaos.done():
            chaos.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await chaos
        await asyncio.wait(tasks, timeout=60)
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await asyncio.to_thread(injector.heal)
        journal.flush()
        say("waiting for the system to go quiet (hands of players gone end by the rules' auto-play)")
        limit = config.quiet_s if config.quiet_s is not None else quiet_limit_s(total_s)
        waited = time.monotonic()
        quiet = await quiesce(cluster.nats_url, cluster.audit_creds, limit)
        say(f"quiet after {time.monotonic() - waited:.0f} s" if quiet else
            f"not quiet after {time.monotonic() - waited:.0f} s (the limit: {limit:.0f} s)")
        say("checking" + ("" if quiet else " (the system did not go quiet in time: the checks may see it moving)"))
        s = from_env()
        result = await checker.check(folder, nats_url=cluster.nats_url, database_url=cluster.database_url,
                                     lobby_target=cluster.target("lobby"), token=operator,
                                     params=Params(s.ladder_up, s.ladder_down, s.ladder_floor_style,
                                                   s.ladder_only_lose_basis), t0_ms=t0_ms)
        summary = _summary(config, journal, injector.applied, result, t0_ms, end_ms, calm_s, quiet, oracle)
        summary["bots"] = dict(shared.counts)
        if config.keep:
            for line in report(summary):
                print(line, flush=True)
            say(f"the cluster stays up until Ctrl-C: NATS_URL={cluster.nats_url} "
                f"CHIEU_NATS_CREDS={cluster.audit_creds} DATABASE_URL='{cluster.database_url}' "
                "./chieu audit (or verify TABLE, replay TABLE --html F)")
            await _interrupted()
    finally:
        journal.close()
        if oracle is not None:
            await oracle.stop()
        await asyncio.to_thread(cluster.stop)
        proxy.terminate()
        with contextlib.suppress(Exception):
            proxy.wait(10)
    (folder / "summary.json").write_text(json.dumps(summary, indent=1, ensure_ascii=False))
    return summary


async def _interrupted() -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGINT, stop.set)
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    await stop.wait()


def _start_proxy(port: int, target: int, delay_file: Path) -> subprocess.Popen[bytes]:
    """The latency proxy (its own process) on ``port`` in front of a node's client port ``target``."""
    return subprocess.Popen([sys.executable, "-m", "chieu_tools.chaos.proxy", str(port), str(target), str(delay_file)])


async def _progress(journal: Journal, t0: float, total_s: float) -> None:
    while True:
        await asyncio.sleep(30)
        acked = sum(1 for c in journal.commands if c.method == "Act" and c.outcome == calls.ACKED)
        say(f"+{time.monotonic() - t0:.0f}/{total_s:.0f} s: {acked} moves acknowledged, {journal.views} views")


def _summary(config: Config, journal: Journal, applied: list[AppliedFault], result: checker.Result, t0_ms: int,
             end_ms: int, calm_s: float, quiet: bool, oracle: Oracle) -> dict[str, Any]:
    commands = journal.commands
    rec = recoveries(commands, applied)
    acts = [c for c in commands if c.method == "Act" and not c.probe]
    return {
        "ok": result.ok and quiet, "seed": config.seed, "minutes": config.minutes, "quiet": quiet,
        "players": sum(g.players for g in config.groups), "groups": [asdict(g) for g in config.groups],
        "moves": {o: sum(1 for c in acts if c.outcome == o) for o in (calls.ACKED, calls.REFUSED, calls.UNKNOWN)},
        "commands": len(commands), "views": journal.views,
        "refusals": _refusals(commands),
        "faults": schedule.by_kind([schedule.Fault(0, f.kind, f.target, 0) for f in applied]),
        "faults_failed": [asdict(f) for f in applied if "FAILED" in f.note],
        "throughput": throughput(commands, applied, t0_ms, calm_s, end_ms),
        "recovery_s": {k: {"n": len(v), "p50": round(percentile(v, 50), 2), "p99": round(percentile(v, 99), 2),
                           "max": round(max(v), 2)} for k, v in rec.items() if v},
        "counts": result.counts, "oracle_anomalies": oracle.anomalies[:20],
        "violations": [asdict(v) for v in result.violations],
    }


def _refusals(commands: list[Command]) -> dict[str, int]:
    out: dict[str, int] = {}
    for c in commands:
        if c.outcome == calls.REFUSED:
            out[c.reason or c.code] = out.get(c.reason or c.code, 0) + 1
    return dict(sorted(out.items(), key=lambda kv: -kv[1]))


def report(summary: dict[str, Any]) -> list[str]:
    """The readable report of a summary."""
    if not summary:
        return ["no summary: the run did not get to its checks"]
    t = summary["throughput"]
    lines = [
        f"seed {summary['seed']}, {summary['minutes']:g} min, {summary['players']} players",
        f"moves: {summary['moves']['acked']:,} acknowledged, {summary['moves']['refused']:,} refused, "
        f"{summary['moves']['unknown']:,} unknown; {summary['commands']:,} commands, {summary['views']:,} views",
        f"hands ended: {summary['counts'].get('hands_ended', 0):,} in {summary['counts'].get('tables', 0)} tables",
        f"faults: {sum(summary['faults'].values())} ({', '.join(f'{k} {v}' for k, v in summary['faults'].items())})"
        + (f"; {len(summary['faults_failed'])} not applied as planned" if summary["faults_failed"] else ""),
        f"throughput: {t['calm_per_s']} moves/s calm ({t['calm_s']} s), {t['outside_per_s']} moves/s outside "
        f"fault windows ({t['outside_s']} s): {t['ratio'] * 100:.0f}%",
    ]
    for k, r in summary["recovery_s"].items():
        lines.append(f"accepting commands again after {k.replace('_', ' ')}: p50 {r['p50']} s, p99 {r['p99']} s, "
                     f"max {r['max']} s (n={r['n']})")
    if summary["refusals"]:
        lines.append("refusals: " + ", ".join(f"{k} {v}" for k, v in list(summary["refusals"].items())[:12]))
    n = summary["counts"]
    if n.get("coin_hands"):
        lines.append(f"coin hands: {n['coin_hands']:,} ({n.get('coin_hands_concurrent', 0):,} in play while a "
                     f"player had another at another table; up to {n.get('coin_hands_at_once', 0)} at once), "
                     f"{n.get('starts_refused_not_enough_coins', 0):,} starts refused not_enough_coins; the "
                     f"screen: {n.get('screen_holds', 0)} holds, largest net flow {n.get('screen_top_net', 0)} 金币")
    lines.append(f"checked: {', '.join(f'{k} {v:,}' for k, v in sorted(summary['counts'].items()))}")
    if not summary["quiet"]:
        lines.append("the system did not go quiet after the run")
    if summary["violations"]:
        lines.append(f"VIOLATIONS: {len(summary['violations'])}")
        for v in summary["violations"][:100]:
            lines.append(f"  {v['check']}: table {v['table']} version {v['version']}: {v['detail']}"
                         + (f" [nearest fault: {v['fault']}]" if v["fault"] else ""))
    else:
        lines.append("violations: none")
    lines.append(f"reproduce: ./chieu chaos --seed {summary['seed']} --minutes {summary['minutes']:g}")
    return lines


def main(seed: int | None, minutes: float, folder: str, full: bool, keep: bool = False) -> int:
    """Run, print the report; 0 without violations, 1 with, 2 if the run could not be made."""
    seed = random.SystemRandom().randrange(1, 2**31) if seed is None else seed
    base = Path(folder) / f"seed-{seed}-{time.strftime('%Y%m%d-%H%M%S')}"
    config = Config(seed, minutes, base, groups=groups(full, minutes), spectators=4 if full else 2,
                    probes=3 if full else 2, keep=keep)
    os.environ.setdefault("CHIEU_LOG_FORMAT", "json")
    try:
        summary = asyncio.run(run(config))
    except Exception as e:
        say(f"the run failed before its checks: {type(e).__name__}: {e}")
        return 2
    if not keep:  # a kept cluster's run printed its report already
        for line in report(summary):
            print(line)
    return 0 if summary.get("ok") else 1
