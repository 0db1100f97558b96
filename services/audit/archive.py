"""The auditor's archive of the table log: write it (``chieu export``, signed), read it back and
refuse it when a byte changed or it is not signed by a key of the archive keyset.

The format is ``proto/chieu/audit/v1/archive.proto``: length-delimited ``Frame`` messages — a
``Header``, one ``Entry`` per stream message (the ``chieu.table.v1.Record`` bytes exactly as
stored), a ``Manifest``, a ``Signature`` — with a SHA-256 chain over the entries, a seal over the
whole file and the operator's Ed25519 signature over the manifest and the chain head
(:mod:`chieu.audit.signing`), so an auditor needs the file, the ``.proto`` contracts and the
operator's published archive keyset only. The chain and the seal alone prove nothing against
someone who edits records: they can be computed again; the signature cannot without the key.

Reading the live stream is read-only: an ordered (ephemeral) consumer from the first message;
the stream is never created, changed or acknowledged.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from google.protobuf.internal.decoder import _DecodeVarint  # type: ignore[attr-defined]
from google.protobuf.internal.encoder import _VarintBytes  # type: ignore[attr-defined]
from google.protobuf.message import DecodeError

from chieu.audit.signing import ALGORITHM, ArchiveKeys, ArchiveSigner
from chieu.audit.v1 import archive_pb2 as pb
from chieu.kit import names

FORMAT = "chieu-archive-v2"
"""v2: v1 and a ``Signature`` frame after the manifest; a reader refuses a file without one."""
UNSIGNED_FORMATS = ("chieu-archive-v1",)
MAX_FRAME = 64 << 20
"""The largest frame a reader accepts (a record is at most a JetStream message)."""


class ArchiveError(Exception):
    """The archive is refused: a changed byte, a broken chain, a missing manifest (``reason``
    ``corrupt``), or one of the signature's refusals below. Its message is one line."""

    reason = "corrupt"


class Unsigned(ArchiveError):
    """No signature: unsigned archives are refused."""

    reason = "unsigned"


class UnknownKey(ArchiveError):
    """Signed by a kid that is not in the keyset the reader was given."""

    reason = "unknown_key"


class BadSignature(ArchiveError):
    """Signed under a trusted kid, but the signature does not verify: changed after signing."""

    reason = "bad_signature"


class NoKeys(ArchiveError):
    """The reader was given no archive keyset (or one it cannot read) to verify with."""

    reason = "no_keys"


@dataclass(frozen=True, slots=True)
class Message:
    """One stream message: its sequence, subject, record server time and record bytes (empty for
    an omitted entry of a period's archive, which has the record's SHA-256 instead)."""

    seq: int
    subject: str
    time_ms: int
    data: bytes
    omitted_sha256: bytes = b""

    @property
    def omitted(self) -> bool:
        """An entry of a period's archive outside the period: its record left out."""
        return bool(self.omitted_sha256)

    @property
    def table_id(self) -> str:
        return self.subject[len(names.TABLES.prefix) + 1:]


@dataclass(frozen=True, slots=True)
class Archive:
    """An archive read back and checked."""

    header: pb.Header
    messages: list[Message]
    manifest: pb.Manifest
    kid: str
    """The key id the archive is signed with (verified against the keyset given)."""


def chain0(header: pb.Header) -> bytes:
    return hashlib.sha256(FORMAT.encode() + header.SerializeToString(deterministic=True)).digest()


def link(prev: bytes, m: Message) -> bytes:
    subject = m.subject.encode()
    return hashlib.sha256(b"".join((prev, m.seq.to_bytes(8, "big"), len(subject).to_bytes(4, "big"), subject,
                                    m.time_ms.to_bytes(8, "big", signed=True), m.data))).digest()


def _frame(frame: pb.Frame) -> bytes:
    body = frame.SerializeToString(deterministic=True)
    return bytes(_VarintBytes(len(body))) + body


def write(out: IO[bytes], header: pb.Header, messages: Iterable[Message], signer: ArchiveSigner) -> pb.Manifest:
    """Write a whole archive to ``out``, signed by ``signer``; the manifest written."""
    header.format = FORMAT
    seal = hashlib.sha256()

    def put(b: bytes) -> None:
        seal.update(b)
        out.write(b)

    put(_frame(pb.Frame(header=header)))
    head = chain0(header)
    count, first, last, tables = 0, 0, 0, set()
    for m in messages:
        head = link(head, m)
        put(_frame(pb.Frame(entry=pb.Entry(seq=m.seq, subject=m.subject, time_ms=m.time_ms, record=m.data,
                                           chain=head, omitted_sha256=m.omitted_sha256))))
        count += 1
        first = first or m.seq
        last = m.seq
        if not m.omitted:
            tables.add(m.subject)
    manifest = pb.Manifest(entries=count, first_seq=first, last_seq=last, tables=len(tables), head=head)
    seal.update(manifest.SerializeToString(deterministic=True))
    manifest.seal = seal.digest()
    manifest_frame = _frame(pb.Frame(manifest=manifest))
    out.write(manifest_frame)
    out.write(_frame(pb.Frame(signature=pb.Signature(kid=signer.kid, alg=ALGORITHM,
                                                     signature=signer.sign(manifest_frame, head)))))
    return manifest


def _frames(data: bytes) -> Iterator[tuple[int, int, pb.Frame]]:
    """(start offset, end offset, frame) of every frame of ``data``."""
    pos = 0
    while pos < len(data):
        start = pos
        try:
            size, pos = _DecodeVarint(data, pos)
        except (IndexError, DecodeError) as e:
            raise ArchiveError(f"byte {start}: a broken frame length") from e
        if size > MAX_FRAME or pos + size > len(data):
            raise ArchiveError(f"byte {start}: a frame of {size} bytes runs past the end of the file")
        frame = pb.Frame()
        try:
            frame.ParseFromString(data[pos:pos + size])
        except DecodeError as e:
            raise ArchiveError(f"byte {start}: a frame that does not parse ({e})") from e
        pos += size
        yield start, pos, frame


def read(path: str | Path, keys: ArchiveKeys) -> Archive:
    """Read and check an archive: its chain, its seal, and its signature by a key of ``keys``;
    :class:`ArchiveError` (or one of its kinds: :class:`Unsigned`, :class:`UnknownKey`,
    :class:`BadSignature`, :class:`NoKeys`) says what is wrong with it."""
    if not len(keys):
        raise NoKeys("no archive public keys to verify its signature with (CHIEU_ARCHIVE_PUBLIC_KEYS or --keys "
                     "FILE: the operator's published archive keyset)")
    data = Path(path).read_bytes()
    header: pb.Header | None = None
    manifest: pb.Manifest | None = None
    manifest_frame = b""
    signature: pb.Signature | None = None
    messages: list[Message] = []
    head = b""
    for start, end, frame in _frames(data):
        kind = frame.WhichOneof("kind")
        if signature is not None:
            raise ArchiveError(f"byte {start}: something follows the signature")
        if manifest is not None and kind != "signature":
            raise ArchiveError(f"byte {start}: something other than the signature follows the manifest")
        if header is None:
            if kind == "header" and frame.header.format in UNSIGNED_FORMATS:
                raise Unsigned(f"the archive is unsigned ({frame.header.format}, made before archives were "
                               "signed): unsigned archives are refused")
            if kind != "header" or frame.header.format != FORMAT:
                raise ArchiveError(f"not a {FORMAT} archive (its first frame is no header)")
            header = frame.header
            head = chain0(header)
        elif kind == "entry":
            e = frame.entry
            m = Message(int(e.seq), e.subject, int(e.time_ms), bytes(e.record), bytes(e.omitted_sha256))
            head = link(head, m)
            if head != e.chain:
                raise ArchiveError(f"entry {len(messages) + 1} (stream sequence {m.seq}, byte {start}): the SHA-256 "
                                   "chain breaks there: the entry or one before it was changed")
            messages.append(m)
        elif kind == "manifest":
            manifest = frame.manifest
            sealed = pb.Manifest()
            sealed.CopyFrom(manifest)
            sealed.seal = b""
            seal = hashlib.sha256(data[:start] + sealed.SerializeToString(deterministic=True)).digest()
            if manifest.seal != seal:
                raise ArchiveError("the manifest's seal does not match the file: a byte was changed")
            if manifest.head != head or manifest.entries != len(messages):
                raise ArchiveError(f"the manifest says {manifest.entries} entries ending in another chain value; "
                                   f"the file holds {len(messages)}")
            manifest_frame = data[start:end]
        elif kind == "signature" and manifest is not None:
            signature = frame.signature
        else:
            raise ArchiveError(f"byte {start}: an unexpected {kind or 'empty'} frame")
    if header is None:
        raise ArchiveError("an empty file")
    if manifest is None:
        raise ArchiveError("no manifest: the archive was cut short")
    if signature is None:
        raise Unsigned("the archive is unsigned (no signature after its manifest): unsigned archives are refused")
    kid = signature.kid
    if signature.alg != ALGORITHM:
        raise BadSignature(f"the archive's signature is {signature.alg!r}, not {ALGORITHM}: refused")
    verified = keys.verify(kid, bytes(signature.signature), manifest_frame, head)
    if verified is None:
        raise UnknownKey(f"the archive is signed by an unknown key {kid!r}: not one of the trusted archive keys "
                         f"({', '.join(keys.kids)})")
    if not verified:
        raise BadSignature(f"the archive's signature does not match its contents under key {kid}: the file was "
                           "changed after it was signed")
    return Archive(header, messages, manifest, kid)


# -- the live stream ---------------------------------------------------------------------------


async def connect(url: str, creds: str | None = None, ca: str | None = None) -> Any:
    """A NATS connection for a command-line reader: each server tried once, quietly, as the user of
    ``creds`` over TLS checked against ``ca`` (default: ``CHIEU_NATS_CREDS``, ``CHIEU_NATS_CA``; the
    read-only ``audit`` user is the one to give it)."""
    from chieu.kit import natsauth
    from chieu.kit.settings import from_env

    async def quiet(e: Exception) -> None:
        pass

    if creds is None or ca is None:
        env = from_env()
        creds = env.nats_creds if creds is None else creds
        ca = env.nats_ca if ca is None else ca
    return await natsauth.connect_url(url, "chieu-audit", creds=creds, ca=ca, max_reconnect_attempts=1,
                                      reconnect_time_wait=0.2, error_cb=quiet, allow_reconnect=False,
                                      connect_timeout=3)


async def stream_messages(nc: Any, stream: str = names.TABLES.name, subjects: str = names.TABLES.subjects,
                          upto: int | None = None) -> tuple[int, list[Message]]:
    """Every message of the table stream up to its last sequence now (or ``upto``):
    (the stream's last sequence, the messages), through an ordered consumer (nothing is acked)."""
    from chieu.table.v1 import log_pb2

    js = nc.jetstream()
    info = await js.stream_info(stream)
    last = int(info.state.last_seq) if upto is None else upto
    out: list[Message] = []
    if int(info.state.messages) == 0 or last == 0:
        return last, out
    sub = await js.subscribe(subjects, stream=stream, ordered_consumer=True, pending_msgs_limit=-1,
                             pending_bytes_limit=-1)
    record = log_pb2.Record()
    try:
        while True:
            msg = await sub.next_msg(timeout=10)
            seq = int(msg.metadata.sequence.stream)
            if seq > last:
                break
            record.ParseFromString(msg.data)
            out.append(Message(seq, msg.subject, int(record.server_time_ms), bytes(msg.data)))
            if seq >= last:
                break
    finally:
        await sub.unsubscribe()
    return last, out


def period(messages: list[Message], since_ms: int = 0, until_ms: int = 0) -> list[Message]:
    """The tables with a record in ``[since_ms, until_ms)``, each from its first record up to
    ``until_ms`` (a table's log is folded from its start, so its earlier records come along);
    every other message as an omitted entry (its record's SHA-256 instead of the record), so that
    the archive still covers the stream without a gap (:mod:`chieu.audit.coverage`)."""
    if not since_ms and not until_ms:
        return messages
    active = {m.subject for m in messages if m.time_ms >= since_ms and (not until_ms or m.time_ms < until_ms)}
    return [m if m.subject in active and (not until_ms or m.time_ms < until_ms)
            else Message(m.seq, m.subject, m.time_ms, b"", hashlib.sha256(m.data).digest()) for m in messages]


async def export(url: str, path: str | Path, signer: ArchiveSigner, since_ms: int = 0,
                 until_ms: int = 0) -> pb.Manifest:
    """Write the table stream (or the tables of a period) to an archive file at ``path``, signed by
    ``signer``."""
    nc = await connect(url)
    try:
        last, messages = await stream_messages(nc)
    finally:
        await nc.close()
    header = pb.Header(stream=names.TABLES.name, created_ms=int(time.time() * 1000), since_ms=since_ms,
                       until_ms=until_ms, stream_last_seq=last, complete=not since_ms and not until_ms,
                       covered=True)
    return await asyncio.to_thread(save, path, header, period(messages, since_ms, until_ms), signer)


def save(path: str | Path, header: pb.Header, messages: Iterable[Message], signer: ArchiveSigner) -> pb.Manifest:
    """Write an archive file signed by ``signer`` (through a temporary file beside it, renamed when
    whole)."""
    tmp = Path(f"{path}.part")
    with tmp.open("wb") as f:
        manifest = write(f, header, messages, signer)
    tmp.replace(path)
    return manifest
