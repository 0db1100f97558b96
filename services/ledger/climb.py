"""The ladder re-derived from the table log in the ledger, for the reward proof (issue 32, attack 4).

A best-level reward record names the table-log record whose hand raised the player's best level
(:mod:`chieu.ledger.proof`). That the player won that hand is not enough: a holder of the ladder's
NATS credential could name a real win at level L for the reward of level L + 1 before the player
had the level points for it. So the ledger folds the ladder's rules over the table log itself, as
the auditor does (:class:`chieu.ladder.results.Climb`: every ladder hand's results and penalties in
stream order, with the ladder's parameters, ``CHIEU_LADDER_*``), and pays a best level only at the
record where that fold reaches it.

The fold is kept in the process and read forward on demand, up to the record a reward names: each
table-log record is read once per ledger process (a single message get each, in stream order; the
first reward after a start reads the log from its beginning: past the durable's ack wait the
record is delivered again, waits for the fold and is paid once, by its inbox row). An operator's correction of a
standing (the ladder's ``Correct``) is not in the table log: a reward that only a correction made
possible is refused here and paid by the operator (``CreditReward``).
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from google.protobuf.message import DecodeError
from nats.js.errors import NotFoundError

from chieu.kit import names
from chieu.ladder.results import Climb
from chieu.ladder.rules import Params
from chieu.table.v1 import log_pb2


class LogClimb:
    """The ladder's fold over the table log ``tables`` on ``js``, read forward on demand."""

    def __init__(self, js: Any, params: Params | None = None, tables: names.Stream = names.TABLES) -> None:
        self.js, self.tables = js, tables
        self.climb = Climb(params or Params())
        self.seq = 0
        """The last stream sequence folded (every record up to it is counted)."""
        self.read = 0
        """Records read from the log (a metric for tests and the docs' cost)."""
        self._lock = asyncio.Lock()

    async def upto(self, seq: int) -> Climb:
        """The fold with every record of the log up to ``seq`` counted (a NATS error passes through:
        the reward waits, like any other)."""
        async with self._lock:
            while self.seq < seq:
                try:
                    found = await self.js.get_msg(self.tables.name, seq=self.seq + 1, subject=self.tables.subjects,
                                                  next=True)
                except NotFoundError:  # nothing after it yet: a later record takes a higher sequence
                    break
                if found.seq is None or found.seq > seq:
                    self.seq = seq
                    break
                self.read += 1
                if found.data:
                    with contextlib.suppress(DecodeError):  # not a table record: nothing the ladder counts
                        self.climb.fold(found.seq, log_pb2.Record.FromString(found.data))
                self.seq = found.seq
            return self.climb

    async def reached_at(self, game: str, player: str, best: int, seq: int) -> int | None:
        """The stream sequence of the record where ``player``'s best level of ``game`` reached
        ``best``, folding the log up to ``seq`` (``None``: not by then)."""
        climb = await self.upto(seq)
        return climb.reached.get((game, player, best))
