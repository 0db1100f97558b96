"""``chieu audit`` on real play: hands played over gRPC through the table service, posted by the
ledger and counted by the ladder (real nats-server and PostgreSQL, the session's fixtures). The
honest run audits clean; each injected fault is reported with its own finding; an archive with a
byte changed is refused (its signature: ``test_signed_archive.py``); the HTML replay renders in a
real headless Chromium.

The session's stream and database are shared with every other test, so the audit is scoped to
this module's tables (``Options.tables``: a period, whose books are checked for those tables,
and whose balances, zero sums and operator postings are checked for the whole ledger). A fault
injected into the shared database is undone before the test ends.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import shutil
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import asyncpg
import grpc
import pytest

from chieu.audit import archive, logs, replay
from chieu.audit.archive import ArchiveError
from chieu.audit.run import Options, audit
from chieu.audit.signing import ArchiveSigner
from chieu.audit.v1 import archive_pb2
from chieu.games.xiangqi.v1 import xiangqi_pb2
from chieu.kit import db as kit_db
from chieu.kit.settings import Settings
from chieu.ladder.schema import MIGRATIONS as LADDER_MIGRATIONS
from chieu.ledger.v1 import ledger_service_pb2 as gpb
from chieu.ledger.v1 import ledger_service_pb2_grpc as gpb_grpc
from chieu.table.client import TableClient
from chieu.table.v1 import log_pb2
from chieu.tablelog import codec, sealing
from tests.conftest import credential, database_url_of, nats_creds, token
from tests.ladder.helpers import act, play
from tests.table.helpers import play_to_end

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module", autouse=True)
def _as_auditor() -> Iterator[None]:
    """The audit commands read NATS as the read-only ``audit`` user (``CHIEU_NATS_CREDS``)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CHIEU_NATS_CREDS", nats_creds("audit"))
        yield
ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "build" / "audit"


@dataclass
class Played:
    tables: frozenset[str]
    ladder_table: str
    players: tuple[str, str]
    nats_url: str
    database_url: str


def options(p: Played, **kw: Any) -> Options:
    return Options(nats_url=p.nats_url, database_url=p.database_url, tables=p.tables, **kw)


async def settled(p: Played, within: float = 30.0) -> Any:
    """The audit once the ledger and the ladder have caught up with the tables' logs."""
    deadline = time.monotonic() + within
    while True:
        report = await audit(options(p))
        waiting = [f for f in report.findings if f.code in ("settlement_missing", "ladder_behind",
                                                            "ladder_result_missing", "standing_mismatch",
                                                            "reputation_change_missing", "reputation_mismatch")]
        if not waiting or time.monotonic() > deadline:
            return report
        await asyncio.sleep(0.3)


@pytest.fixture(scope="module")
async def played(settings: Settings, table_server: str, ledger_server: str, ladder_server: str,
                 database_url: str) -> Played:
    a, b = f"au-a-{uuid.uuid4().hex[:8]}", f"au-b-{uuid.uuid4().hex[:8]}"
    clients = {p: TableClient(table_server, token(settings, p)) for p in (a, b)}
    tables = []
    try:
        for ladder_level, hands in ((1, 2), (0, 1)):
            view = await clients[a].create("o_an_quan", {"maxMoves": 120}, ladder_level=ladder_level)
            await clients[b].sit(view.table_id)
            for _ in range(hands):
                view = await play_to_end(await clients[a].start(view.table_id), clients)
            tables.append(view.table_id)
        # a quits a 中国象棋 ladder hand (a penalty, and 信誉度; b ends the hand), then pays the ledger for a reset
        tables.append(await play("Q", clients[a], a, clients[b], 1))
        await act(clients[b], tables[-1], xiangqi_pb2.Resign())
        channel = grpc.aio.insecure_channel(ledger_server)
        stub, md = gpb_grpc.LedgerServiceStub(channel), (("authorization", f"Bearer {token(settings, a)}"),)
        await stub.ClaimWelcome(gpb.ClaimWelcomeRequest(player_id=a),
                                metadata=(("authorization", f"Bearer {credential('lobby')}"),))
        for _ in range(100):  # the ladder reads the quit from the log a moment later: until then
            try:  # there is nothing to reset, and the ledger refuses (nothing_to_reset)
                await stub.ResetReputation(gpb.ResetReputationRequest(request_id="r1", player_id=a), metadata=md)
                break
            except grpc.aio.AioRpcError as e:
                if e.code() != grpc.StatusCode.FAILED_PRECONDITION:
                    raise
                await asyncio.sleep(0.1)
        await channel.close()
    finally:
        for c in clients.values():
            await c.close()
    p = Played(frozenset(tables), tables[0], (a, b), settings.nats_url, database_url)
    await settled(p)
    return p


async def test_an_honest_run_audits_clean(played: Played) -> None:
    report = await settled(played)
    assert report.ok, report.findings
    c = report.counts
    assert c["tables"] == 3 and c["hands"] == 4 and c["moves_redecided"] > 20
    # 2 Ô ăn quan ladder hands × 2 players; the 中国象棋 hand: a's penalty, then its end (b's loss; a's result
    # is the penalty)
    assert c["settlements"] >= 3 and c["ladder_results"] == 4 + 1 + 2
    # every hand's end and payment derived again from the rules (issue 32): the quit's auto-play included
    assert c["outcomes_proven"] == 4 and c["settlements_proven"] == c["settlements"], c
    # a's quit, and the reset a paid for
    assert c["reputation_changes"] >= 2 and c["reputation_quits_and_disconnects"] == 1
    assert c["reputation_resets_paid"] == 1 and c["reputations"] == 1  # (b has none: never lowered)
    assert report.to_json()["ok"] is True


async def test_the_cli_writes_a_json_report_and_exits_0(played: Played, tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    env = {**os.environ, "NATS_URL": played.nats_url, "DATABASE_URL": played.database_url}
    args = [str(ROOT / ".venv/bin/python"), "-m", "chieu.cli", "audit", "--quiet", "--json", str(out)]
    for t in sorted(played.tables):
        args += ["--table", t]
    proc = await asyncio.create_subprocess_exec(*args, env=env, stdout=asyncio.subprocess.PIPE,
                                                stderr=asyncio.subprocess.PIPE)
    stdout, stderr = await proc.communicate()
    assert proc.returncode == 0, (stdout + stderr).decode()
    doc = json.loads(out.read_text())
    assert doc["ok"] is True and doc["counts"]["hands"] == 4 and doc["findings"] == []


class Db:
    """Direct SQL as an operator with database access would use it (triggers off for the session)."""

    def __init__(self, conn: asyncpg.Connection) -> None:
        self.conn = conn

    @classmethod
    async def open(cls, url: str) -> Db:
        conn = await asyncpg.connect(url)
        await conn.execute("SET session_replication_role = replica")  # the immutability triggers off
        return cls(conn)

    async def move(self, account: str, delta: int) -> None:
        await self.conn.execute("UPDATE ledger_accounts SET balance = balance + $2 WHERE id = $1", account, delta)


async def _a_settlement_transfer(db: Db, table_id: str) -> Any:
    row = await db.conn.fetchrow("SELECT * FROM ledger_transfers WHERE table_id = $1 ORDER BY seq LIMIT 1", table_id)
    assert row is not None
    return row


async def test_a_posting_altered_without_reason_is_found(played: Played) -> None:
    db = await Db.open(played.database_url)
    t = await _a_settlement_transfer(db, played.ladder_table)
    try:
        async with db.conn.transaction():  # the amount raised by 7, the balances made to agree
            await db.conn.execute("UPDATE ledger_transfers SET amount = amount + 7 WHERE id = $1", t["id"])
            await db.move(t["debit"], -7)
            await db.move(t["credit"], 7)
        report = await audit(options(played))
        found = [(f.code, f.subject) for f in report.findings]
        assert [c for c, _ in found] == ["settlement_altered"], report.findings
        assert played.ladder_table in found[0][1] and "amount" in report.findings[0].detail
    finally:
        async with db.conn.transaction():
            await db.conn.execute("UPDATE ledger_transfers SET amount = amount - 7 WHERE id = $1", t["id"])
            await db.move(t["debit"], 7)
            await db.move(t["credit"], -7)
        await db.conn.close()
    assert (await audit(options(played))).ok


async def test_an_operator_posting_without_reason_and_a_bare_balance_change_are_found(played: Played) -> None:
    db = await Db.open(played.database_url)
    a = played.players[0]
    pid = f"adjust/{uuid.uuid4().hex}"
    account = f"player/points:o_an_quan/{a}"
    try:
        async with db.conn.transaction():
            await db.conn.execute("INSERT INTO ledger_postings (id, digest, kind, actor, memo) VALUES"
                                  " ($1, '\\x00', 'adjust', 'ops', '')", pid)
            await db.conn.execute("INSERT INTO ledger_transfers (id, posting_id, debit, credit, currency, amount,"
                                  " owed, reason) VALUES ($1, $1, 'system/points:o_an_quan/adjustments', $2,"
                                  " 'points:o_an_quan', 50, 50, 'adjust')", pid, account)
            await db.conn.execute("INSERT INTO ledger_accounts (id, kind, currency, owner) VALUES"
                                  " ('system/points:o_an_quan/adjustments', 'system', 'points:o_an_quan',"
                                  " 'adjustments') ON CONFLICT DO NOTHING")
            await db.move("system/points:o_an_quan/adjustments", -50)
            await db.move(account, 50 + 3)  # and 3 more that no transfer explains
        report = await audit(options(played))
        codes = sorted((f.code, f.subject) for f in report.findings)
        assert codes == [("balance_mismatch", account), ("currency_not_zero", "points:o_an_quan"),
                         ("operator_without_reason", pid)], report.findings
    finally:
        async with db.conn.transaction():
            await db.move(account, -53)
            await db.move("system/points:o_an_quan/adjustments", 50)
            await db.conn.execute("DELETE FROM ledger_transfers WHERE id = $1", pid)
            await db.conn.execute("DELETE FROM ledger_postings WHERE id = $1", pid)
        await db.conn.close()
    assert (await audit(options(played))).ok


async def test_a_missing_settlement_is_found(played: Played) -> None:
    db = await Db.open(played.database_url)
    t = await _a_settlement_transfer(db, played.ladder_table)
    posting = await db.conn.fetchrow("SELECT * FROM ledger_postings WHERE id = $1", t["posting_id"])
    legs = await db.conn.fetch("SELECT * FROM ledger_transfers WHERE posting_id = $1", t["posting_id"])
    try:
        async with db.conn.transaction():
            for leg in legs:
                await db.move(leg["debit"], leg["amount"])
                await db.move(leg["credit"], -leg["amount"])
            await db.conn.execute("DELETE FROM ledger_transfers WHERE posting_id = $1", t["posting_id"])
            await db.conn.execute("DELETE FROM ledger_postings WHERE id = $1", t["posting_id"])
        report = await audit(options(played))
        assert [f.code for f in report.findings] == ["settlement_missing"], report.findings
        assert t["posting_id"] in report.findings[0].detail
    finally:
        async with db.conn.transaction():
            cols = list(posting.keys())
            await db.conn.execute(f"INSERT INTO ledger_postings ({', '.join(cols)}) VALUES "
                                  f"({', '.join(f'${i + 1}' for i in range(len(cols)))})", *posting.values())
            for leg in legs:
                cols = list(leg.keys())
                await db.conn.execute(f"INSERT INTO ledger_transfers ({', '.join(cols)}) VALUES "
                                      f"({', '.join(f'${i + 1}' for i in range(len(cols)))})", *leg.values())
                await db.move(leg["debit"], -leg["amount"])
                await db.move(leg["credit"], leg["amount"])
        await db.conn.close()
    assert (await audit(options(played))).ok


async def test_an_edited_ladder_row_is_found(played: Played) -> None:
    db = await Db.open(played.database_url)
    a = played.players[0]
    try:
        await db.conn.execute("UPDATE ladder_standings SET lp = lp + 2 WHERE game = 'o_an_quan' AND player_id = $1",
                              a)
        report = await audit(options(played))
        assert [(f.code, f.subject) for f in report.findings] == [("standing_mismatch", f"o_an_quan/{a}")]
    finally:
        await db.conn.execute("UPDATE ladder_standings SET lp = lp - 2 WHERE game = 'o_an_quan' AND player_id = $1",
                              a)
        await db.conn.close()
    assert (await audit(options(played))).ok


async def test_an_edited_ladder_history_row_is_found(played: Played) -> None:
    db = await Db.open(played.database_url)
    a = played.players[0]
    row = await db.conn.fetchrow("SELECT id FROM ladder_history WHERE player_id = $1 AND table_id = $2 ORDER BY id"
                                 " LIMIT 1", a, played.ladder_table)
    assert row is not None
    try:
        await db.conn.execute("UPDATE ladder_history SET lp_after = lp_after + 3 WHERE id = $1", row["id"])
        report = await audit(options(played))
        # the row is not what the rules make of its result, and a's next row does not follow on from it
        assert [f.code for f in report.findings] == ["ladder_history_mismatch"] * 2, report.findings
        assert f"history row {row['id']}: after" in report.findings[0].detail
        assert f"row {row['id']} ended at" in report.findings[1].detail
    finally:
        await db.conn.execute("UPDATE ladder_history SET lp_after = lp_after - 3 WHERE id = $1", row["id"])
        await db.conn.close()
    assert (await audit(options(played))).ok


async def test_an_edited_reputation_row_is_found(played: Played) -> None:
    db = await Db.open(played.database_url)
    a = played.players[0]
    try:
        await db.conn.execute("UPDATE ladder_reputation SET score = score + 10, quits = 0 WHERE player_id = $1", a)
        report = await audit(options(played))
        assert [(f.code, f.subject) for f in report.findings] == [("reputation_mismatch", a)], report.findings
        assert "reputation 110 after 0 quits" in report.findings[0].detail
    finally:
        await db.conn.execute("UPDATE ladder_reputation SET score = score - 10, quits = 1 WHERE player_id = $1", a)
        await db.conn.close()
    assert (await audit(options(played))).ok


async def test_a_reward_posting_without_a_ladder_record_is_found(played: Played) -> None:
    db = await Db.open(played.database_url)
    a = played.players[0]
    pid = f"reward/ladder/best/o_an_quan/{a}/7"
    account = f"player/coins/{a}"  # (opened by a's welcome coins)
    try:
        async with db.conn.transaction():  # a reward the ladder never gave, paid as the ladder pays
            await db.conn.execute("INSERT INTO ledger_accounts (id, kind, currency, owner) VALUES"
                                  " ('system/coins/rewards', 'system', 'coins', 'rewards') ON CONFLICT DO NOTHING")
            await db.conn.execute("INSERT INTO ledger_postings (id, digest, kind, actor, memo) VALUES"
                                  " ($1, '\\x00', 'reward', 'service:ladder', '过关斩将 new best level 7')", pid)
            await db.conn.execute("INSERT INTO ledger_transfers (id, posting_id, debit, credit, currency, amount,"
                                  " owed, reason) VALUES ($1, $1, 'system/coins/rewards', $2, 'coins', 70, 70,"
                                  " '过关斩将 new best level 7')", pid, account)
            await db.move("system/coins/rewards", -70)
            await db.move(account, 70)
        report = await audit(options(played))
        assert [(f.code, f.subject) for f in report.findings] == [("reward_without_source", pid)], report.findings
    finally:
        async with db.conn.transaction():
            await db.conn.execute("DELETE FROM ledger_transfers WHERE id = $1", pid)
            await db.conn.execute("DELETE FROM ledger_postings WHERE id = $1", pid)
            await db.move("system/coins/rewards", 70)
            await db.move(account, -70)
        await db.conn.close()
    assert (await audit(options(played))).ok


async def _messages(p: Played) -> list[archive.Message]:
    nc = await archive.connect(p.nats_url)
    try:
        _, messages = await archive.stream_messages(nc)
    finally:
        await nc.close()
    return [m for m in messages if m.table_id in p.tables]


SIGNER = ArchiveSigner.generate()
"""The operator's archive key of this module's archives (every export is signed)."""
KEYS = SIGNER.keyset()


def _keys_file(folder: Path) -> str:
    """The published archive keyset, as a file."""
    path = folder / "archive.jwks.json"
    path.write_text(json.dumps(KEYS.to_jwks()))
    return str(path)


def _save(path: Path, messages: list[archive.Message]) -> archive_pb2.Manifest:
    return archive.save(path, archive_pb2.Header(stream="CHIEU_TABLES", created_ms=1, complete=False), messages,
                        SIGNER)


async def test_the_audit_works_from_an_archive_alone(played: Played, tmp_path: Path) -> None:
    path = tmp_path / "period.chieu"
    manifest = _save(path, await _messages(played))
    assert manifest.tables == 3 and manifest.entries > 20
    keys = _keys_file(tmp_path)
    report = await audit(Options(archive=str(path), archive_keys=keys))  # no NATS, no database: the logs
    assert report.ok and report.counts["hands"] == 4 and report.skipped
    assert SIGNER.kid in report.source
    report = await audit(Options(archive=str(path), archive_keys=keys, database_url=played.database_url))
    assert report.ok, report.findings


async def test_a_record_whose_deal_does_not_match_its_commitment_is_found(played: Played, tmp_path: Path) -> None:
    messages = await _messages(played)
    forged = []
    done = False
    # an insider with the revealed seeds opens the finished hands, and forges one in clear
    opened = dict(sealing.reveal((m.seq, log_pb2.Record.FromString(m.data)) for m in messages))
    for m in messages:
        rec = opened[m.seq]
        if not done and any(e.WhichOneof("kind") == "hand_started" for e in rec.events):
            for ev in rec.events:  # the deal: the ring dealt with one seed fewer on square 1
                if ev.WhichOneof("kind") == "game_event" and ev.game_event.TypeName().endswith(".Started"):
                    started = codec.unpack(ev.game_event, "o_an_quan")
                    board = list(started.board)
                    board[1], board[2] = board[1] - 1, board[2] + 1
                    ev.game_event.CopyFrom(codec.pack(type(started)(**{
                        **{f: getattr(started, f) for f in started.__slots__}, "board": tuple(board)}), "o_an_quan"))
                    done = True
            m = archive.Message(m.seq, m.subject, m.time_ms, rec.SerializeToString())
        forged.append(m)
    assert done
    path = tmp_path / "forged.chieu"
    _save(path, forged)  # a well-formed archive: the signature proves who wrote it, the audit proves play
    report = await audit(Options(archive=str(path), archive_keys=_keys_file(tmp_path),
                                 database_url=played.database_url))
    codes = {f.code for f in report.findings}
    assert "deal_mismatch" in codes and codes <= {"deal_mismatch", "move_mismatch"}, report.findings
    assert all(played.ladder_table in f.subject for f in report.findings)


async def test_a_hand_whose_seed_does_not_hash_to_its_commitment_is_found(played: Played, tmp_path: Path) -> None:
    forged, hand = [], ""
    for m in await _messages(played):
        rec = log_pb2.Record.FromString(m.data)
        for ev in rec.events:
            if not hand and ev.WhichOneof("kind") == "hand_started":  # another commitment published
                ev.hand_started.seed_commitment = "0" * 64
                hand = f"{rec.table_id} hand {ev.hand_started.hand_no}"
                m = archive.Message(m.seq, m.subject, m.time_ms, rec.SerializeToString())
        forged.append(m)
    path = tmp_path / "forged.chieu"
    _save(path, forged)
    report = await audit(Options(archive=str(path), archive_keys=_keys_file(tmp_path)))
    # the seed does not hash to it, and it is not the commitment published before the players' seeds
    assert [(f.code, f.subject) for f in report.findings] == [("commitment_late", hand),  # read before the replay
                                                              ("commitment_mismatch", hand)], report.findings


async def test_an_archive_with_one_byte_changed_is_refused(played: Played, tmp_path: Path) -> None:
    path = tmp_path / "period.chieu"
    _save(path, await _messages(played))
    data = path.read_bytes()
    assert len(archive.read(path, KEYS).messages) > 20
    rng = random.Random(17)
    positions = sorted({0, 1, len(data) // 2, len(data) - 1, *rng.sample(range(len(data)), 400)})
    bad = tmp_path / "bad.chieu"
    for i in positions:
        changed = bytearray(data)
        changed[i] ^= 1 << rng.randrange(8)
        bad.write_bytes(bytes(changed))
        with pytest.raises(ArchiveError):
            archive.read(bad, KEYS)
    bad.write_bytes(data[:-10])
    with pytest.raises(ArchiveError):
        archive.read(bad, KEYS)
    bad.write_bytes(data + data[-10:])
    with pytest.raises(ArchiveError):
        archive.read(bad, KEYS)
    changed = bytearray(data)  # and the command says so, with its own exit code
    changed[len(data) // 3] ^= 0x10
    bad.write_bytes(bytes(changed))
    proc = await asyncio.create_subprocess_exec(
        str(ROOT / ".venv/bin/python"), "-m", "chieu.cli", "audit", "--archive", str(bad), "--no-db",
        "--keys", _keys_file(tmp_path),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    stdout, stderr = await proc.communicate()
    assert proc.returncode == 2 and b"the archive is refused" in stdout + stderr, (stdout + stderr).decode()


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    pytest.fail("no Chromium: scripts/check installs Debian's chromium (apt-get install -y chromium)")


async def test_the_html_replay_renders_in_a_headless_browser(played: Played) -> None:
    period = logs.load(await _messages(played))
    page = replay.render(played.ladder_table, period.tables[played.ladder_table])
    assert "Hand 1" in page and "Hand 2" in page and "verified" in page and "FAILED" not in page
    assert "💰" in page and 'class="ring"' in page and "Sow(" in page
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    html_path = ARTIFACTS / "replay.html"
    html_path.write_text(page, encoding="utf-8")
    png = ARTIFACTS / "replay.png"
    png.unlink(missing_ok=True)
    profile = tempfile.mkdtemp(prefix="chieu-chromium-")
    try:
        proc = await asyncio.to_thread(
            subprocess.run,
            [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage",
             f"--user-data-dir={profile}", f"--screenshot={png}", "--window-size=1280,1600", "--hide-scrollbars",
             html_path.as_uri()],
            capture_output=True, timeout=120)
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    assert png.exists(), proc.stderr.decode(errors="replace")[-2000:]
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000  # a real page, not a blank one
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert (width, height) == (1280, 1600)


async def test_the_ladder_in_a_database_of_its_own(played: Played) -> None:
    await settled(played)
    # the same books under a second URL: two connections, the same answer as one
    same = played.database_url + ("&" if "?" in played.database_url else "?") + "application_name=ladder"
    report = await audit(options(played, ladder_database_url=same))
    assert report.ok, report.findings
    # a ladder database that never applied anything: the ladder's checks find it behind, the
    # ledger's (read where the settlements are) stay clean
    name = f"audit_ladder_{uuid.uuid4().hex[:8]}"
    admin = await asyncpg.connect(played.database_url)
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')
        empty = await asyncpg.connect(database_url_of(played.database_url, name))
        try:
            await kit_db.migrate(empty, "ladder", LADDER_MIGRATIONS)
        finally:
            await empty.close()
        report = await audit(options(played, ladder_database_url=database_url_of(played.database_url, name)))
        areas = {f.area for f in report.findings}
        assert "ladder" in areas and "ledger" not in areas and "logs" not in areas, report.findings
        assert {"ladder_behind", "ladder_result_missing"} & {f.code for f in report.findings}
    finally:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}"')
        await admin.close()
