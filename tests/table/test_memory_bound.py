"""What a table keeps in memory stays bounded however long it is played (issue 28's soak): the
command ids it remembers for idempotency are the last ``REMEMBERED_COMMANDS``, oldest dropped
first, kept in a plain dict (an ``OrderedDict`` cost a third more per table), and a snapshot keeps
exactly them, in order."""

from __future__ import annotations

import tracemalloc
import uuid

from chieu.table import snapshot
from chieu.table.v1 import log_pb2
from chieu.tablelog.fold import REMEMBERED_COMMANDS, Table


def _played(commands: int) -> Table:
    table = Table("t-memory")
    for v in range(1, commands + 1):
        table.apply(log_pb2.Record(table_id="t-memory", version=v, actor=f"player-{v % 4}",
                                   command_id=uuid.uuid4().hex, command_digest=bytes(16)), v)
    return table


def test_a_long_played_table_remembers_only_its_last_commands() -> None:
    table = _played(3 * REMEMBERED_COMMANDS)
    assert len(table.commands) == REMEMBERED_COMMANDS
    versions = [v for v, _ in table.commands.values()]
    assert versions == list(range(2 * REMEMBERED_COMMANDS + 1, 3 * REMEMBERED_COMMANDS + 1))  # oldest dropped
    again = snapshot.decode(snapshot.encode(table))
    assert list(again.commands.items()) == list(table.commands.items())


def test_the_remembered_commands_cost_at_most_128_kib_per_table() -> None:
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    tables = [_played(REMEMBERED_COMMANDS + 50) for _ in range(5)]
    after = tracemalloc.take_snapshot()
    tracemalloc.stop()
    per_table = sum(s.size_diff for s in after.compare_to(before, "filename")) / len(tables)
    assert per_table <= 128 * 1024, f"{per_table / 1024:.0f} KiB per table"
