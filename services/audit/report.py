"""What an audit found: findings (each a discrepancy, with a stable code), flags (accounts whose
play looks like chip dumping, for an operator's review: not discrepancies), counts of what was
checked, the JSON report and the readable summary."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

CODES: dict[str, str] = {
    # the logs
    "log_unreadable": "a stream message is not a table record",
    "log_broken": "a table's records do not follow on (version, table id)",
    "log_unfoldable": "the table's log cannot be folded: a record the table as folded before it cannot take",
    "client_seed_mismatch": "a hand mixes in a client seed its player did not give (or gave another)",
    "commitment_twice": "a second commitment published for a hand that already has one",
    "seal_does_not_open": "a sealed part of a finished hand does not open with its revealed server seed",
    "commitment_mismatch": "a revealed server seed does not hash to the hand's commitment",
    "commitment_late": "a hand's commitment was not published before the client seeds it mixes in",
    "deal_mismatch": "the deal logged is not the deal the seeds give",
    "move_mismatch": "a logged move is not what the rules decide for its command or timeout",
    # the money of the logs, proven from the rules
    "outcome_mismatch": "a hand's logged end (winner, ranking, scores, transfers, reason, pot, players) is not what "
                        "the rules give on the folded state, or a hand ends where the rules do not end it",
    "settlement_mismatch": "a logged settlement leg (amount, seats, reason) or settlement (stake, currency, game, "
                           "players, first leg) is not what the rules pay for the move",
    # the ledger
    "settlement_missing": "a settlement leg of the log has no posting",
    "settlement_refused": "the ledger refused a settlement of the log",
    "settlement_parked": "the ledger could not post a record of the log and parked it for an operator to retry "
                         "after a fix (chieu ledger-parked)",
    "settlement_altered": "a posted settlement differs from the log (amount, accounts, reason or id)",
    "posting_without_source": "a posting has no source in a log or an audited operator action",
    "operator_without_reason": "an operator's posting has no actor or no reason",
    "balance_mismatch": "an account's balance is not the sum of its transfers",
    "currency_not_zero": "a currency does not sum to zero over all accounts",
    "negative_wallet": "a player's or a pot's 金币 / 红心币 is below zero",
    "transfer_currency": "a transfer joins accounts of another currency",
    # the ladder
    "ladder_result_missing": "a result or penalty of the log is not in the ladder's history",
    "ladder_history_mismatch": "a history row differs from the rules folded over the log",
    "ladder_row_without_source": "a history row has no source in the log",
    "correction_without_reason": "an operator's correction has no actor or no reason",
    "standing_mismatch": "a standing differs from the rules folded over the logs",
    "standing_without_source": "a standing has no history behind it",
    "ladder_behind": "the ladder has not applied every record of the period yet",
    # reputation (信誉度)
    "reputation_change_missing": "a quit or disconnect of the log, or a paid reset in the ledger, has no "
                                 "reputation change",
    "reputation_change_without_source": "a reputation change has no quit or disconnect in the log, or no paid "
                                        "reset in the ledger",
    "reputation_change_mismatch": "a reputation change differs from its source or the rules (player, cause, "
                                  "before → after, order)",
    "reputation_mismatch": "a player's reputation (score, quits, disconnects) is not what their changes give",
    # the ladder's rewards
    "reward_missing": "a best-level or monthly reward the rules give is not recorded by the ladder",
    "reward_without_source": "a ladder reward (record or ledger posting) with no rule, or no ladder record, behind it",
    "reward_altered": "a reward differs from the rules (amount, player), or its posting from the ladder's record",
    "reward_unpaid": "a reward the ladder records has no posting in the ledger",
}
"""Every finding code and what it means (docs and the JSON report use the same words)."""

FLAG_CODES: dict[str, str] = {
    "dump_target": "coins flowed from several new accounts to this account",
    "short_hand_wins": "this account won many coin hands resigned or abandoned after few moves",
    "pair_meetings": "this account met the same player in many coin hands and the coins flowed one way",
    "net_dump_target": "several accounts, of any age, emptied themselves into this account (flows netted per pair, "
                       "gà pots included)",
}
"""Every flag code (chip-dumping patterns, :mod:`chieu.audit.collusion`) and what it means."""


@dataclass(frozen=True, slots=True)
class Finding:
    """One discrepancy: which check (logs, ledger, ladder), its code, what it is about, and how."""

    area: str
    code: str
    subject: str
    detail: str


@dataclass(frozen=True, slots=True)
class Flag:
    """An account to review: the pattern's code, the account, what it did, and where to look."""

    area: str
    code: str
    account: str
    detail: str
    evidence: tuple[str, ...] = ()


@dataclass
class Report:
    """An audit's result: what was checked (counts by name) and every finding."""

    source: str = ""
    counts: dict[str, int] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    """Checks not run, with why (no DATABASE_URL, --no-ladder, ...)."""
    flags: list[Flag] = field(default_factory=list)
    """Accounts flagged for an operator's review (they do not make the audit fail)."""
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.findings

    @property
    def complete(self) -> bool:
        """Every book was checked (nothing :attr:`skipped`): only then may the audit say OK."""
        return not self.skipped

    def add(self, area: str, code: str, subject: str, detail: str) -> None:
        assert code in CODES, code
        self.findings.append(Finding(area, code, subject, detail))

    def flag(self, area: str, code: str, account: str, detail: str, evidence: list[str] | tuple[str, ...] = ()) -> None:
        assert code in FLAG_CODES, code
        self.flags.append(Flag(area, code, account, detail, tuple(evidence)))

    def count(self, name: str, n: int = 1) -> None:
        self.counts[name] = self.counts.get(name, 0) + n

    def to_json(self) -> dict[str, Any]:
        by_code: dict[str, int] = {}
        for f in self.findings:
            by_code[f.code] = by_code.get(f.code, 0) + 1
        return {"ok": self.ok, "complete": self.complete, "source": self.source,
                "seconds": round(self.seconds, 3), "counts": self.counts,
                "skipped": self.skipped, "findings_by_code": by_code,
                "findings": [asdict(f) | {"meaning": CODES[f.code]} for f in self.findings],
                "flags": [asdict(f) | {"evidence": list(f.evidence), "meaning": FLAG_CODES[f.code]}
                          for f in self.flags]}

    def dumps(self) -> str:
        return json.dumps(self.to_json(), ensure_ascii=False, indent=2)


def summary(report: Report, console: Any, limit: int = 200) -> None:
    """Print the readable summary on a rich console."""
    from rich.table import Table

    counts = Table(title=f"chieu audit — {report.source}", show_header=True, header_style="bold")
    counts.add_column("checked")
    counts.add_column("count", justify="right")
    for name, n in report.counts.items():
        counts.add_row(name.replace("_", " "), f"{n:,}")
    console.print(counts)
    for s in report.skipped:
        console.print(f"[yellow]not checked:[/yellow] {s}")
    flags(report, console, limit)
    if report.ok and not report.complete:
        console.print(f"[bold yellow]INCOMPLETE[/bold yellow]: no discrepancy in what was checked, but not "
                      f"checked: {'; '.join(report.skipped)} ({report.seconds:.1f} s)")
        return
    if report.ok:
        console.print(f"[bold green]OK[/bold green]: no discrepancy ({report.seconds:.1f} s)")
        return
    found = Table(title=f"{len(report.findings)} discrepancies", show_header=True, header_style="bold red")
    for col in ("area", "code", "subject", "detail"):
        found.add_column(col, overflow="fold")
    for f in report.findings[:limit]:
        found.add_row(f.area, f.code, f.subject, f.detail)
    console.print(found)
    if len(report.findings) > limit:
        console.print(f"… and {len(report.findings) - limit} more (see the JSON report)")
    console.print(f"[bold red]FAILED[/bold red]: {len(report.findings)} discrepancies ({report.seconds:.1f} s)")


def flags(report: Report, console: Any, limit: int = 200) -> None:
    """Print the accounts flagged for review (chip dumping), each with its evidence."""
    if not report.flags:
        return
    from rich.table import Table

    table = Table(title=f"{len(report.flags)} accounts flagged for review (chip dumping: docs/operating.md)",
                  show_header=True, header_style="bold yellow")
    for col in ("pattern", "account", "what", "evidence"):
        table.add_column(col, overflow="fold")
    for f in report.flags[:limit]:
        table.add_row(f.code, f.account, f.detail, "\n".join(f.evidence))
    console.print(table)
