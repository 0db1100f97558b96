"""The ladder's gRPC API: standings, history, the seat check of ladder tables, leaderboards,
the monthly ranking and its rewards, reputation, and operator corrections.

Who may call what (the README's table "RPC → who may call"): a player reads their own standing,
history and reputation; ``operator`` and ``auditor`` read anyone's; services call with their own
credentials: the seat check any service (the table's gate), a standing ``service:lobby``, a
reputation ``service:table`` and ``service:lobby``; the leaderboard and the monthly ranking need
any valid token; corrections and monthly rewards need ``operator``. Every refusal is a gRPC status
with a stable reason, and changes nothing.
"""

from __future__ import annotations

import asyncio
import re
import time
from typing import Any

import grpc

from chieu.kit import auth, fields
from chieu.kit.errors import ServiceError, invalid, not_found
from chieu.kit.revocations import RevocationList
from chieu.kit.settings import Settings, monthly_rewards
from chieu.ladder import rules
from chieu.ladder.peers import Ledger
from chieu.ladder.rewards import decide_month
from chieu.ladder.rules import Standing
from chieu.ladder.standings import Store, standing_of
from chieu.ladder.v1 import ladder_service_pb2 as pb
from chieu.ladder.v1 import ladder_service_pb2_grpc as pb_grpc

Context = grpc.aio.ServicerContext[Any, Any]

MONTH = re.compile(r"^(\d{4})-(0[1-9]|1[0-2])$")
CATCH_UP_S = 1.0
"""How long a seat check waits for the table's last counted record to be applied."""
MAX_SEAT_PLAYERS = 16
LEVEL_TOO_LOW = "ladder_level_too_low"
"""The one code of the ladder's gate in every service (the table's refusal and its log, the lobby's
room gate, this seat check): the table log has carried it since the first ladder table."""


def _game(game: str) -> str:
    if game not in rules.GAMES:
        raise not_found("unknown_game", f"no game {game!r}; games: {', '.join(rules.GAMES)}")
    return game


def _level(level: int, what: str = "table_level") -> int:
    if not 1 <= level <= rules.MAX_LEVEL:
        raise invalid("bad_level", f"{what} must be 1..{rules.MAX_LEVEL}, not {level}")
    return level


def _top(n: int) -> int:
    n = n or 100
    if not 1 <= n <= 1000:
        raise invalid("bad_top", "top must be 1..1000")
    return n


def _month(month: str) -> str:
    if not MONTH.match(month or ""):
        raise invalid("bad_month", "a month is YYYY-MM")
    return month


def _standing(s: Standing) -> pb.Standing:
    return pb.Standing(level=s.level, best=s.best, lp=s.lp)


def change_message(r: Any) -> pb.Change:
    return pb.Change(
        id=r["id"], player_id=r["player_id"], game=r["game"], cause=r["cause"], result=r["result"],
        table_id=r["table_id"] or "", hand_no=r["hand_no"] or 0, table_level=r["table_level"],
        before=_standing(standing_of(r, "_before")), after=_standing(standing_of(r, "_after")),
        stream_seq=r["stream_seq"] or 0, actor=r["actor"], reason=r["reason"], at_ms=r["at_ms"])


class LadderService(pb_grpc.LadderServiceServicer):
    """The LadderService servicer over the store."""

    def __init__(self, store: Store, settings: Settings, stream: str,
                 revocations: RevocationList | None = None, ledger: Ledger | None = None) -> None:
        self.store = store
        self.ledger = ledger
        """Pays a month's rewards as the operator who asks (``None``: they are decided, not paid)."""
        self.settings = settings
        self.stream = stream
        """The table stream whose cursor a seat check waits for."""
        self.revocations = revocations
        """The sessions signed out or revoked (:func:`chieu.kit.revocations.from_lobby`): refused."""

    def _who(self, context: Context) -> auth.Principal:
        return auth.principal(context, auth.public_keys(self.settings), self.revocations)

    def _self_or_staff(self, context: Context, player_id: str, *services: str) -> auth.Principal:
        """The player themselves, ``operator``, ``auditor``, or one of ``services`` (``service:lobby``)."""
        who = self._who(context)
        fields.ident(player_id, "player_id")
        if (who.player_id != player_id or who.service) and not auth.permits(who, ("operator", "auditor", *services)):
            raise ServiceError(grpc.StatusCode.PERMISSION_DENIED, "not_yours", "this is another player's standing")
        return who

    # -- reads ------------------------------------------------------------------------------

    async def GetStanding(self, request: pb.GetStandingRequest, context: Context) -> pb.GetStandingResponse:
        """A player the ladder has counted nothing of stands where every player starts: level 1,
        best 1, 0 关积分, the starting reputation (as the lobby's home screen shows them)."""
        self._self_or_staff(context, request.player_id, "service:lobby")
        game = _game(request.game)
        found = await self.store.standing(game, request.player_id)
        standing, games = found if found is not None else (Standing(), 0)
        reputation, _, _ = await self.store.reputation(request.player_id)
        return pb.GetStandingResponse(player_id=request.player_id, game=game, standing=_standing(standing),
                                      games=games, reputation=reputation)

    async def GetHistory(self, request: pb.GetHistoryRequest, context: Context) -> pb.GetHistoryResponse:
        self._self_or_staff(context, request.player_id)
        if request.game:
            _game(request.game)
        size = fields.page_size(request.page_size)
        before: int | None = None
        if request.page_token:
            try:
                before = int(request.page_token)
            except ValueError:
                raise invalid("bad_page_token", "page_token is not from a previous response") from None
            if before <= 0:
                raise invalid("bad_page_token", "page_token is not from a previous response")
        rows = await self.store.history(request.player_id, request.game, before, size + 1)
        token = str(rows[size - 1]["id"]) if len(rows) > size else ""
        return pb.GetHistoryResponse(changes=[change_message(r) for r in rows[:size]], next_page_token=token)

    async def CheckSeat(self, request: pb.CheckSeatRequest, context: Context) -> pb.CheckSeatResponse:
        auth.require(self._who(context), "operator", "auditor", "service")
        game = _game(request.game)
        level = _level(request.table_level)
        if not 1 <= len(request.player_ids) <= MAX_SEAT_PLAYERS:
            raise invalid("bad_player_ids", f"1..{MAX_SEAT_PLAYERS} player ids")
        players = [fields.ident(p, "player_id") for p in request.player_ids]
        if request.after_seq:
            await self._caught_up(int(request.after_seq))
        levels = await self.store.levels(game, players)
        verdicts = []
        for p in players:
            own = levels.get(p, 1)
            ok = rules.may_sit(Standing(level=own, best=own), level)
            verdicts.append(pb.SeatVerdict(player_id=p, allowed=ok, level=own, reason="" if ok else LEVEL_TOO_LOW))
        return pb.CheckSeatResponse(verdicts=verdicts)

    async def _caught_up(self, seq: int) -> None:
        give_up = time.monotonic() + CATCH_UP_S
        while await self.store.applied(self.stream) < seq:
            if time.monotonic() > give_up:
                raise ServiceError(grpc.StatusCode.UNAVAILABLE, "ladder_behind",
                                   f"the ladder has not applied the table log up to {seq} yet; try again")
            await asyncio.sleep(0.01)

    async def GetLeaderboard(self, request: pb.GetLeaderboardRequest, context: Context) -> pb.GetLeaderboardResponse:
        self._who(context)
        game = _game(request.game)
        n = _top(request.top)
        if request.player_id:
            fields.ident(request.player_id, "player_id")
        rows = await self.store.top(game, n)
        out = pb.GetLeaderboardResponse(players=await self.store.players(game), top=[
            pb.RankedPlayer(rank=i, player_id=r["player_id"], standing=_standing(standing_of(r)))
            for i, r in enumerate(rows, 1)])
        if request.player_id:
            found = await self.store.rank(game, request.player_id)
            if found is not None:
                out.you.CopyFrom(pb.RankedPlayer(rank=found[0], player_id=request.player_id,
                                                 standing=_standing(found[1])))
        return out

    async def GetMonthlyRanking(self, request: pb.GetMonthlyRankingRequest,
                                context: Context) -> pb.GetMonthlyRankingResponse:
        self._who(context)
        game, month, n = _game(request.game), _month(request.month), _top(request.top)
        rows = await self.store.monthly(game, month, n)
        return pb.GetMonthlyRankingResponse(ranking=[
            pb.RankedPlayer(rank=i, player_id=r["player_id"], standing=_standing(standing_of(r)))
            for i, r in enumerate(rows, 1)])

    async def PayMonthlyRewards(self, request: pb.PayMonthlyRewardsRequest,
                                context: Context) -> pb.PayMonthlyRewardsResponse:
        auth.require_role(self._who(context), "operator")
        game, month = _game(request.game), _month(request.month)
        rows = [dict(r) for r in await decide_month(self.store, game, month, monthly_rewards(self.settings))]
        authorization = str(dict(context.invocation_metadata() or ()).get("authorization", ""))
        for r in rows:  # paid by the ledger as the operator's action: the ladder holds no credential that pays
            if r["paid"] or self.ledger is None:
                continue
            why = await self.ledger.credit(authorization, r["reward_id"], r["player_id"], r["coins"], r["reason"])
            if not why:
                await self.store.reward_paid(r["reward_id"])
            r["paid"] = not why
        return pb.PayMonthlyRewardsResponse(rewards=[
            pb.Reward(reward_id=r["reward_id"], player_id=r["player_id"], coins=r["coins"], paid=r["paid"])
            for r in rows])

    async def GetReputation(self, request: pb.GetReputationRequest, context: Context) -> pb.GetReputationResponse:
        self._self_or_staff(context, request.player_id, "service:table", "service:lobby", "service:ledger")
        score, quits, disconnects = await self.store.reputation(request.player_id)
        threshold = self.settings.ladder_reputation_min
        return pb.GetReputationResponse(player_id=request.player_id, reputation=score, threshold=threshold,
                                        below_threshold=score < threshold, quits=quits, disconnects=disconnects,
                                        start=self.store.config.reputation_start)

    # -- operators ---------------------------------------------------------------------------

    async def Correct(self, request: pb.CorrectRequest, context: Context) -> pb.CorrectResponse:
        who = self._who(context)
        auth.require_role(who, "operator")
        fields.ident(request.correction_id, "correction_id")
        fields.ident(request.player_id, "player_id")
        game = _game(request.game)
        reason = fields.reason(request.reason, "a correction")
        s = request.standing
        target = Standing(int(s.level), int(s.best), int(s.lp))
        _level(target.level, "level")
        _level(target.best, "best")
        if not rules.valid(target, self.store.config.params):
            raise invalid("bad_standing", "1 ≤ level ≤ best, and lp within the ladder's bounds")
        row, replayed = await self.store.correct(request.correction_id, request.player_id, game, target, reason,
                                                 who.player_id)
        return pb.CorrectResponse(change=change_message(row), replayed=replayed)
