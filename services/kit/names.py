"""The JetStream names every service agrees on, written once: streams, their subjects, the
key-value buckets beside them and the durable consumers that read them.

A service imports the names it needs from here and nowhere else; the table log's name is a
contract between the table service (its only writer) and its readers (ledger, ladder, lobby).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Stream:
    """A JetStream stream of one aggregate kind: one subject per aggregate, ``<prefix>.<key>``."""

    name: str
    prefix: str

    @property
    def subjects(self) -> str:
        """The wildcard of every aggregate's subject (the stream's subjects, a consumer's filter)."""
        return f"{self.prefix}.>"

    def subject(self, key: str) -> str:
        """The subject of one aggregate's log."""
        return f"{self.prefix}.{key}"

    @property
    def snapshots(self) -> str:
        """The KV bucket of snapshots of this stream's aggregates (written by the stream's owner)."""
        return f"{self.name}_snapshots"

    @property
    def active(self) -> str:
        """The KV bucket of aggregates with work on a clock (written by the stream's owner)."""
        return f"{self.name}_active"


TABLES = Stream("CHIEU_TABLES", "chieu.table")
"""The table log: one subject per table, written by the table service only."""

UNPLAYED = f"{TABLES.name}_unplayed"
"""The KV bucket of the tables each player created and never played (one key per player, written
with compare-and-set by every table process: :mod:`chieu.table.quotas`); the table service's only."""

LEDGER = Stream("CHIEU_LEDGER", "chieu.ledger")
"""The ledger's outbox: announcements of posted paid services (e.g. 信誉度复位)."""

LEDGER_DURABLE = "ledger"
"""The ledger's durable consumer of the table log."""

LADDER = Stream("CHIEU_LADDER", "chieu.ladder")
"""The ladder's outbox: ``best_level_up`` announcements (for the lobby) and ``reward`` records
(the 金币 rewards the ladder recorded, which the ledger pays once each)."""

LADDER_REWARDS = LADDER.subject("reward")
"""The ladder's reward records: the only way a ladder reward reaches the ledger."""

LADDER_DURABLE = "ladder"
"""The ladder's durable consumer of the table log."""

LADDER_RESETS_DURABLE = "ladder-reputation-resets"
"""The ladder's durable consumer of the ledger's outbox (信誉度复位 announcements)."""

LEDGER_REWARDS_DURABLE = "ledger-rewards"
"""The ledger's durable consumer of the ladder's reward records."""

LOBBY_DURABLE = "lobby"
"""The lobby's durable consumer of the table log (the live table list)."""

PRESENCE = "chieu.presence"
"""Core NATS (not a stream): each table-service process announces its tables' spectators on
``chieu.presence.<instance>`` (published by the table service only, read by the lobby)."""
