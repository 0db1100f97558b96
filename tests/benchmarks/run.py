"""Run every benchmark (``bench_*.py`` here) or those whose name contains an argument.

    ./chieu bench            # all
    ./chieu bench o_an_quan  # bench_o_an_quan*.py
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def main() -> int:
    here = Path(__file__).parent
    wanted = sys.argv[1:]
    files = sorted(p for p in here.glob("bench_*.py") if not wanted or any(w in p.stem for w in wanted))
    failed = 0
    for f in files:
        print(f"\n##### {f.stem}", flush=True)
        failed += subprocess.call([sys.executable, str(f)]) != 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
