"""Sealed secrets: what a hand in play hides is readable by the table processes alone (issue 26).

Every service, the audit user and an operator with a stream credential can read the table log. So
while a hand is in play its secrets are in the log sealed (AES-256-GCM, ``cryptography``):

* **the next hand's server seed** (``NextSeed``, in ``TableCreated`` and each ``HandStarted``):
  sealed under ``HKDF-SHA256(seal key, info = "chieu-seal-v1 seed" | table id | hand number)``,
  a key of the table processes' keyset (``CHIEU_SEAL_KEYS``); its commitment is public;
* **the hand's game events and commands** (``Sealed``: the deal, every draw, an 暗杠): sealed
  under ``HKDF-SHA256(the hand's server seed, info = "chieu-seal-v1 hand" | table id | hand
  number)``. ``HandEnded`` reveals the seed, so the hand opens for everybody then, and nothing
  else does (the next hand's seed is not derivable from it);
* **snapshots** (the table state, hands included) under ``HKDF-SHA256(seal key, "chieu-seal-v1
  snapshot" | table id)``.

The associated data binds each box to its place (table, hand, record version), so a sealed part
cannot be moved to another record. The table processes seal when they append
(:func:`seal_record`) and open when they fold (:meth:`Opener.open`); the auditor opens a finished
hand with its revealed seed (:func:`reveal`). ``docs/fairness.md`` gives the byte layout.
"""

from __future__ import annotations

import base64
import contextlib
import functools
import json
import os
import secrets
from collections.abc import Iterable, Mapping
from pathlib import Path

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from chieu.games import fair
from chieu.table.v1 import log_pb2
from chieu.tablelog.fold import Table

VERSION = b"chieu-seal-v1"
NONCE = 12
SEED_BYTES = 32
SNAPSHOT_TAG = "sealed-"
"""A sealed snapshot's store tag: this prefix, then the plain snapshot's tag."""


class SealError(ValueError):
    """A sealed part cannot be opened: an unknown or retired key, or bytes that were changed."""


def _kdf(key: bytes, *info: str | int) -> AESGCM:
    label = VERSION + b"".join(b" " + str(part).encode() for part in info)
    return AESGCM(HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=label).derive(key))


HAND_BOXES = 512
"""The hands' AEADs a process keeps (least recently used out): about 2.6 KiB each, mostly OpenSSL's
(out of tracemalloc's sight), so 1.3 MiB at the cap (4,096 were 10.5 MiB, filled one hand at a time:
issue 28's soak). A hand in play is a few records a second; one not kept costs its HKDF again (11 µs)."""


@functools.lru_cache(maxsize=HAND_BOXES)
def hand_box(server_seed: bytes, table_id: str, hand_no: int) -> AESGCM:
    """The AEAD of hand ``hand_no`` of ``table_id``: its key derives from the hand's server seed."""
    return _kdf(server_seed, "hand", table_id, hand_no)


def _aad(table_id: str, hand_no: int, version: int) -> bytes:
    return f"{table_id}/{hand_no}/{version}".encode()


def _seal(box: AESGCM, plain: bytes, aad: bytes) -> bytes:
    nonce = os.urandom(NONCE)
    return nonce + box.encrypt(nonce, plain, aad)


def _open(box: AESGCM, sealed: bytes, aad: bytes) -> bytes:
    try:
        return box.decrypt(sealed[:NONCE], sealed[NONCE:], aad)
    except InvalidTag:
        raise SealError("a sealed part does not open: changed, or sealed under another key") from None


class SealKeys:
    """The table processes' seal keyset (``CHIEU_SEAL_KEYS``): key id → 32-byte key; the first
    key seals, every key opens (a retired key stays until no hand sealed under it is in play)."""

    def __init__(self, keys: dict[str, bytes], current: str) -> None:
        if current not in keys:
            raise ValueError(f"the current seal key {current!r} is not in the keyset")
        for kid, key in keys.items():
            if len(key) != 32:
                raise ValueError(f"seal key {kid!r} must be 32 bytes, not {len(key)}")
        self.keys = dict(keys)
        self.current = current

    @classmethod
    def load(cls, path: str | Path) -> SealKeys:
        """A keyset from its JSON file (a JWKS of ``oct`` keys; the first key seals)."""
        try:
            doc = json.loads(Path(path).read_text(encoding="utf-8"))
            entries = doc["keys"]
            keys = {str(e["kid"]): _b64decode(str(e["k"])) for e in entries if e.get("kty") == "oct"}
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise ValueError(f"cannot read the seal keyset {path}: {e}") from None
        if not keys:
            raise ValueError(f"the seal keyset {path} has no oct key")
        return cls(keys, next(iter(keys)))

    @staticmethod
    def document(keys: Iterable[tuple[str, bytes]]) -> str:
        """The JSON text of a keyset file with ``keys`` (key id, key), the sealing key first."""
        return json.dumps({"keys": [{"kty": "oct", "kid": kid, "alg": "A256GCM", "use": "enc",
                                     "k": base64.urlsafe_b64encode(key).rstrip(b"=").decode()}
                                    for kid, key in keys]}, indent=2) + "\n"

    @classmethod
    def generate(cls) -> SealKeys:
        """A keyset of one fresh key."""
        kid, key = cls.new_key()
        return cls({kid: key}, kid)

    @staticmethod
    def new_key() -> tuple[str, bytes]:
        """A fresh key and its id (``seal-`` and 8 random hex digits)."""
        return f"seal-{secrets.token_hex(4)}", secrets.token_bytes(32)

    def seal_seed(self, table_id: str, hand_no: int, seed: bytes) -> log_pb2.NextSeed:
        """``seed`` (hand ``hand_no``'s server seed) committed and sealed under the current key."""
        box = _kdf(self.keys[self.current], "seed", table_id, hand_no)
        return log_pb2.NextSeed(hand_no=hand_no, commitment=fair.commitment(seed), key_id=self.current,
                                sealed=_seal(box, seed, f"{table_id}/{hand_no}".encode()))

    def open_seed(self, table_id: str, next_seed: log_pb2.NextSeed) -> bytes:
        """The server seed a ``NextSeed`` sealed, checked against its commitment."""
        key = self.keys.get(next_seed.key_id)
        if key is None:
            raise SealError(f"seal key {next_seed.key_id!r} is not in this process's keyset")
        box = _kdf(key, "seed", table_id, next_seed.hand_no)
        seed = _open(box, next_seed.sealed, f"{table_id}/{next_seed.hand_no}".encode())
        if fair.commitment(seed) != next_seed.commitment:
            raise SealError("the sealed seed does not match its commitment")
        return seed

    def new_seed(self, table_id: str, hand_no: int) -> log_pb2.NextSeed:
        """A fresh server seed from the CSPRNG for hand ``hand_no``, committed and sealed."""
        return self.seal_seed(table_id, hand_no, secrets.token_bytes(SEED_BYTES))

    def seal_snapshot(self, table_id: str, data: bytes) -> bytes:
        """Snapshot bytes sealed under the current key: ``len(kid) || kid || nonce || box``."""
        kid = self.current.encode()
        return bytes([len(kid)]) + kid + _seal(_kdf(self.keys[self.current], "snapshot", table_id), data,
                                               table_id.encode())

    def open_snapshot(self, table_id: str, data: bytes) -> bytes:
        n = data[0] if data else 0
        key = self.keys.get(data[1:1 + n].decode(errors="replace"))
        if key is None:
            raise SealError("the snapshot was sealed under a key this process does not hold")
        return _open(_kdf(key, "snapshot", table_id), data[1 + n:], table_id.encode())


def _b64decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


# ---------------------------------------------------------------- records


def _hand_of(record: log_pb2.Record, table: Table) -> tuple[int, bytes] | None:
    """The hand a record's secrets belong to and its server seed (from the record's own
    ``HandStarted``, else the table's hand in play), or None between hands."""
    for ev in record.events:
        if ev.WhichOneof("kind") == "hand_started":
            return int(ev.hand_started.hand_no), bytes(ev.hand_started.server_seed)
    if table.playing and table.server_seed:
        return table.hand_no, table.server_seed
    return None


def kept_box(kept: dict[tuple[bytes, int], AESGCM], server_seed: bytes, table_id: str, hand_no: int) -> AESGCM:
    """:func:`hand_box`, kept in ``kept`` (one table's: its hand in play only) rather than in the
    process's cache of :data:`HAND_BOXES`, which holds fewer hands than a busy process plays at
    once (1,000 tables: every move derived its key again)."""
    box = kept.get((server_seed, hand_no))
    if box is None:
        kept.clear()
        box = kept[(server_seed, hand_no)] = _kdf(server_seed, "hand", table_id, hand_no)
    return box


def seal_record(record: log_pb2.Record, table: Table,
                kept: dict[tuple[bytes, int], AESGCM] | None = None) -> log_pb2.Record:
    """``record`` as the log keeps it (``table``: the state it applies to): during a hand its game
    events and command sealed in one box (``SealedParts``), its ``HandStarted`` without the seed;
    ``record`` is not changed. ``kept``: the table's hand key, kept there (:func:`kept_box`)."""
    hand = _hand_of(record, table)
    if hand is None:
        return record
    hand_no, seed = hand
    out = log_pb2.Record()
    out.CopyFrom(record)
    parts = log_pb2.SealedParts()
    first: log_pb2.Sealed | None = None
    for ev in out.events:
        kind = ev.WhichOneof("kind")
        if kind == "game_event":
            parts.events.append(ev.game_event)
            sealed = ev.sealed  # (setting a member of the oneof switches it)
            sealed.hand_no = hand_no
            first = first or sealed
        elif kind == "hand_started":
            ev.hand_started.server_seed = b""
    if out.WhichOneof("cause") == "game_command":
        parts.command.CopyFrom(out.game_command)
        sealed = out.sealed_command
        sealed.hand_no = hand_no
        first = first or sealed
    if first is not None:
        nonce = os.urandom(NONCE)
        box = hand_box(seed, record.table_id, hand_no) if kept is None else kept_box(kept, seed, record.table_id,
                                                                                     hand_no)
        first.data = nonce + box.encrypt(
            nonce, parts.SerializeToString(), _aad(record.table_id, hand_no, int(record.version)))
    return out


def is_sealed(record: log_pb2.Record) -> bool:
    """Whether ``record`` has a sealed part (or a ``HandStarted`` whose seed is sealed)."""
    if record.WhichOneof("cause") == "sealed_command":
        return True
    for ev in record.events:
        kind = ev.WhichOneof("kind")
        if kind == "sealed" or (kind == "hand_started" and not ev.hand_started.server_seed):
            return True
    return False


def _open_parts(record: log_pb2.Record, seeds: Mapping[int, bytes]) -> bool:
    """Open ``record``'s sealed parts in place with the seed of their hand; False if that seed is
    not among ``seeds`` (the parts stay sealed). (The audit's inner loop: kept lean.)"""
    opened = True
    boxed: list[log_pb2.TableEvent] = []
    hand_no, data = -1, b""
    for ev in record.events:
        kind = ev.WhichOneof("kind")
        if kind == "sealed":
            boxed.append(ev)
            if not data:
                hand_no, data = ev.sealed.hand_no, ev.sealed.data
        elif kind == "hand_started" and not ev.hand_started.server_seed:
            seed = seeds.get(ev.hand_started.hand_no)
            if seed is None:
                opened = False
            else:
                ev.hand_started.server_seed = seed
    command = record.WhichOneof("cause") == "sealed_command"
    if command and not data:
        hand_no, data = record.sealed_command.hand_no, record.sealed_command.data
    if not boxed and not command:
        return opened
    seed = seeds.get(hand_no)
    if seed is None:
        return False
    table_id = record.table_id
    parts = log_pb2.SealedParts.FromString(
        _open(hand_box(seed, table_id, hand_no), data, _aad(table_id, hand_no, int(record.version))))
    if len(parts.events) != len(boxed) or parts.HasField("command") != command:
        raise SealError("a sealed record's parts do not match its places")
    for ev, event in zip(boxed, parts.events, strict=True):
        ev.game_event.CopyFrom(event)
    if command:
        record.game_command.CopyFrom(parts.command)
    return opened


class Opener:
    """Opens the records a table process folds, with its keyset and the table's state."""

    def __init__(self, keys: SealKeys) -> None:
        self.keys = keys

    def open(self, record: log_pb2.Record, table: Table,
             revealed: Mapping[int, bytes] | None = None) -> log_pb2.Record:
        """``record`` (about to be folded into ``table``) with its sealed parts opened, in place.

        A ``HandStarted`` takes the seed its ``HandEnded`` revealed, when the caller has read that
        far (``revealed``: hand → seed), else the seed the table committed before
        (``table.next_seed``, opened with the keyset): a finished hand needs no seal key, so a
        retired key only matters to the hand in play and the next deal."""
        seeds: dict[int, bytes] = {table.hand_no: table.server_seed} if table.playing and table.server_seed else {}
        for ev in record.events:
            if ev.HasField("hand_started") and not ev.hand_started.server_seed:
                hand_no = int(ev.hand_started.hand_no)
                if revealed and hand_no in revealed:
                    seeds[hand_no] = revealed[hand_no]
                    continue
                committed = table.next_seed
                if committed is None or int(committed.hand_no) != hand_no:
                    raise SealError(f"hand {hand_no} of {record.table_id} has no committed seed to open")
                seeds[hand_no] = self.keys.open_seed(record.table_id, committed)
        if not _open_parts(record, seeds):
            raise SealError(f"record {record.version} of {record.table_id} has a part of another hand")
        return record


def revealed_seeds(records: Iterable[log_pb2.Record]) -> dict[int, bytes]:
    """Hand → the server seed its ``HandEnded`` revealed, of the finished hands among ``records``."""
    return {int(ev.hand_ended.hand_no): bytes(ev.hand_ended.server_seed) for record in records
            for ev in record.events if ev.WhichOneof("kind") == "hand_ended" and ev.hand_ended.server_seed}


def reveal(records: Iterable[tuple[int, log_pb2.Record]]) -> list[tuple[int, log_pb2.Record]]:
    """A table's log with every finished hand opened by the seed its ``HandEnded`` revealed (the
    auditor's view; records are changed in place). A hand in play stays sealed."""
    out = list(records)
    seeds = revealed_seeds(record for _, record in out)
    for _, record in out:
        with contextlib.suppress(SealError):  # what does not open stays sealed: the audit says so
            _open_parts(record, seeds)
    return out

