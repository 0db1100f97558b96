"""The collusion screen that acts: every 金币 flow between players, netted over a window, and
the winnings of a flagged account held in a review escrow until an operator releases or
reverses them.

It runs **in the ledger, on posting** (:func:`screen`, called by :meth:`Books._post` inside the
transaction of every 金币 settlement): the books are where every flow is (a settlement's legs
between seats, a gà pot's feeds and payouts, a capped hand's clearing), and where the money can
be stopped before it is spent. The screen's work is a few statements on rows the settlement has
already locked.

**Flows.** Each 金币 settlement adds its player-to-player flows to ``ledger_flows`` (payer,
receiver, UTC day → 金币). A gà pot is a pass-through: what a player pays into a pot is its share
of the pot (``ledger_flow_pots``), and what the pot pays out is counted as paid by its feeders in
proportion to their shares. A capped hand's legs through ``system/coins/clearing`` are split the
same way (each loser's payment over the winners in proportion to what they got).

**The finding** (``net_dump_target``). Over the last ``window_days`` days, for a receiver ``r``
and each counterparty ``p``: ``net(p → r)`` = what ``p`` paid ``r`` minus what ``r`` paid ``p``
(wash trades, hands won and lost in turn between the farm's own accounts, cancel out). ``p``
counts when ``net(p → r) ≥ min_coins``, it is at least ``share`` of all ``p``'s net losses (to
everyone, each counterparty netted the same way), and at least ``drain`` of all the 金币 ``p``
was ever given (credits from system accounts: welcome, rewards, conversions, adjustments): a
farm's account is emptied into ``r``, a player who lost a hand or two to ``r`` from a larger
purse is not. ``r`` is flagged when at least ``payers`` accounts count, or at least
``welcome_payers`` of them were given nothing but their welcome 金币 (a script's accounts: no
more than one welcome bonus moves into any account). Account age plays no
part: an account aged past any threshold is seen all the same.

**The hold.** For a flagged ``r``, the counted payers' net winnings not held before (by any hold
of ``r``, reviewed or not; nothing more of a payer whose hold of ``r`` an operator released) are
moved from ``player/coins/<r>`` to the escrow account ``review/coins/<r>`` (at most what ``r``
holds after the settlement), a ``review`` posting ``review/<hold>/hold/<n>`` by
``screen:collusion`` whose memo is the finding; what each payer put in is kept
(``ledger_review_payers``). The account is also put under the review freeze (``ledger_holds``,
held by ``screen:collusion``): no paid service and no coin table until reviewed. One open hold
per account: later winnings of the same pattern are added to it.

**The review** (:func:`review`, ``ReviewHold``, ``chieu holds review``): once, by an operator
with a reason: *release* posts ``review/<hold>/release`` (escrow → the player), *reverse* posts
``review/<hold>/reverse`` (escrow → each payer, what it put in). The hold's status changes in the
same transaction, so a second review is refused (``hold_reviewed``). When no hold of the account
awaits review, the screen's freeze is lifted (an operator's own ``HoldCoins`` stays).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import asyncpg

from chieu.kit import db, logs
from chieu.kit.errors import not_found, precondition
from chieu.kit.shares import split
from chieu.ledger import books as b

if TYPE_CHECKING:
    from chieu.ledger.books import Books, Leg

log = logs.get("chieu.ledger.holds")

SCREEN_ACTOR = "screen:collusion"
"""Who the screen's holds and freezes are by."""
REVIEW = "review"
"""The escrow accounts' kind and the screen's postings' kind."""
CODE = "net_dump_target"
RELEASE, REVERSE = "release", "reverse"


@dataclass(frozen=True, slots=True)
class Screen:
    """What the ledger's screen flags (``CHIEU_SCREEN_*``)."""

    payers: int = 3
    """Accounts whose net losses went (nearly) all to one account, for it to be flagged."""
    min_coins: int = 100
    """The least net 金币 a payer must have lost to the account to count."""
    share: float = 0.9
    """The least part of a payer's net losses (to everyone) that went to the account."""
    drain: float = 0.5
    """The least part of the 金币 a payer was ever given (welcome, rewards, conversions,
    adjustments: credits from system accounts) that it lost to the account."""
    window_days: int = 30
    """The flows screened: the last so many UTC days."""
    welcome_payers: int = 2
    """Flagged as soon as so many of the counted payers were given nothing but their welcome 金币
    (a script's fresh accounts: at most one welcome bonus moves into any account); 0: off."""

    async def __call__(self, books: Books, conn: db.Conn, legs: Sequence[Leg]) -> bool:
        """Screen one 金币 settlement (:func:`screen`), as the books call it."""
        return await screen(books, conn, legs, self)


def escrow(player_id: str) -> str:
    """The review escrow of a player's held winnings."""
    return b.account(REVIEW, b.COINS, player_id)


def _is(account: str, kind: str) -> bool:
    k, currency, _ = b.parse_account(account)
    return k == kind and currency == b.COINS


def atomic(legs: Sequence[Leg]) -> list[tuple[str, str, int]]:
    """A 金币 settlement's legs as flows between players and pots (the clearing account of a
    capped hand split away: each payment over the winners in proportion to what they got)."""
    clearing = b.system(b.COINS, "clearing")
    out = [(leg.debit, leg.credit, leg.amount) for leg in legs if clearing not in (leg.debit, leg.credit)]
    pays = [(leg.debit, leg.amount) for leg in legs if leg.credit == clearing]
    gets = [(leg.credit, leg.amount) for leg in legs if leg.debit == clearing]
    total = sum(a for _, a in gets)
    for payer, paid in pays:
        for getter, got in gets:
            part = paid * got // total if total else 0
            if part > 0:
                out.append((payer, getter, part))
    return [(d, c, a) for d, c, a in out if (_is(d, "player") or _is(d, "pot")) and (_is(c, "player") or _is(c, "pot"))]


async def record(conn: db.Conn, legs: Sequence[Leg], window_days: int) -> dict[str, dict[str, int]]:
    """Add a 金币 settlement's flows to ``ledger_flows`` (through its gà pot's shares); for each
    player who received something, its net flows with every counterparty over the window
    (counterparty → 金币 it paid the player, net), this settlement's included. One statement
    without a gà pot: the upsert and the nets read together."""
    flows: dict[tuple[str, str], int] = defaultdict(int)
    feeds: dict[tuple[str, str], int] = defaultdict(int)
    payouts: list[tuple[str, str, int]] = []
    for debit, credit, amount in atomic(legs):
        if _is(credit, "pot"):
            if _is(debit, "player"):
                feeds[(credit, b.parse_account(debit)[2])] += amount
        elif _is(debit, "pot"):
            payouts.append((debit, b.parse_account(credit)[2], amount))
        else:
            flows[(b.parse_account(debit)[2], b.parse_account(credit)[2])] += amount
    if feeds:
        await conn.executemany(
            "INSERT INTO ledger_flow_pots (pot, feeder, coins) VALUES ($1, $2, $3) ON CONFLICT (pot, feeder)"
            " DO UPDATE SET coins = ledger_flow_pots.coins + excluded.coins",
            [(pot, feeder, coins) for (pot, feeder), coins in sorted(feeds.items())])
    for pot, receiver, amount in payouts:  # fed first: a hand may feed the pot it wins
        rows = await conn.fetch("SELECT feeder, coins FROM ledger_flow_pots WHERE pot = $1 AND coins > 0"
                                " ORDER BY feeder FOR UPDATE", pot)
        parts = split(amount, {r["feeder"]: int(r["coins"]) for r in rows})
        if parts:
            await conn.executemany("UPDATE ledger_flow_pots SET coins = coins - $3 WHERE pot = $1 AND feeder = $2",
                                   [(pot, f, c) for f, c in sorted(parts.items())])
        for feeder, coins in parts.items():
            flows[(feeder, receiver)] += coins
    flows = {k: v for k, v in flows.items() if k[0] != k[1] and v > 0}
    if not flows:
        return {}
    keys = sorted(flows)
    receivers = sorted({r for _, r in keys})
    # the nets are read from the snapshot before the upsert (one statement): this settlement's
    # flows are added to them here
    rows = await conn.fetch(
        """WITH up AS (
               INSERT INTO ledger_flows (payer, receiver, day, coins)
               SELECT p, r, current_date, c FROM unnest($1::text[], $2::text[], $3::bigint[]) AS f(p, r, c)
               ON CONFLICT (payer, receiver, day) DO UPDATE SET coins = ledger_flows.coins + excluded.coins)
           SELECT me, cp, sum(c)::bigint AS net FROM (
               SELECT receiver AS me, payer AS cp, coins AS c FROM ledger_flows
               WHERE receiver = ANY($4::text[]) AND day > current_date - $5::int
               UNION ALL
               SELECT payer, receiver, -coins FROM ledger_flows
               WHERE payer = ANY($4::text[]) AND day > current_date - $5::int) x
           GROUP BY me, cp""",
        [p for p, _ in keys], [r for _, r in keys], [flows[k] for k in keys], receivers, window_days)
    nets: dict[str, dict[str, int]] = {r: defaultdict(int) for r in receivers}
    for row in rows:
        nets[row["me"]][row["cp"]] += int(row["net"])
    for (payer, receiver), coins in flows.items():
        nets[receiver][payer] += coins
        if payer in nets:
            nets[payer][receiver] -= coins
    return {r: dict(n) for r, n in nets.items()}


async def finding(conn: db.Conn, receiver: str, nets: Mapping[str, int], s: Screen) -> dict[str, int]:
    """The payers that count against ``receiver`` (payer → net 金币 it lost to it; ``nets``: its
    net flows with each counterparty), or ``{}`` when too few count."""
    net = {cp: n for cp, n in nets.items() if n >= s.min_coins}
    if len(net) < min(s.payers, s.welcome_payers or s.payers):
        return {}
    losses = await conn.fetch(
        """SELECT p, sum(greatest(n, 0))::bigint AS lost FROM (
               SELECT p, q, sum(c) AS n FROM (
                   SELECT payer AS p, receiver AS q, coins AS c FROM ledger_flows
                   WHERE payer = ANY($1::text[]) AND day > current_date - $2::int
                   UNION ALL
                   SELECT receiver, payer, -coins FROM ledger_flows
                   WHERE receiver = ANY($1::text[]) AND day > current_date - $2::int) x
               GROUP BY p, q) y
           GROUP BY p""", sorted(net), s.window_days)
    lost = {r["p"]: int(r["lost"]) for r in losses}
    counted = {p: n for p, n in net.items() if n >= s.share * lost.get(p, 0)}
    if len(counted) < min(s.payers, s.welcome_payers or s.payers):
        return {}
    given: dict[str, tuple[int, bool]] = {b.parse_account(r["credit"])[2]: (int(r["coins"]), bool(r["welcome"]))
                                          for r in await conn.fetch(
        "SELECT credit, sum(amount)::bigint AS coins, bool_and(debit = $3) AS welcome FROM ledger_transfers"
        " WHERE credit = ANY($1::text[]) AND debit LIKE 'system/coins/%' AND debit <> $2 GROUP BY credit",
        [b.player(b.COINS, p) for p in sorted(counted)], b.system(b.COINS, "clearing"), b.system(b.COINS, "welcome"))}
    counted = {p: n for p, n in counted.items() if n >= s.drain * given.get(p, (0, False))[0]}
    welcomed = [p for p in counted if given.get(p, (0, False))[1]]
    if len(counted) >= s.payers or (s.welcome_payers and len(welcomed) >= s.welcome_payers):
        return counted
    return {}


async def screen(books: Books, conn: db.Conn, legs: Sequence[Leg], s: Screen) -> bool:
    """Record a 金币 settlement's flows and hold the winnings of every receiver it makes a
    finding against (inside the settlement's transaction: its accounts are locked); whether it
    held any."""
    held = False
    for receiver, nets in sorted((await record(conn, legs, s.window_days)).items()):
        counted = await finding(conn, receiver, nets, s)
        if counted:
            held = await _hold(books, conn, receiver, counted, s) or held
    return held


async def _hold(books: Books, conn: db.Conn, receiver: str, counted: Mapping[str, int], s: Screen) -> bool:
    before = {r["payer"]: int(r["coins"]) for r in await conn.fetch(
        "SELECT p.payer, sum(p.coins)::bigint AS coins FROM ledger_review_payers p JOIN ledger_review_holds h"
        " ON h.id = p.hold_id WHERE h.player_id = $1 GROUP BY p.payer", receiver)}
    cleared = {r["payer"] for r in await conn.fetch(
        "SELECT DISTINCT p.payer FROM ledger_review_payers p JOIN ledger_review_holds h ON h.id = p.hold_id"
        " WHERE h.player_id = $1 AND h.status = 'released'", receiver)}  # an operator found them honest
    new = {p: n - before.get(p, 0) for p, n in counted.items() if n > before.get(p, 0) and p not in cleared}
    have = await conn.fetchval("SELECT balance FROM ledger_accounts WHERE id = $1", b.player(b.COINS, receiver))
    take: dict[str, int] = {}
    left = int(have or 0)
    for p in sorted(new, key=lambda p: (-new[p], p)):  # the largest first, as far as the balance goes
        if left <= 0:
            break
        take[p] = min(new[p], left)
        left -= take[p]
    if not take:
        return False
    total = sum(take.values())
    detail = (f"{sum(counted.values())} 金币 net from {len(counted)} accounts that lost it at least "
              f"{s.share:.0%} of their net losses and {s.drain:.0%} of the coins they were given, "
              f"over {s.window_days} days")
    hold = await conn.fetchrow(
        "SELECT id, parts FROM ledger_review_holds WHERE player_id = $1 AND status = 'held' FOR UPDATE", receiver)
    if hold is None:
        hold = await conn.fetchrow(
            "INSERT INTO ledger_review_holds (player_id, code, detail) VALUES ($1, $2, $3) RETURNING id, parts",
            receiver, CODE, detail)
    assert hold is not None
    hold_id, part = int(hold["id"]), int(hold["parts"]) + 1
    pid = f"{REVIEW}/{hold_id}/hold/{part}"
    await books.post(b.Posting(pid, REVIEW, (b.Leg(pid, b.player(b.COINS, receiver), escrow(receiver), total,
                                                   "review_hold"),), actor=SCREEN_ACTOR, memo=detail), conn=conn)
    await conn.execute("UPDATE ledger_review_holds SET parts = $2, coins = coins + $3, detail = $4 WHERE id = $1",
                       hold_id, part, total, detail)
    await conn.executemany(
        "INSERT INTO ledger_review_payers (hold_id, payer, coins) VALUES ($1, $2, $3) ON CONFLICT (hold_id, payer)"
        " DO UPDATE SET coins = ledger_review_payers.coins + excluded.coins",
        [(hold_id, p, c) for p, c in sorted(take.items())])
    frozen = await conn.fetchval(
        "INSERT INTO ledger_holds (player_id, reason, held_by) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING"
        " RETURNING player_id", receiver, f"collusion: {CODE} (hold {hold_id})", SCREEN_ACTOR)
    if frozen is not None:
        await conn.execute("INSERT INTO ledger_hold_log (player_id, action, reason, actor) VALUES ($1, 'hold', $2, $3)",
                           receiver, f"collusion: {CODE} (hold {hold_id})", SCREEN_ACTOR)
    log.warning("collusion hold", player_id=receiver, hold_id=hold_id, coins=total, payers=len(take), detail=detail)
    return True


# -- the review --------------------------------------------------------------------------------

_COLUMNS = ("id, player_id, coins, status, code, detail, reviewed_by, review_reason,"
            " (extract(epoch from held_at) * 1000)::bigint AS held_ms,"
            " coalesce((extract(epoch from reviewed_at) * 1000)::bigint, 0) AS reviewed_ms")


async def holds(pool: asyncpg.Pool, player_id: str = "", reviewed: bool = False,
                limit: int = 200) -> list[tuple[asyncpg.Record, dict[str, int]]]:
    """The screen's holds, newest first, each with what each payer put in."""
    rows = await pool.fetch(
        f"SELECT {_COLUMNS} FROM ledger_review_holds WHERE ($1 = '' OR player_id = $1) AND ($2 OR status = 'held')"
        " ORDER BY id DESC LIMIT $3", player_id, reviewed, limit)
    payers = await pool.fetch("SELECT hold_id, payer, coins FROM ledger_review_payers WHERE hold_id = ANY($1::bigint[])"
                              " ORDER BY hold_id, payer", [int(r["id"]) for r in rows])
    by: dict[int, dict[str, int]] = defaultdict(dict)
    for p in payers:
        by[int(p["hold_id"])][p["payer"]] = int(p["coins"])
    return [(r, by[int(r["id"])]) for r in rows]


async def review(books: Books, hold_id: int, action: str, reason: str,
                 actor: str) -> tuple[asyncpg.Record, dict[str, int], str]:
    """Release or reverse one hold, once (``hold_reviewed`` after): the hold, its payers and the
    posting that moved the coins out of the escrow."""
    async with books.pool.acquire() as conn, conn.transaction():
        row = await conn.fetchrow("SELECT id, player_id, coins, status FROM ledger_review_holds WHERE id = $1"
                                  " FOR UPDATE", hold_id)
        if row is None:
            raise not_found("unknown_hold", f"no hold {hold_id}")
        if row["status"] != "held":
            raise precondition("hold_reviewed", f"hold {hold_id} was already {row['status']}")
        player, coins = str(row["player_id"]), int(row["coins"])
        payers = {r["payer"]: int(r["coins"]) for r in await conn.fetch(
            "SELECT payer, coins FROM ledger_review_payers WHERE hold_id = $1 ORDER BY payer", hold_id)}
        pid = f"{REVIEW}/{hold_id}/{action}"
        if action == RELEASE:
            legs: tuple[Leg, ...] = (b.Leg(pid, escrow(player), b.player(b.COINS, player), coins, "review_release"),)
        else:
            legs = tuple(b.Leg(f"{pid}/{p}", escrow(player), b.player(b.COINS, p), c, "review_reverse")
                         for p, c in sorted(payers.items()) if c > 0)
        await books.post(b.Posting(pid, REVIEW, legs, actor=actor, memo=reason), conn=conn)
        status = "released" if action == RELEASE else "reversed"
        await conn.execute("UPDATE ledger_review_holds SET status = $2, reviewed_by = $3, review_reason = $4,"
                           " reviewed_at = now() WHERE id = $1", hold_id, status, actor, reason)
        waiting = await conn.fetchval("SELECT 1 FROM ledger_review_holds WHERE player_id = $1 AND status = 'held'",
                                      player)
        if waiting is None:
            lifted = await conn.fetchval("DELETE FROM ledger_holds WHERE player_id = $1 AND held_by = $2"
                                         " RETURNING player_id", player, SCREEN_ACTOR)
            if lifted is not None:
                await conn.execute("INSERT INTO ledger_hold_log (player_id, action, reason, actor)"
                                   " VALUES ($1, 'release', $2, $3)", player, f"hold {hold_id} {status}: {reason}",
                                   actor)
        after = await conn.fetchrow(f"SELECT {_COLUMNS} FROM ledger_review_holds WHERE id = $1", hold_id)
    assert after is not None
    log.info("collusion hold reviewed", hold_id=hold_id, player_id=player, action=action, coins=coins, actor=actor)
    return after, payers, pid


def as_dict(row: asyncpg.Record, payers: Mapping[str, int]) -> dict[str, Any]:
    """A hold as plain values (the CLI's and the tests' view)."""
    return {**dict(row), "payers": dict(payers)}


MIGRATION = """
-- the collusion screen (chieu.ledger.holds): every 金币 flow between players per UTC day, the
-- gà pots' shares per feeder, and the holds of flagged winnings in their review escrow
ALTER TABLE ledger_accounts DROP CONSTRAINT ledger_accounts_kind_check;
ALTER TABLE ledger_accounts ADD CONSTRAINT ledger_accounts_kind_check
    CHECK (kind IN ('player', 'pot', 'house', 'system', 'review'));
ALTER TABLE ledger_accounts DROP CONSTRAINT wallet_not_negative;
ALTER TABLE ledger_accounts ADD CONSTRAINT wallet_not_negative CHECK (
    balance >= 0 OR kind NOT IN ('player', 'pot', 'review') OR currency NOT IN ('coins', 'hearts'));
CREATE TABLE ledger_flows (
    payer      text        NOT NULL,
    receiver   text        NOT NULL,
    day        date        NOT NULL,
    coins      bigint      NOT NULL CHECK (coins >= 0),
    PRIMARY KEY (payer, receiver, day)
);
CREATE INDEX ledger_flows_receiver ON ledger_flows (receiver, day);
CREATE TABLE ledger_flow_pots (
    pot        text        NOT NULL,
    feeder     text        NOT NULL,
    coins      bigint      NOT NULL CHECK (coins >= 0),
    PRIMARY KEY (pot, feeder)
);
CREATE TABLE ledger_review_holds (
    id            bigserial   PRIMARY KEY,
    player_id     text        NOT NULL,
    coins         bigint      NOT NULL DEFAULT 0 CHECK (coins >= 0),
    parts         integer     NOT NULL DEFAULT 0,
    status        text        NOT NULL DEFAULT 'held' CHECK (status IN ('held', 'released', 'reversed')),
    code          text        NOT NULL,
    detail        text        NOT NULL,
    held_at       timestamptz NOT NULL DEFAULT now(),
    reviewed_by   text        NOT NULL DEFAULT '',
    review_reason text        NOT NULL DEFAULT '',
    reviewed_at   timestamptz
);
CREATE UNIQUE INDEX ledger_review_holds_open ON ledger_review_holds (player_id) WHERE status = 'held';
CREATE TABLE ledger_review_payers (
    hold_id    bigint      NOT NULL REFERENCES ledger_review_holds (id),
    payer      text        NOT NULL,
    coins      bigint      NOT NULL CHECK (coins > 0),
    PRIMARY KEY (hold_id, payer)
);
"""
"""The schema of the screen and its holds (appended to the ledger's migrations)."""
