"""The CI chaos run: ``chieu chaos --seed 26 --minutes 3`` on the local cluster — every game played
by bots through the lobby while the seed's 14 faults hit (every kind: table and NATS node SIGKILLs,
pauses, a PostgreSQL restart, a slow node) — must end with no violation of any promise the
checker knows (tests/chaos/test_checker.py shows it finds each one). Its Phỏm coin players sit at
two or three coin tables at once, so the ledger's reservations of one balance race each other;
the audit (its money proof included) finds nothing, and the collusion screen, at its real
settings, holds none of them."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from chieu.games import registry
from chieu_tools.chaos.schedule import KINDS

pytestmark = [pytest.mark.integration, pytest.mark.e2e, pytest.mark.timeout(1200)]

SEED, MINUTES = 26, 3


@pytest.fixture
def folder() -> Iterator[Path]:
    """Not under pytest's basetemp (mode 0700): PostgreSQL runs as its own user when we are root."""
    path = Path(tempfile.mkdtemp(prefix="chieu-chaos-"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def test_a_short_seeded_chaos_run_breaks_no_promise(folder: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "chieu_tools.cli", "chaos", "--seed", str(SEED),
                           "--minutes", str(MINUTES), "--data", str(folder)],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=1100)
    text = proc.stdout.decode()
    (summary_file,) = folder.glob(f"seed-{SEED}-*/summary.json")
    summary = json.loads(summary_file.read_text())
    print(text[-4000:])
    assert summary["violations"] == [], text[-4000:]
    assert proc.returncode == 0 and summary["ok"], text[-4000:]
    assert set(summary["faults"]) == set(KINDS) and not summary["faults_failed"]
    counts = summary["counts"]
    for game in registry.KEYS:  # every game was played through the faults
        assert counts.get(f"moves_{game}", 0) > 0, game
    assert sum(1 for g in registry.KEYS if counts.get(f"hands_ended_{g}", 0)) >= 5
    assert counts["views"] > 1000 and summary["moves"]["acked"] > 300
    assert summary["recovery_s"]["table_kill"]["n"] > 0
    # coin hands of one player in play at once, every one reserved from one balance; the audit's
    # findings (money and its proof from the rules) and the screen's holds are violations above
    assert counts["coin_hands"] >= 10 and counts["coin_hands_reserved"] == counts["coin_hands"]
    assert counts["coin_hands_concurrent"] >= 4 and counts["coin_players_concurrent"] >= 2
    assert counts["coin_hands_at_once"] >= 2
    assert counts["audit_settlements_proven"] > 0 and counts["audit_outcomes_proven"] > 0
    assert counts["screen_holds"] == 0 and counts["screen_frozen"] == 0 and counts["screen_flows"] > 0
