"""The developer's commands, apart from the product: ``./chieu up`` (the whole system on one
machine, or the local cluster), ``./chieu chaos`` (a seeded chaos run) and ``./chieu soak`` (a long
run without faults). ``./chieu`` sends these here and every other command to :mod:`chieu.cli`."""

from __future__ import annotations

import argparse
import sys


def _up(args: argparse.Namespace) -> int:
    from pathlib import Path

    if args.cluster:
        from chieu_tools.cluster import UP_PORTS
        from chieu_tools.cluster import run as run_cluster

        ports = {**UP_PORTS, "nats": args.nats_port, "monitor": args.nats_monitor_port, "table": args.table_port,
                 "route": args.nats_port + 2000, **{s: args.table_port + i for i, s in enumerate(
                     ("ledger", "ladder", "lobby"), 1)}}
        return run_cluster(Path(args.data) / "cluster", ports, Path(args.data) / "local.env",
                           max_deaths=args.max_deaths, window_s=args.window)
    from chieu_tools.up import run

    return run(Path(args.data), args.nats_port, args.table_port, web_port=args.web_port, tls=args.tls,
               nats_monitor_port=args.nats_monitor_port, envoy_admin_port=args.envoy_admin_port,
               metrics_port=args.metrics_port, web=not args.no_web, max_deaths=args.max_deaths,
               window_s=args.window)


def _chaos(args: argparse.Namespace) -> int:
    """Exit 0: no violation; 1: violations (each listed); 2: the run could not be made."""
    from chieu_tools.chaos.run import main

    return main(args.seed, args.minutes, args.data, args.full, args.keep)


def _soak(args: argparse.Namespace) -> int:
    """Exit 0 once the soak has run (its report printed); 2 if it could not be made."""
    from chieu_tools.soak import main

    return main(args.minutes, args.data, args.every, args.full)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="chieu", description=__doc__)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    up = sub.add_parser("up", help="run the whole system locally (nats-server + services)")
    up.add_argument("--data", default=".var", help="data folder (default .var)")
    up.add_argument("--nats-port", type=int, default=4222)
    up.add_argument("--table-port", type=int, default=50051)
    up.add_argument("--web-port", type=int, default=8080, help="the portal: Envoy, gRPC-Web (default 8080)")
    up.add_argument("--nats-monitor-port", type=int, default=8222, help="NATS /healthz (default 8222)")
    up.add_argument("--envoy-admin-port", type=int, default=9901, help="Envoy's admin, /ready (default 9901)")
    up.add_argument("--metrics-port", type=int, default=9464,
                    help="the table's /metrics; the ledger's, ladder's, lobby's the next ones (default 9464; 0: none)")
    up.add_argument("--no-web", action="store_true", help="do not build the portal (Envoy serves gRPC-Web only)")
    up.add_argument("--max-deaths", type=int, default=5,
                    help="a process that dies this often within --window seconds is given up (default 5)")
    up.add_argument("--window", type=float, default=60.0, help="see --max-deaths (default 60)")
    up.add_argument("--cluster", action="store_true",
                    help="the production topology: 3 NATS nodes (R3), 2 processes of every service "
                         "(data in DATA/cluster)")
    up.add_argument("--tls", action="store_true",
                    help="TLS on every gRPC port and on NATS, with a local CA made in DATA/tls")
    up.set_defaults(func=_up)

    ch = sub.add_parser("chaos", help="a seeded chaos run of the local cluster, then every promise checked")
    ch.add_argument("--seed", type=int,
                    help="the seed of the fault schedule and the bots (default: a random one, printed)")
    ch.add_argument("--minutes", type=float, default=30.0, help="how long the bots play (default 30)")
    ch.add_argument("--full", action="store_true", help="every game in several rooms (53 players; default: 21)")
    ch.add_argument("--data", default=".var/chaos", help="where each run keeps its cluster and records")
    ch.add_argument("--keep", action="store_true", help="keep the cluster up after the report, until Ctrl-C")
    ch.set_defaults(func=_chaos)

    so = sub.add_parser("soak", help="a long run of the bots on the local cluster, no faults: memory per 1,000 "
                                     "hands and latency over time")
    so.add_argument("--minutes", type=float, default=15.0, help="how long the bots play (default 15)")
    so.add_argument("--every", type=float, default=30.0, help="seconds between samples (default 30)")
    so.add_argument("--full", action="store_true", help="every game in several rooms (53 players; default: 21)")
    so.add_argument("--data", default=".var/soak", help="where each soak keeps its cluster and soak.json")
    so.set_defaults(func=_soak)

    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(sys.argv[1:] if argv is None else argv)
    result: int = args.func(args)
    return result


if __name__ == "__main__":
    sys.exit(main())
