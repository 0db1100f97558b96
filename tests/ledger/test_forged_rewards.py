"""No service credential alone creates money (issue 32, attack 4): with every service's NATS user
(table, ledger, ladder, lobby, audit), forged reward records are published on
``chieu.ladder.reward`` — the attack's JSON (9,000 金币 to a named player), a best level no hand
proves, one naming a hand the player lost, a hand at another level, the right hand with other
coins, a month's place — to the real ledger: nothing is paid. Only the ladder's user may publish
there at all (NATS refuses the others); what the ladder's user publishes is refused by the
ledger's proof from the table log (``reward_unproven``, ``reward_operator_only``) — the residual
forgery too: the next level's reward named at a real win at the player's level before the level
points are there (one level ahead), which the ledger now refuses by folding the ladder's rules
over the table log itself. Control: the record the ladder itself would write for a real climb
(six wins at level 1, the sixth raising the best to 2) is paid."""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

import pytest

from chieu.games.v1 import games_pb2
from chieu.kit import names
from chieu.ledger import books as b
from chieu.ledger.books import Books
from chieu.table.v1 import log_pb2
from tests.conftest import NATS_AUTH, nats_connect
from tests.ledger.conftest import until

pytestmark = pytest.mark.integration

USERS = ("table", "ledger", "ladder", "lobby", "audit")


def uid(prefix: str) -> str:
    return f"{prefix}{uuid.uuid4().hex[:10]}"


async def hand(nats_url: str, winner: str, loser: str, level: int) -> dict[str, Any]:
    """A ladder hand ``winner`` won, appended to the table log as the table service writes it."""
    nc = await nats_connect(nats_url, "table")
    try:
        table = uid("ft-")
        rec = log_pb2.Record(table_id=table, version=9, actor="system", game="xiangqi")
        rec.events.add().hand_ended.CopyFrom(log_pb2.HandEnded(
            hand_no=1, players=[winner, loser], ladder_level=level,
            outcome=games_pb2.Outcome(winner=0, ranking=[0, 1], scores=[2, -2], reason="checkmate")))
        ack = await nc.jetstream().publish(names.TABLES.subject(table), rec.SerializeToString())
        return {"table_id": table, "hand_no": 1, "stream_seq": int(ack.seq)}
    finally:
        await nc.close()


def record(rid: str, player: str, coins: int, kind: str = "best", source: dict[str, Any] | None = None) -> bytes:
    body: dict[str, Any] = {"reward_id": rid, "player_id": player, "coins": coins, "reason": "forged",
                            "game": "xiangqi", "kind": kind}
    if source is not None:
        body["source"] = source
    return json.dumps(body).encode()


async def test_forged_rewards_with_every_service_credential_pay_nothing(
        nats_url: str, table_server: str, ladder_server: str, ledger_server: str, books: Books) -> None:
    """(The table service makes the table log's stream, the ladder its outbox stream.)"""
    victim, rival, honest, climber = uid("fv-"), uid("fr-"), uid("fh-"), uid("fc-")
    won1 = await hand(nats_url, victim, rival, 1)  # the victim won at level 1: a best of 2 is 20 金币
    lost = await hand(nats_url, rival, victim, 1)  # the victim lost this one
    # the honest player climbs: lp > 5 (CHIEU_LADDER_UP) after six wins at level 1, the sixth reaches level 2
    honest_wins = [await hand(nats_url, honest, rival, 1) for _ in range(6)]
    # the climber reached level 2 the same way, then won once at level 2 (lp 1 of the 6 level 3 needs)
    climbed = [await hand(nats_url, climber, rival, 1) for _ in range(6)]
    won2 = await hand(nats_url, climber, rival, 2)
    forged = [
        record(f"ladder/forged-{uid('')}", victim, 9000, kind="monthly"),  # the attack's JSON: no source
        record(f"ladder/best/xiangqi/{victim}/2", victim, 20),  # a best level, no source
        record(f"ladder/best/xiangqi/{victim}/3", victim, 30, source=lost),  # a hand the victim lost
        record(f"ladder/best/xiangqi/{victim}/5", victim, 50, source=won1),  # a level-1 win is no best of 5
        record(f"ladder/best/xiangqi/{victim}/2", victim, 9000, source=won1),  # the right hand, other coins
        record(f"ladder/monthly/xiangqi/2024-01/{victim}", victim, 500, kind="monthly"),  # an operator's only
        record(f"ladder/best/xiangqi/{rival}/2", victim, 20, source=won1),  # another player's id
        record(f"ladder/best/xiangqi/{victim}/2", victim, 20,
               source={"table_id": won1["table_id"], "hand_no": 1, "stream_seq": lost["stream_seq"]}),
        record(f"ladder/best/xiangqi/{victim}/2", victim, 20, source=won1 | {"stream_seq": 2**62}),  # no record
        record(f"ladder/best/xiangqi/{victim}/2", victim, 20, source=won1 | {"stream_seq": 10**30}),  # no number
        # one level ahead: a real win at the player's level, before the level points are there
        record(f"ladder/best/xiangqi/{victim}/2", victim, 20, source=won1),
        record(f"ladder/best/xiangqi/{climber}/3", climber, 30, source=won2),
        # the climb's real level named at a win before the one that reached it
        record(f"ladder/best/xiangqi/{climber}/2", climber, 20, source=climbed[3]),
    ]
    published: dict[str, int] = {}
    for user in USERS:
        nc = await nats_connect(nats_url, user)
        try:
            for body in forged:
                try:
                    # another user's publish is dropped by the server (no ack): its wait is short
                    ack = await nc.jetstream().publish(names.LADDER_REWARDS, body,
                                                       timeout=2 if user == "ladder" or not NATS_AUTH else 0.5)
                    published[user] = published.get(user, 0) + 1
                    assert ack.seq
                except Exception:  # refused by NATS (not the ladder's user): nothing reached the ledger
                    assert user != "ladder"
        finally:
            await nc.close()
    if NATS_AUTH:
        assert set(published) == {"ladder"}, published
    # the control: what the ladder writes for the honest player's real win is paid
    nc = await nats_connect(nats_url, "ladder")
    try:
        await nc.jetstream().publish(names.LADDER_REWARDS, record(f"ladder/best/xiangqi/{honest}/2", honest, 20,
                                                                  source=honest_wins[-1]))
    finally:
        await nc.close()

    async def honest_paid() -> bool:
        return (await books.balance(b.player(b.COINS, honest)) or 0) == 20

    await until(honest_paid)
    await asyncio.sleep(1.0)  # the forged records came before it on the same durable: all handled by now
    assert (await books.balance(b.player(b.COINS, victim)) or 0) == 0
    assert (await books.balance(b.player(b.COINS, rival)) or 0) == 0
    assert (await books.balance(b.player(b.COINS, climber)) or 0) == 0
    refusals = [r["outcome"] for r in await books.pool.fetch(
        "SELECT outcome FROM ledger_inbox WHERE posting_id LIKE $1 OR posting_id LIKE $2 OR posting_id LIKE $3",
        f"reward/ladder/%{victim}%", "reward/ladder/forged-%", f"reward/ladder/%{climber}%")]
    assert refusals and all(o.startswith("refused:reward_") for o in refusals), refusals
    ahead = {(r["posting_id"], r["outcome"]) for r in await books.pool.fetch(  # refused by the fold of the ladder
        "SELECT posting_id, outcome FROM ledger_inbox WHERE posting_id = ANY($1::text[])",
        [f"reward/ladder/best/xiangqi/{climber}/3", f"reward/ladder/best/xiangqi/{climber}/2"])}
    assert ahead == {(f"reward/ladder/best/xiangqi/{climber}/{n}", "refused:reward_unproven") for n in (2, 3)}, ahead
