"""The ``chieu`` command line: scenarios, and the operators' and auditors' tools. The developer's
commands (``up``, ``chaos``) are :mod:`chieu_tools.cli`'s, run through ``./chieu``."""

from __future__ import annotations

import argparse
import sys
from typing import Any


def _scenario(args: argparse.Namespace) -> int:
    from chieu.games.scenarios import report
    from chieu.scenario_files import run_files

    results = run_files(args.files)
    print(report(results, as_json=args.json))
    return 0 if results and all(r.passed for r in results) else 1


def _nats_auth(args: argparse.Namespace) -> int:
    """Make the NATS credentials in ``--dir`` (kept if there) and print the server's authorization
    block (public keys only) for the nats-server config."""
    from chieu.kit import natsauth

    creds = natsauth.ensure(args.dir)
    sys.stdout.write(natsauth.server_block(creds.folder))
    print(f"chieu nats-auth: seeds in {creds.folder} (mode 0600): " +
          ", ".join(f"{u}.nk" for u in creds.users) + "; give each service its own as CHIEU_NATS_CREDS",
          file=sys.stderr)
    return 0


def _rewind(args: argparse.Namespace) -> int:
    """Move a service's durables back to what its restored database lacks (chieu.kit.rewind).
    0: done; 1: the service still runs; 2: bad arguments; 3: NATS or PostgreSQL cannot be reached."""
    import asyncio

    import asyncpg

    from chieu.kit import natsauth, rewind
    from chieu.kit.settings import from_env

    env = from_env()
    url, database_url = args.nats or env.nats_url, args.database_url or env.database_url
    if not database_url:
        print("chieu rewind: the service's restored database is needed (--database-url or DATABASE_URL)",
              file=sys.stderr)
        return 2

    async def run() -> list[rewind.Step]:
        conn = await asyncpg.connect(database_url)
        try:
            steps = await rewind.plan(conn, args.service, args.from_seq)
        finally:
            await conn.close()
        nc = await natsauth.connect_url(url, f"chieu-rewind-{args.service}", creds=env.nats_creds, ca=env.nats_ca)
        try:
            return await rewind.apply(nc.jetstream(), steps, force=args.force)
        finally:
            await nc.close()

    try:
        done = asyncio.run(run())
    except rewind.StillRunning as e:
        print(f"chieu rewind: {e}", file=sys.stderr)
        return 1
    except (OSError, TimeoutError, asyncpg.PostgresError) as e:
        print(f"chieu rewind: cannot reach NATS or PostgreSQL ({type(e).__name__}: {e})", file=sys.stderr)
        return 3
    for s in done:
        moved = f"acknowledged up to {s.ack_floor} of {s.stream_last}; " if s.stream_last else ""
        print(f"{s.stream} > {s.durable}: {moved}starts again at {s.start_seq} ({s.why})")
    return 0


def _ledger_parked(args: argparse.Namespace) -> int:
    """List or retry the table-log records the ledger parked (chieu.ledger.parked), in the
    ledger's own database. 0: done (``retry``: every record posted); 1: some failed again (still
    parked, each listed); 2: bad arguments; 3: PostgreSQL cannot be reached."""
    import asyncio

    import asyncpg

    from chieu.kit import db
    from chieu.kit.settings import from_env
    from chieu.ledger import consumer, parked
    from chieu.ledger.books import Books

    database_url = args.database_url or from_env().database_url
    if not database_url:
        print("chieu ledger-parked: the ledger's database is needed (--database-url or DATABASE_URL)",
              file=sys.stderr)
        return 2

    async def run() -> int:
        pool = await db.create_pool(database_url, max_size=2)
        try:
            if args.action == "list":
                rows = await parked.listed(pool, all_rows=args.all)
                for r in rows:
                    when = f"{r.resolved_at:%Y-%m-%d %H:%M:%S}" if r.resolved_at else ""
                    state = f"posted {when} by {r.resolved_by}" if r.resolved_at else "parked"
                    print(f"{r.stream} {r.seq} table {r.table_id}: {state}; {r.error}: {r.message} "
                          f"(parked {r.parked_at:%Y-%m-%d %H:%M:%S}, {r.deliveries} deliveries, {r.tries} retries)")
                print(f"{sum(1 for r in rows if r.resolved_at is None)} parked", file=sys.stderr)
                return 0
            done = await consumer.retry(Books(pool), seqs=args.seq or (), actor=args.actor)
            for d in done:
                print(f"{d.stream} {d.seq}: {d.outcome}" + (f" ({d.error})" if d.error else ""))
            return 1 if any(d.outcome == "parked" for d in done) else 0
        finally:
            await pool.close()

    try:
        return asyncio.run(run())
    except (OSError, TimeoutError, asyncpg.PostgresError) as e:
        print(f"chieu ledger-parked: cannot reach PostgreSQL ({type(e).__name__}: {e})", file=sys.stderr)
        return 3


def _holds(args: argparse.Namespace) -> int:
    """The collusion screen's holds (chieu.ledger.holds): list them, or review one (release or
    reverse, once), as an operator: ``--token`` or ``CHIEU_OPERATOR_TOKEN``, an operator's token
    (``chieu token NAME --role operator``). 0: done; 1: refused (the reason printed); 2: bad
    arguments; 3: the ledger cannot be reached."""
    import asyncio
    import os

    import grpc

    from chieu.kit import channels
    from chieu.kit.settings import SettingsError, from_env
    from chieu.ledger.v1 import ledger_service_pb2 as pb
    from chieu.ledger.v1 import ledger_service_pb2_grpc as pb_grpc

    try:
        env = from_env()
    except SettingsError as e:
        print(f"chieu holds: {e}", file=sys.stderr)
        return 2
    bearer = args.token or os.environ.get("CHIEU_OPERATOR_TOKEN", "")
    if not bearer:
        print("chieu holds: an operator's token is needed (--token or CHIEU_OPERATOR_TOKEN; "
              "chieu token NAME --role operator makes one)", file=sys.stderr)
        return 2
    if args.hold is not None and (args.release == args.reverse or not (args.reason or "").strip()):
        print("chieu holds: reviewing a hold needs --release or --reverse, and --reason", file=sys.stderr)
        return 2
    meta = (("authorization", f"Bearer {bearer}"),)

    def show(h: pb.ReviewHoldRecord) -> str:
        payers = ", ".join(f"{p.player_id} {p.coins}" for p in h.payers)
        done = f"; {h.status} by {h.reviewed_by}: {h.review_reason}" if h.status != "held" else ""
        return f"hold {h.hold_id}: {h.player_id} {h.coins} 金币 {h.status} ({h.code}: {h.detail}) from {payers}{done}"

    async def run() -> list[str]:
        async with channels.channel(env, args.ledger or env.ledger_addr) as ch:
            stub = pb_grpc.LedgerServiceStub(ch)
            if args.hold is None:
                got = await stub.ListReviewHolds(pb.ListReviewHoldsRequest(player_id=args.player or "",
                                                                           reviewed=args.reviewed), metadata=meta)
                return [show(h) for h in got.holds] or ["no holds"]
            action = pb.ReviewHoldRequest.ACTION_RELEASE if args.release else pb.ReviewHoldRequest.ACTION_REVERSE
            done = await stub.ReviewHold(pb.ReviewHoldRequest(hold_id=args.hold, action=action, reason=args.reason),
                                         metadata=meta)
            return [show(done.hold), f"posted {done.posting_id}"]

    try:
        lines = asyncio.run(run())
    except grpc.aio.AioRpcError as e:
        if e.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
            print(f"chieu holds: the ledger at {args.ledger or env.ledger_addr} cannot be reached", file=sys.stderr)
            return 3
        print(f"chieu holds: refused: {e.code().name}: {e.details()}", file=sys.stderr)
        return 1
    print("\n".join(lines))
    return 0


def _token(args: argparse.Namespace) -> int:
    """Sign a token with the private key (``--key``, else ``CHIEU_TOKEN_PRIVATE_KEY``, else the key
    ``chieu up`` generated in ``.var/keys/``): a player's, or with ``--service`` a service's credential."""
    from pathlib import Path

    from chieu.kit import auth
    from chieu.kit.settings import SettingsError, from_env

    try:
        key = args.key or from_env().token_private_key
    except SettingsError as e:
        print(f"chieu token: {e}", file=sys.stderr)
        return 2
    if not key and Path(".var/keys/private.pem").exists():
        key = ".var/keys/private.pem"
    if not key:
        print("chieu token: no private key: set CHIEU_TOKEN_PRIVATE_KEY (or --key) to the Ed25519 PEM "
              "(./chieu up makes one in .var/keys/private.pem)", file=sys.stderr)
        return 2
    if bool(args.service) == bool(args.player):
        print("chieu token: name a PLAYER, or a service with --service NAME (not both)", file=sys.stderr)
        return 2
    try:
        signer = auth.Signer.load(key)
        if args.service:
            if args.role:
                raise ValueError("a service credential has the service role only")
            print(signer.service_credential(args.service, args.ttl or 365 * 86400))
        else:
            print(signer.sign(args.player, args.role or ["player"], args.ttl or 86400))
    except (OSError, ValueError) as e:
        print(f"chieu token: {e}", file=sys.stderr)
        return 2
    return 0


def _service_key(args: argparse.Namespace) -> int:
    """A service's own key: the private key written to ``--out`` (mode 0600, the service's
    ``CHIEU_SERVICE_KEY``), its public key printed as a JWK bound to the service, to add to the
    keyset every service reads (``CHIEU_TOKEN_PUBLIC_KEYS``; in a directory of PEM keys, write
    ``--public`` as ``service-<name>.pem``). The service then signs its own 15-minute credential."""
    import json
    import os

    from chieu.kit import auth

    if not args.name.replace("-", "").isalnum():
        print(f"chieu service-key: bad service name {args.name!r}", file=sys.stderr)
        return 2
    signer = auth.Signer.generate()
    try:
        fd = os.open(args.out, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as e:
        print(f"chieu service-key: {e}", file=sys.stderr)
        return 2
    with os.fdopen(fd, "wb") as f:
        f.write(signer.private_pem())
    if args.public:
        with open(args.public, "wb") as f:
            f.write(signer.public_pem())
    print(json.dumps(auth.KeySet({}).with_key(signer.public, args.name).to_jwks()["keys"][0]))
    return 0


def _verify(args: argparse.Namespace) -> int:
    """Exit 0: every finished hand verified (hands still in play are listed, not failed);
    1: a hand failed; 2: a bad or unknown table id; 3: NATS cannot be reached."""
    import asyncio

    from chieu.kit.errors import ServiceError
    from chieu.kit.eventstore import EventStore
    from chieu.kit.names import TABLES
    from chieu.kit.settings import from_env
    from chieu.table.statuses import check_table_id
    from chieu.table.v1 import log_pb2

    try:
        table_id = check_table_id(args.table)
    except ServiceError as e:
        print(f"chieu verify: {e.message}", file=sys.stderr)
        return 2
    env = from_env()
    url = args.nats or env.nats_url

    async def run() -> list[tuple[int, log_pb2.Record]]:  # as CHIEU_NATS_CREDS (the audit user: it creates nothing)
        store = await EventStore.connect(url, stream=TABLES, once=True, creds=env.nats_creds, ca=env.nats_ca,
                                         ensure=False)
        try:
            if not await store.exists():
                return []  # no table log on this server: no such table
            return [(s.seq, log_pb2.Record.FromString(s.data)) for s in await store.read(table_id)]
        finally:
            await store.close()

    from nats.errors import NoServersError

    try:
        records = asyncio.run(run())
    except (OSError, TimeoutError, NoServersError) as e:
        print(f"chieu verify: cannot reach NATS at {url} ({type(e).__name__})", file=sys.stderr)
        return 3
    except Exception as e:  # nats-py raises its own errors for a server it cannot use
        print(f"chieu verify: cannot read the table log from {url}: {type(e).__name__}: {e}", file=sys.stderr)
        return 3
    if not records:
        print(f"chieu verify: no table {table_id!r} in the log", file=sys.stderr)
        return 2
    lines, ok = verify_lines(table_id, records)
    for line in lines:
        print(line)
    return 0 if ok else 1


def verify_lines(table_id: str, records: list[tuple[int, Any]]) -> tuple[list[str], bool]:
    """``chieu verify``'s report of a table's log (stream sequence, ``Record``): a line per hand,
    the seed findings (``chieu.audit.seeds``) and the money; and whether it all holds. A log the
    fold cannot take is said in words, never as a Python exception."""
    from chieu.audit import seeds
    from chieu.audit.proof import Proof
    from chieu.tablelog import sealing
    from chieu.tablelog.verify import verify

    records = sealing.reveal(records)
    found = seeds.check(table_id, records)
    lines = [f"hand {subject.rsplit(' ', 1)[-1]}: BAD {code}: {detail}" for code, subject, detail in found]
    proof = Proof(table_id)  # each hand's outcome and settlements derived again from the rules
    try:
        verdicts = verify(table_id, records, opened=True, observe=proof)
    except Exception:  # a forged log trips the fold: where, in words
        return [*lines, f"table {table_id}: BAD log_unfoldable: {seeds.unfoldable(table_id, records)}"], False
    for v in verdicts:
        if not v.revealed:
            lines.append(f"hand {v.hand_no}: IN PLAY  the seed is not revealed yet, so the deal cannot be checked; "
                         f"moves so far={v.moves_checked} {'ok' if v.moves_ok else 'BAD'}")
            continue
        lines.append(f"hand {v.hand_no}: {'OK' if v.ok else 'FAILED'}  "
                     f"commitment={'ok' if v.commitment_ok else 'BAD'}  "
                     f"committed-first={'ok' if v.committed_first else 'BAD'}  "
                     f"deal={'ok' if v.deal_ok else 'BAD'}  moves={v.moves_checked} {'ok' if v.moves_ok else 'BAD'}"
                     f"{'  ' + v.detail if v.detail else ''}")
    if not verdicts:
        lines.append(f"table {table_id}: no hand has started yet")
    c = proof.counts
    for code, subject, detail in proof.findings:
        lines.append(f"money: BAD {code} {subject}: {detail}")
    if verdicts:
        lines.append(f"money: {'FAILED' if proof.findings else 'proven from the rules'}  "
                     f"outcomes={c.get('outcomes_proven', 0)} "
                     f"settlements={c.get('settlements_proven', 0)} legs={c.get('settlement_legs_proven', 0)}")
    ok = all(v.ok or (not v.revealed and v.moves_ok) for v in verdicts) and not proof.findings and not found
    return lines, ok


def _seal_keys(args: argparse.Namespace) -> int:
    """Print a seal keyset: a new one, or ``--rotate FILE``'s with a fresh sealing key first."""
    from chieu.tablelog.sealing import SealKeys

    keys: list[tuple[str, bytes]] = []
    if args.rotate:
        try:
            keys = list(SealKeys.load(args.rotate).keys.items())
        except ValueError as e:
            print(f"chieu seal-keys: {e}", file=sys.stderr)
            return 2
    unknown = set(args.retire) - {kid for kid, _ in keys}
    if unknown:
        print(f"chieu seal-keys: no key {', '.join(sorted(unknown))} to retire", file=sys.stderr)
        return 2
    kept = [(kid, key) for kid, key in keys if kid not in args.retire]
    fresh = [SealKeys.new_key()] if not args.retire or not kept else []
    sys.stdout.write(SealKeys.document([*fresh, *kept]))
    return 0


def _ms(value: str) -> int:
    """A time as ms since the epoch: an integer, or an ISO date / date-time (UTC unless it says)."""
    import datetime as dt

    if value.isdigit():
        return int(value)
    t = dt.datetime.fromisoformat(value)
    return int((t if t.tzinfo else t.replace(tzinfo=dt.UTC)).timestamp() * 1000)


def _refused(command: str, e: Exception) -> str:
    """The one line that says why an archive is refused (its reason code, then what is wrong)."""
    return f"chieu {command}: the archive is refused ({getattr(e, 'reason', 'corrupt')}): {' '.join(str(e).split())}"


def _audit(args: argparse.Namespace) -> int:
    """Exit 0: no discrepancy, everything checked; 1: discrepancies (each listed); 2: an archive
    refused (a changed byte; unsigned; signed by a key not in the keyset; a signature that does not
    match; no keyset to verify with) or bad arguments; 3: NATS or PostgreSQL cannot be reached;
    4: no discrepancy in what was checked, but some books were not (each listed as not checked):
    never OK."""
    import asyncio
    import json
    import os

    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from chieu.audit import report as rep
    from chieu.audit.archive import ArchiveError
    from chieu.audit.run import Options, audit
    from chieu.kit.settings import from_env
    from chieu.ladder.rules import Params

    settings = from_env()
    console = Console(stderr=args.json == "-")
    options = Options(nats_url=args.nats or settings.nats_url, archive=args.archive or "",
                      archive_keys=args.keys or settings.archive_public_keys,
                      tables=frozenset(args.table or ()),
                      database_url="" if args.no_db else (args.database_url or os.environ.get("DATABASE_URL", "")),
                      ladder_database_url="" if args.no_db else (args.ladder_database_url or ""),
                      collusion=_collusion(args),  # type: ignore[arg-type]
                      ledger=not args.no_ledger, ladder=not args.no_ladder,
                      params=Params(settings.ladder_up, settings.ladder_down, settings.ladder_floor_style,
                                    settings.ladder_only_lose_basis))
    with Progress(TextColumn("verifying the logs"), BarColumn(), MofNCompleteColumn(), TextColumn("records"),
                  TimeRemainingColumn(), console=console, transient=True, disable=args.quiet) as bar:
        task = bar.add_task("logs", total=None)

        def progress(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        try:
            report = asyncio.run(audit(options, progress))
        except ArchiveError as e:
            console.print(_refused("audit", e), style="red", markup=False, soft_wrap=True)
            return 2
        except (OSError, TimeoutError) as e:
            console.print(f"[red]chieu audit: cannot read the sources ({type(e).__name__}: {e})[/red]")
            return 3
        except Exception as e:  # nats-py and asyncpg raise their own errors for a server they cannot use
            if type(e).__module__.split(".")[0] in ("nats", "asyncpg"):
                console.print(f"[red]chieu audit: cannot read the sources ({type(e).__name__}: {e})[/red]")
                return 3
            raise
    if args.json == "-":
        print(json.dumps(report.to_json(), ensure_ascii=False, indent=2))
    elif args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(report.to_json(), f, ensure_ascii=False, indent=2)
    if not args.quiet:
        rep.summary(report, console)
    return 1 if not report.ok else 0 if report.complete else 4


def _collusion_flags(au: argparse.ArgumentParser) -> None:
    """``chieu audit``'s chip-dumping thresholds (chieu.audit.collusion.Thresholds; the defaults)."""
    from chieu.audit.collusion import Thresholds

    d = Thresholds()
    au.add_argument("--no-collusion", action="store_true", help="do not screen the coin hands for chip dumping")
    for flag, kind, default, what in (
            ("new-account-h", float, d.new_account_h, "an account younger than this (hours) at a hand is new"),
            ("new-payers", int, d.new_payers, "new accounts losing to one account that flag it"),
            ("min-coins", int, d.min_coins, "金币 a pattern must move to be flagged"),
            ("max-moves", int, d.max_moves, "a coin hand ended after at most this many moves is short"),
            ("short-hands", int, d.short_hands, "short or abandoned coin hands won that flag an account"),
            ("short-share", float, d.short_share, "the share of an account's coin-hand wins that must be short"),
            ("pair-hands", int, d.pair_hands, "coin hands of the same pair that may flag it"),
            ("one-way", float, d.one_way, "the share of the pair's coins flowing one way that flags it")):
        au.add_argument(f"--collusion-{flag}", type=kind, default=default, metavar="N", help=f"{what} ({default})")


def _collusion(args: argparse.Namespace) -> object:
    """The thresholds the flags give (None: --no-collusion)."""
    from chieu.audit.collusion import Thresholds

    if args.no_collusion:
        return None
    return Thresholds(args.collusion_new_account_h, args.collusion_new_payers, args.collusion_min_coins,
                      args.collusion_max_moves, args.collusion_short_hands, args.collusion_short_share,
                      args.collusion_pair_hands, args.collusion_one_way)


def _export(args: argparse.Namespace) -> int:
    """Write the table stream (or a period of it) to an archive file, signed with the archive key
    (``--key``, else ``CHIEU_ARCHIVE_PRIVATE_KEY``). Exit 2: no key, or one that does not load
    (no unsigned export is made); 3: NATS cannot be read."""
    import asyncio

    from chieu.audit import archive
    from chieu.audit.signing import ArchiveSigner
    from chieu.kit.settings import from_env

    settings = from_env()
    url = args.nats or settings.nats_url
    key = args.key or settings.archive_private_key
    if not key:
        print("chieu export: no archive signing key (CHIEU_ARCHIVE_PRIVATE_KEY or --key FILE; `chieu archive-key` "
              "makes one): unsigned archives are not made", file=sys.stderr)
        return 2
    try:
        signer = ArchiveSigner.load(key)
    except ValueError as e:
        print(f"chieu export: {' '.join(str(e).split())}", file=sys.stderr)
        return 2
    try:
        m = asyncio.run(archive.export(url, args.out, signer, _ms(args.since) if args.since else 0,
                                       _ms(args.until) if args.until else 0))
    except Exception as e:  # cannot reach NATS, or no table stream there
        print(f"chieu export: cannot read the table stream at {url} ({type(e).__name__}: {e})", file=sys.stderr)
        return 3
    print(f"{args.out}: {m.entries} entries (the records of {m.tables} tables), stream sequences "
          f"{m.first_seq}..{m.last_seq}, "
          f"chain head {m.head.hex()}, seal {m.seal.hex()}, signed by {signer.kid}")
    return 0


def _archive_key(args: argparse.Namespace) -> int:
    """An archive signing key: the private key ``--out`` (made, mode 0600, unless it exists: a
    rotation adds an existing key too), its public key added to the JWKS ``--keyset`` (made when
    missing; the keys already there stay, so older archives still verify)."""
    from pathlib import Path

    from chieu.audit.signing import ensure_key

    try:
        signer, made = ensure_key(Path(args.out), Path(args.keyset))
    except (OSError, ValueError) as e:
        print(f"chieu archive-key: {' '.join(str(e).split())}", file=sys.stderr)
        return 2
    print(f"{'made' if made else 'kept'} the archive key {signer.kid} in {args.out} (CHIEU_ARCHIVE_PRIVATE_KEY, "
          f"for chieu export only); its public key is in {args.keyset}: publish that keyset to the auditors "
          "(CHIEU_ARCHIVE_PUBLIC_KEYS)")
    return 0


def _replay(args: argparse.Namespace) -> int:
    """Render a table's hands move by move as a static HTML page."""
    import asyncio

    from chieu.audit import archive, replay
    from chieu.audit.report import Report
    from chieu.audit.run import Options, load
    from chieu.kit.settings import from_env

    settings = from_env()
    try:
        period = asyncio.run(load(Options(nats_url=args.nats or settings.nats_url, archive=args.archive or "",
                                          archive_keys=args.keys or settings.archive_public_keys), Report()))
    except archive.ArchiveError as e:
        print(_refused("replay", e), file=sys.stderr)
        return 2
    except Exception as e:
        print(f"chieu replay: cannot read the table log ({type(e).__name__}: {e})", file=sys.stderr)
        return 3
    records = period.tables.get(args.table)
    if not records:
        print(f"chieu replay: no table {args.table!r} in the log", file=sys.stderr)
        return 2
    with open(args.html, "w", encoding="utf-8") as f:
        f.write(replay.render(args.table, records))
    print(f"{args.html}: table {args.table}, {len(records)} records")
    return 0


def _game_tools(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Every game's own commands (its descriptor's ``tools``: 中国象棋's ``perft``), found through
    the registry; a tool named like a command of the CLI or another game's is a bug, refused."""
    from chieu.games import registry

    for d in registry.descriptors():
        for tool in d.tools:
            if tool.name in sub.choices:
                raise ValueError(f"chieu.games.{d.key}'s tool {tool.name!r} is already a command of chieu")
            parser = sub.add_parser(tool.name, help=tool.help, description=tool.help)
            tool.arguments(parser)
            parser.set_defaults(func=tool.run)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="chieu", description=__doc__)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    # run by the ./chieu script itself; listed here so that --help names every command
    for name, what in (("test", "run the whole test suite (generated code, lint, types, tests)"),
                       ("bench", "run the benchmarks, each beside a baseline measured in the same run"),
                       ("up", "run the whole system locally (developer tool, chieu-tools)"),
                       ("chaos", "a seeded chaos run of the local cluster (developer tool, chieu-tools)"),
                       ("soak", "a long run of the bots without faults (developer tool, chieu-tools)")):
        sub.add_parser(name, help=f"{what} (./chieu {name})").set_defaults(func=_script_only)

    sc = sub.add_parser("scenario", help="golden game scenarios")
    sc_sub = sc.add_subparsers(dest="action", required=True)
    run = sc_sub.add_parser("run", help="run scenario files (or folders) through the rules core")
    run.add_argument("files", nargs="+")
    run.add_argument("--json", action="store_true", help="print the report as JSON")
    run.set_defaults(func=_scenario)

    na = sub.add_parser("nats-auth", help="make the NATS users' credentials and print the server's authorization")
    na.add_argument("--dir", required=True, help="where the seeds are (made if missing, kept if there)")
    na.set_defaults(func=_nats_auth)

    rw = sub.add_parser("rewind", help="operator: move a service's durables back after its database was restored")
    rw.add_argument("service", choices=("ledger", "ladder", "lobby"))
    rw.add_argument("--from-seq", type=int, help="start every durable of the service here (default: from its inbox)")
    rw.add_argument("--database-url", help="the service's restored PostgreSQL (default $DATABASE_URL)")
    rw.add_argument("--nats", help="the NATS URL (default $NATS_URL); as the service's user, CHIEU_NATS_CREDS")
    rw.add_argument("--force", action="store_true", help="even if the durable still has pull requests waiting")
    rw.set_defaults(func=_rewind)

    lp = sub.add_parser("ledger-parked", help="operator: the table-log records the ledger could not post; "
                        "list them, or post them again after a fix")
    lp.add_argument("action", choices=("list", "retry"))
    lp.add_argument("--seq", type=int, action="append", help="retry only this stream sequence (repeat for more; "
                    "default: every parked record)")
    lp.add_argument("--all", action="store_true", help="list: the records posted since too")
    lp.add_argument("--actor", default="operator", help="retry: who retries, kept with each record posted")
    lp.add_argument("--database-url", help="the ledger's PostgreSQL (default $DATABASE_URL)")
    lp.set_defaults(func=_ledger_parked)

    ver = sub.add_parser("verify", help="auditor: re-derive every deal, move, outcome and settlement of a table "
                         "from its log (NATS_URL)")
    ver.add_argument("table", help="the table id")
    ver.add_argument("--nats", help="the NATS URL (default $NATS_URL)")
    ver.set_defaults(func=_verify)

    au = sub.add_parser("audit", help="auditor: prove a period of play (every log, the ledger, the ladder)")
    au.add_argument("--archive", help="an archive file from `chieu export` (default: the live stream)")
    au.add_argument("--keys", metavar="FILE", help="the operator's published archive keyset (JWKS) the archive's "
                    "signature must verify with (default $CHIEU_ARCHIVE_PUBLIC_KEYS)")
    au.add_argument("--nats", help="the NATS URL (default $NATS_URL)")
    au.add_argument("--database-url", help="the ledger's PostgreSQL, and the ladder's unless --ladder-database-url "
                    "(default $DATABASE_URL)")
    au.add_argument("--ladder-database-url", help="the ladder's PostgreSQL when it has its own (as in deploy/)")
    au.add_argument("--table", action="append", help="only this table (repeat for more): its books only")
    au.add_argument("--no-db", action="store_true", help="check the logs only")
    au.add_argument("--no-ledger", action="store_true", help="do not reconcile the ledger")
    au.add_argument("--no-ladder", action="store_true", help="do not reconcile the ladder")
    au.add_argument("--json", metavar="FILE", help="write the JSON report to FILE (- for stdout)")
    au.add_argument("--quiet", action="store_true", help="no progress bar and no summary")
    _collusion_flags(au)
    au.set_defaults(func=_audit)

    ex = sub.add_parser("export", help="auditor: write the table stream (or a period) to an archive file")
    ex.add_argument("out", help="the archive file to write")
    ex.add_argument("--since", help="tables with a record at or after this time (ms or ISO, UTC)")
    ex.add_argument("--until", help="records before this time (ms or ISO, UTC)")
    ex.add_argument("--nats", help="the NATS URL (default $NATS_URL)")
    ex.add_argument("--key", metavar="FILE", help="the archive signing key, Ed25519 PEM (default "
                    "$CHIEU_ARCHIVE_PRIVATE_KEY); without one nothing is exported")
    ex.set_defaults(func=_export)

    ak = sub.add_parser("archive-key", help="operator: an archive signing key, its public key added to the keyset")
    ak.add_argument("--out", required=True, help="the private key file (made unless it exists; "
                    "CHIEU_ARCHIVE_PRIVATE_KEY of chieu export)")
    ak.add_argument("--keyset", required=True, help="the JWKS file to add its public key to (made when missing; "
                    "the published CHIEU_ARCHIVE_PUBLIC_KEYS)")
    ak.set_defaults(func=_archive_key)

    rp = sub.add_parser("replay", help="auditor: a table's hands move by move as a static HTML page")
    rp.add_argument("table", help="the table id")
    rp.add_argument("--html", required=True, help="the page to write")
    rp.add_argument("--archive", help="read the log from an archive file (default: the live stream)")
    rp.add_argument("--keys", metavar="FILE", help="the archive keyset (JWKS) its signature must verify with "
                    "(default $CHIEU_ARCHIVE_PUBLIC_KEYS)")
    rp.add_argument("--nats", help="the NATS URL (default $NATS_URL)")
    rp.set_defaults(func=_replay)

    sk = sub.add_parser("service-key", help="a service's own key: it signs its own short-lived credential")
    sk.add_argument("name", help="the service (table, ledger, ladder, lobby)")
    sk.add_argument("--out", required=True, help="the private key file to write (the service's CHIEU_SERVICE_KEY)")
    sk.add_argument("--public", help="also write the public key PEM here (a keyset directory's service-<name>.pem)")
    sk.set_defaults(func=_service_key)

    sl = sub.add_parser("seal-keys", help="operator: the table processes' seal keyset (CHIEU_SEAL_KEYS), printed")
    sl.add_argument("--rotate", metavar="FILE", help="this keyset with a fresh sealing key put first (the old keys "
                                                     "still open what they sealed)")
    sl.add_argument("--retire", metavar="KID", action="append", default=[],
                    help="leave this key out (only once no hand or next deal is sealed under it)")
    sl.set_defaults(func=_seal_keys)

    ho = sub.add_parser("holds", help="operator: the collusion screen's holds of flagged winnings; review one "
                        "(release it to the player, or reverse it to the payers)")
    ho.add_argument("hold", nargs="?", type=int, help="the hold to review (omitted: list the holds)")
    ho.add_argument("--release", action="store_true", help="give the held coins back to the flagged player")
    ho.add_argument("--reverse", action="store_true", help="give each payer back what it lost into the hold")
    ho.add_argument("--reason", help="what the review found (mandatory for a review)")
    ho.add_argument("--player", help="list only this player's holds")
    ho.add_argument("--reviewed", action="store_true", help="list the reviewed holds too")
    ho.add_argument("--token", help="an operator's token (default: CHIEU_OPERATOR_TOKEN)")
    ho.add_argument("--ledger", help="the ledger's address (default: CHIEU_LEDGER_ADDR)")
    ho.set_defaults(func=_holds)

    tok = sub.add_parser("token", help="sign a session token or a service credential (CHIEU_TOKEN_PRIVATE_KEY)")
    tok.add_argument("player", nargs="?", help="the player id")
    tok.add_argument("--role", action="append", choices=["player", "operator", "auditor"])
    tok.add_argument("--service", metavar="NAME", help="a service's own credential (service:NAME) instead")
    tok.add_argument("--ttl", type=int, help="seconds of validity (default a day; a year for --service)")
    tok.add_argument("--key", help="the Ed25519 private key PEM (default $CHIEU_TOKEN_PRIVATE_KEY, else "
                                   ".var/keys/private.pem)")
    tok.set_defaults(func=_token)
    _game_tools(sub)
    return parser


LOCAL_ENV = ".var/local.env"
"""What ``./chieu up`` writes beside its data: the local NATS, its audit credential, the database,
the archive signing key and its keyset."""
LOCAL_KEYS = ("NATS_URL", "CHIEU_NATS_CREDS", "CHIEU_NATS_CA", "DATABASE_URL", "CHIEU_ARCHIVE_PRIVATE_KEY",
              "CHIEU_ARCHIVE_PUBLIC_KEYS")
AUDIT_COMMANDS = ("verify", "audit", "export", "replay")


def local_env_file(start: str | None = None) -> str | None:
    """``$CHIEU_LOCAL_ENV``, else the nearest ``.var/local.env`` from ``start`` (the working folder)
    up to the root: the local stack of ``./chieu up``, if one was made there."""
    import os
    from pathlib import Path

    if os.environ.get("CHIEU_LOCAL_ENV"):
        return os.environ["CHIEU_LOCAL_ENV"]
    here = Path(start or os.getcwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / LOCAL_ENV).is_file():
            return str(folder / LOCAL_ENV)
    return None


def use_local_stack(args: argparse.Namespace) -> list[str]:
    """Fill what the environment does not say from the local stack's ``local.env``: NATS's URL, the
    read-only ``audit`` user's seed and the archive key and keyset (unless a NATS URL other than
    the local one is given), and the database URL (unless one is given). Says which, on stderr;
    returns the keys filled."""
    import os
    import shlex

    path = local_env_file()
    if path is None:
        return []
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError:
        return []
    local: dict[str, str] = {}
    for line in lines:
        words = shlex.split(line, comments=True)
        if len(words) == 1 and "=" in words[0]:
            key, value = words[0].split("=", 1)
            if key in LOCAL_KEYS:
                local[key] = value
    nats = getattr(args, "nats", None) or os.environ.get("NATS_URL")
    other_nats = nats is not None and nats != local.get("NATS_URL")
    filled = [k for k, v in local.items() if v and not os.environ.get(k)
              and not (other_nats and k != "DATABASE_URL")
              and not (k == "DATABASE_URL" and getattr(args, "database_url", None))]
    for key in filled:
        os.environ[key] = local[key]
    if filled:
        print(f"chieu {args.command}: {', '.join(filled)} from {path} (the local stack of ./chieu up)",
              file=sys.stderr)
    return filled


def _script_only(args: argparse.Namespace) -> int:
    print(f"chieu: run it as ./chieu {args.command} (the entry script sets up what it needs)", file=sys.stderr)
    return 2


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["help"]:
        argv = ["--help"]
    args = parser.parse_args(argv)
    if getattr(args, "func", None) is None:  # no command (or `help`): the help, not an error
        parser.print_help()
        return 0
    if args.command in (*AUDIT_COMMANDS, "ledger-parked"):
        use_local_stack(args)
    result: int = args.func(args)
    return result


if __name__ == "__main__":
    sys.exit(main())
