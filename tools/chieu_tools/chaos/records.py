"""What the clients of a chaos run sent and saw, on disk under the run's folder:

- ``commands.jsonl``: every table command a client sent, one JSON line when its outcome is known
  (``acked``, ``refused`` with its status and reason, or ``unknown``), with its table, player,
  command id, method and times (ms since the epoch);
- ``views.bin``: every view a client received (a ``Watch`` message, an ``Act`` answer, a
  ``GetTable`` answer), as frames: a 4-byte big-endian length of a JSON header (player, table,
  source, stream, received ms), the header, a 4-byte length of the view, then the view's bytes
  exactly as they came (a serialized ``WatchResponse``, whose field 1 is the ``TableView``);
- ``faults.jsonl``: every fault as it was applied (kind, target, start and end ms).

The checker reads these files and the stores, nothing else.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, BinaryIO

_LEN = struct.Struct(">I")


@dataclass(frozen=True, slots=True)
class Command:
    table_id: str
    player: str
    command_id: str
    method: str
    outcome: str
    code: str
    reason: str
    sent_ms: int
    settled_ms: int
    attempts: int
    version: int = 0
    """The version of the view an acknowledged command was answered with."""
    probe: bool = False

    @property
    def key(self) -> str:
        return f"{self.player}/{self.command_id}"


@dataclass(frozen=True, slots=True)
class View:
    player: str
    table_id: str
    source: str
    """``watch``, ``act`` or ``get``."""
    stream: int
    """Which watch stream of the player (0 for answers to calls): a stream's views must only go forward."""
    received_ms: int
    data: bytes


@dataclass(frozen=True, slots=True)
class AppliedFault:
    kind: str
    target: str
    detail: str
    planned_s: float
    start_ms: int
    end_ms: int
    note: str = ""
    """What the injector saw (the stream leader a NATS kill hit, a restart that failed, …)."""


class Journal:
    """Appends a run's records to its folder (one writer: the run's event loop)."""

    def __init__(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.folder = folder
        self._commands = (folder / "commands.jsonl").open("a", encoding="utf-8")
        self._views: BinaryIO = (folder / "views.bin").open("ab")
        self._faults = (folder / "faults.jsonl").open("a", encoding="utf-8")
        self.commands: list[Command] = []
        self.views = 0
        self.closed = False

    def command(self, c: Command) -> None:
        if self.closed:  # a client still finishing after the run's end: nothing more is recorded
            return
        self.commands.append(c)
        self._commands.write(json.dumps(asdict(c)) + "\n")

    def view(self, player: str, table_id: str, source: str, stream: int, received_ms: int, data: bytes) -> None:
        if self.closed:
            return
        head = json.dumps({"p": player, "t": table_id, "s": source, "w": stream, "r": received_ms}).encode()
        self._views.write(_LEN.pack(len(head)) + head + _LEN.pack(len(data)) + data)
        self.views += 1

    def fault(self, f: AppliedFault) -> None:
        if self.closed:
            return
        self._faults.write(json.dumps(asdict(f)) + "\n")
        self._faults.flush()

    def flush(self) -> None:
        for f in (self._commands, self._views, self._faults):
            f.flush()

    def close(self) -> None:
        self.closed = True
        for f in (self._commands, self._views, self._faults):
            f.close()


def read_commands(folder: Path) -> list[Command]:
    path = folder / "commands.jsonl"
    if not path.exists():
        return []
    return [Command(**json.loads(line)) for line in path.read_text(encoding="utf-8").splitlines() if line]


def read_faults(folder: Path) -> list[AppliedFault]:
    path = folder / "faults.jsonl"
    if not path.exists():
        return []
    return [AppliedFault(**json.loads(line)) for line in path.read_text(encoding="utf-8").splitlines() if line]


def read_views(folder: Path) -> Iterator[View]:
    path = folder / "views.bin"
    if not path.exists():
        return
    with path.open("rb") as f:
        while True:
            raw = f.read(4)
            if len(raw) < 4:
                return
            head: dict[str, Any] = json.loads(f.read(_LEN.unpack(raw)[0]))
            (size,) = _LEN.unpack(f.read(4))
            yield View(head["p"], head["t"], head["s"], head["w"], head["r"], f.read(size))
