"""The scenario runner: golden game scenarios, run through the pure rules core.

The runner takes a scenario as plain data and reads no file: :mod:`chieu.scenario_files` reads
the YAML and JSON files (the games stay free of I/O). A scenario file (YAML or JSON) holds one
scenario, or a list of them under ``scenarios:``::

    id: OQ-01                      # the rules file's scenario id
    title: Opening that captures a quan
    game: o_an_quan                # a registry key
    options: {quanValue: 10}       # table options, the rules file's names
    players: 2
    seats: [A, B]                  # optional names for seats 0, 1, ...; steps may use them
    now_ms: 0                      # the server time the hand starts at (default 0)
    # the starting position, one of:
    position: {...}                # game-specific (a board, an exact deal), see each game
    deal: {seed: "00ff...", first: A, previous: {...}}   # start() from seed material
    steps:
      - seat: A                    # who acts
        command: {square: S1, direction: CW}   # game notation or {type: Sow, ...}
        at_ms: 1000                # optional server time of the command
        reject: not_your_turn      # expected rule-violation code (state must not change)
        events: [{type: Sowed, relays: [7]}, ...]   # exactly these events, in order, each a subset
        # or events: {contains: [...]}: these in this order, other events may come between them
        state: {to_move: B}        # subset of the game's describe(state) after the step
        view: {seat: B, expect: {...}}   # subset of the seat's view (seat: null = spectator)
      - timeout: A                 # on_timeout for that seat
      - legal: {seat: A, count: 10, includes: [{...}], excludes: [{...}]}
    expect:
      state: {...}                 # subset of describe(state) at the end
      outcome: {winner: A, scores: [45, 25], transfers: [...], net: [1, -1], pot: 0}
    queries:                       # static checks through the game's pure query functions
      - {call: points, args: [...], expect: 17}

Beyond what it states, every scenario also checks that replaying the logged events from the
initial state gives the live state, and that a rejected command changed nothing.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from chieu.games import registry
from chieu.games.core import Game, Outcome, RuleViolation, Setup
from chieu.games.plain import from_plain, mismatches, to_plain


@dataclass
class Result:
    """One scenario's verdict."""

    file: str
    id: str
    title: str
    failures: list[str] = field(default_factory=list)
    steps: int = 0

    @property
    def passed(self) -> bool:
        return not self.failures


class _Run:
    def __init__(self, spec: Mapping[str, Any], result: Result) -> None:
        self.spec = spec
        self.result = result
        self.game: Game[Any, Any, Any, Any] = registry.get(str(spec["game"]))
        self.hooks = registry.scenario(self.game.key)
        self.seat_names: list[str] = [str(s) for s in spec.get("seats", [])]
        self.players = int(spec.get("players", self.game.min_players))
        self.options = self.game.parse_options(spec.get("options") or {})
        self.now_ms = int(spec.get("now_ms", 0))
        self.state = self.game.initial(self.options, self.players)
        self.initial = self.state
        self.log: list[Any] = []

    def fail(self, where: str, msg: str) -> None:
        self.result.failures.append(f"{where}: {msg}")

    def seat(self, value: Any) -> int | None:
        if value is None:
            return None
        if isinstance(value, int):
            return value
        if str(value) in self.seat_names:
            return self.seat_names.index(str(value))
        raise ValueError(f"unknown seat {value!r}")

    def apply(self, events: Sequence[Any]) -> None:
        for e in events:
            self.state = self.game.evolve(self.state, e)
            self.log.append(e)

    def command(self, raw: Any) -> Any:
        hooks = self.hooks
        if isinstance(raw, Mapping) and "type" not in raw and hooks.command is not None:
            return hooks.command(raw)
        if isinstance(raw, Mapping) and "type" in raw:
            by_name = {c.__name__: c for c in self.game.commands}
            cls = by_name.get(str(raw["type"]))
            if cls is None:
                raise ValueError(f"no command {raw['type']!r} in {self.game.key}")
            return from_plain(cls, dict(raw))
        if hooks.command is not None:
            return hooks.command(raw)
        raise ValueError(f"cannot read command {raw!r}")

    def set_up(self) -> None:
        spec = self.spec
        if "position" in spec:
            self.apply(self.hooks.position(self.options, self.players, spec["position"], self.now_ms))
        elif "deal" in spec:
            deal = spec["deal"] or {}
            previous = deal.get("previous")
            setup = Setup(
                options=self.options,
                players=self.players,
                seed=bytes.fromhex(str(deal.get("seed", "00"))),
                now_ms=self.now_ms,
                hand_no=int(deal.get("hand_no", 1)),
                previous=from_plain(Outcome, previous) if previous else None,
                owner=self.seat(deal.get("owner", 0)) or 0,
                first=self.seat(deal.get("first")),
            )
            self.apply(self.game.start(setup))

    def step(self, i: int, st: Mapping[str, Any]) -> None:
        where = f"step {i + 1}"
        at = int(st.get("at_ms", self.now_ms))
        self.now_ms = at
        if "legal" in st:
            self.check_legal(where, st["legal"])
            return
        before = self.hooks.describe(self.state)
        try:
            if "timeout" in st:
                seat = self.seat(st["timeout"])
                assert seat is not None
                events = list(self.game.on_timeout(self.state, seat, at))
            else:
                seat = self.seat(st["seat"])
                assert seat is not None
                events = list(self.game.decide(self.state, seat, self.command(st["command"]), at))
        except RuleViolation as e:
            if "reject" not in st:
                self.fail(where, f"unexpected rejection {e.code}: {e.message}")
                return
            if st["reject"] not in (True, e.code):
                self.fail(where, f"rejected with {e.code}, expected {st['reject']}")
            if self.hooks.describe(self.state) != before:
                self.fail(where, "a rejected command changed the state")
            return
        if "reject" in st:
            self.fail(where, f"expected rejection {st['reject']}, got events {to_plain(events)}")
            return
        self.apply(events)
        if "events" in st:
            self.check_events(where, st["events"], to_plain(events))
        self.check_after(where, st)

    def check_events(self, where: str, want: Any, got: list[Any]) -> None:
        """``want``: a list (exactly these events) or ``{contains: [...]}`` (these, in order, among others)."""
        if isinstance(want, Mapping):
            unknown = set(want) - {"contains", "exactly"}
            if unknown or len(want) != 1:
                raise ValueError(f"events takes a list, {{contains: [...]}} or {{exactly: [...]}}, not {dict(want)!r}")
            if "exactly" in want:
                self.check_events(where, list(want["exactly"]), got)
                return
            rest = iter(got)
            for i, item in enumerate(want["contains"]):
                if not any(not mismatches(item, e) for e in rest):
                    self.fail(where, f"events[contains {i}]: no {item!r} after the ones before it in {got!r}")
                    return
            return
        for m in mismatches(list(want), got, "events"):
            self.fail(where, m)

    def check_legal(self, where: str, spec: Mapping[str, Any]) -> None:
        seat = self.seat(spec.get("seat"))
        assert seat is not None
        moves = [to_plain(m) for m in self.game.legal(self.state, seat)]
        if "count" in spec and len(moves) != int(spec["count"]):
            self.fail(where, f"{len(moves)} legal commands, expected {spec['count']}")
        for want in spec.get("includes", []):
            if not any(not mismatches(want, m) for m in moves):
                self.fail(where, f"legal commands lack {want!r}")
        for unwanted in spec.get("excludes", []):
            if any(not mismatches(unwanted, m) for m in moves):
                self.fail(where, f"legal commands include {unwanted!r}")

    def check_after(self, where: str, spec: Mapping[str, Any]) -> None:
        if "state" in spec:
            for m in mismatches(dict(spec["state"]), to_plain(dict(self.hooks.describe(self.state))), "state"):
                self.fail(where, m)
        views = spec.get("view")
        for v in [views] if isinstance(views, Mapping) else (views or []):
            seat = self.seat(v.get("seat"))
            view = to_plain(self.game.view(self.state, seat))
            for m in mismatches(dict(v["expect"]), view, f"view[{v.get('seat')}]"):
                self.fail(where, m)
        if "outcome" in spec:
            self.check_outcome(where, spec["outcome"])

    def check_outcome(self, where: str, want: Mapping[str, Any]) -> None:
        out = self.game.outcome(self.state)
        if out is None:
            if want is not None:
                self.fail(where, "the hand is not over")
            return
        plain = to_plain(out)
        plain["net"] = list(out.net(self.players))
        plain["pot"] = -sum(out.net(self.players))
        plain["pot_balance"] = out.pot_balance
        w = dict(want)
        if "winner" in w:
            w["winner"] = self.seat(w["winner"])
        if "ranking" in w:
            w["ranking"] = [self.seat(s) for s in w["ranking"]]
        if "transfers" in w:
            w["transfers"] = [
                {**t, **{k: self.seat(t[k]) for k in ("from_seat", "to_seat") if k in t and t[k] is not None}}
                for t in w["transfers"]
            ]
        for m in mismatches(w, plain, "outcome"):
            self.fail(where, m)

    def check_replay(self) -> None:
        replayed = self.initial
        for e in self.log:
            replayed = self.game.evolve(replayed, e)
        if replayed != self.state:
            self.fail("replay", "replaying the logged events does not give the live state")

    def queries(self) -> None:
        for q in self.spec.get("queries", []):
            fn = self.hooks.queries.get(str(q["call"]))
            if fn is None:
                self.fail("queries", f"{self.game.key} has no query {q['call']!r}")
                continue
            got = to_plain(fn(*q.get("args", []), **q.get("kwargs", {})))
            for m in mismatches(to_plain(q["expect"]), got, f"{q['call']}{tuple(q.get('args', []))}"):
                self.fail("queries", m)


def run_scenario(spec: Mapping[str, Any], file: str = "<memory>") -> Result:
    """Run one scenario; every failure is collected, none raised."""
    result = Result(file, str(spec.get("id", "?")), str(spec.get("title", "")))
    try:
        run = _Run(spec, result)
        run.set_up()
        run.queries()
        for i, st in enumerate(spec.get("steps", [])):
            run.step(i, st)
            result.steps += 1
        if "expect" in spec:
            run.check_after("end", spec["expect"])
        run.check_replay()
    except (RuleViolation, ValueError, KeyError, TypeError, AssertionError) as e:
        result.failures.append(f"error: {type(e).__name__}: {e}")
    return result


def report(results: Sequence[Result], as_json: bool = False) -> str:
    """A readable pass/fail report, or JSON."""
    if as_json:
        return json.dumps(
            [{"file": r.file, "id": r.id, "title": r.title, "passed": r.passed, "steps": r.steps,
              "failures": r.failures} for r in results],
            ensure_ascii=False, indent=2,
        )
    lines = []
    for r in results:
        lines.append(f"{'PASS' if r.passed else 'FAIL'}  {r.id:<10} {r.title}  ({r.file})")
        lines.extend(f"        {f}" for f in r.failures)
    passed = sum(r.passed for r in results)
    lines.append(f"{passed} passed, {len(results) - passed} failed")
    return "\n".join(lines)
