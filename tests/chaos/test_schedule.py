"""The fault schedule is a pure function of the seed: the same seed gives the same faults, another
seed others; faults never overlap, leave the calm phase and the last seconds alone, and a long
run has every kind and at least a hundred of them."""

from __future__ import annotations

import itertools

from chieu_tools.chaos.schedule import DURATIONS, KINDS, Targets, by_kind, calm_seconds, plan

TARGETS = Targets(services=[f"{s}-{i}" for s in ("table", "ledger", "ladder", "lobby") for i in (1, 2)],
                  nodes=["n1", "n2", "n3"], slow="n3")


def test_the_same_seed_gives_the_same_schedule() -> None:
    assert plan(42, 30, TARGETS) == plan(42, 30, TARGETS)
    assert plan(42, 30, TARGETS) != plan(43, 30, TARGETS)


def test_faults_follow_one_another_after_the_calm_phase() -> None:
    faults = plan(7, 30, TARGETS, settle_s=15)
    assert faults[0].at_s >= calm_seconds(30 * 60)
    for a, b in itertools.pairwise(faults):
        assert b.at_s >= a.at_s + a.duration_s  # never two at once
    assert faults[-1].at_s + faults[-1].duration_s <= 30 * 60 - 15
    for f in faults:
        lo, hi = DURATIONS[f.kind]
        assert lo <= f.duration_s <= hi
        if f.kind in ("kill_service", "pause_service"):
            assert f.target in TARGETS.services
        elif f.kind == "kill_nats":
            assert f.target in TARGETS.nodes
        elif f.kind == "slow_nats":
            assert f.target == "n3" and f.detail.endswith("ms")
        else:
            assert f.detail in ("fast", "immediate")


def test_a_long_run_has_every_kind_and_a_hundred_faults() -> None:
    faults = plan(2026, 30, TARGETS)
    assert len(faults) >= 100
    assert set(by_kind(faults)) == set(KINDS)
    assert {f.target for f in faults if f.kind == "kill_service"} == set(TARGETS.services)


def test_kinds_without_a_target_are_left_out() -> None:
    faults = plan(1, 10, Targets(services=["table-1"], nodes=["n1"], slow="", pg=False))
    assert {f.kind for f in faults} <= {"kill_service", "pause_service", "kill_nats"}
