"""The ``chieu`` command line: run the system, run scenarios, and operator tools."""

from __future__ import annotations

import argparse
import sys


def _scenario(args: argparse.Namespace) -> int:
    from chieu.table.scenario import report, run_files

    results = run_files(args.files)
    print(report(results, as_json=args.json))
    return 0 if results and all(r.passed for r in results) else 1


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="chieu", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    sc = sub.add_parser("scenario", help="golden game scenarios")
    sc_sub = sc.add_subparsers(dest="action", required=True)
    run = sc_sub.add_parser("run", help="run scenario files (or folders) through the rules core")
    run.add_argument("files", nargs="+")
    run.add_argument("--json", action="store_true", help="print the report as JSON")
    run.set_defaults(func=_scenario)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    result: int = args.func(args)
    return result


if __name__ == "__main__":
    sys.exit(main())
