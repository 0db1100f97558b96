"""Signed archives on real play (real nats-server, PostgreSQL and services, ``test_audit``'s hands):
``chieu export`` signs with the operator's archive key, ``chieu audit --archive`` and ``chieu
replay --archive`` verify against the published keyset. The attack the signature is for — records
edited, the SHA-256 chain and the seal computed again from the ``.proto``'s description, the old
signature kept — is refused; so are a file signed by a key outside the keyset and a file whose
signature was stripped, each with its own one-line reason and exit 2; an archive signed by the
older of two keys of a rotated keyset still verifies.

The attacker's tool is written here from ``archive.proto``'s comment alone (not with
``chieu.audit.archive``), and rebuilds an unedited archive byte for byte: the description is
exact, and the forged files are well chained and sealed."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from chieu.audit import archive, signing
from chieu.audit.run import Options, audit
from chieu.audit.v1 import archive_pb2 as pb
from chieu.table.v1 import log_pb2
from tests.audit import test_audit
from tests.conftest import nats_creds

pytestmark = pytest.mark.integration

played = test_audit.played
"""The hands of ``test_audit`` (played again for this module)."""
Played = test_audit.Played
_as_auditor = test_audit._as_auditor
"""(autouse) NATS read as the read-only ``audit`` user."""


@dataclass
class Exported:
    path: Path
    """The archive ``chieu export`` wrote, signed with ``old``."""
    old: Path
    """The operator's first archive key (``chieu archive-key``)."""
    keyset: Path
    """The published keyset: ``old``'s public key."""
    folder: Path
    played: Played


def chieu(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``chieu`` as an auditor runs it: no local stack, no archive setting unless given."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("CHIEU_ARCHIVE_")}
    return subprocess.run([sys.executable, "-m", "chieu.cli", *args], capture_output=True, text=True, timeout=240,
                          env={**base, "CHIEU_LOCAL_ENV": os.devnull, **(env or {})})


async def achieu(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return await asyncio.to_thread(chieu, *args, env=env)


def refusal(proc: subprocess.CompletedProcess[str]) -> str:
    """The one line that says why the archive is refused (exit 2)."""
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = [line for line in (proc.stdout + proc.stderr).splitlines() if "the archive is refused" in line]
    assert len(lines) == 1, proc.stdout + proc.stderr
    return lines[0]


@pytest.fixture(scope="module")
async def exported(played: Played, tmp_path_factory: pytest.TempPathFactory) -> Exported:
    folder = tmp_path_factory.mktemp("signed")
    old, keyset = folder / "old.pem", folder / "published.jwks.json"
    made = await achieu("archive-key", "--out", str(old), "--keyset", str(keyset))
    assert made.returncode == 0 and "archive-" in made.stdout, made.stdout + made.stderr
    assert old.stat().st_mode & 0o777 == 0o600
    path = folder / "tables.chieu"
    done = await achieu("export", str(path), env={"NATS_URL": played.nats_url, "CHIEU_NATS_CREDS": nats_creds("audit"),
                                                  "CHIEU_ARCHIVE_PRIVATE_KEY": str(old)})
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"signed by {signing.ArchiveSigner.load(old).kid}" in done.stdout
    return Exported(path, old, keyset, folder, played)


# -- the attacker's tool: archive.proto's description, nothing else ----------------------------


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b, n = n & 0x7F, n >> 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _frames(data: bytes) -> list[pb.Frame]:
    frames, pos = [], 0
    while pos < len(data):
        size, shift = 0, 0
        while True:
            b = data[pos]
            pos += 1
            size |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                break
        frames.append(pb.Frame.FromString(data[pos:pos + size]))
        pos += size
    return frames


def _put(frame: pb.Frame) -> bytes:
    body = frame.SerializeToString(deterministic=True)
    return _varint(len(body)) + body


def rechain_and_reseal(frames: Sequence[pb.Frame], prefix: bytes = b"chieu-archive-v2") -> tuple[bytes, bytes, bytes]:
    """The header, the entries and the manifest of ``frames`` chained and sealed again with plain
    SHA-256: (the file up to and with the manifest, the manifest's frame, the chain head)."""
    header = frames[0].header
    out = _put(frames[0])
    head = hashlib.sha256(prefix + header.SerializeToString(deterministic=True)).digest()
    entries = [f for f in frames if f.WhichOneof("kind") == "entry"]
    for f in entries:
        e, subject = f.entry, f.entry.subject.encode()
        head = hashlib.sha256(head + e.seq.to_bytes(8, "big") + len(subject).to_bytes(4, "big") + subject
                              + e.time_ms.to_bytes(8, "big", signed=True) + e.record).digest()
        e.chain = head
        out += _put(f)
    manifest = pb.Manifest()
    manifest.CopyFrom(next(f.manifest for f in frames if f.WhichOneof("kind") == "manifest"))
    manifest.entries, manifest.head, manifest.seal = len(entries), head, b""
    manifest.seal = hashlib.sha256(out + manifest.SerializeToString(deterministic=True)).digest()
    manifest_frame = _put(pb.Frame(manifest=manifest))
    return out + manifest_frame, manifest_frame, head


def edited(data: bytes) -> list[pb.Frame]:
    """The archive's frames with one record edited: a move's server time a minute later (nothing
    in the play itself can tell), its entry's time with it."""
    frames = _frames(data)
    entries = [f for f in frames if f.WhichOneof("kind") == "entry"]
    e = entries[len(entries) // 2].entry
    record = log_pb2.Record.FromString(e.record)
    record.server_time_ms += 60_000
    e.record = record.SerializeToString()
    e.time_ms = record.server_time_ms
    return frames


def _write(folder: Path, name: str, data: bytes) -> Path:
    path = folder / name
    path.write_bytes(data)
    return path


# -- the tests ---------------------------------------------------------------------------------


async def test_a_signed_export_verifies_and_audits_clean(exported: Exported) -> None:
    keys = signing.ArchiveKeys.load(exported.keyset)
    a = archive.read(exported.path, keys)
    assert a.kid == signing.ArchiveSigner.load(exported.old).kid and a.header.format == "chieu-archive-v2"
    assert {m.table_id for m in a.messages} >= exported.played.tables
    report = await audit(Options(archive=str(exported.path), archive_keys=str(exported.keyset),
                                 tables=exported.played.tables, database_url=exported.played.database_url))
    assert report.ok and report.complete and report.counts["hands"] == 4, report.findings
    assert a.kid in report.source
    tables = [arg for t in sorted(exported.played.tables) for arg in ("--table", t)]
    proc = await achieu("audit", "--archive", str(exported.path), "--keys", str(exported.keyset), "--quiet",
                        "--json", "-", "--database-url", exported.played.database_url, *tables)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["ok"] is True and doc["findings"] == [] and exported.path.name in doc["source"]
    html = exported.folder / "replay.html"  # and the replay of an archive verifies it the same way
    proc = await achieu("replay", exported.played.ladder_table, "--html", str(html), "--archive", str(exported.path),
                        env={"CHIEU_ARCHIVE_PUBLIC_KEYS": str(exported.keyset)})
    assert proc.returncode == 0 and html.stat().st_size > 0, proc.stdout + proc.stderr


def test_the_attackers_tool_rebuilds_an_unedited_archive_byte_for_byte(exported: Exported) -> None:
    data = exported.path.read_bytes()
    frames = _frames(data)
    assert frames[-1].WhichOneof("kind") == "signature" and frames[-2].WhichOneof("kind") == "manifest"
    rebuilt, _, _ = rechain_and_reseal(frames)
    assert rebuilt + _put(frames[-1]) == data


async def test_an_edited_archive_chained_and_sealed_again_is_refused_its_signature_does_not_match(
        exported: Exported, tmp_path: Path) -> None:
    """The attack: an archive with an edited record, re-chained and re-sealed with plain SHA-256
    (valid chain, valid seal), the old signature kept."""
    original = exported.path.read_bytes()
    frames = edited(original)
    body, _, head = rechain_and_reseal(frames)
    assert head != _frames(original)[-2].manifest.head
    forged = _write(tmp_path, "forged.chieu", body + _put(frames[-1]))
    keys = signing.ArchiveKeys.load(exported.keyset)
    with pytest.raises(archive.BadSignature, match="signature does not match"):
        archive.read(forged, keys)  # raised after the chain and the seal were found whole
    line = refusal(await achieu("audit", "--archive", str(forged), "--keys", str(exported.keyset), "--no-db"))
    assert "(bad_signature)" in line and "signature does not match" in line, line
    line = refusal(await achieu("replay", exported.played.ladder_table, "--html", str(tmp_path / "r.html"),
                                "--archive", str(forged), "--keys", str(exported.keyset)))
    assert "signature does not match" in line and not (tmp_path / "r.html").exists()


async def test_an_archive_signed_again_by_a_key_outside_the_keyset_is_refused_unknown_key(
        exported: Exported, tmp_path: Path) -> None:
    body, manifest_frame, head = rechain_and_reseal(edited(exported.path.read_bytes()))
    attacker = signing.ArchiveSigner.generate()
    resigned = _write(tmp_path, "resigned.chieu", body + _put(pb.Frame(signature=pb.Signature(
        kid=attacker.kid, alg="EdDSA", signature=attacker.sign(manifest_frame, head)))))
    assert archive.read(resigned, attacker.keyset()).kid == attacker.kid  # well signed, by the wrong key
    with pytest.raises(archive.UnknownKey):
        archive.read(resigned, signing.ArchiveKeys.load(exported.keyset))
    line = refusal(await achieu("audit", "--archive", str(resigned), "--keys", str(exported.keyset), "--no-db"))
    assert "(unknown_key)" in line and "unknown key" in line and attacker.kid in line, line
    # the attacker's key under the operator's kid: the signature does not match
    trusted = signing.ArchiveSigner.load(exported.old).kid
    private = Ed25519PrivateKey.generate()
    posing = _write(tmp_path, "posing.chieu", body + _put(pb.Frame(signature=pb.Signature(
        kid=trusted, alg="EdDSA", signature=private.sign(signing.signed_bytes(trusted, manifest_frame, head))))))
    line = refusal(await achieu("audit", "--archive", str(posing), "--keys", str(exported.keyset), "--no-db"))
    assert "(bad_signature)" in line, line


async def test_an_archive_without_its_signature_is_refused_unsigned(exported: Exported, tmp_path: Path) -> None:
    frames = _frames(exported.path.read_bytes())
    body, _, _ = rechain_and_reseal(frames)
    stripped = _write(tmp_path, "stripped.chieu", body)
    with pytest.raises(archive.Unsigned):
        archive.read(stripped, signing.ArchiveKeys.load(exported.keyset))
    line = refusal(await achieu("audit", "--archive", str(stripped), "--keys", str(exported.keyset), "--no-db"))
    assert "(unsigned)" in line and "unsigned" in line.split("(unsigned)")[1], line
    frames[0].header.format = "chieu-archive-v1"  # and an archive of before: v1 had no signature
    old, _, _ = rechain_and_reseal(frames, b"chieu-archive-v1")
    line = refusal(await achieu("audit", "--archive", str(_write(tmp_path, "v1.chieu", old)), "--keys",
                                str(exported.keyset), "--no-db"))
    assert "(unsigned)" in line and "chieu-archive-v1" in line, line
    line = refusal(await achieu("audit", "--archive", str(exported.path), "--no-db"))  # and no keyset at all
    assert "(no_keys)" in line and "CHIEU_ARCHIVE_PUBLIC_KEYS" in line, line


async def test_after_a_key_rotation_an_archive_signed_by_the_older_key_still_verifies(
        exported: Exported, tmp_path: Path) -> None:
    keyset = tmp_path / "published.jwks.json"
    keyset.write_bytes(exported.keyset.read_bytes())
    new = tmp_path / "new.pem"
    made = await achieu("archive-key", "--out", str(new), "--keyset", str(keyset))  # the rotation's first step
    assert made.returncode == 0, made.stdout + made.stderr
    old_kid, new_kid = signing.ArchiveSigner.load(exported.old).kid, signing.ArchiveSigner.load(new).kid
    keys = signing.ArchiveKeys.load(keyset)
    assert keys.kids == tuple(sorted((old_kid, new_kid)))
    path = tmp_path / "after.chieu"
    done = await achieu("export", str(path), "--key", str(new),
                        env={"NATS_URL": exported.played.nats_url, "CHIEU_NATS_CREDS": nats_creds("audit")})
    assert done.returncode == 0 and f"signed by {new_kid}" in done.stdout, done.stdout + done.stderr
    assert archive.read(exported.path, keys).kid == old_kid  # the older key's archive still verifies
    assert archive.read(path, keys).kid == new_kid
    for p in (exported.path, path):
        proc = await achieu("audit", "--archive", str(p), "--no-db", "--quiet", *(
            arg for t in sorted(exported.played.tables) for arg in ("--table", t)),
            env={"CHIEU_ARCHIVE_PUBLIC_KEYS": str(keyset)})
        assert proc.returncode == 4, proc.stdout + proc.stderr  # verified; the books not checked (--no-db)
    with pytest.raises(archive.UnknownKey):  # the old key taken out of the set: its archives are revoked
        archive.read(exported.path, keys.without(old_kid))


# -- the operator's own edits: log (and books) changed, the archive signed again with their key ----


def signed_again(exported: Exported, frames: Sequence[pb.Frame]) -> bytes:
    """``frames`` chained, sealed and signed again with the operator's own archive key: an archive
    whose signature verifies against the published keyset (what an insider can make)."""
    body, manifest_frame, head = rechain_and_reseal(frames)
    signer = signing.ArchiveSigner.load(exported.old)
    return body + _put(pb.Frame(signature=pb.Signature(kid=signer.kid, alg="EdDSA",
                                                      signature=signer.sign(manifest_frame, head))))


def operator_edit(exported: Exported, kind: str, change: Any) -> tuple[list[pb.Frame], log_pb2.Record]:
    """The archive's frames with the first ``kind`` event of the played tables (one with a
    transfer, for a settlement) given to ``change``; the edited record."""
    frames = _frames(exported.path.read_bytes())
    for f in frames:
        if f.WhichOneof("kind") != "entry":
            continue
        record = log_pb2.Record.FromString(f.entry.record)
        if record.table_id not in exported.played.tables:
            continue
        for ev in record.events:
            if ev.WhichOneof("kind") == kind and (kind != "settlement" or ev.settlement.transfers):
                change(getattr(ev, kind))
                f.entry.record = record.SerializeToString()
                return frames, record
    raise AssertionError(f"no {kind} in the archive")


def findings_of(proc: subprocess.CompletedProcess[str]) -> list[tuple[str, str]]:
    assert proc.returncode == 1, proc.stdout + proc.stderr  # verified, audited, discrepancies
    return [(f["code"], f["subject"]) for f in json.loads(proc.stdout)["findings"]]


async def test_a_raised_leg_and_its_posting_signed_again_by_the_operator_is_a_settlement_mismatch(
        exported: Exported, tmp_path: Path) -> None:
    """Issue 32, point 6: a settlement leg raised by 5 in the log and the ledger's transfer raised
    to match, the archive signed again with the operator's own key. The signature verifies and
    the books agree with the log; the rules do not: ``chieu audit --archive`` alone refuses it."""
    raised: list[Any] = []

    def raise_leg(s: log_pb2.Settlement) -> None:
        s.transfers[0].amount += 5
        raised.extend([int(s.hand_no), int(s.first_leg), int(s.stake)])

    frames, record = operator_edit(exported, "settlement", raise_leg)
    hand, leg, stake = raised
    table = record.table_id
    forged = _write(tmp_path, "raised.chieu", signed_again(exported, frames))
    keys = signing.ArchiveKeys.load(exported.keyset)
    assert archive.read(forged, keys).kid == signing.ArchiveSigner.load(exported.old).kid  # it verifies
    tables = [arg for t in sorted(exported.played.tables) for arg in ("--table", t)]
    proc = await achieu("audit", "--archive", str(forged), "--keys", str(exported.keyset), "--no-db", "--quiet",
                        "--json", "-", *tables)
    assert findings_of(proc) == [("settlement_mismatch", f"{table} hand {hand} leg {leg}")]
    detail = json.loads(proc.stdout)["findings"][0]["detail"]
    assert "expected" in detail and "logged" in detail, detail
    # the books edited with it: the posted transfer raised by 5 × the stake, the balances made to agree
    db = await test_audit.Db.open(exported.played.database_url)
    transfer_id, by = f"{table}/{hand}/{leg}", 5 * stake
    row = await db.conn.fetchrow("SELECT * FROM ledger_transfers WHERE id = $1", transfer_id)
    assert row is not None
    try:
        async with db.conn.transaction():
            await db.conn.execute("UPDATE ledger_transfers SET amount = amount + $2 WHERE id = $1", transfer_id, by)
            await db.move(row["debit"], -by)
            await db.move(row["credit"], by)
        report = await audit(Options(archive=str(forged), archive_keys=str(exported.keyset),
                                     tables=exported.played.tables, database_url=exported.played.database_url))
        assert [(f.code, f.subject) for f in report.findings] == [
            ("settlement_mismatch", f"{table} hand {hand} leg {leg}")], report.findings  # the books agree with it
    finally:
        async with db.conn.transaction():
            await db.conn.execute("UPDATE ledger_transfers SET amount = amount - $2 WHERE id = $1", transfer_id, by)
            await db.move(row["debit"], by)
            await db.move(row["credit"], -by)
        await db.conn.close()


async def test_a_changed_outcome_signed_again_by_the_operator_is_an_outcome_mismatch(
        exported: Exported, tmp_path: Path) -> None:
    def reason(e: log_pb2.HandEnded) -> None:
        e.outcome.reason = "resign" if e.outcome.reason != "resign" else "stalemate"

    frames, record = operator_edit(exported, "hand_ended", reason)
    hand = next(int(ev.hand_ended.hand_no) for ev in record.events if ev.WhichOneof("kind") == "hand_ended")
    forged = _write(tmp_path, "reason.chieu", signed_again(exported, frames))
    tables = [arg for t in sorted(exported.played.tables) for arg in ("--table", t)]
    proc = await achieu("audit", "--archive", str(forged), "--keys", str(exported.keyset), "--no-db", "--quiet",
                        "--json", "-", *tables)
    assert findings_of(proc) == [("outcome_mismatch", f"{record.table_id} hand {hand}")]
    assert "outcome reason: expected" in json.loads(proc.stdout)["findings"][0]["detail"]


# -- coverage: an archive holds every record to the stream's last sequence, or states its period --


def _entries(frames: Sequence[pb.Frame]) -> list[pb.Frame]:
    return [f for f in frames if f.WhichOneof("kind") == "entry"]


async def refused_alone(exported: Exported, tmp_path: Path, name: str, frames: Sequence[pb.Frame]) -> str:
    """``frames`` signed again with the operator's key (the signature verifies), audited by
    ``chieu audit --archive`` with no database: the line that refuses it."""
    forged = _write(tmp_path, name, signed_again(exported, frames))
    assert archive.read(forged, signing.ArchiveKeys.load(exported.keyset)).kid  # well signed
    return refusal(await achieu("audit", "--archive", str(forged), "--keys", str(exported.keyset), "--no-db"))


async def test_a_resigned_archive_with_its_last_30_records_dropped_is_refused_truncated(
        exported: Exported, tmp_path: Path) -> None:
    frames = _frames(exported.path.read_bytes())
    last = frames[0].header.stream_last_seq
    assert frames[0].header.complete and frames[0].header.covered and len(_entries(frames)) == last > 30
    cut = [f for f in frames if f.WhichOneof("kind") != "entry" or f.entry.seq <= last - 30]
    line = await refused_alone(exported, tmp_path, "cut.chieu", cut)
    assert "(truncated)" in line and f"stop at stream sequence {last - 30}" in line and "30 records" in line, line


async def test_a_resigned_archive_with_one_record_deleted_is_refused_gap(exported: Exported, tmp_path: Path) -> None:
    frames = _frames(exported.path.read_bytes())
    ended = next(f.entry.seq for f in _entries(frames) if any(
        ev.WhichOneof("kind") == "hand_ended" for ev in log_pb2.Record.FromString(f.entry.record).events))
    kept = [f for f in frames if f.WhichOneof("kind") != "entry" or f.entry.seq != ended]
    line = await refused_alone(exported, tmp_path, "deleted.chieu", kept)
    assert "(gap)" in line and f"stream sequence {ended} missing" in line, line


async def test_a_resigned_archive_with_two_records_swapped_is_refused_out_of_order(
        exported: Exported, tmp_path: Path) -> None:
    frames = _frames(exported.path.read_bytes())
    i = next(i for i, f in enumerate(frames) if f.WhichOneof("kind") == "entry") + 10
    frames[i], frames[i + 1] = frames[i + 1], frames[i]
    line = await refused_alone(exported, tmp_path, "swapped.chieu", frames)
    assert "(out_of_order)" in line and f"stream sequence {frames[i + 1].entry.seq}" in line, line


async def test_an_honest_partial_archive_states_its_range_and_audits_clean(exported: Exported, tmp_path: Path) -> None:
    """``chieu export --since``: the tables with a record from then on, every other message an
    omitted entry; the audit proves exactly that range, and a record of the period taken out
    (made an omitted entry, signed again) is a gap."""
    entries = _entries(_frames(exported.path.read_bytes()))
    ends: dict[str, int] = {}
    for f in entries:
        ends[f.entry.subject] = max(ends.get(f.entry.subject, 0), f.entry.time_ms)
    since = max(ends.values())  # the table last written to is in the period; one ended before it is not
    assert min(ends.values()) < since
    path = tmp_path / "period.chieu"
    done = await achieu("export", str(path), "--since", str(since),
                        env={"NATS_URL": exported.played.nats_url, "CHIEU_NATS_CREDS": nats_creds("audit"),
                             "CHIEU_ARCHIVE_PRIVATE_KEY": str(exported.old)})
    assert done.returncode == 0, done.stdout + done.stderr
    a = archive.read(path, signing.ArchiveKeys.load(exported.keyset))
    assert not a.header.complete and a.header.covered and a.header.since_ms == since
    assert [m.seq for m in a.messages] == list(range(1, a.header.stream_last_seq + 1))
    held = {m.table_id for m in a.messages if not m.omitted}
    assert held and any(m.omitted for m in a.messages)
    assert all(m.time_ms >= since for m in a.messages if m.omitted and m.table_id in held)  # only their later ones
    for m in a.messages:
        if m.omitted:
            assert m.data == b"" and len(m.omitted_sha256) == 32
    tables = frozenset(held & exported.played.tables)
    report = await audit(Options(archive=str(path), archive_keys=str(exported.keyset), tables=tables,
                                 database_url=exported.played.database_url))
    assert report.ok and not report.findings, report.findings
    assert f"with a record from {since} ms" in report.source and f"1..{a.header.stream_last_seq}" in report.source
    frames = _frames(path.read_bytes())  # a record of the period left out, the archive signed again
    e = next(f.entry for f in _entries(frames) if f.entry.record)
    e.omitted_sha256, e.record = hashlib.sha256(e.record).digest(), b""
    line = await refused_alone(exported, tmp_path, "withheld.chieu", frames)
    assert "(gap)" in line and "is omitted, yet its table has a record in the period" in line, line


async def test_forged_seeds_and_seals_signed_again_are_named_by_their_own_findings(
        exported: Exported, tmp_path: Path) -> None:
    """On real play, through ``chieu audit --archive`` alone: a changed client seed of a hand is
    ``client_seed_mismatch`` (never ``commitment_mismatch``: the server seed is untouched), a
    flipped sealed box of a finished hand is ``seal_does_not_open`` (never a ``replay_failed``
    with a Python exception's name)."""
    tables = [arg for t in sorted(exported.played.tables) for arg in ("--table", t)]

    def seed(h: log_pb2.HandStarted) -> None:
        h.client_seeds[0] = bytes(reversed(h.client_seeds[0])) + b"!"

    frames, record = operator_edit(exported, "hand_started", seed)
    hand = next(int(ev.hand_started.hand_no) for ev in record.events if ev.WhichOneof("kind") == "hand_started")
    forged = _write(tmp_path, "seed.chieu", signed_again(exported, frames))
    proc = await achieu("audit", "--archive", str(forged), "--keys", str(exported.keyset), "--no-db", "--quiet",
                        "--json", "-", *tables)
    got = findings_of(proc)
    assert ("client_seed_mismatch", f"{record.table_id} hand {hand}") in got, got
    assert {code for code, _ in got} <= {"client_seed_mismatch", "deal_mismatch"}, got

    def flip(s: log_pb2.Sealed) -> None:
        data = bytearray(s.data)
        data[-1] ^= 1
        s.data = bytes(data)

    frames, record = operator_edit(exported, "sealed", flip)
    hand = next(int(ev.sealed.hand_no) for ev in record.events if ev.WhichOneof("kind") == "sealed")
    forged = _write(tmp_path, "seal.chieu", signed_again(exported, frames))
    proc = await achieu("audit", "--archive", str(forged), "--keys", str(exported.keyset), "--no-db", "--quiet",
                        "--json", "-", *tables)
    assert findings_of(proc) == [("seal_does_not_open", f"{record.table_id} hand {hand}")]
