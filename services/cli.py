"""The ``chieu`` command line: run the system, run scenarios, and operator tools."""

from __future__ import annotations

import argparse
import sys


def _scenario(args: argparse.Namespace) -> int:
    from chieu.table.scenario import report, run_files

    results = run_files(args.files)
    print(report(results, as_json=args.json))
    return 0 if results and all(r.passed for r in results) else 1


def _up(args: argparse.Namespace) -> int:
    from pathlib import Path

    from chieu.up import run

    return run(Path(args.data), args.nats_port, args.table_port)


def _token(args: argparse.Namespace) -> int:
    from chieu.kit import auth
    from chieu.kit.settings import from_env

    print(auth.sign(from_env().token_secret, args.player, args.role or ["player"], args.ttl))
    return 0


def _verify(args: argparse.Namespace) -> int:
    """Exit 0: every finished hand verified (hands still in play are listed, not failed);
    1: a hand failed; 2: a bad or unknown table id; 3: NATS cannot be reached."""
    import asyncio

    from chieu.kit.errors import ServiceError
    from chieu.kit.eventstore import EventStore
    from chieu.kit.names import TABLES
    from chieu.kit.settings import from_env
    from chieu.table import audit
    from chieu.table.decide import check_table_id
    from chieu.table.v1 import log_pb2

    try:
        table_id = check_table_id(args.table)
    except ServiceError as e:
        print(f"chieu verify: {e.message}", file=sys.stderr)
        return 2
    url = args.nats or from_env().nats_url

    async def run() -> list[tuple[int, log_pb2.Record]]:
        store = await EventStore.connect(url, stream=TABLES, once=True)
        try:
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
    verdicts = audit.verify(table_id, records)
    for v in verdicts:
        if not v.revealed:
            print(f"hand {v.hand_no}: IN PLAY  the seed is not revealed yet, so the deal cannot be checked; "
                  f"moves so far={v.moves_checked} {'ok' if v.moves_ok else 'BAD'}")
            continue
        print(f"hand {v.hand_no}: {'OK' if v.ok else 'FAILED'}  commitment={'ok' if v.commitment_ok else 'BAD'}  "
              f"deal={'ok' if v.deal_ok else 'BAD'}  moves={v.moves_checked} {'ok' if v.moves_ok else 'BAD'}"
              f"{'  ' + v.detail if v.detail else ''}")
    if not verdicts:
        print(f"table {table_id}: no hand has started yet")
    return 0 if all(v.ok or (not v.revealed and v.moves_ok) for v in verdicts) else 1


def _perft(args: argparse.Namespace) -> int:
    from chieu.table.rules.xiangqi import perft

    return perft.main([args.fen, str(args.depth), *(["--divide"] if args.divide else [])])


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="chieu", description=__doc__)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    # run by the ./chieu script itself; listed here so that --help names every command
    for name, what in (("test", "run the whole test suite (generated code, lint, types, tests)"),
                       ("bench", "run the benchmarks, each beside a baseline measured in the same run")):
        sub.add_parser(name, help=f"{what} (./chieu {name})").set_defaults(func=_script_only)

    sc = sub.add_parser("scenario", help="golden game scenarios")
    sc_sub = sc.add_subparsers(dest="action", required=True)
    run = sc_sub.add_parser("run", help="run scenario files (or folders) through the rules core")
    run.add_argument("files", nargs="+")
    run.add_argument("--json", action="store_true", help="print the report as JSON")
    run.set_defaults(func=_scenario)

    up = sub.add_parser("up", help="run the whole system locally (nats-server + services)")
    up.add_argument("--data", default=".var", help="data folder (default .var)")
    up.add_argument("--nats-port", type=int, default=4222)
    up.add_argument("--table-port", type=int, default=50051)
    up.set_defaults(func=_up)

    ver = sub.add_parser("verify", help="auditor: re-derive every deal and move of a table from its log (NATS_URL)")
    ver.add_argument("table", help="the table id")
    ver.add_argument("--nats", help="the NATS URL (default $NATS_URL)")
    ver.set_defaults(func=_verify)

    pf = sub.add_parser("perft", help="中国象棋: count the leaf nodes of the move tree from a FEN")
    pf.add_argument("fen", nargs="?", default="rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1")
    pf.add_argument("depth", type=int, nargs="?", default=3)
    pf.add_argument("--divide", action="store_true", help="a count per first move")
    pf.set_defaults(func=_perft)

    tok = sub.add_parser("token", help="sign a developer session token (CHIEU_TOKEN_SECRET)")
    tok.add_argument("player", help="the player id")
    tok.add_argument("--role", action="append", choices=["player", "operator", "auditor"])
    tok.add_argument("--ttl", type=int, default=86400, help="seconds of validity")
    tok.set_defaults(func=_token)
    return parser


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
    result: int = args.func(args)
    return result


if __name__ == "__main__":
    sys.exit(main())
