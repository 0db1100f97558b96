"""洪洞王牌麻将 (Hongdong "king-tile" Mahjong) as a decider: §1 of shared/rules/mahjong.md.

Seats 0..n-1 in turn order; the dealer (庄) holds 14 tiles and discards first. Every win is
self-drawn (自摸, or 杠开 on a gang's replacement tile) after a ready declaration: 报听 (bao ting)
or 硬扣 (ying kou, wins only on a dragon that completes 中发白). The laizi (癞子/王, the wild tile)
depends on the room's LAIZI_MODE (:mod:`~chieu.games.mahjong.laizi`); waits, scores and the
settlement are in :mod:`~chieu.games.mahjong.scoring`, the data in
:mod:`~chieu.games.mahjong.model`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from chieu.games import clock, fair
from chieu.games.common import TimedOut, members, put, wrapper
from chieu.games.core import (
    BadOptions,
    Deadline,
    Game,
    IllegalMove,
    InvalidCommand,
    Outcome,
    Seat,
    Setup,
)
from chieu.games.mahjong import laizi as L
from chieu.games.mahjong import tiles as T
from chieu.games.mahjong.melds import claim_options, gang_options, waits_after_gang
from chieu.games.mahjong.model import (
    ChoosePair,
    ClaimAction,
    ClaimAnswered,
    ClaimOpened,
    Command,
    Dealt,
    Declare,
    Discard,
    Discarded,
    Drew,
    GameCommand,
    GameEvent,
    Gang,
    Ganged,
    HandDrawn,
    Meld,
    MeldType,
    MeldView,
    PairChosen,
    Pass,
    Peng,
    Penged,
    Phase,
    PlayerState,
    PlayerView,
    State,
    Tiles,
    TurnStarted,
    View,
    Win,
    Won,
    remaining,
    reserve,
)
from chieu.games.mahjong.options import Mode, Options, option_values, parse_options
from chieu.games.mahjong.scoring import can_win, seat_score, ting_candidates, waits_of, won

_wrap = wrapper(Command)

# The commands a legal list may hold, made once (frozen: shared by every list), by kind, and each
# one's ``Command`` wrapper, by the command's identity: a view wraps its list without making any.
_DISCARDS = tuple(Discard(T.name(k)) for k in range(T.KINDS))
_TINGS = tuple(Discard(T.name(k), Declare.TING) for k in range(T.KINDS))
_YING_KOUS = tuple(Discard(T.name(k), Declare.YING_KOU) for k in range(T.KINDS))
_GANGS = tuple(Gang(T.name(k)) for k in range(T.KINDS))
_PAIRS = tuple(ChoosePair(T.name(k)) for k in range(T.KINDS))
_PASS, _PENG, _WIN = Pass(), Peng(), Win()
_WRAPPED: dict[int, Command] = {
    id(c): w for group in (_DISCARDS, _TINGS, _YING_KOUS, _GANGS, _PAIRS, (_PASS, _PENG, _WIN))
    for c, w in zip(group, _wrap(group), strict=True)
}


def _wrap_legal(commands: Sequence[GameCommand]) -> tuple[Command, ...]:
    """``_wrap(commands)``: the made wrappers of :func:`Mahjong.legal`'s commands (any other
    command wrapped anew)."""
    get = _WRAPPED.get
    return tuple(get(id(c)) or _wrap((c,))[0] for c in commands)


class _Flow:
    """Collects events while applying them, so later decisions see the updated state."""

    def __init__(self, game: Mahjong, state: State, now_ms: int) -> None:
        self.game = game
        self.s = state
        self.now = now_ms
        self.events: list[GameEvent] = []

    def emit(self, e: GameEvent) -> None:
        self.events.append(e)
        self.s = self.game.evolve(self.s, e)


class Mahjong:
    """The 洪洞王牌麻将 game object registered under ``mahjong``."""

    key = "mahjong"
    title = "洪洞王牌麻将"
    min_players = 2
    max_players = 4
    commands = members(GameCommand)
    events = members(GameEvent)
    option_type = Options
    view_type = View
    pot_options: tuple[str, ...] = ()
    """The options that change the gà pot's rules: 洪洞王牌麻将 has no pot."""

    parse_options = staticmethod(parse_options)
    option_values = staticmethod(option_values)

    def initial(self, options: Options, players: int) -> State:
        return State(options=options, players=players)

    # -- setup

    def start(self, setup: Setup) -> Sequence[GameEvent]:
        o: Options = setup.options
        n = setup.players
        if not 2 <= n <= 4:
            raise BadOptions(f"洪洞王牌麻将 is for 2–4 players, not {n}")
        dealer = self._dealer(setup)
        wall = fair.shuffled(setup.seed, T.full_set(), "deal")
        set_aside: list[int] = []
        if o.laizi_mode is Mode.YIZHIWANG:
            set_aside, wall = wall[:n], wall[n:]
        hands: list[list[int]] = [[] for _ in range(n)]
        for i in range(n):
            seat = (dealer + i) % n
            take = (14 if seat == dealer else 13) - (1 if o.laizi_mode is Mode.YIZHIWANG else 0)
            hands[seat], wall = wall[:take], wall[take:]
            if o.laizi_mode is Mode.YIZHIWANG:
                hands[seat].append(T.WANG)
        return self.deal_events(o, n, dealer, hands, wall, set_aside, setup.seed, setup.now_ms)

    def _dealer(self, setup: Setup) -> int:
        n = setup.players

        def rotation(prev: Outcome) -> Seat | None:
            """The winner deals; after a 荒庄 with a 杠 the next seat; else the dealer again."""
            if prev.first is None:
                return None
            if prev.winner is not None:
                return prev.winner % n
            if prev.reason == "huangzhuang_gang":
                return (prev.first + 1) % n
            return prev.first % n

        return clock.first_seat(setup, rotation, draw="dealer") % n

    def deal_events(
        self, o: Options, n: int, dealer: int, hands: Sequence[Sequence[int]], wall: Sequence[int],
        set_aside: Sequence[int], seed: bytes, now_ms: int, melds: Sequence[Meld] = (),
        declared: Sequence[Declare] = (), laizi: Sequence[int] | None = None, gangs: int = 0,
        discards: Sequence[Sequence[int]] = (),
    ) -> list[GameEvent]:
        """The ``Dealt`` event (and the dealer's clock) for an exact deal."""
        mode = o.laizi_mode
        indicator, lz, locked = L.dealt(mode, hands, wall, seed, laizi)
        choose = mode is Mode.DUIWANG and laizi is None and any(
            max(T.counts(h)[:34]) >= 2 for h in hands)
        secs = o.pair_seconds if choose else o.turn_seconds
        return [Dealt(
            dealer=dealer, hands=tuple(Tiles(T.names(sorted(h))) for h in hands), wall=T.names(wall),
            indicator=T.maybe_name(indicator), set_aside=T.names(set_aside),
            laizi=tuple(T.maybe_name(k) for k in lz), locked=tuple(locked), seed=seed.hex(),
            deadline_ms=clock.due(now_ms, secs), choose_pair=choose, melds=tuple(melds),
            declared=tuple(declared), gangs=gangs, discards=tuple(Tiles(T.names(d)) for d in discards),
        )]

    # -- decide

    def decide(self, state: State, seat: Seat, command: GameCommand, now_ms: int) -> Sequence[GameEvent]:
        if not isinstance(command, self.commands):
            raise InvalidCommand("unknown_command", f"mahjong has no command {type(command).__name__}")
        tile = getattr(command, "tile", None)
        if tile is not None:
            try:
                T.kind(str(tile))
            except ValueError:
                raise InvalidCommand("bad_tile", f"not a tile: {tile!r}") from None
        if isinstance(command, Discard) and not isinstance(command.declare, Declare):
            raise InvalidCommand("bad_declare", "declare must be none, ting or ying_kou")
        s = state
        if s.phase is Phase.OVER:
            raise IllegalMove("hand_over", "the hand is over")
        if s.phase is Phase.DEALING:
            raise IllegalMove("not_started", "the hand has not started")
        if not 0 <= seat < s.players:
            raise InvalidCommand("bad_seat", f"no seat {seat}")
        f = _Flow(self, s, now_ms)
        if isinstance(command, ChoosePair):
            self._choose_pair(f, seat, command)
        elif s.phase is Phase.CHOOSE_PAIR:
            raise IllegalMove("choose_pair_first", "the 对王 pairs are being chosen")
        elif isinstance(command, Peng | Pass) or (isinstance(command, Gang) and s.phase is Phase.CLAIM):
            self._answer(f, seat, command)
        elif s.phase is Phase.CLAIM:
            raise IllegalMove("claim_window", "waiting for answers to the discard")
        elif seat != s.turn:
            raise IllegalMove("not_your_turn", "it is not your turn")
        elif isinstance(command, Discard):
            self._discard(f, seat, command)
        elif isinstance(command, Gang):
            self._own_gang(f, seat, T.kind(command.tile))
        else:
            self._win(f, seat)
        return f.events

    # .. the 对王 pair

    def _choose_pair(self, f: _Flow, seat: int, cmd: ChoosePair) -> None:
        s = f.s
        p = s.seats[seat]
        if s.phase is not Phase.CHOOSE_PAIR or p.pair_chosen:
            raise IllegalMove("no_pair_choice", "there is no pair to choose now")
        k = T.maybe_kind(cmd.tile)
        if k not in L.pairs(p):
            raise IllegalMove("no_such_pair", f"you hold no pair of {cmd.tile}")
        f.emit(PairChosen(seat, cmd.tile))
        self._after_pair(f)

    def _after_pair(self, f: _Flow) -> None:
        if all(p.pair_chosen for p in f.s.seats):
            f.emit(TurnStarted(f.s.dealer, clock.due(f.now, f.s.options.turn_seconds)))

    # .. claims

    def _answer(self, f: _Flow, seat: int, cmd: GameCommand) -> None:
        s = f.s
        if s.phase is not Phase.CLAIM or seat not in s.claim_seats:
            raise IllegalMove("no_claim", "you have nothing to claim")
        if any(a[0] == seat for a in s.answers):
            raise IllegalMove("already_answered", "you already answered")
        peng, gang = claim_options(s, seat)
        if isinstance(cmd, Peng):
            if not peng:
                raise IllegalMove("cannot_peng", "you may not 碰 this tile")
            action = ClaimAction.PENG
        elif isinstance(cmd, Gang):
            if T.kind(cmd.tile) != s.claim_tile or not gang:
                raise IllegalMove("cannot_gang", "you may not 杠 this tile")
            action = ClaimAction.GANG
        else:
            action = ClaimAction.PASS
        f.emit(ClaimAnswered(seat, action))
        self._resolve_claims(f)

    def _resolve_claims(self, f: _Flow, force: bool = False) -> None:
        s = f.s
        if not force and len(s.answers) < len(s.claim_seats):
            return
        order = [(s.claim_from + i) % s.players for i in range(1, s.players)]
        best: tuple[int, int] | None = None
        for seat, action in s.answers:
            rank = {ClaimAction.GANG: 2, ClaimAction.PENG: 1, ClaimAction.PASS: 0}[action]
            if rank and (best is None or (rank, -order.index(seat)) > (best[1], -order.index(best[0]))):
                best = (seat, rank)
        tile = s.claim_tile
        if best is None:
            self._next_draw(f, (s.claim_from + 1) % s.players)
        elif best[1] == 1:
            f.emit(Penged(best[0], T.name(tile), s.claim_from, clock.due(f.now, s.options.turn_seconds)))
        else:
            p = s.seats[best[0]]
            w = waits_after_gang(s, p, T.remove(p.hand, tile, 3), MeldType.MING_GANG, tile)
            f.emit(Ganged(best[0], MeldType.MING_GANG, T.name(tile), s.claim_from, w))
            self._draw(f, best[0], True)

    # .. drawing

    def _draw(self, f: _Flow, seat: int, replacement: bool) -> None:
        s = f.s
        k = s.wall[s.pos]
        lz = L.after_draw(s, seat, T.add(s.seats[seat].hand, k))
        f.emit(Drew(seat, T.name(k), replacement, T.maybe_name(lz), clock.due(f.now, s.options.turn_seconds)))
        self._after_draw(f, seat)

    def _next_draw(self, f: _Flow, seat: int) -> None:
        s = f.s
        if remaining(s) > reserve(s) and not s.final_discard:
            self._draw(f, seat, False)
        else:
            nxt = (s.dealer + 1) % s.players if s.gang_log else s.dealer
            f.emit(HandDrawn(bool(s.gang_log), nxt))

    def _after_draw(self, f: _Flow, seat: int) -> None:
        s = f.s
        p = s.seats[seat]
        if p.declared is Declare.NONE:
            return
        if can_win(s, seat) or gang_options(s, seat):
            return
        f.emit(Discarded(seat, T.name(s.drawn), Declare.NONE, True, ()))
        self._after_discard(f)

    # .. discarding

    def _discard(self, f: _Flow, seat: int, cmd: Discard) -> None:
        s = f.s
        o = s.options
        p = s.seats[seat]
        k = T.kind(cmd.tile)
        if not L.may_discard(p, p.hand, k):
            if k in p.hand:
                raise IllegalMove("locked_laizi", "that laizi may never be discarded")
            raise IllegalMove("no_such_tile", f"you hold no {cmd.tile}")
        if p.declared is not Declare.NONE:
            if k != s.drawn:
                raise IllegalMove("hand_frozen", "after 报听 only the drawn tile is discarded")
            if cmd.declare is not Declare.NONE:
                raise IllegalMove("already_declared", "you have already declared")
        waits: tuple[str, ...] = ()
        if cmd.declare is not Declare.NONE:
            if o.laizi_mode is Mode.DAJIANGWANG and k not in T.WINDS:
                raise IllegalMove("ting_needs_wind", "报听 in 大将王黑风报 is made by discarding a wind")
            if o.laizi_mode is Mode.DUIWANG and k not in T.DRAGONS:
                raise IllegalMove("ting_needs_dragon", "报听 in 对王大将报 is made by discarding 中, 发 or 白")
            rest = T.remove(p.hand, k)
            w = waits_of(o, p, rest, cmd.declare is Declare.YING_KOU)
            if not w:
                code = "not_ready" if cmd.declare is Declare.TING else "not_ying_kou"
                raise IllegalMove(code, "the hand would not be ready after this discard")
            waits = T.names(w)
        f.emit(Discarded(seat, T.name(k), cmd.declare, False, waits))
        self._after_discard(f)

    def _after_discard(self, f: _Flow) -> None:
        s = f.s
        seats = tuple(i for i in range(s.players) if i != s.turn and any(claim_options(s, i)))
        if seats:
            f.emit(ClaimOpened(seats, T.name(s.claim_tile), clock.due(f.now, s.options.claim_seconds)))
        else:
            self._next_draw(f, (s.turn + 1) % s.players)

    # .. own gangs and the win

    def _own_gang(self, f: _Flow, seat: int, k: int) -> None:
        s = f.s
        options = gang_options(s, seat)
        match = [t for t, kk in options if kk == k]
        if not match:
            raise IllegalMove("cannot_gang", f"you may not 杠 {T.name(k)} now")
        t = match[0]
        p = s.seats[seat]
        hand = T.remove(p.hand, k, 4 if t is MeldType.AN_GANG else 1)
        f.emit(Ganged(seat, t, T.name(k), seat, waits_after_gang(s, p, hand, t, k)))
        self._draw(f, seat, True)

    def _win(self, f: _Flow, seat: int) -> None:
        s = f.s
        p = s.seats[seat]
        if p.declared is Declare.NONE:
            raise IllegalMove("not_ready", "only a seat that declared 报听 or 硬扣 may win")
        if s.drawn < 0:
            raise IllegalMove("not_drawn", "wins are self-drawn only")
        sc = seat_score(s, seat)
        if sc is None:
            raise IllegalMove("not_a_win", "the hand does not win")
        f.emit(won(s, seat, sc))

    # -- evolve

    def evolve(self, state: State, event: GameEvent) -> State:
        s = state
        if isinstance(event, Drew):
            k = T.kind(event.tile)
            p = s.seats[event.seat]
            p = replace(p, hand=T.add(p.hand, k), laizi=T.maybe_kind(event.laizi))
            return replace(
                s, seats=put(s.seats, event.seat, p), pos=s.pos + 1, drawn=k, turn=event.seat,
                phase=Phase.TURN, deadline_ms=event.deadline_ms, draws=s.draws + 1,
                claim_tile=-1, claim_from=-1, claim_seats=(), answers=(),
            )
        if isinstance(event, Discarded):
            k = T.kind(event.tile)
            p = s.seats[event.seat]
            p = replace(p, hand=T.remove(p.hand, k), discards=(*p.discards, k))
            if event.declare is not Declare.NONE:
                p = replace(p, declared=event.declare, waits=tuple(T.kind(w) for w in event.waits))
            return replace(
                s, seats=put(s.seats, event.seat, p), drawn=-1, claim_tile=k,
                claim_from=event.seat, final_discard=remaining(s) <= reserve(s),
            )
        if isinstance(event, ClaimOpened):
            return replace(s, phase=Phase.CLAIM, claim_seats=event.seats, answers=(),
                           deadline_ms=event.deadline_ms)
        if isinstance(event, ClaimAnswered):
            return replace(s, answers=(*s.answers, (event.seat, event.action)))
        if isinstance(event, Penged | Ganged):
            return self._evolve_meld(s, event)
        if isinstance(event, Won):
            return replace(s, phase=Phase.OVER, result=event, turn=-1)
        if isinstance(event, HandDrawn):
            return replace(s, phase=Phase.OVER, drawn_hand=event, turn=-1, drawn=-1)
        if isinstance(event, PairChosen):
            p = s.seats[event.seat]
            k = T.maybe_kind(event.tile)
            p = replace(p, pair_chosen=True, laizi=k, locked=2 if k >= 0 else 0)
            return replace(s, seats=put(s.seats, event.seat, p))
        if isinstance(event, TurnStarted):
            return replace(s, phase=Phase.TURN, turn=event.seat, deadline_ms=event.deadline_ms)
        if isinstance(event, Dealt):
            return self._evolve_dealt(s, event)
        if isinstance(event, TimedOut):
            return s
        raise TypeError(f"not a mahjong event: {event!r}")

    def _evolve_meld(self, s: State, event: Penged | Ganged) -> State:
        k = T.kind(event.tile)
        p = s.seats[event.seat]
        seats = s.seats
        if event.from_seat != event.seat:
            giver = seats[event.from_seat]
            seats = put(seats, event.from_seat, replace(giver, discards=giver.discards[:-1]))
        if isinstance(event, Penged):
            hand = T.remove(p.hand, k, 2)
            lock, locked = L.after_meld(s.options, p, k, hand)
            melds = (*p.melds, (MeldType.PENG, k, event.from_seat))
            p = replace(p, hand=hand, melds=melds, locked_suit=lock, locked=locked)
            return replace(
                s, seats=put(seats, event.seat, p), phase=Phase.TURN, turn=event.seat, drawn=-1,
                deadline_ms=event.deadline_ms, claim_tile=-1, claim_from=-1, claim_seats=(), answers=(),
            )
        t = event.meld_type
        if t is MeldType.BU_GANG:
            hand = T.remove(p.hand, k)
            melds = tuple((MeldType.BU_GANG, kk, fr) if tt is MeldType.PENG and kk == k else (tt, kk, fr)
                          for tt, kk, fr in p.melds)
        else:
            hand = T.remove(p.hand, k, 3 if t is MeldType.MING_GANG else 4)
            melds = (*p.melds, (t, k, event.from_seat))
        lock, locked = L.after_meld(s.options, p, k, hand)
        waits = tuple(T.kind(w) for w in event.waits) if p.declared is not Declare.NONE else p.waits
        p = replace(p, hand=hand, melds=melds, locked_suit=lock, locked=locked, waits=waits)
        return replace(
            s, seats=put(seats, event.seat, p), gangs=s.gangs + 1,
            gang_log=(*s.gang_log, (event.seat, t)), turn=event.seat, drawn=-1,
            claim_tile=-1, claim_from=-1, claim_seats=(), answers=(), final_discard=False,
        )

    def _evolve_dealt(self, s: State, e: Dealt) -> State:
        n = len(e.hands)
        seats = []
        for i in range(n):
            p = PlayerState(
                hand=tuple(sorted(T.parse(list(e.hands[i].tiles)))),
                laizi=T.maybe_kind(e.laizi[i]), locked=e.locked[i],
                declared=e.declared[i] if e.declared else Declare.NONE,
                discards=tuple(T.parse(list(e.discards[i].tiles))) if e.discards else (),
                pair_chosen=not e.choose_pair,
            )
            for m in e.melds:  # a position's melds, as if played (the suit lock, locked laizi)
                if m.seat == i:
                    k = T.kind(m.tile)
                    lock, locked = L.after_meld(s.options, p, k, p.hand)
                    p = replace(p, melds=(*p.melds, (m.meld_type, k, m.from_seat)), locked_suit=lock,
                                locked=locked)
            seats.append(p)
        st = replace(
            s, players=n, dealer=e.dealer, wall=tuple(T.parse(list(e.wall))), pos=0,
            indicator=T.maybe_kind(e.indicator), set_aside=tuple(T.parse(list(e.set_aside))),
            seed=e.seed, deadline_ms=e.deadline_ms, gangs=e.gangs,
            gang_log=tuple((m.seat, m.meld_type) for m in e.melds if m.meld_type is not MeldType.PENG),
            phase=Phase.CHOOSE_PAIR if e.choose_pair else Phase.TURN,
            turn=-1 if e.choose_pair else e.dealer,
        )
        if e.choose_pair:
            for i, p in enumerate(seats):
                if not L.pairs(p):
                    seats[i] = replace(p, pair_chosen=True)
        st = replace(st, seats=tuple(seats))
        for i, p in enumerate(st.seats):
            if p.declared is not Declare.NONE and not p.waits:
                ying = p.declared is Declare.YING_KOU
                hand = p.hand if len(p.hand) % 3 == 1 else p.hand[:-1]
                st = replace(st, seats=put(st.seats, i, replace(p, waits=waits_of(s.options, p, hand, ying))))
        return st

    # -- views, hints, time, result

    def view(self, state: State, seat: Seat | None) -> View:
        s = state
        me = -1 if seat is None else seat
        mode = s.options.laizi_mode
        players = []
        for i, p in enumerate(s.seats):
            own = i == me
            public_laizi = own or mode is not Mode.DAJIANGWANG
            melds = tuple(
                MeldView(t, "" if t is MeldType.AN_GANG and not own and s.phase is not Phase.OVER
                         else T.name(k), fr)
                for t, k, fr in p.melds
            )
            exposed = T.names([p.laizi] * p.locked) if (
                mode in (Mode.XIAOSHOUWANG, Mode.DUIWANG) and p.laizi >= 0) else ()
            players.append(PlayerView(
                i, len(p.hand), melds, T.names(p.discards), exposed,
                T.maybe_name(p.laizi) if public_laizi else "", p.declared,
                T.names(sorted(p.hand)) if s.phase is Phase.OVER else (),
            ))
        mine = s.seats[me] if 0 <= me < len(s.seats) else None
        result = s.result
        return View(
            seat=me, phase=s.phase, dealer=s.dealer, turn=s.turn, deadline_ms=s.deadline_ms,
            hand=T.names(mine.hand) if mine else (),
            drawn=T.name(s.drawn) if mine and s.turn == me and s.drawn >= 0 else "",
            waits=T.names(mine.waits) if mine and mine.declared is not Declare.NONE else (),
            indicator=T.maybe_name(s.indicator), wall_count=remaining(s),
            live_count=max(0, remaining(s) - reserve(s)), players=tuple(players),
            claim_tile=T.maybe_name(s.claim_tile) if s.phase is Phase.CLAIM else "",
            claim_from=s.claim_from if s.phase is Phase.CLAIM else -1,
            winner=result.seat if result else -1, win_tile=result.tile if result else "",
            winning_hand=result.concealed if result else (), items=result.items if result else (),
            total=result.total if result else 0,
            legal=_wrap_legal(self.legal(s, me)) if mine else (),
            wall_left=T.names(s.wall[s.pos:]) if s.phase is Phase.OVER else (),
        )

    def legal(self, state: State, seat: Seat) -> Sequence[GameCommand]:
        s = state
        if s.phase in (Phase.OVER, Phase.DEALING) or not 0 <= seat < s.players:
            return []
        p = s.seats[seat]
        if s.phase is Phase.CHOOSE_PAIR:
            return [] if p.pair_chosen else [_PAIRS[k] for k in L.pairs(p)]
        if s.phase is Phase.CLAIM:
            if seat not in s.claim_seats or any(a[0] == seat for a in s.answers):
                return []
            peng, gang = claim_options(s, seat)
            out: list[GameCommand] = [_PASS]
            if peng:
                out.append(_PENG)
            if gang:
                out.append(_GANGS[s.claim_tile])
            return out
        if seat != s.turn:
            return []
        out = []
        if can_win(s, seat):
            out.append(_WIN)
        out += [_GANGS[k] for _, k in gang_options(s, seat)]
        if p.declared is not Declare.NONE:
            if s.drawn >= 0:
                out.append(_DISCARDS[s.drawn])
            return out
        mode = s.options.laizi_mode
        kinds = [k for k in sorted(set(p.hand)) if L.may_discard(p, p.hand, k)]
        ting = ting_candidates(s.options, p, [k for k in kinds if not (
            (mode is Mode.DAJIANGWANG and k not in T.WINDS) or (mode is Mode.DUIWANG and k not in T.DRAGONS))])
        for k in kinds:
            out.append(_DISCARDS[k])
            if k not in ting:  # no tile would complete the hand after it: no 报听 (nor 硬扣)
                continue
            rest = T.remove(p.hand, k)
            w = waits_of(s.options, p, rest, False)
            if w:
                out.append(_TINGS[k])
                if any(d in w for d in T.DRAGONS) and waits_of(s.options, p, rest, True):
                    out.append(_YING_KOUS[k])
        return out

    def deadlines(self, state: State) -> Sequence[Deadline]:
        s = state
        if s.phase is Phase.TURN:
            return clock.to_act(s.turn, s.deadline_ms)
        if s.phase is Phase.CLAIM:
            done = {a[0] for a in s.answers}
            return clock.each((i for i in s.claim_seats if i not in done), s.deadline_ms)
        if s.phase is Phase.CHOOSE_PAIR:
            return clock.each((i for i, p in enumerate(s.seats) if not p.pair_chosen), s.deadline_ms)
        return ()

    def on_timeout(self, state: State, seat: Seat, now_ms: int) -> Sequence[GameEvent]:
        """Auto-play: pass a claim; choose the lowest pair; win if possible, else discard the drawn
        tile (or, after a 碰, the highest discardable tile)."""
        s = state
        clock.running(self.deadlines(s), seat, IllegalMove("not_on_the_clock", clock.OFF_CLOCK))
        f = _Flow(self, s, now_ms)
        f.emit(TimedOut(seat))
        if s.phase is Phase.CHOOSE_PAIR:
            p = s.seats[seat]
            f.emit(PairChosen(seat, T.name(L.pairs(p)[0])))
            self._after_pair(f)
        elif s.phase is Phase.CLAIM:
            f.emit(ClaimAnswered(seat, ClaimAction.PASS))
            self._resolve_claims(f)
        elif can_win(s, seat):
            self._win(f, seat)
        else:
            p = s.seats[seat]
            k = s.drawn if s.drawn >= 0 and L.may_discard(p, p.hand, s.drawn) else max(
                k for k in p.hand if L.may_discard(p, p.hand, k))
            f.emit(Discarded(seat, T.name(k), Declare.NONE, True, ()))
            self._after_discard(f)
        return f.events

    def outcome(self, state: State) -> Outcome | None:
        s = state
        n = s.players
        if s.result is not None:
            w = s.result.seat
            out = Outcome(w, (), (), s.result.transfers, "zimo", first=s.dealer)
            net = out.net(n)
            ranking = tuple(sorted(range(n), key=lambda i: (-net[i], (i - w) % n)))
            return replace(out, ranking=ranking, scores=net)
        if s.drawn_hand is not None:
            reason = "huangzhuang_gang" if s.drawn_hand.gangs else "huangzhuang"
            return Outcome(None, tuple(range(n)), (0,) * n, (), reason, first=s.dealer)
        return None


GAME = Mahjong()
CONTRACT: Game[State, Options, GameCommand, GameEvent] = GAME
"""The game as the contract over its own commands and events: mypy --strict checks ``decide``'s,
``start``'s and ``on_timeout``'s events against what ``evolve`` folds."""

__all__ = ["GAME", "Mahjong"]
