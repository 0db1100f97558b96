"""The ledger's gRPC API: balances, history, gà pots, 金币 entry rule, paid services, 红心币,
operator adjustments, holds and the audit.

Who may call what (the README's table "RPC → who may call"): a player reads and spends only
their own money; the ``operator`` role reads anyone's, credits 红心币 purchases (the payment
provider's callback) and rewards, and adjusts; ``auditor`` reads and audits. Services call with
their own credentials (role ``service``, subject ``service:<name>``), each only what it needs:
GetPot and CheckEligibility any service (the table's gates, the lobby's), GetBalances and
ClaimWelcome ``service:lobby`` (a player never claims its own welcome coins: the lobby pays them
within its limits); a service credential never passes for an operator. No service
credential mints money: the ladder's rewards come as its records on NATS
(:mod:`chieu.ledger.rewards`), and ``CreditReward`` is an operator's, within the daily cap. An
operator holds a flagged player's 金币 for review (``HoldCoins``, ``ReleaseCoins``), and reviews the
collusion screen's holds of flagged winnings (``ListReviewHolds``, ``ReviewHold``: release or
reverse, once, :mod:`chieu.ledger.holds`). ``ReserveHand`` is the table service's alone
(``service:table``): a coin hand's reservations before it starts (:mod:`chieu.ledger.reservations`).
Every refusal
is a gRPC status with a stable reason, and changes nothing.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Awaitable, Callable
from typing import Any

import asyncpg
import grpc

from chieu.games import registry
from chieu.kit import auth, db, fields, metrics, names
from chieu.kit.errors import ServiceError, invalid, not_found, precondition
from chieu.kit.revocations import RevocationList
from chieu.kit.settings import Settings
from chieu.ledger import books as b
from chieu.ledger import holds, parked, rewards
from chieu.ledger.books import Books, Leg, Posting, Result
from chieu.ledger.reservations import Reservations, covers
from chieu.ledger.v1 import ledger_service_pb2 as pb
from chieu.ledger.v1 import ledger_service_pb2_grpc as pb_grpc

Context = grpc.aio.ServicerContext[Any, Any]
MAX_AMOUNT = 2**63 - 1
"""The largest amount an account can hold (PostgreSQL ``bigint``): a conversion whose 金币 would
not fit is refused as an amount (``bad_amount``), not found to lack an account."""

MAX_SEATS = 16
"""The most seats one hand reserves (every game has fewer)."""

BOARD_PAGE = 50
"""Rows per page of a board (and the most one page may ask)."""
_BOARD_KINDS = {pb.BOARD_KIND_POINTS: "points", pb.BOARD_KIND_COINS: "coins"}
_BOARD_PERIODS = {pb.BOARD_PERIOD_WEEK: "week", pb.BOARD_PERIOD_MONTH: "month", pb.BOARD_PERIOD_ALL: "all"}


def _board_token(game: str, board: str, period: str, score: int, player_id: str, rank: int) -> str:
    """The cursor after a page: the board and period key it reads, and its last row (score, player, rank)."""
    raw = json.dumps([game, board, period, score, player_id, rank], ensure_ascii=False, separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def _board_cursor(token: str, game: str, board: str) -> tuple[str, tuple[int, str], int]:
    """A page token read back: (period key, (score, player id), rank of that row); ``bad_page_token``
    when it is not one of this game's and kind's."""
    try:
        raw = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
        g, k, period, score, player_id, rank = raw
        ok = (g == game and k == board and isinstance(period, str) and isinstance(score, int)
              and isinstance(player_id, str) and isinstance(rank, int) and rank > 0)
    except (ValueError, TypeError, UnicodeDecodeError):
        ok = False
    if not ok:
        raise invalid("bad_page_token", "page_token is not from a previous response of this board")
    return period, (score, player_id), rank


def _positive(value: int, what: str) -> int:
    if value <= 0:
        raise invalid("bad_amount", f"{what} must be positive, not {value}")
    return value


def _result(r: Result, player_id: str) -> pb.PostingResult:
    mine = [pb.Balance(currency=b.parse_account(a)[1], amount=v, account=a)
            for a, v in sorted(r.balances.items()) if b.parse_account(a)[0] == "player"
            and b.parse_account(a)[2] == player_id]
    return pb.PostingResult(posting_id=r.posting_id, balances=mine, replayed=r.replayed)


class LedgerService(pb_grpc.LedgerServiceServicer):
    """The LedgerService servicer over the books."""

    def __init__(self, books: Books, settings: Settings, revocations: RevocationList | None = None,
                 reservations: Reservations | None = None,
                 resettable: Callable[[str], Awaitable[bool]] | None = None) -> None:
        self.books = books
        self.settings = settings
        self.revocations = revocations
        """The sessions signed out or revoked (:func:`chieu.kit.revocations.from_lobby`): refused."""
        self.resettable = resettable
        """Whether a player's reputation has anything to reset (:meth:`chieu.ledger.peers.Ladder.resettable`);
        ``None``: nobody to ask, so a reset is refused (``ladder_unavailable``)."""
        self.reservations = reservations or Reservations(books.pool, names.TABLES.name)
        """The coin hands' reservations (``ReserveHand``); the books hold them back from spending."""
        if books.holds_back is None:
            books.holds_back = self.reservations.held

    # -- who ------------------------------------------------------------------------------

    def _who(self, context: Context) -> auth.Principal:
        return auth.principal(context, auth.public_keys(self.settings), self.revocations)

    def _self_or_staff(self, context: Context, player_id: str, *staff: str) -> auth.Principal:
        """The player themselves, or one of ``staff`` (roles, or ``service:<name>``; default
        ``operator`` and ``auditor``)."""
        who = self._who(context)
        fields.ident(player_id, "player_id")
        if (who.player_id != player_id or who.service) and not auth.permits(who, staff or ("operator", "auditor")):
            raise ServiceError(grpc.StatusCode.PERMISSION_DENIED, "not_yours", "this is another player's money")
        return who

    def _mine(self, context: Context, request: Any) -> None:
        """A call on the caller's own account may leave ``player_id`` empty: the token names them
        (a service has no account: it names the player)."""
        if not request.player_id:
            who = self._who(context)
            if not who.service:
                request.player_id = who.player_id

    def _operator(self, context: Context, *also: str) -> auth.Principal:
        """An operator (or one of ``also``: ``service:ladder``)."""
        who = self._who(context)
        auth.require(who, "operator", *also)
        return who

    # -- posting helpers --------------------------------------------------------------------

    async def _post(self, build: Callable[[db.Conn], Awaitable[Posting]],
                    extra: Callable[[db.Conn], Awaitable[None]] | None = None) -> Result:
        """Build a posting inside a transaction (after locking what it reads) and post it there."""
        for attempt in range(3):
            async with self.books.pool.acquire() as conn:
                try:
                    async with conn.transaction():
                        p = await build(conn)
                        first = await self.books.replayed(conn, p)
                        if first is not None:
                            return first
                        r = await self.books.post(p, conn=conn)
                        if extra is not None:
                            await extra(conn)
                    if not r.replayed:
                        metrics.LEDGER_POSTINGS.labels(p.kind).inc()  # committed
                    return r
                except asyncpg.UniqueViolationError:
                    if attempt == 2:
                        raise
        raise AssertionError("unreachable")

    async def _simple(self, p: Posting) -> Result:
        async def build(conn: db.Conn) -> Posting:
            return p

        return await self._post(build)

    async def _pay_service(self, who: auth.Principal, *, kind: str, request_id: str, player_id: str, price: int,
                           memo: str, outbox: tuple[tuple[str, dict[str, Any]], ...] = (),
                           extra: Callable[[db.Conn], Awaitable[None]] | None = None) -> pb.PostingResult:
        """Post a paid service for ``player_id``, asked by ``who`` (the caller is checked first, by
        :meth:`_self_or_staff`, before anything of the request is read)."""
        fields.ident(request_id, "request_id")
        coins = b.player(b.COINS, player_id)
        p = Posting(f"{kind}/{player_id}/{request_id}", kind,
                    (Leg(f"{kind}/{player_id}/{request_id}/0", coins, b.house(b.COINS, "services"), price, kind),),
                    actor=who.player_id, memo=memo, must_exist=(coins,), outbox=outbox,
                    fingerprint=f"{player_id}|{memo}")

        async def build(conn: db.Conn) -> Posting:
            return p

        return _result(await self._post(build, extra), player_id)

    # -- reads ------------------------------------------------------------------------------

    async def GetBalances(self, request: pb.GetBalancesRequest, context: Context) -> pb.GetBalancesResponse:
        self._mine(context, request)
        self._self_or_staff(context, request.player_id, "operator", "auditor", "service:lobby")
        found = await self.books.balances(request.player_id)
        days = await b.membership_days(self.books.pool, request.player_id)
        return pb.GetBalancesResponse(balances=[
            pb.Balance(currency=c, amount=v, account=b.player(c, request.player_id)) for c, v in found.items()],
            membership_days=days)

    async def GetHistory(self, request: pb.GetHistoryRequest, context: Context) -> pb.GetHistoryResponse:
        self._mine(context, request)
        self._self_or_staff(context, request.player_id)
        size = fields.page_size(request.page_size)
        before: int | None = None
        if request.page_token:
            try:
                before = int(request.page_token)
            except ValueError:
                raise invalid("bad_page_token", "page_token is not from a previous response") from None
        if request.hand_no and not request.table_id:
            raise invalid("bad_filter", "hand_no needs table_id")
        owned = await self.books.balances(request.player_id)
        if not owned:
            raise not_found("unknown_account", f"player {request.player_id} has no account")
        if request.currency and request.currency not in owned:
            raise not_found("unknown_account", f"player {request.player_id} has no {request.currency} account")
        currencies = [request.currency] if request.currency else list(owned)
        accounts = [b.player(c, request.player_id) for c in currencies]
        rows = await self.books.history(accounts, before=before, limit=size + 1, table_id=request.table_id,
                                        hand_no=request.hand_no, reason=request.reason)
        mine = set(accounts)
        entries = []
        for r in rows[:size]:
            out = r["debit"] in mine
            entries.append(pb.Entry(
                transfer_id=r["id"], posting_id=r["posting_id"], currency=r["currency"],
                delta=-r["amount"] if out else r["amount"], owed=r["owed"], reason=r["reason"],
                account=r["debit"] if out else r["credit"], counterparty=r["credit"] if out else r["debit"],
                table_id=r["table_id"] or "", hand_no=r["hand_no"] or 0, posted_ms=r["posted_ms"]))
        token = str(rows[size - 1]["seq"]) if len(rows) > size else ""
        return pb.GetHistoryResponse(entries=entries, next_page_token=token)

    async def ListPrices(self, request: pb.ListPricesRequest, context: Context) -> pb.ListPricesResponse:
        self._who(context)  # any signed-in caller: prices are no secret, but the ledger is not anonymous
        s = self.settings
        return pb.ListPricesResponse(negative_reset=s.price_negative_reset, reputation_reset=s.price_reputation_reset,
                                     song=s.price_song, membership_day=s.price_membership_day,
                                     hearts_to_coins=s.hearts_to_coins)

    async def GetBoard(self, request: pb.GetBoardRequest, context: Context) -> pb.GetBoardResponse:
        """A page of one game's points or 金币 board for a period, best first; any valid token (the
        ladder's boards are public alike)."""
        self._who(context)
        if request.game not in registry.KEYS:
            if not request.game:
                raise invalid("bad_game", "a game is needed")
            raise not_found("unknown_game", f"no game {request.game[:64]!r}; games: {', '.join(registry.KEYS)}")
        board = _BOARD_KINDS.get(request.kind)
        if board is None:
            raise invalid("bad_board", "kind must be BOARD_KIND_POINTS or BOARD_KIND_COINS")
        period = _BOARD_PERIODS.get(request.period)
        if period is None:
            raise invalid("bad_period", "period must be BOARD_PERIOD_WEEK, _MONTH or _ALL")
        size = fields.page_size(request.page_size, default=BOARD_PAGE, most=BOARD_PAGE)
        if request.player_id:
            fields.ident(request.player_id, "player_id")
        key = b.periods(self.books.clock())[period]
        after: tuple[int, str] | None = None
        rank = 0
        if request.page_token:
            key, after, rank = _board_cursor(request.page_token, request.game, board)
        rows = await b.board_page(self.books.pool, request.game, board, key, size + 1, after)
        out = pb.GetBoardResponse(period_key=key, rank_bound=b.RANK_BOUND, rows=[
            pb.BoardRow(rank=rank + i, player_id=r["player_id"], score=int(r["score"]), hands=int(r["hands"]))
            for i, r in enumerate(rows[:size], 1)])
        if len(rows) > size:
            last = out.rows[-1]
            out.next_page_token = _board_token(request.game, board, key, last.score, last.player_id, int(last.rank))
        if request.player_id:
            mine = await b.board_row(self.books.pool, request.game, board, key, request.player_id)
            if mine is not None:
                ahead = await b.board_ahead(self.books.pool, request.game, board, key, int(mine["score"]),
                                            request.player_id, b.RANK_BOUND)
                out.you.CopyFrom(pb.BoardRow(rank=ahead + 1 if ahead < b.RANK_BOUND else 0,
                                             player_id=request.player_id, score=int(mine["score"]),
                                             hands=int(mine["hands"])))
        return out

    async def GetPot(self, request: pb.GetPotRequest, context: Context) -> pb.GetPotResponse:
        auth.require(self._who(context), "operator", "auditor", "service")
        fields.ident(request.table_id, "table_id")
        balance, currency = await self.books.pot(request.table_id)
        return pb.GetPotResponse(table_id=request.table_id, balance=balance, currency=currency)

    async def CheckEligibility(self, request: pb.CheckEligibilityRequest,
                               context: Context) -> pb.CheckEligibilityResponse:
        self._mine(context, request)
        self._self_or_staff(context, request.player_id, "operator", "auditor", "service")
        if request.need < 0:
            raise invalid("bad_amount", "a need is 0 or more 金币")
        coins = await self.books.balance(b.player(b.COINS, request.player_id)) or 0
        minimum = self.settings.coin_table_minimum
        held = await self.books.held(request.player_id) is not None
        free = await self.reservations.free(request.player_id, coins)
        eligible = coins > minimum and not held and covers(free, request.need)
        return pb.CheckEligibilityResponse(eligible=eligible, coins=coins, minimum=minimum, held=held, free=free,
                                           need=request.need)

    # -- 金币 and 红心币 ---------------------------------------------------------------------

    async def ClaimWelcome(self, request: pb.ClaimWelcomeRequest, context: Context) -> pb.ClaimWelcomeResponse:
        """The welcome 金币 (GC-4), once per player: paid by the lobby within its limits per address
        and device (issue 27), never claimed by the player itself."""
        auth.require(self._who(context), "operator", "service:lobby")
        fields.ident(request.player_id, "player_id")
        pid = f"welcome/{request.player_id}"
        p = Posting(pid, "welcome", (Leg(pid, b.system(b.COINS, "welcome"), b.player(b.COINS, request.player_id),
                                         max(self.settings.welcome_coins, 1), "welcome"),),
                    actor=request.player_id, fingerprint=request.player_id)
        async with self.books.pool.acquire() as conn:
            first = await self.books.replayed(conn, p)
        if first is None and not self.settings.welcome_campaign:
            raise precondition("campaign_over", "the welcome-coins campaign is over")
        if first is None and self.settings.welcome_coins <= 0:
            raise precondition("campaign_over", "no welcome coins are configured")
        return pb.ClaimWelcomeResponse(result=_result(await self._simple(p), request.player_id))

    async def CreditPurchase(self, request: pb.CreditPurchaseRequest,
                             context: Context) -> pb.CreditPurchaseResponse:
        who = self._operator(context)
        fields.ident(request.payment_id, "payment_id")
        fields.ident(request.player_id, "player_id")
        _positive(request.hearts, "hearts")
        pid = f"purchase/{request.payment_id}"
        p = Posting(pid, "purchase", (Leg(pid, b.system(b.HEARTS, "provider"), b.player(b.HEARTS, request.player_id),
                                          request.hearts, "purchase"),), actor=who.player_id, memo=request.payment_id)
        return pb.CreditPurchaseResponse(result=_result(await self._simple(p), request.player_id))

    async def ConvertHearts(self, request: pb.ConvertHeartsRequest, context: Context) -> pb.ConvertHeartsResponse:
        self._mine(context, request)
        who = self._self_or_staff(context, request.player_id, "operator")
        fields.ident(request.request_id, "request_id")
        _positive(request.hearts, "hearts")
        most = MAX_AMOUNT // self.settings.hearts_to_coins
        if request.hearts > most:  # before any account is looked up: the amount is wrong whoever asks
            raise invalid("bad_amount", f"hearts must be at most {most}, not {request.hearts}")
        pid = f"convert/{request.player_id}/{request.request_id}"
        hearts = b.player(b.HEARTS, request.player_id)
        p = Posting(pid, "convert", (
            Leg(f"{pid}/0", hearts, b.house(b.HEARTS, "conversion"), request.hearts, "convert"),
            Leg(f"{pid}/1", b.system(b.COINS, "conversion"), b.player(b.COINS, request.player_id),
                request.hearts * self.settings.hearts_to_coins, "convert"),
        ), actor=who.player_id, must_exist=(hearts,), fingerprint=f"{request.player_id}|{request.hearts}")
        return pb.ConvertHeartsResponse(result=_result(await self._simple(p), request.player_id))

    async def ResetNegativeScore(self, request: pb.ResetNegativeScoreRequest,
                                 context: Context) -> pb.ResetNegativeScoreResponse:
        self._mine(context, request)
        who = self._self_or_staff(context, request.player_id, "operator")
        fields.ident(request.request_id, "request_id")
        fields.ident(request.game, "game")
        player_id, game = request.player_id, request.game
        pid = f"negative_reset/{player_id}/{request.request_id}"
        coins, score = b.player(b.COINS, player_id), b.player(b.points(game), player_id)
        reset = b.system(b.points(game), "negative_reset")
        house = b.house(b.COINS, "services")

        async def build(conn: db.Conn) -> Posting:
            probe = Posting(pid, "negative_reset", (Leg(pid, coins, house, 1, "x"),),
                            fingerprint=f"{player_id}|{game}")
            if await self.books.replayed(conn, probe) is not None:
                return probe
            balances = await self.books.lock(conn, [coins, score, reset, house])
            if score not in balances:
                raise not_found("unknown_account", f"{player_id} has no {game} score")
            if balances[score] >= 0:
                raise precondition("not_negative", f"the {game} score is {balances[score]}, not negative")
            return Posting(pid, "negative_reset", (
                Leg(f"{pid}/0", coins, house, self.settings.price_negative_reset, "negative_reset"),
                Leg(f"{pid}/1", reset, score, -balances[score], "negative_reset"),
            ), actor=who.player_id, memo=game, must_exist=(coins,), fingerprint=f"{player_id}|{game}")

        return pb.ResetNegativeScoreResponse(result=_result(await self._post(build), player_id))

    async def ResetReputation(self, request: pb.ResetReputationRequest,
                              context: Context) -> pb.ResetReputationResponse:
        self._mine(context, request)
        who = self._self_or_staff(context, request.player_id, "operator")
        fields.ident(request.request_id, "request_id")
        paid = await b.posted(self.books.pool, f"reputation_reset/{request.player_id}/{request.request_id}")
        if not paid:  # a request paid before is answered as it was, whatever the reputation is now
            if self.resettable is None:
                raise ServiceError(grpc.StatusCode.UNAVAILABLE, "ladder_unavailable",
                                   "no ladder to ask whether there is a reputation to reset")
            if not await self.resettable(request.player_id):
                raise precondition("nothing_to_reset", "the reputation is at its start: a reset would change "
                                                       "nothing, so nothing is charged")
        result = await self._pay_service(
            who, kind="reputation_reset", request_id=request.request_id, player_id=request.player_id,
            price=self.settings.price_reputation_reset, memo="",
            outbox=(("reputation_reset", {"player_id": request.player_id, "request_id": request.request_id}),))
        return pb.ResetReputationResponse(result=result)

    async def RequestSong(self, request: pb.RequestSongRequest, context: Context) -> pb.RequestSongResponse:
        self._mine(context, request)
        who = self._self_or_staff(context, request.player_id, "operator")
        fields.ident(request.song, "song")
        fields.text(request.target, "target")
        result = await self._pay_service(
            who, kind="song", request_id=request.request_id, player_id=request.player_id,
            price=self.settings.price_song, memo=f"{request.song}|{request.target}",
            outbox=(("song", {"player_id": request.player_id, "song": request.song, "target": request.target,
                              "request_id": request.request_id}),))
        return pb.RequestSongResponse(result=result)

    async def BuyMembership(self, request: pb.BuyMembershipRequest, context: Context) -> pb.BuyMembershipResponse:
        self._mine(context, request)
        who = self._self_or_staff(context, request.player_id, "operator")
        _positive(request.days, "days")
        player_id, days = request.player_id, request.days

        async def add_days(conn: db.Conn) -> None:
            await b.add_membership_days(conn, player_id, days)

        result = await self._pay_service(
            who, kind="membership", request_id=request.request_id, player_id=player_id,
            price=days * self.settings.price_membership_day, memo=str(days),
            outbox=(("membership", {"player_id": player_id, "days": days, "request_id": request.request_id}),),
            extra=add_days)
        return pb.BuyMembershipResponse(result=result)

    async def CreditReward(self, request: pb.CreditRewardRequest, context: Context) -> pb.CreditRewardResponse:
        who = self._operator(context)
        fields.ident(request.reward_id, "reward_id")
        fields.ident(request.player_id, "player_id")
        _positive(request.coins, "coins")
        reason = fields.reason(request.reason, "a reward")
        p = rewards.reward_posting(request.reward_id, request.player_id, request.coins, reason, who.player_id)
        player, coins, cap = request.player_id, request.coins, self.settings.reward_daily_cap

        async def build(conn: db.Conn) -> Posting:
            return p

        async def charge(conn: db.Conn) -> None:
            await rewards.charge_day(conn, player, coins, cap)

        return pb.CreditRewardResponse(result=_result(await self._post(build, charge), request.player_id))

    # -- operators ---------------------------------------------------------------------------

    async def Adjust(self, request: pb.AdjustRequest, context: Context) -> pb.AdjustResponse:
        who = self._operator(context)
        fields.ident(request.adjustment_id, "adjustment_id")
        fields.ident(request.player_id, "player_id")
        reason = fields.reason(request.reason, "an adjustment")
        if request.delta == 0:
            raise invalid("bad_amount", "delta must not be 0")
        if not b.valid_currency(request.currency):
            raise invalid("bad_currency", f"{request.currency!r} is not coins, hearts or points:<game>")
        target = b.player(request.currency, request.player_id)
        other = b.system(request.currency, "adjustments")
        pid = f"adjust/{request.adjustment_id}"
        debit, credit = (other, target) if request.delta > 0 else (target, other)
        p = Posting(pid, "adjust", (Leg(pid, debit, credit, abs(request.delta), "adjust"),), actor=who.player_id,
                    memo=reason, must_exist=(target,) if request.delta < 0 and b.guarded(target) else ())
        return pb.AdjustResponse(result=_result(await self._simple(p), request.player_id))

    async def HoldCoins(self, request: pb.HoldCoinsRequest, context: Context) -> pb.HoldCoinsResponse:
        who = self._operator(context)
        fields.ident(request.player_id, "player_id")
        reason = fields.reason(request.reason, "a hold")
        row = await self.books.hold(request.player_id, reason, who.player_id)
        return pb.HoldCoinsResponse(held=True, held_by=row["held_by"], reason=row["reason"],
                                    held_ms=int(row["held_at"].timestamp() * 1000))

    async def ReleaseCoins(self, request: pb.ReleaseCoinsRequest, context: Context) -> pb.ReleaseCoinsResponse:
        who = self._operator(context)
        fields.ident(request.player_id, "player_id")
        reason = fields.reason(request.reason, "a release")
        return pb.ReleaseCoinsResponse(released=await self.books.release(request.player_id, reason, who.player_id))

    async def ReserveHand(self, request: pb.ReserveHandRequest, context: Context) -> pb.ReserveHandResponse:
        auth.require(self._who(context), "service:table")
        fields.ident(request.table_id, "table_id")
        if request.hand_no < 1:
            raise invalid("bad_hand_no", "a hand number is 1 or more")
        if not 1 <= len(request.seats) <= MAX_SEATS:
            raise invalid("bad_seats", f"a hand reserves 1..{MAX_SEATS} seats")
        seats: dict[str, int] = {}
        for seat in request.seats:
            fields.ident(seat.player_id, "player_id")
            if seat.player_id in seats:
                raise invalid("bad_seats", f"{seat.player_id} has two seats")
            seats[seat.player_id] = _positive(seat.coins, "coins")
        answer = await self.reservations.reserve(request.table_id, int(request.hand_no), seats)
        return pb.ReserveHandResponse(reserved=answer.reserved, short_players=answer.short,
                                      replayed=answer.replayed)

    async def ListReviewHolds(self, request: pb.ListReviewHoldsRequest,
                              context: Context) -> pb.ListReviewHoldsResponse:
        auth.require(self._who(context), "operator", "auditor")
        if request.player_id:
            fields.ident(request.player_id, "player_id")
        found = await holds.holds(self.books.pool, request.player_id, request.reviewed)
        return pb.ListReviewHoldsResponse(holds=[_hold(r, p) for r, p in found])

    async def ReviewHold(self, request: pb.ReviewHoldRequest, context: Context) -> pb.ReviewHoldResponse:
        who = self._operator(context)
        actions = {pb.ReviewHoldRequest.ACTION_RELEASE: holds.RELEASE,
                   pb.ReviewHoldRequest.ACTION_REVERSE: holds.REVERSE}
        if request.action not in actions:
            raise invalid("bad_action", "action must be release or reverse")
        if request.hold_id <= 0:
            raise invalid("bad_hold_id", f"hold_id must be positive, not {request.hold_id}")
        reason = fields.reason(request.reason, "a review")
        row, payers, posting = await holds.review(self.books, request.hold_id, actions[request.action], reason,
                                                  who.player_id)
        metrics.LEDGER_POSTINGS.labels(holds.REVIEW).inc()
        return pb.ReviewHoldResponse(hold=_hold(row, payers), posting_id=posting)

    async def Audit(self, request: pb.AuditRequest, context: Context) -> pb.AuditResponse:
        auth.require(self._who(context), "operator", "auditor")
        accounts, transfers, problems = await self.books.audit()
        audited(problems)
        return pb.AuditResponse(ok=not problems, accounts=accounts, transfers=transfers, problems=[
            pb.AuditProblem(account=a, currency=c, message=m) for a, c, m in problems])


def _hold(r: asyncpg.Record, payers: dict[str, int]) -> pb.ReviewHoldRecord:
    return pb.ReviewHoldRecord(
        hold_id=int(r["id"]), player_id=r["player_id"], coins=int(r["coins"]), status=r["status"], code=r["code"],
        detail=r["detail"], held_ms=int(r["held_ms"]), reviewed_by=r["reviewed_by"], review_reason=r["review_reason"],
        reviewed_ms=int(r["reviewed_ms"]),
        payers=[pb.HeldFrom(player_id=p, coins=c) for p, c in sorted(payers.items())])


def audited(problems: list[tuple[str, str, str]]) -> None:
    """Show an audit's verdict in ``chieu_ledger_audit_clean`` (and its count of problems)."""
    metrics.LEDGER_AUDIT_CLEAN.set(0 if problems else 1)
    metrics.LEDGER_AUDIT_PROBLEMS.set(len(problems))
    metrics.LEDGER_AUDIT_LAST.set_to_current_time()


async def self_audit(books: Books) -> None:
    """The ledger's own audit (:meth:`Books.audit`: every balance recomputed from its transfers,
    every currency summing to zero), for the metrics; run every ``CHIEU_LEDGER_AUDIT_EVERY_S``."""
    _, _, problems = await books.audit()
    audited(problems)
    await parked.count_open(books.pool)
