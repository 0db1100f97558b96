"""Moving a service's durables back after its database was restored (``chieu rewind``).

A database restored to an earlier point has not seen what its durable consumers acknowledged
since, and JetStream does not deliver an acknowledged message again. Rewinding deletes each
durable the service owns and creates it again, with its settings, starting at the first stream
sequence the restored database may lack; the service's inbox then skips what it has already
applied, so starting early is always safe and starting late never happens:

- a durable whose service applies the stream in **stream order** (the ladder's table consumer,
  the lobby's one projector) starts right after the last sequence in its inbox: everything it
  counts before that was applied first;
- one applied in **table order** only (the ledger: two processes post different tables side by
  side) or in no order (the ladder's 信誉度复位 consumer) starts at the stream's first message.

Run it with the service stopped (its durables have pull requests waiting while it runs: refused
unless forced), as the service's own NATS user (which may delete its own durables and no other)
and with the service's own database.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import asyncpg
from nats.js import api
from nats.js.client import JetStreamContext
from nats.js.errors import NotFoundError

from chieu.kit import names, natsauth

IN_STREAM_ORDER = frozenset({(names.TABLES.name, names.LADDER_DURABLE), (names.TABLES.name, names.LOBBY_DURABLE)})
"""The durables whose service applies every message it counts in stream order."""
OWNERS = ("ledger", "ladder", "lobby")


class StillRunning(Exception):
    """The service still fetches from a durable: stop it first."""


@dataclass(frozen=True, slots=True)
class Step:
    """One durable moved back: where it was and where it starts again."""

    stream: str
    durable: str
    start_seq: int
    why: str
    ack_floor: int = 0
    """The old durable's ack floor (what it had acknowledged)."""
    stream_last: int = 0


def durables(service: str) -> list[tuple[str, str]]:
    """The (stream, durable) pairs ``service`` owns."""
    if service not in OWNERS:
        raise ValueError(f"{service!r} owns no durable; one of {', '.join(OWNERS)}")
    return [key for key, owner in natsauth.DURABLES.items() if owner == service]


async def plan(conn: asyncpg.Connection, service: str, from_seq: int | None = None) -> list[Step]:
    """Where each of the service's durables starts again, read from its (restored) inbox."""
    steps = []
    for stream, durable in durables(service):
        if from_seq is not None:
            steps.append(Step(stream, durable, max(1, from_seq), "as asked (--from-seq)"))
        elif (stream, durable) in IN_STREAM_ORDER:
            last = await conn.fetchval(f"SELECT max(seq) FROM {service}_inbox WHERE stream = $1", stream)
            steps.append(Step(stream, durable, int(last or 0) + 1,
                              f"after the inbox's last sequence ({int(last or 0)}): applied in stream order"))
        else:
            steps.append(Step(stream, durable, 1, "the stream's start: not applied in stream order, so the inbox "
                                                  "skips what it has"))
    return steps


async def _busy(js: JetStreamContext, stream: str, durable: str, looks: int, every_s: float) -> bool:
    """Whether pull requests wait at every look: a running service always has one; a stopped one's
    last request expires with its fetch (a second at most)."""
    for i in range(looks):
        info = await js.consumer_info(stream, durable)
        if not info.num_waiting:
            return False
        if i + 1 < looks:
            await asyncio.sleep(every_s)
    return True


async def apply(js: JetStreamContext, steps: list[Step], *, force: bool = False, looks: int = 3,
                every_s: float = 1.0) -> list[Step]:
    """Recreate each durable at its start sequence, with its old settings (filter, ack wait, how
    many unacknowledged); the steps as done, with the old ack floor. A durable that does not exist
    is left alone: its service creates it at the stream's start when it starts."""
    done = []
    for s in steps:
        try:
            info = await js.consumer_info(s.stream, s.durable)
        except NotFoundError:
            done.append(Step(s.stream, s.durable, 1, "no such durable yet: its service starts it at the start"))
            continue
        if not force and await _busy(js, s.stream, s.durable, looks, every_s):
            raise StillRunning(f"{s.durable} on {s.stream} has pull requests waiting: stop the service first")
        old = info.config
        floor = int(info.ack_floor.stream_seq or 0) if info.ack_floor else 0
        last = int((await js.stream_info(s.stream)).state.last_seq or 0)
        fresh = api.ConsumerConfig(
            durable_name=s.durable, ack_policy=api.AckPolicy.EXPLICIT,
            deliver_policy=api.DeliverPolicy.BY_START_SEQUENCE, opt_start_seq=s.start_seq, ack_wait=old.ack_wait,
            max_ack_pending=old.max_ack_pending, filter_subject=old.filter_subject)
        await js.delete_consumer(s.stream, s.durable)
        await js.add_consumer(s.stream, config=fresh)
        done.append(Step(s.stream, s.durable, s.start_seq, s.why, floor, last))
    return done
