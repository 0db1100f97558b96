"""Run every benchmark (``bench_*.py`` here) or those whose name contains an argument.

    ./chieu bench            # all
    ./chieu bench o_an_quan  # bench_o_an_quan*.py
    ./chieu bench --help     # this, and the benchmarks there are
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path


def _written_sectors() -> int | None:
    """Sectors written to every disk so far (Linux), or None where it cannot be read."""
    try:
        lines = Path("/proc/diskstats").read_text().splitlines()
    except OSError:
        return None
    return sum(int(f[9]) for f in (line.split() for line in lines) if len(f) > 9)


def settle(timeout_s: float = 60.0) -> None:
    """Wait until the disks are quiet: what one benchmark wrote (the ledger's million-row
    database and its deletion, say) must not be written back during the next one's fsyncs."""
    os.sync()
    before, quiet, give_up = _written_sectors(), 0, time.monotonic() + timeout_s
    while before is not None and quiet < 2 and time.monotonic() < give_up:
        time.sleep(0.5)
        now = _written_sectors()
        quiet = quiet + 1 if now is not None and now - before < 2048 else 0  # < 1 MB per half second
        before = now


HERE = Path(__file__).parent


def parser() -> argparse.ArgumentParser:
    """``./chieu bench``'s arguments; ``--help`` lists the benchmarks and runs none."""
    every = ", ".join(p.stem.removeprefix("bench_") for p in sorted(HERE.glob("bench_*.py")))
    out = argparse.ArgumentParser(
        prog="chieu bench", description="Run the benchmarks (tests/benchmarks/bench_*.py), each beside a baseline "
        "measured in the same run, waiting for the disks to settle between two.", epilog=f"benchmarks: {every}")
    out.add_argument("names", nargs="*", metavar="NAME",
                     help="run only the benchmarks whose name contains one of these (default: all)")
    return out


def main(argv: list[str] | None = None) -> int:
    wanted = parser().parse_args(sys.argv[1:] if argv is None else argv).names
    files = sorted(p for p in HERE.glob("bench_*.py") if not wanted or any(w in p.stem for w in wanted))
    if not files:
        print(f"chieu bench: no benchmark is named like {' or '.join(wanted)} (./chieu bench --help lists them)",
              file=sys.stderr)
        return 2
    failed = 0
    for f in files:
        print(f"\n##### {f.stem}", flush=True)
        failed += subprocess.call([sys.executable, str(f)]) != 0
        settle()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
