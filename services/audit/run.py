"""One audit of a period of play: the logs (live stream or archive), then the ledger and the
ladder reconciled with them, and the coin hands screened for chip dumping, into one
:class:`~chieu.audit.report.Report`."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from chieu.audit import archive, collusion, coverage, levels, logs, money, reputation, rewards, signing
from chieu.audit.collusion import Thresholds
from chieu.audit.report import Report
from chieu.ladder.rules import Params
from chieu.ladder.terms import Terms


@dataclass(frozen=True, slots=True)
class Options:
    """Where to read from and what to check."""

    nats_url: str = ""
    archive: str = ""
    """An archive file (``chieu export``): the logs come from it alone."""
    archive_keys: str = ""
    """The archive keyset (a JWKS file, ``CHIEU_ARCHIVE_PUBLIC_KEYS``) the archive's signature must
    verify with: the operator's published one, never one that came with the archive."""
    database_url: str = ""
    """The ledger's PostgreSQL, and the ladder's unless ``ladder_database_url`` is given (empty:
    neither is reconciled)."""
    ladder_database_url: str = ""
    """The ladder's PostgreSQL when it is not the ledger's (deploy/: a database per service)."""
    tables: frozenset[str] = frozenset()
    """Only these tables (empty: every table): a period, so the books are checked for them only."""
    ledger: bool = True
    ladder: bool = True
    params: Params = field(default_factory=Params)
    workers: int = 0
    """Processes that verify the logs (0: one per core for a long period, else this one)."""
    terms: Terms | None = None
    """The ladder's configuration to hold its books to (None: ``CHIEU_LADDER_*`` of the
    environment, with ``params``)."""
    collusion: Thresholds | None = field(default_factory=Thresholds)
    """What the chip-dumping screen flags (None: not screened)."""


async def load(options: Options, report: Report) -> logs.Logs:
    """The logs of the period, from the archive (checked: a changed byte, or a signature that is
    missing, by an unknown key or wrong, is refused; so are entries that do not cover the stream
    as its header states, :mod:`chieu.audit.coverage`) or the stream."""
    if options.archive:
        a = archive.read(options.archive, archive_keys(options.archive_keys))
        proven = coverage.check(a.header, a.messages)
        held = [m for m in a.messages if not m.omitted]
        report.source = (f"archive {options.archive} ({len(held)} records of {coverage.describe(a.header)}, "
                         f"signed by {a.kid})")
        if not proven:
            report.skipped.append("the archive's range: a period's archive made before coverage was written, so "
                                  "records of its period may be missing unseen")
        return logs.load(_only(held, options), report, complete=a.header.complete and not options.tables)
    nc = await archive.connect(options.nats_url)
    try:
        _, messages = await archive.stream_messages(nc)
    finally:
        await nc.close()
    report.source = f"stream at {options.nats_url} ({len(messages)} records)"
    return logs.load(_only(messages, options), report, complete=not options.tables)


def archive_keys(path: str) -> signing.ArchiveKeys:
    """The archive keyset of ``path`` (:class:`archive.NoKeys` when none is given or it cannot be
    read: an archive is never read unverified)."""
    if not path:
        raise archive.NoKeys("no archive public keys to verify its signature with (CHIEU_ARCHIVE_PUBLIC_KEYS or "
                             "--keys FILE: the operator's published archive keyset)")
    try:
        return signing.ArchiveKeys.load(path)
    except ValueError as e:
        raise archive.NoKeys(" ".join(str(e).split())) from None


def _only(messages: list[archive.Message], options: Options) -> list[archive.Message]:
    if not options.tables:
        return messages
    return [m for m in messages if m.table_id in options.tables]


async def audit(options: Options, progress: Callable[[int, int], None] | None = None) -> Report:
    """Run every check; ``progress(done, total)`` in records while the logs are verified."""
    report = Report()
    started = time.perf_counter()
    period = await load(options, report)
    total, done = period.records, 0

    def step(n: int) -> None:
        nonlocal done
        done += n
        if progress is not None:
            progress(done, total)

    logs.verify_all(period, report, step, workers=options.workers)
    if options.database_url and (options.ledger or options.ladder):
        import asyncpg

        conn = await asyncpg.connect(options.database_url)
        own = options.ladder_database_url not in ("", options.database_url)
        ladder = await asyncpg.connect(options.ladder_database_url) if own and options.ladder else conn
        try:
            if options.collusion is not None:  # accounts' ages from the ledger
                born = await collusion.opened(conn) if options.ledger else {}
                funds = await collusion.given(conn) if options.ledger else None
                collusion.check(period, report, options.collusion, born, funds)
            if options.ledger:
                await money.reconcile(conn, period, report)
            if options.ladder:
                from chieu.kit.settings import from_env

                terms = options.terms or replace(Terms.from_settings(from_env()), params=options.params)
                await levels.reconcile(ladder, period, report, terms.params)
                await reputation.reconcile(ladder, period, report, terms, ledger=conn)
                if options.ledger:
                    await rewards.reconcile(ladder, period, report, terms, ledger=conn)
        finally:
            if ladder is not conn:
                await ladder.close()
            await conn.close()
    else:
        report.skipped.append("the ledger and the ladder: no DATABASE_URL")
        if options.collusion is not None:  # accounts' ages from their first hands
            collusion.check(period, report, options.collusion)
    if not options.ledger:
        report.skipped.append("the ledger (--no-ledger)")
    if not options.ladder:
        report.skipped.append("the ladder (--no-ladder)")
    report.seconds = time.perf_counter() - started
    return report
