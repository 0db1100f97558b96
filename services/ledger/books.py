"""The books: accounts, postings and the 金币 cap, on PostgreSQL through asyncpg.

A posting is a set of transfers (debit → credit, one currency each, amount > 0), so every
currency sums to zero by construction; it is applied all or nothing in one transaction. Its id
is derived from its source (``<table_id>/<hand_no>/<first_leg>`` for a settlement,
``welcome/<player>``, ``purchase/<payment_id>``, ...) and stored with a digest of its content:
the same id with the same content returns the first result, with other content it is refused
(``id_reused``), never paid twice. Accounts are locked in a fixed order (by id), so concurrent
postings on the same accounts never deadlock. 金币 and 红心币 of players and gà pots never go
below 0: a settlement in 金币 is capped as coins.md §6.5 says (:func:`cap`), anything else that
would overdraw is refused (``insufficient_coins`` / ``insufficient_hearts``). A player's 金币
held for an operator's review (``ledger_holds``) leave only by a settlement or an adjustment.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import asyncpg

from chieu.kit import db
from chieu.kit.errors import ServiceError, invalid, not_found, precondition

COINS = "coins"
"""金币 gold coins."""
HEARTS = "hearts"
"""红心币: the purchased currency."""
WALLETS = (COINS, HEARTS)
"""Currencies a player (or a gà pot) can never owe."""
PAST_A_HOLD = ("settlement", "adjust", "review")
"""The only postings that take 金币 from a held player (``ledger_holds``): a hand already played,
an operator's adjustment (the review's outcome) and the collusion screen's move of flagged
winnings into their review escrow (:mod:`chieu.ledger.holds`); anything else is refused
(``coins_held``)."""


def points(game: str) -> str:
    """The score-point currency of one game."""
    return f"points:{game}"


def account(kind: str, currency: str, owner: str) -> str:
    """An account id: ``<kind>/<currency>/<owner>`` (the owner last: it may hold any character)."""
    return f"{kind}/{currency}/{owner}"


def player(currency: str, player_id: str) -> str:
    return account("player", currency, player_id)


def pot(currency: str, table_id: str) -> str:
    """The gà pot of a table."""
    return account("pot", currency, table_id)


def system(currency: str, purpose: str) -> str:
    """A system account (the source of welcome 金币, rewards, purchases, conversions, adjustments)."""
    return account("system", currency, purpose)


def house(currency: str, purpose: str) -> str:
    """A house account (the revenue of paid services)."""
    return account("house", currency, purpose)


def parse_account(account_id: str) -> tuple[str, str, str]:
    kind, currency, owner = account_id.split("/", 2)
    return kind, currency, owner


def valid_currency(currency: str) -> bool:
    return currency in WALLETS or (currency.startswith("points:") and len(currency) > len("points:"))


def guarded(account_id: str) -> bool:
    """Whether the account may never go below 0."""
    kind, currency, _ = parse_account(account_id)
    return kind in ("player", "pot", "review") and currency in WALLETS


@dataclass(frozen=True, slots=True)
class Leg:
    """One transfer of a posting: ``amount`` of ``currency`` from ``debit`` to ``credit``."""

    id: str
    debit: str
    credit: str
    amount: int
    reason: str
    owed: int | None = None
    """What the rules said was owed, when a 金币 cap paid less (``None``: ``amount``)."""

    @property
    def currency(self) -> str:
        return parse_account(self.debit)[1]


@dataclass(frozen=True, slots=True)
class Posting:
    """A set of legs applied all or nothing, under an id derived from its source.

    ``cap``: a 金币 settlement — what a loser cannot pay is capped and shared (coins.md §6.5)
    instead of refused. ``must_exist``: accounts that must already be open (the others are opened
    on first use). ``outbox``: (topic, payload) announcements written in the same transaction.
    """

    id: str
    kind: str
    legs: tuple[Leg, ...]
    table_id: str | None = None
    hand_no: int | None = None
    actor: str = ""
    memo: str = ""
    cap: bool = False
    must_exist: tuple[str, ...] = ()
    outbox: tuple[tuple[str, Mapping[str, Any]], ...] = ()
    seats: tuple[str, ...] = field(default=())
    """Account per seat, for the cap's tie-break (lower seat first); empty: by account id."""
    fingerprint: str = ""
    """When set, the content compared on a repeated id (the request, when the legs depend on
    balances or settings at the time of the first request)."""

    def digest(self) -> bytes:
        """A hash of the content, for the same-id-other-content check."""
        if self.fingerprint:
            return hashlib.sha256(f"{self.kind}|{self.fingerprint}".encode()).digest()
        body = json.dumps(
            [self.kind, [[leg.id, leg.debit, leg.credit, leg.amount, leg.reason] for leg in self.legs],
             self.table_id, self.hand_no, self.memo, self.cap, [[t, dict(p)] for t, p in self.outbox]],
            sort_keys=True, separators=(",", ":"), ensure_ascii=False,
        )
        return hashlib.sha256(body.encode()).digest()


@dataclass(frozen=True, slots=True)
class Result:
    """A posting's effect: the balances of every account it touched, after it."""

    posting_id: str
    balances: Mapping[str, int]
    replayed: bool = False


def validate(p: Posting) -> None:
    """Refuse a malformed posting before touching the database."""
    if not p.id or not p.legs:
        raise invalid("bad_posting", "a posting needs an id and at least one transfer")
    ids = set()
    for leg in p.legs:
        if leg.amount <= 0:
            raise invalid("bad_amount", f"transfer {leg.id}: amount must be positive, not {leg.amount}")
        for a in (leg.debit, leg.credit):
            if a.count("/") < 2 or not valid_currency(parse_account(a)[1]):
                raise invalid("unknown_account", f"{a!r} is not an account id")
        if parse_account(leg.debit)[1] != parse_account(leg.credit)[1]:
            raise invalid("currency_mismatch", f"transfer {leg.id}: {leg.debit} and {leg.credit} differ in currency")
        if leg.debit == leg.credit:
            raise invalid("bad_posting", f"transfer {leg.id} pays an account to itself")
        if leg.id in ids:
            raise invalid("bad_posting", f"transfer id {leg.id} twice in one posting")
        ids.add(leg.id)


def cap(legs: Sequence[Leg], balances: Mapping[str, int], seats: Sequence[str] = ()) -> list[Leg]:
    """coins.md §6.5 for a 金币 settlement that some loser cannot pay in full.

    Nets every party over the legs; each loser pays ``min(owed, balance)``; the collected coins
    are split among the winners in proportion to what they are owed, rounded down, and leftover
    coins go one at a time to the winners owed most (ties: lower seat). When nobody is short the
    legs are returned unchanged (each transfer keeps its own id). Otherwise the result routes
    through the hand's clearing: ``<first id>/pay/<account>`` from each loser and
    ``<first id>/get/<account>`` to each winner, via the system account ``system/coins/clearing``
    (which nets to 0 within the posting).
    """
    net: dict[str, int] = {}
    for leg in legs:
        net[leg.debit] = net.get(leg.debit, 0) - leg.amount
        net[leg.credit] = net.get(leg.credit, 0) + leg.amount
    short = [a for a, n in net.items() if n < 0 and guarded(a) and balances.get(a, 0) < -n]
    if not short:
        return list(legs)
    for a in short:
        if parse_account(a)[0] == "pot":
            # a gà pot pays only what it holds: an earlier settlement feeding it is still on its way
            raise precondition("pot_short", f"the gà pot {a} holds {balances.get(a, 0)}, owes {-net[a]}")
    order = {a: i for i, a in enumerate(seats)}

    def rank(a: str) -> tuple[int, str]:
        return (order.get(a, len(order)), a)

    losers = sorted((a for a, n in net.items() if n < 0), key=rank)
    winners = sorted((a for a, n in net.items() if n > 0), key=rank)
    paid = {a: min(-net[a], balances.get(a, 0)) if guarded(a) else -net[a] for a in losers}
    collected = sum(paid.values())
    owed_total = sum(net[w] for w in winners)
    share = {w: collected * net[w] // owed_total for w in winners}
    left = collected - sum(share.values())
    for w in sorted(winners, key=lambda w: (-net[w], rank(w))):
        if left == 0:
            break
        share[w] += 1
        left -= 1
    base = legs[0].id
    currency = legs[0].currency
    clearing = system(currency, "clearing")
    reason = "capped"
    out = [Leg(f"{base}/pay/{a}", a, clearing, paid[a], reason, -net[a]) for a in losers if paid[a] > 0]
    out += [Leg(f"{base}/get/{w}", clearing, w, share[w], reason, net[w]) for w in winners if share[w] > 0]
    return out


class Screening(Protocol):
    """The collusion screen run inside every 金币 settlement's transaction (:class:`chieu.ledger.holds.Screen`):
    whether it moved flagged winnings out."""

    async def __call__(self, books: Books, conn: db.Conn, legs: Sequence[Leg]) -> bool: ...


class Books:
    """The ledger's books on one asyncpg pool (``screen``: the collusion screen run on every 金币
    settlement posted, :mod:`chieu.ledger.holds`; ``None``: off)."""

    def __init__(self, pool: asyncpg.Pool, screen: Screening | None = None,
                 clock: Callable[[], dt.datetime] | None = None) -> None:
        self.pool = pool
        self.holds_back: Callable[[db.Conn, list[str]], Awaitable[dict[str, int]]] | None = None
        """The 金币 of players reserved for coin hands in play (:mod:`chieu.ledger.reservations`):
        a posting that is not a settlement may not take them."""
        self.screen = screen
        self.clock = clock or (lambda: dt.datetime.now(dt.UTC))
        """The time a settlement counts in (its boards' week and month); a test may set it."""

    async def post(self, p: Posting, *, conn: db.Conn | None = None) -> Result:
        """Apply ``p`` exactly once (in ``conn``'s open transaction when given)."""
        validate(p)
        if conn is not None:
            return await self._post(conn, p)
        for attempt in range(3):
            async with self.pool.acquire() as c:
                try:
                    async with c.transaction():
                        return await self._post(c, p)
                except asyncpg.UniqueViolationError:
                    if attempt == 2:
                        raise
                    # a concurrent identical posting won the race: the retry finds its result
        raise AssertionError("unreachable")

    async def _post(self, conn: db.Conn, p: Posting) -> Result:
        digest = p.digest()
        accounts = sorted({a for leg in p.legs for a in (leg.debit, leg.credit)})
        existing = await conn.fetchrow("SELECT digest FROM ledger_postings WHERE id = $1", p.id)
        if existing is not None:
            return await self._replay(conn, p, bytes(existing["digest"]) == digest)
        if p.kind not in PAST_A_HOLD:  # before any lock: a hold is an operator's, not a race to win
            await self._not_held(conn, p.legs)
        if p.must_exist:
            found = await conn.fetch("SELECT id FROM ledger_accounts WHERE id = ANY($1::text[])", list(p.must_exist))
            missing = set(p.must_exist) - {r["id"] for r in found}
            if missing:
                raise not_found("unknown_account", f"no account {sorted(missing)[0]}")
        if p.cap:
            # the clearing account exists from the start, so it can be locked in its place
            accounts = sorted({*accounts, system(p.legs[0].currency, "clearing")})
        await conn.execute(
            """INSERT INTO ledger_accounts (id, kind, currency, owner)
               SELECT a, split_part(a, '/', 1), split_part(a, '/', 2), substr(a, length(split_part(a, '/', 1))
                      + length(split_part(a, '/', 2)) + 3)
               FROM unnest($1::text[]) AS a ORDER BY a ON CONFLICT (id) DO NOTHING""",
            accounts,
        )
        rows = await conn.fetch(
            "SELECT id, balance FROM ledger_accounts WHERE id = ANY($1::text[]) ORDER BY id FOR UPDATE", accounts)
        balances = {r["id"]: int(r["balance"]) for r in rows}
        legs = cap(p.legs, balances, p.seats) if p.cap else list(p.legs)
        delta: dict[str, int] = {}
        for leg in legs:
            delta[leg.debit] = delta.get(leg.debit, 0) - leg.amount
            delta[leg.credit] = delta.get(leg.credit, 0) + leg.amount
        after = {a: balances.get(a, 0) + delta.get(a, 0) for a in accounts}
        if p.kind != "settlement" and self.holds_back is not None:
            await self._not_reserved(conn, accounts, balances, delta, after)
        for a in accounts:
            if after[a] < 0 and guarded(a):
                currency = parse_account(a)[1]
                raise precondition(f"insufficient_{currency}",
                                   f"{a} has {balances[a]}, needs {-delta[a]}")
        await conn.execute(
            "INSERT INTO ledger_postings (id, digest, kind, table_id, hand_no, actor, memo)"
            " VALUES ($1, $2, $3, $4, $5, $6, $7)",
            p.id, digest, p.kind, p.table_id, p.hand_no, p.actor, p.memo)
        await conn.execute(
            """INSERT INTO ledger_transfers (id, posting_id, debit, credit, currency, amount, owed, reason,
                                             table_id, hand_no)
               SELECT t.id, $1, t.debit, t.credit, split_part(t.debit, '/', 2), t.amount, t.owed, t.reason, $2, $3
               FROM unnest($4::text[], $5::text[], $6::text[], $7::bigint[], $8::bigint[], $9::text[])
                    AS t(id, debit, credit, amount, owed, reason)""",
            p.id, p.table_id, p.hand_no, [leg.id for leg in legs], [leg.debit for leg in legs],
            [leg.credit for leg in legs], [leg.amount for leg in legs],
            [leg.amount if leg.owed is None else leg.owed for leg in legs], [leg.reason for leg in legs])
        changed = [a for a in accounts if delta.get(a, 0) != 0]
        await conn.execute(
            """UPDATE ledger_accounts AS a SET balance = a.balance + d.delta
               FROM unnest($1::text[], $2::bigint[]) AS d(id, delta) WHERE a.id = d.id""",
            changed, [delta[a] for a in changed])
        if p.outbox:
            await conn.executemany(
                "INSERT INTO ledger_outbox (posting_id, topic, payload) VALUES ($1, $2, $3::jsonb)",
                [(p.id, topic, json.dumps(dict(payload), ensure_ascii=False)) for topic, payload in p.outbox])
        if (self.screen is not None and p.kind == "settlement" and legs and legs[0].currency == COINS
                and await self.screen(self, conn, legs)):  # flagged winnings moved out
                after = {**after, **await self.lock(conn, accounts)}
        if p.kind == "settlement" and p.memo:
            await _raise_boards(conn, p.memo, legs, periods(self.clock()))
        return Result(p.id, {a: after[a] for a in accounts})

    async def _not_reserved(self, conn: db.Conn, accounts: Sequence[str], balances: Mapping[str, int],
                            delta: Mapping[str, int], after: Mapping[str, int]) -> None:
        """Refuse (``insufficient_coins``) taking a player's 金币 reserved for a hand in play."""
        payers = {parse_account(a)[2]: a for a in accounts
                  if delta.get(a, 0) < 0 and parse_account(a)[:2] == ("player", COINS)}
        if not payers or self.holds_back is None:
            return
        held = await self.holds_back(conn, sorted(payers))
        for who, a in payers.items():
            if held.get(who, 0) and after[a] < held[who]:
                raise precondition("insufficient_coins", f"{a} has {balances.get(a, 0)}, {held[who]} of them "
                                   f"reserved for hands in play; needs {-delta[a]}")

    async def _not_held(self, conn: db.Conn, legs: Sequence[Leg]) -> None:
        """Refuse (``coins_held``) a posting that takes 金币 from a player held for review."""
        payers = sorted({parse_account(leg.debit)[2] for leg in legs
                         if parse_account(leg.debit)[:2] == ("player", COINS)})
        if payers:
            held = await conn.fetchval("SELECT player_id FROM ledger_holds WHERE player_id = ANY($1::text[])"
                                       " LIMIT 1", payers)
            if held is not None:
                raise precondition("coins_held", f"the 金币 of {held} are held for an operator's review")

    async def held(self, player_id: str) -> asyncpg.Record | None:
        """The hold on ``player_id``'s 金币 (reason, held_by, held_at), or ``None``."""
        return await self.pool.fetchrow("SELECT reason, held_by, held_at FROM ledger_holds WHERE player_id = $1",
                                        player_id)

    async def hold(self, player_id: str, reason: str, actor: str) -> asyncpg.Record:
        """Hold ``player_id``'s 金币 for review (idempotent: a second hold keeps the first's record)."""
        async with self.pool.acquire() as conn, conn.transaction():
            fresh = await conn.fetchval(
                "INSERT INTO ledger_holds (player_id, reason, held_by) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING"
                " RETURNING player_id", player_id, reason, actor)
            if fresh is not None:
                await conn.execute("INSERT INTO ledger_hold_log (player_id, action, reason, actor)"
                                   " VALUES ($1, 'hold', $2, $3)", player_id, reason, actor)
            row = await conn.fetchrow("SELECT reason, held_by, held_at FROM ledger_holds WHERE player_id = $1",
                                      player_id)
        assert row is not None
        return row

    async def release(self, player_id: str, reason: str, actor: str) -> bool:
        """Release the hold on ``player_id``'s 金币; whether there was one."""
        async with self.pool.acquire() as conn, conn.transaction():
            gone = await conn.fetchval("DELETE FROM ledger_holds WHERE player_id = $1 RETURNING player_id", player_id)
            if gone is not None:
                await conn.execute("INSERT INTO ledger_hold_log (player_id, action, reason, actor)"
                                   " VALUES ($1, 'release', $2, $3)", player_id, reason, actor)
        return gone is not None

    async def _replay(self, conn: db.Conn, p: Posting, same: bool) -> Result:
        if not same:
            raise precondition("id_reused", f"posting {p.id} was already made with other content")
        accounts = sorted({a for leg in p.legs for a in (leg.debit, leg.credit)})
        rows = await conn.fetch("SELECT id, balance FROM ledger_accounts WHERE id = ANY($1::text[])", accounts)
        return Result(p.id, {r["id"]: int(r["balance"]) for r in rows}, replayed=True)

    async def lock(self, conn: db.Conn, accounts: Iterable[str]) -> dict[str, int]:
        """Lock existing accounts in the fixed order (by id) inside ``conn``'s transaction; their balances."""
        rows = await conn.fetch("SELECT id, balance FROM ledger_accounts WHERE id = ANY($1::text[]) ORDER BY id"
                                " FOR UPDATE", sorted(set(accounts)))
        return {r["id"]: int(r["balance"]) for r in rows}

    async def replayed(self, conn: db.Conn, p: Posting) -> Result | None:
        """The first result when ``p``'s id was posted before (``id_reused`` if with other content)."""
        existing = await conn.fetchrow("SELECT digest FROM ledger_postings WHERE id = $1", p.id)
        if existing is None:
            return None
        return await self._replay(conn, p, bytes(existing["digest"]) == p.digest())

    # -- reads ----------------------------------------------------------------------------

    async def balance(self, account_id: str) -> int | None:
        value = await self.pool.fetchval("SELECT balance FROM ledger_accounts WHERE id = $1", account_id)
        return None if value is None else int(value)

    async def balances(self, owner: str, kind: str = "player") -> dict[str, int]:
        """Every balance of one owner, by currency."""
        rows = await self.pool.fetch(
            "SELECT currency, balance FROM ledger_accounts WHERE owner = $1 AND kind = $2 ORDER BY currency",
            owner, kind)
        return {r["currency"]: int(r["balance"]) for r in rows}

    async def pot(self, table_id: str) -> tuple[int, str]:
        """The gà pot of a table: (balance, currency); (0, "") when it never existed."""
        rows = await self.pool.fetch(
            "SELECT currency, balance FROM ledger_accounts WHERE owner = $1 AND kind = 'pot' ORDER BY currency",
            table_id)
        for r in rows:
            if r["balance"] != 0:
                return int(r["balance"]), str(r["currency"])
        return (0, str(rows[0]["currency"])) if rows else (0, "")

    async def history(self, accounts: Sequence[str], *, before: int | None = None, limit: int = 50,
                      table_id: str = "", hand_no: int = 0, reason: str = "") -> list[asyncpg.Record]:
        """Transfers touching ``accounts``, newest first, with ``seq < before``."""
        cond = ["seq < $1"]
        args: list[Any] = [before if before is not None else 2**63 - 1, limit]
        if table_id:
            args.append(table_id)
            cond.append(f"table_id = ${len(args)}")
            if hand_no:
                args.append(hand_no)
                cond.append(f"hand_no = ${len(args)}")
        if reason:
            args.append(reason)
            cond.append(f"reason = ${len(args)}")
        where = " AND ".join(cond)
        cols = ("seq, id, posting_id, debit, credit, currency, amount, owed, reason, table_id, hand_no,"
                " (extract(epoch from posted_at) * 1000)::bigint AS posted_ms")
        if table_id:
            # a table's transfers are few: one range scan of the table index, then the player's
            args.append(list(accounts))
            n = len(args)
            return list(await self.pool.fetch(
                f"SELECT {cols} FROM ledger_transfers WHERE {where} AND (debit = ANY(${n}::text[])"
                f" OR credit = ANY(${n}::text[])) ORDER BY seq DESC LIMIT $2", *args))
        # one index range scan per (side, account), merged: fast however big the books are
        args += list(accounts)
        base = len(args) - len(accounts)
        branches = [
            f"(SELECT {cols} FROM ledger_transfers WHERE {side} = ${base + i + 1} AND {where}"
            f" ORDER BY seq DESC LIMIT $2)"
            for side in ("debit", "credit") for i in range(len(accounts))
        ]
        if not branches:
            return []
        sql = " UNION ALL ".join(branches) + " ORDER BY seq DESC LIMIT $2"
        return list(await self.pool.fetch(sql, *args))

    async def audit(self) -> tuple[int, int, list[tuple[str, str, str]]]:
        """Recompute every balance from the transfers; check each currency sums to zero.

        Returns (accounts, transfers, problems) with problems as (account, currency, message).
        """
        problems: list[tuple[str, str, str]] = []
        long = db.SCAN_TIMEOUT_S  # every transfer read: bounded by the books' size, not a call's bound
        async with self.pool.acquire() as c, c.transaction(isolation="repeatable_read", readonly=True):
            await db.allow_scan(c)
            rows = await c.fetch(
                """WITH moves AS (
                       SELECT debit AS id, -amount AS d FROM ledger_transfers
                       UNION ALL SELECT credit, amount FROM ledger_transfers)
                   SELECT a.id, a.currency, a.kind, a.balance, coalesce(sum(m.d), 0)::bigint AS computed
                   FROM ledger_accounts a LEFT JOIN moves m ON m.id = a.id
                   GROUP BY a.id, a.currency, a.kind, a.balance""", timeout=long)
            mixed = await c.fetch(
                """SELECT t.id, t.currency FROM ledger_transfers t
                   JOIN ledger_accounts d ON d.id = t.debit JOIN ledger_accounts c ON c.id = t.credit
                   WHERE d.currency <> t.currency OR c.currency <> t.currency""", timeout=long)
            transfers = int(await c.fetchval("SELECT count(*) FROM ledger_transfers", timeout=long))
        sums: dict[str, int] = {}
        for r in rows:
            sums[r["currency"]] = sums.get(r["currency"], 0) + int(r["balance"])
            if r["balance"] != r["computed"]:
                problems.append((r["id"], r["currency"],
                                 f"balance {r['balance']} but the transfers give {r['computed']}"))
            if r["balance"] < 0 and guarded(r["id"]):
                problems.append((r["id"], r["currency"], f"negative balance {r['balance']}"))
        for currency, total in sorted(sums.items()):
            if total != 0:
                problems.append(("", currency, f"the currency sums to {total}, not 0"))
        for r in mixed:
            problems.append(("", r["currency"], f"transfer {r['id']} joins accounts of other currencies"))
        return len(rows), transfers, problems


# -- the consumers' rows: the inbox, the tables' marks, the hands the log started, reward days, memberships
# (the statements of the table-log and reward consumers and of the paid services, kept here with the books)

Query = db.Conn | asyncpg.Pool
"""A connection (in its open transaction) or the pool."""

_INBOX_AND_MARK = """
WITH inbox AS (
    INSERT INTO ledger_inbox (stream, seq, posting_id, outcome, applied_by) VALUES ($1, $2, $3, $4, $6)
    ON CONFLICT DO NOTHING RETURNING seq),
mark AS (
    INSERT INTO ledger_table_marks (stream, table_id, seq) SELECT $1, $5, seq FROM inbox
    ON CONFLICT (stream, table_id) DO UPDATE SET seq = greatest(ledger_table_marks.seq, excluded.seq)),
ended AS (
    UPDATE ledger_reservations SET closed_at = now()
    WHERE table_id = $5 AND hand_no = ANY($7::bigint[]) AND closed_at IS NULL AND EXISTS (SELECT 1 FROM inbox))
SELECT seq FROM inbox
"""
"""The inbox row, the table's mark, raised (its row locked), and the reservations of the hands the
message ends (``$7``), closed, in one statement; NULL: seen before."""


async def inbox_and_mark(q: Query, stream: str, seq: int, posting_id: str, outcome: str, table_id: str,
                         applied_by: str, ended: Sequence[int] = ()) -> bool:
    """Write the inbox row of a table-log message and raise its table's mark, and close the
    reservations of the hands the message ends (``ended``: :mod:`chieu.ledger.reservations`), in
    one statement; ``False``: seen before."""
    return await q.fetchval(_INBOX_AND_MARK, stream, seq, posting_id, outcome, table_id, applied_by,
                            list(ended)) is not None


async def inbox(q: Query, stream: str, seq: int, posting_id: str | None, outcome: str, applied_by: str) -> bool:
    """Write the inbox row of a message (no table mark); ``False``: seen before."""
    return await q.fetchval(
        "INSERT INTO ledger_inbox (stream, seq, posting_id, outcome, applied_by) VALUES ($1, $2, $3, $4, $5)"
        " ON CONFLICT DO NOTHING RETURNING seq", stream, seq, posting_id, outcome, applied_by) is not None


async def table_mark(q: Query, stream: str, table_id: str) -> int:
    """The last stream sequence posted (or refused) for a table; 0: none."""
    mark = await q.fetchval("SELECT seq FROM ledger_table_marks WHERE stream = $1 AND table_id = $2", stream, table_id)
    return int(mark or 0)


Terms = tuple[str, int, int, tuple[str, ...]]
"""A hand's money terms: game, stake, currency and the players in their seats."""


async def hand_terms(q: Query, stream: str, table_id: str, hand_no: int) -> Terms | None:
    """The terms a hand of the table started with (``ledger_hands``); ``None``: the log started no such hand."""
    row = await q.fetchrow("SELECT game, stake, currency, players FROM ledger_hands"
                           " WHERE stream = $1 AND table_id = $2 AND hand_no = $3", stream, table_id, hand_no)
    if row is None:
        return None
    return row["game"], int(row["stake"]), int(row["currency"]), tuple(row["players"])


async def record_hand(q: Query, stream: str, table_id: str, hand_no: int, seq: int, terms: Terms) -> None:
    """Keep a hand's terms as the log started it (a hand already kept stays)."""
    game, stake, currency, players = terms
    await q.execute(
        "INSERT INTO ledger_hands (stream, table_id, hand_no, seq, game, stake, currency, players)"
        " VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT DO NOTHING",
        stream, table_id, hand_no, seq, game, stake, currency, list(players))


async def add_reward_day(q: Query, player_id: str, day: dt.date, coins: int, cap: int) -> int | None:
    """Add ``coins`` to the player's rewards of ``day`` while the total stays within ``cap``; the new
    total, or ``None`` (nothing changed) when it would pass it."""
    total = await q.fetchval(
        "INSERT INTO ledger_reward_days (player_id, day, coins) SELECT $1::text, $2::date, $3::bigint"
        " WHERE $3::bigint <= $4::bigint ON CONFLICT (player_id, day) DO UPDATE"
        " SET coins = ledger_reward_days.coins + $3::bigint"
        " WHERE ledger_reward_days.coins + $3::bigint <= $4::bigint RETURNING coins", player_id, day, coins, cap)
    return None if total is None else int(total)


async def reward_day(q: Query, player_id: str, day: dt.date) -> int:
    """The 金币 of rewards credited to the player on ``day``."""
    return int(await q.fetchval("SELECT coins FROM ledger_reward_days WHERE player_id = $1 AND day = $2",
                                player_id, day) or 0)


async def membership_days(q: Query, player_id: str) -> int:
    """The days of membership the player bought."""
    return int(await q.fetchval("SELECT days FROM ledger_memberships WHERE player_id = $1", player_id) or 0)


async def add_membership_days(q: Query, player_id: str, days: int) -> None:
    """Add bought days to the player's membership."""
    await q.execute("INSERT INTO ledger_memberships (player_id, days) VALUES ($1, $2)"
                    " ON CONFLICT (player_id) DO UPDATE SET days = ledger_memberships.days + $2", player_id, days)


# -- leaderboards ------------------------------------------------------------------------------

BOARDS = ("points", "coins")
"""The ledger's boards of a game: its score points (points tables), 金币 won (its coin tables)."""
RANK_BOUND = 10_000
"""A player's own rank is counted up to here (an index range of at most this many entries); below
it the answer is "beyond" (rank 0), so asking one's rank stays cheap at any number of players."""


def periods(at: dt.datetime) -> dict[str, str]:
    """The period keys a moment counts in (UTC): ``week`` (ISO: ``w2026-W48``), ``month``
    (``m2026-11``) and ``all``."""
    at = at.astimezone(dt.UTC)
    year, week, _ = at.isocalendar()
    return {"week": f"w{year}-W{week:02d}", "month": f"m{at.year}-{at.month:02d}", "all": "all"}


def board_of(currency: str) -> str | None:
    """The board a settlement's currency counts on (``None``: none)."""
    if currency == COINS:
        return "coins"
    return "points" if currency.startswith("points:") else None


async def _raise_boards(conn: db.Conn, game: str, legs: Sequence[Leg], keys: Mapping[str, str]) -> None:
    """Add a settlement's net per player to the game's board rows of every period it counts in, in the
    posting's transaction (the players' accounts are locked already: no other order to deadlock in)."""
    board = board_of(legs[0].currency) if legs else None  # a 金币 cap may leave nothing to move
    if board is None:
        return
    net: dict[str, int] = {}
    for a, n in legs_total(legs).items():
        kind, _, owner = parse_account(a)
        if kind == "player":
            net[owner] = n
    if not net:
        return
    players = sorted(net)
    await conn.execute(
        """INSERT INTO ledger_boards (game, board, period, player_id, score, hands)
           SELECT $1, $2, k.period, d.player, d.score, 1
           FROM unnest($3::text[]) AS k(period), unnest($4::text[], $5::bigint[]) AS d(player, score)
           ORDER BY k.period, d.player
           ON CONFLICT (game, board, period, player_id) DO UPDATE
           SET score = ledger_boards.score + excluded.score, hands = ledger_boards.hands + 1""",
        game, board, sorted(keys.values()), players, [net[x] for x in players])


_BOARD_COLS = "player_id, score, hands"
_BOARD_AT = "game = $1 AND board = $2 AND period = $3"


async def board_page(q: Query, game: str, board: str, period: str, limit: int,
                     after: tuple[int, str] | None = None) -> list[asyncpg.Record]:
    """One page of a board, best first (score descending, ties by player id), after the cursor
    ``(score, player_id)`` of the previous page's last row: one or two range scans of
    ``ledger_boards_rank``, never a sort of the board."""
    if after is None:
        return list(await q.fetch(
            f"SELECT {_BOARD_COLS} FROM ledger_boards WHERE {_BOARD_AT} ORDER BY score DESC, player_id LIMIT $4",
            game, board, period, limit))
    return list(await q.fetch(
        f"""(SELECT {_BOARD_COLS} FROM ledger_boards WHERE {_BOARD_AT} AND score = $5 AND player_id > $6
             ORDER BY score DESC, player_id LIMIT $4)
            UNION ALL
            (SELECT {_BOARD_COLS} FROM ledger_boards WHERE {_BOARD_AT} AND score < $5
             ORDER BY score DESC, player_id LIMIT $4)
            ORDER BY score DESC, player_id LIMIT $4""",
        game, board, period, limit, after[0], after[1]))


async def board_row(q: Query, game: str, board: str, period: str, player_id: str) -> asyncpg.Record | None:
    """A player's row of a board (``None``: not on it)."""
    return await q.fetchrow(f"SELECT {_BOARD_COLS} FROM ledger_boards WHERE {_BOARD_AT} AND player_id = $4",
                            game, board, period, player_id)


async def board_ahead(q: Query, game: str, board: str, period: str, score: int, player_id: str,
                      bound: int = RANK_BOUND) -> int:
    """How many rows of a board come before ``(score, player_id)``, counted up to ``bound`` (two
    index ranges of at most ``bound`` entries each)."""
    return int(await q.fetchval(
        f"""SELECT (SELECT count(*) FROM (SELECT 1 FROM ledger_boards WHERE {_BOARD_AT} AND score > $4
                                         ORDER BY score DESC, player_id LIMIT $6) AS above)
                 + (SELECT count(*) FROM (SELECT 1 FROM ledger_boards WHERE {_BOARD_AT} AND score = $4
                                         AND player_id < $5 ORDER BY score DESC, player_id LIMIT $6) AS tied)""",
        game, board, period, score, player_id, bound))


def legs_total(legs: Iterable[Leg]) -> dict[str, int]:
    """Net per account over some legs (a test and audit helper)."""
    out: dict[str, int] = {}
    for leg in legs:
        out[leg.debit] = out.get(leg.debit, 0) - leg.amount
        out[leg.credit] = out.get(leg.credit, 0) + leg.amount
    return out


__all__ = ["COINS", "HEARTS", "Books", "Leg", "Posting", "Result", "ServiceError", "cap"]


async def park(pool: asyncpg.Pool, stream: str, seq: int, subject: str, table_id: str, posting_id: str | None,
               data: bytes, error: str, message: str, deliveries: int, applied_by: str,
               ended: Sequence[int] = ()) -> None:
    """Park a table-log message (:mod:`chieu.ledger.parked`): its row in ``ledger_parked`` and its
    inbox row (``parked:<error>``, the table's mark raised, the reservations of the hands it ends
    closed), in one transaction."""
    async with pool.acquire() as conn, conn.transaction():
        await conn.execute(
            "INSERT INTO ledger_parked (stream, seq, subject, table_id, data, error, message, deliveries)"
            " VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT DO NOTHING",
            stream, seq, subject, table_id, data, error, message, deliveries)
        await conn.fetchval(_INBOX_AND_MARK, stream, seq, posting_id, f"parked:{error}", table_id, applied_by,
                            list(ended))


async def parked_open(q: Query) -> int:
    """How many parked records are not posted yet."""
    return int(await q.fetchval("SELECT count(*) FROM ledger_parked WHERE resolved_at IS NULL") or 0)


async def parked_rows(q: Query, *, all_rows: bool, limit: int) -> list[asyncpg.Record]:
    """The parked records, oldest first (only those not yet posted unless ``all_rows``)."""
    return await q.fetch(
        "SELECT stream, seq, table_id, error, message, deliveries, tries, parked_at, resolved_at, resolved_by"
        " FROM ledger_parked" + ("" if all_rows else " WHERE resolved_at IS NULL") +
        " ORDER BY parked_at, stream, seq LIMIT $1", limit)


async def parked_for_update(conn: Query, stream: str, seq: int) -> tuple[str, bytes] | None:
    """A parked record not posted yet, locked for its retry: its table and bytes."""
    row = await conn.fetchrow("SELECT table_id, data FROM ledger_parked WHERE stream = $1 AND seq = $2"
                              " AND resolved_at IS NULL FOR UPDATE", stream, seq)
    return None if row is None else (row["table_id"], bytes(row["data"]))


async def resolve_parked(conn: Query, stream: str, seq: int, outcome: str, actor: str) -> None:
    """A parked record posted by ``actor``: its inbox row says ``outcome``, its parked row is closed."""
    await conn.execute("UPDATE ledger_inbox SET outcome = $3 WHERE stream = $1 AND seq = $2", stream, seq, outcome)
    await conn.execute("UPDATE ledger_parked SET resolved_at = now(), resolved_by = $3, tries = tries + 1"
                       " WHERE stream = $1 AND seq = $2", stream, seq, actor)


async def parked_failed_again(q: Query, stream: str, seq: int, error: str, message: str) -> None:
    """A retry of a parked record failed: its tries counted, its error replaced."""
    await q.execute("UPDATE ledger_parked SET tries = tries + 1, error = $3, message = $4"
                    " WHERE stream = $1 AND seq = $2", stream, seq, error, message)


async def posted(q: Query, posting_id: str) -> bool:
    """Whether the posting ``posting_id`` is in the books."""
    return bool(await q.fetchval("SELECT 1 FROM ledger_postings WHERE id = $1", posting_id))
