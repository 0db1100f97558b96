"""What a table command is to the parts of the service that issue one (the servicer, the clocks,
the players' presence): a decider bound to its arguments, and the pipeline's entry
(:meth:`chieu.table.pipeline.Pipeline.execute`) as a type, so that the clocks and presence are
handed it and need not import the pipeline (which schedules the clocks after every record)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from google.protobuf.message import Message

from chieu.table.decide import Decision
from chieu.tablelog.fold import Table

Decider = Callable[[Table, int], Decision]
"""A table command: the table and the server time (ms) of the command, read once."""


class Execute(Protocol):
    """Decide and append one command (:meth:`chieu.table.pipeline.Pipeline.execute`)."""

    async def __call__(self, table_id: str, actor: str, command_id: str, decider: Decider, *,
                       create: bool = False, game_command: Any = None, timeout_seat: int | None = None,
                       request: Message | None = None) -> Table: ...
