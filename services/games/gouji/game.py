"""够级 Gouji as a decider: §2 of shared/rules/gouji.md (six seats, four decks, two teams).

Seats 0–5 play counter-clockwise (seat i → i+1); teams (联邦) A = {0, 2, 4}, B = {1, 3, 5};
对门 (the opposite seat, always an opponent) of i is i+3. A round (一轮) starts with a lead
(发牌); the top set T and its owner O are answered in turn; 够级牌 (high sets) may be answered
only by O's 对门 (a 够级 duel), by 捎牌 (burn) declarers and by the 无头 player; when nobody
else will answer, O's 对门 has the 扣牌 (closing) decision. Places: 头科 (1st) … 大落 (6th).

The data is in ``model``, who may act in ``turns``, the deal's aftermath (革命, 进贡/还贡) in
``tribute``, the end and scores in ``scoring``; this module decides and evolves.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from chieu.games import clock
from chieu.games.common import TimedOut, members, put, wrapper
from chieu.games.core import (
    BadOptions,
    Deadline,
    Game,
    IllegalMove,
    InvalidCommand,
    Outcome,
    RuleViolation,
    Seat,
    Setup,
    Transfer,
)
from chieu.games.gouji import cards as C
from chieu.games.gouji.cards import BJ, DECK, SJ, Counts
from chieu.games.gouji.model import (
    REPORT_AT,
    SEATS,
    Burn,
    Burned,
    BurnFailed,
    BurnReleased,
    Cards,
    Closed,
    Command,
    DealCancelled,
    Dealt,
    DeclareRevolution,
    DeclineRevolution,
    Finished,
    GameCommand,
    GameEnded,
    GameEvent,
    Leads,
    Owed,
    Pass,
    Passed,
    Play,
    Played,
    Redealt,
    ReturnCards,
    RevolutionDeclared,
    RevolutionDeclined,
    RevolutionOpened,
    RoundEnded,
    SatOut,
    State,
    TributePaid,
    TributeReturned,
    TurnStarted,
    View,
    opposite,
    seat_cards,
    team,
)
from chieu.games.gouji.options import Options, option_values, parse_options
from chieu.games.gouji.scoring import SIT_OUT_PLACE, game_end
from chieu.games.gouji.tribute import after_deal, dues, encode_carry, pay, return_choices
from chieu.games.gouji.turns import (
    active,
    four_way,
    free_places,
    may_burn,
    may_respond,
    next_active,
    next_after,
    wutou,
)

_wrap = wrapper(Command)


def _bad(code: str, msg: str) -> IllegalMove:
    return IllegalMove(code, msg)


class Gouji:
    """The 够级 game object registered under ``gouji``."""

    key = "gouji"
    title = "够级"
    min_players = 6
    max_players = 6
    commands = members(GameCommand)
    events = members(GameEvent)
    option_type = Options
    view_type = View

    pot_options: tuple[str, ...] = ()
    """The options that change the gà pot's rules: 够级 has no pot."""

    parse_options = staticmethod(parse_options)
    option_values = staticmethod(option_values)

    def initial(self, options: Options, players: int) -> State:
        if players != SEATS:
            raise BadOptions("够级 is played by exactly six players")
        return State(options=options)

    # -- start

    def start(self, setup: Setup) -> Sequence[GameEvent]:
        o: Options = setup.options
        hands, shangban = C.deal(setup.seed, "deal", SEATS)
        prev = setup.previous
        first = clock.first_seat(setup, lambda p: None if p.first is None else (p.first + 1) % SEATS,
                                 otherwise=shangban if o.first_leader == "shangban" and shangban is not None
                                 else setup.owner)
        seed = setup.seed.hex() if o.ge_ming else ""
        due = dues(o, prev.ranking, prev.carry) if prev is not None else []
        return [Dealt(setup.hand_no, seat_cards(hands), first, seed),
                *after_deal(o, hands, first, due, setup.now_ms)]

    # -- decide

    def decide(self, state: State, seat: Seat, command: GameCommand, now_ms: int) -> Sequence[GameEvent]:
        s = state
        if not isinstance(seat, int) or not 0 <= seat < SEATS:
            raise InvalidCommand("bad_seat", f"no seat {seat!r}")
        if isinstance(command, ReturnCards):
            return self._return(s, seat, command, now_ms, auto=False)
        if isinstance(command, DeclareRevolution | DeclineRevolution):
            return self._revolution(s, seat, isinstance(command, DeclareRevolution), now_ms,
                                    auto=False)
        if not isinstance(command, Play | Pass | Burn):
            raise InvalidCommand("unknown_command", f"够级 has no command {type(command).__name__}")
        if s.phase != "play":
            raise _bad("game_over" if s.phase == "over" else "not_playing",
                       f"no play in the {s.phase} phase")
        if isinstance(command, Burn):
            return self._burn(s, seat, command, now_ms)
        if seat != s.to_act:
            if (isinstance(command, Play) and s.top_gouji and s.top is not None
                    and active(s, seat) and seat != s.owner):
                raise _bad("gouji_reserved",
                           "only the 对门 (or a 捎牌 declaration) may answer a 够级 set")
            raise _bad("not_your_turn", "it is not your turn")
        if isinstance(command, Pass):
            return self._pass(s, seat, now_ms, auto=False)
        return self._play(s, seat, self._cards(s, seat, command.cards), now_ms)

    def _cards(self, s: State, seat: int, cards: Sequence[str]) -> Counts:
        if isinstance(cards, str):
            raise InvalidCommand("bad_cards", "cards are a list of card names")
        try:
            c = C.to_counts(C.parse_cards(cards))
        except ValueError as e:
            raise InvalidCommand("bad_cards", str(e)) from None
        if sum(c) == 0:
            raise InvalidCommand("bad_cards", "a set has at least one card")
        if not C.contains(s.hands[seat], c):
            raise _bad("not_in_hand", "you do not hold those cards")
        if not C.is_set(c):
            raise _bad("illegal_set", "a set is one rank plus any 2s and jokers")
        if s.options.bie_san:
            self._bie_san(s.hands[seat], c)
        return c

    @staticmethod
    def _bie_san(hand: Counts, c: Counts) -> None:
        """憋三: 3s only in the player's last set; all of one's 4s together."""
        if c[0] and c != hand:
            raise _bad("bie_san", "憋三: 3s may only be played as your last set")
        if c[1] and c[1] != hand[1]:
            raise _bad("bie_san", "憋三: all of your 4s must be played together")

    def _check_beats(self, s: State, c: Counts) -> None:
        k = C.key(c)
        if len(k) != len(s.top_key):
            raise _bad("wrong_size", f"the answer must have {len(s.top_key)} cards")
        if not C.beats_key(k, s.top_key):
            raise _bad("not_higher", "every card must be higher than the card it meets")

    def _play(self, s: State, seat: int, c: Counts, now_ms: int) -> list[GameEvent]:
        if s.sealed:
            raise _bad("sealed", "this answer to a 够死级 can only be taken by 捎牌 (Burn)")
        if not s.leading:
            self._check_beats(s, c)
        rest = C.sub(s.hands[seat], c)
        if s.burning[seat] >= 0 and any(rest):
            if s.leading and not (c[SJ] or c[BJ]):
                return self._fail(s, seat, "jokerless_lead", now_ms)
            if not C.burn_ok(rest):
                return self._fail(s, seat, "precondition", now_ms)
        sealed = (not s.leading and s.top_gouji and not active(s, s.owner)
                  and s.places[s.owner] in (1, 2) and seat == opposite(s.owner))
        gouji = sealed or (C.is_gouji(c) and not four_way(s))
        events: list[GameEvent] = []
        if not s.leading and s.burning[s.owner] >= 0 and seat == opposite(s.owner):
            events.append(BurnReleased(s.owner))
        events.append(Played(seat, C.names(C.from_counts(c)), s.leading, gouji, sealed))
        return self._after_play(s, seat, events, rest, now_ms)

    def _burn(self, s: State, seat: int, cmd: Burn, now_ms: int) -> list[GameEvent]:
        if not may_burn(s, seat):
            raise _bad("cannot_burn", "捎牌 needs a 够级 set on the table that its owner's 对门 "
                       "has not yet acted on, and an active player other than its owner and 对门")
        c = self._cards(s, seat, cmd.cards)
        self._check_beats(s, c)
        rest = C.sub(s.hands[seat], c)
        if not C.burn_ok(rest):
            raise _bad("burn_precondition",
                       "捎牌 needs jokers ≥ ranks − 1 among the cards left after the burn")
        events: list[GameEvent] = [Burned(seat, s.owner, C.names(C.from_counts(c)))]
        return self._after_play(s, seat, events, rest, now_ms)

    def _after_play(self, s: State, seat: int, events: list[GameEvent], rest: Counts,
                    now_ms: int) -> list[GameEvent]:
        after = s
        for e in events:
            after = self.evolve(after, e)
        if sum(rest) == 0:
            fin = Finished(seat, free_places(after)[0])
            events.append(fin)
            after = self.evolve(after, fin)
            end = game_end(after)
            if end is not None:
                return [*events, end]
        return events + self._next(after, seat, now_ms)

    def _next(self, s: State, actor: int, now_ms: int) -> list[GameEvent]:
        nxt = next_after(s, actor)
        if nxt is not None:
            return [TurnStarted(nxt[0], False, nxt[1], clock.due(now_ms, s.options.turn_timeout_s))]
        return self._round_over(s, now_ms)

    def _round_over(self, s: State, now_ms: int) -> list[GameEvent]:
        o = s.owner
        leader = o if active(s, o) else next_active(s, o, include=False)
        return [RoundEnded(o, leader),
                TurnStarted(leader, True, False, clock.due(now_ms, s.options.turn_timeout_s))]

    def _pass(self, s: State, seat: int, now_ms: int, auto: bool) -> list[GameEvent]:
        if s.leading:
            raise _bad("must_lead", "the leader must play a set")
        if s.kou:
            return [Closed(seat, auto), *self._round_over(s, now_ms)]
        after = self.evolve(s, Passed(seat, auto))
        nxt = next_after(after, seat)
        if nxt is None and seat == opposite(s.owner):
            return [Closed(seat, auto), *self._round_over(s, now_ms)]
        return [Passed(seat, auto), *self._next(after, seat, now_ms)]

    def _fail(self, s: State, seat: int, reason: str, now_ms: int) -> list[GameEvent]:
        place = free_places(s)[-1]
        fail = BurnFailed(seat, place, reason, C.names(C.from_counts(s.hands[seat])))
        after = self.evolve(s, fail)
        end = game_end(after)
        if end is not None:
            return [fail, end]
        burned = s.burning[seat]
        leader = next_active(after, burned, include=True)
        return [fail, RoundEnded(None, leader),
                TurnStarted(leader, True, False, clock.due(now_ms, s.options.turn_timeout_s))]

    def _revolution(self, s: State, seat: int, declare: bool, now_ms: int,
                    auto: bool) -> list[GameEvent]:
        if s.phase != "revolution":
            raise _bad("not_revolution", "革命 is declared only in the window after the deal")
        if seat not in s.eligible:
            raise _bad("not_eligible", "only a seat holding no 2s and no jokers, that has not "
                       "yet decided, may declare 革命")
        ev: GameEvent = RevolutionDeclared(seat) if declare else RevolutionDeclined(seat, auto)
        after = self.evolve(s, ev)
        if after.eligible:
            return [ev]
        return [ev, *self._close_revolution(after, now_ms)]

    def _close_revolution(self, s: State, now_ms: int) -> list[GameEvent]:
        """Two or more declarers: 流局 and a redeal; one: he sits out; none: play on."""
        o = s.options
        if len(s.revolted) >= 2:
            n = s.deal_no + 1
            hands, _ = C.deal(bytes.fromhex(s.seed), f"redeal:{n}", SEATS)
            return [DealCancelled(s.revolted), Redealt(n, seat_cards(hands)),
                    *after_deal(o, hands, s.first, s.dues, now_ms)]
        if s.revolted:
            p = s.revolted[0]
            return [SatOut(p, SIT_OUT_PLACE, C.names(C.from_counts(s.hands[p]))),
                    *pay(o, put(s.hands, p, (0,) * C.NRANKS), s.first, s.dues, p, now_ms)]
        return pay(o, s.hands, s.first, s.dues, -1, now_ms)

    def _return(self, s: State, seat: int, cmd: ReturnCards, now_ms: int,
                auto: bool) -> list[GameEvent]:
        if s.phase != "tribute":
            raise _bad("not_tribute", "no tribute is being returned")
        due = next((d for d in s.owed if d.seat == seat), None)
        if due is None:
            raise _bad("nothing_owed", "you owe no cards")
        c = self._cards_any(s, seat, cmd.cards)
        if sum(c) != due.count:
            raise _bad("wrong_count", f"return exactly {due.count} card(s)")
        events: list[GameEvent] = [TributeReturned(seat, due.to_seat, C.names(C.from_counts(c)), auto)]
        if len(s.owed) == 1:
            leader = s.first if s.first != s.sitting else (s.first + 1) % SEATS
            events.append(TurnStarted(leader, True, False,
                                      clock.due(now_ms, s.options.turn_timeout_s)))
        return events

    @staticmethod
    def _cards_any(s: State, seat: int, cards: Sequence[str]) -> Counts:
        if isinstance(cards, str):
            raise InvalidCommand("bad_cards", "cards are a list of card names")
        try:
            c = C.to_counts(C.parse_cards(cards))
        except ValueError as e:
            raise InvalidCommand("bad_cards", str(e)) from None
        if not C.contains(s.hands[seat], c):
            raise _bad("not_in_hand", "you do not hold those cards")
        return c

    # -- evolve

    def evolve(self, state: State, event: GameEvent) -> State:
        s = state
        if isinstance(event, Played | Burned):
            c = C.to_counts(C.parse_cards(event.cards))
            hands = put(s.hands, event.seat, C.sub(s.hands[event.seat], c))
            s = replace(
                s, hands=hands, pile=C.add(s.pile, c), top=c, top_key=C.key(c),
                owner=event.seat, duimen_acted=False, last_pass=-1, leading=False, kou=False,
                to_act=None,
            )
            if isinstance(event, Burned):
                return replace(s, top_gouji=True, sealed=False,
                               burning=put(s.burning, event.seat, event.burned_seat))
            return replace(s, top_gouji=event.gouji, sealed=event.sealed)
        if isinstance(event, TurnStarted):
            if event.lead:
                s = replace(s, top=None, top_key=(), owner=-1, top_gouji=False, sealed=False,
                            passed=(False,) * SEATS, last_pass=-1, duimen_acted=False)
            return replace(s, phase="play", to_act=event.seat, leading=event.lead, kou=event.kou,
                           deadline_ms=event.deadline_ms)
        if isinstance(event, Passed):
            return replace(s, passed=put(s.passed, event.seat, True), last_pass=event.seat,
                           to_act=None, duimen_acted=s.duimen_acted
                           or event.seat == opposite(s.owner))
        if isinstance(event, Closed | RoundEnded | TimedOut):
            return replace(s, to_act=None) if not isinstance(event, TimedOut) else s
        if isinstance(event, Finished):
            burned = s.burning[event.seat]
            shao = s.shao if burned < 0 or burned in s.shao else (*s.shao, burned)
            return replace(s, places=put(s.places, event.seat, event.place),
                           burning=put(s.burning, event.seat, -1), shao=shao)
        if isinstance(event, BurnReleased):
            return replace(s, burning=put(s.burning, event.seat, -1))
        if isinstance(event, BurnFailed):
            dead = s.hands[event.seat]
            return replace(
                s, places=put(s.places, event.seat, event.place),
                failed=put(s.failed, event.seat, True),
                burning=put(s.burning, event.seat, -1),
                hands=put(s.hands, event.seat, (0,) * C.NRANKS), pile=C.add(s.pile, dead),
                to_act=None,
            )
        if isinstance(event, Dealt):
            hands = tuple(C.to_counts(C.parse_cards(h.cards)) for h in event.hands)
            pile = DECK
            for h in hands:
                pile = C.sub(pile, h)
            return replace(State(options=s.options), phase="tribute", hand_no=event.hand_no,
                           first=event.first, hands=hands, pile=pile, seed=event.seed)
        if isinstance(event, TributePaid):
            c = C.to_counts(C.parse_cards(event.cards))
            hands = put(s.hands, event.from_seat, C.sub(s.hands[event.from_seat], c))
            hands = put(hands, event.to_seat, C.add(hands[event.to_seat], c))
            return replace(s, phase="tribute", hands=hands, deadline_ms=event.deadline_ms,
                           owed=(*s.owed, Owed(event.to_seat, event.from_seat, len(event.cards))))
        if isinstance(event, TributeReturned):
            c = C.to_counts(C.parse_cards(event.cards))
            hands = put(s.hands, event.from_seat, C.sub(s.hands[event.from_seat], c))
            hands = put(hands, event.to_seat, C.add(hands[event.to_seat], c))
            owed = list(s.owed)
            i = next((i for i, d in enumerate(owed)
                      if d.seat == event.from_seat and d.to_seat == event.to_seat), None)
            if i is not None:
                del owed[i]
            return replace(s, hands=hands, owed=tuple(owed))
        if isinstance(event, RevolutionOpened):
            return replace(s, phase="revolution", eligible=event.eligible, revolted=(),
                           dues=event.dues, deadline_ms=event.deadline_ms)
        if isinstance(event, RevolutionDeclared | RevolutionDeclined):
            revolted = s.revolted
            if isinstance(event, RevolutionDeclared):
                revolted = (*revolted, event.seat)
            return replace(s, eligible=tuple(p for p in s.eligible if p != event.seat),
                           revolted=revolted)
        if isinstance(event, DealCancelled):
            return replace(s, eligible=(), revolted=())
        if isinstance(event, Redealt):
            hands = tuple(C.to_counts(C.parse_cards(h.cards)) for h in event.hands)
            pile = DECK
            for h in hands:
                pile = C.sub(pile, h)
            return replace(s, phase="tribute", hands=hands, pile=pile, deal_no=event.deal_no)
        if isinstance(event, SatOut):
            dead = s.hands[event.seat]
            return replace(s, sitting=event.seat, eligible=(),
                           places=put(s.places, event.seat, event.place),
                           hands=put(s.hands, event.seat, (0,) * C.NRANKS),
                           pile=C.add(s.pile, dead))
        if isinstance(event, GameEnded):
            return replace(s, phase="over", places=event.places, end=event, to_act=None,
                           leading=False, kou=False)
        raise TypeError(f"not a 够级 event: {event!r}")

    # -- views, hints, time, result

    def view(self, state: State, seat: Seat | None) -> View:
        s = state
        me = -1 if seat is None else seat
        owe = sum(d.count for d in s.owed if d.seat == me)
        answer: list[int] = []
        if s.top is not None and s.phase == "play":
            answer = [p for p in range(SEATS) if may_respond(s, p)]
            k = opposite(s.owner)
            if active(s, k) and not s.sealed and k not in answer:
                answer.append(k)
        return View(
            seat=me, phase=s.phase,
            hand=C.names(C.from_counts(s.hands[me])) if me >= 0 else (),
            counts=tuple(n if n <= REPORT_AT else -1 for n in map(sum, s.hands)),
            top=C.names(C.from_counts(s.top)) if s.top is not None else (),
            top_owner=s.owner, top_gouji=s.top_gouji, may_answer=tuple(sorted(answer)),
            may_burn=tuple(p for p in range(SEATS) if may_burn(s, p)),
            to_act=-1 if s.to_act is None else s.to_act, leading=s.leading, kou=s.kou,
            deadline_ms=s.deadline_ms if s.to_act is not None or s.owed or s.eligible else 0,
            passed=tuple(p for p in range(SEATS) if s.passed[p]),
            places=s.places, burning=tuple(p for p in range(SEATS) if s.burning[p] >= 0),
            four_way=four_way(s), wutou=tuple(p for p in range(SEATS) if active(s, p)
                                              and wutou(s, p)),
            owe_return=owe, scores=s.end.scores if s.end is not None else (),
            revolution=s.eligible, revolted=s.revolted, sitting_out=s.sitting,
            revealed=seat_cards(s.hands) if s.end is not None else (),
            **self._legal_view(s, me),
        )

    def _legal_view(self, s: State, seat: int) -> dict[str, Any]:
        """The view's ``legal`` and, for a seat leading with 憋三 off, ``legal_leads``: its
        sets as a product of its wild parts and base parts, not one by one (a 36-card hand
        leads any of some 700 sets)."""
        if seat < 0:
            return {}
        if s.options.bie_san or s.phase != "play" or seat != s.to_act or not s.leading or not active(s, seat):
            return {"legal": _wrap(self.legal(s, seat))}
        h = s.hands[seat]
        wilds = tuple(
            Cards(("BJ",) * bj + ("SJ",) * sj + ("2",) * twos)
            for bj in range(h[BJ] + 1) for sj in range(h[SJ] + 1) for twos in range(h[C.TWO] + 1)
        )
        bases = (Cards(()), *(Cards((C.NAMES[r],) * n) for r in range(C.TWO) for n in range(1, h[r] + 1)))
        return {"legal": (), "legal_leads": Leads(wilds, bases)}  # no top set: nothing to pass or burn

    def legal_sets(self, state: State, seat: Seat) -> list[tuple[str, Counts]]:
        """Legal plays as (command kind, set): ``play``, ``burn``, ``pass`` (empty set)."""
        s = state
        out: list[tuple[str, Counts]] = []
        if s.phase != "play" or not active(s, seat):
            return out
        hand = s.hands[seat]
        bie = s.options.bie_san
        if seat == s.to_act:
            if s.leading:
                sets = list(C.all_sets(hand))
            else:
                out.append(("pass", (0,) * C.NRANKS))
                sets = [] if s.sealed else list(C.answers(hand, s.top_key))
            for c in sets:
                if bie and not _bie_ok(hand, c):
                    continue
                out.append(("play", c))
        if may_burn(s, seat):
            for c in C.answers(hand, s.top_key):
                if C.burn_ok(C.sub(hand, c)) and not (bie and not _bie_ok(hand, c)):
                    out.append(("burn", c))
        return out

    def legal(self, state: State, seat: Seat) -> Sequence[GameCommand]:
        s = state
        if s.phase == "revolution":
            return [DeclareRevolution(), DeclineRevolution()] if seat in s.eligible else []
        if s.phase == "tribute":
            due = next((d for d in s.owed if d.seat == seat), None)
            if due is None:
                return []
            return [ReturnCards(C.names(C.from_counts(c)))
                    for c in return_choices(s.hands[seat], due.count)]
        out: list[GameCommand] = []
        for kind, c in self.legal_sets(s, seat):
            if kind == "pass":
                out.append(Pass())
            else:
                cards = C.names(C.from_counts(c))
                out.append(Play(cards) if kind == "play" else Burn(cards))
        return out

    def deadlines(self, state: State) -> Sequence[Deadline]:
        s = state
        if s.phase == "revolution":
            return clock.each(s.eligible, s.deadline_ms)
        if s.phase == "tribute":
            return clock.each((d.seat for d in s.owed), s.deadline_ms)
        return clock.to_act(s.to_act if s.phase == "play" else None, s.deadline_ms)

    def on_timeout(self, state: State, seat: Seat, now_ms: int) -> Sequence[GameEvent]:
        """Auto-play: pass (扣 on the 扣牌 decision) when answering, the lowest legal set when
        leading, the lowest cards when returning tribute, no 革命 in its window."""
        s = state
        clock.running(self.deadlines(s), seat)
        if s.phase == "revolution":
            return [TimedOut(seat), *self._revolution(s, seat, False, now_ms, auto=True)]
        if s.phase == "tribute":
            due = next(d for d in s.owed if d.seat == seat)
            low = C.from_counts(s.hands[seat])[::-1][: due.count]
            cmd = ReturnCards(C.names(low))
            return [TimedOut(seat), *self._return(s, seat, cmd, now_ms, auto=True)]
        if not s.leading:
            return [TimedOut(seat), *self._pass(s, seat, now_ms, auto=True)]
        return [TimedOut(seat), *self._play(s, seat, lowest_lead(s, seat), now_ms)]

    def outcome(self, state: State) -> Outcome | None:
        e = state.end
        if e is None:
            return None
        ranking = tuple(sorted(range(SEATS), key=lambda p: e.places[p]))
        a, b = e.totals
        winner = None if a == b else next(p for p in ranking if team(p) == (0 if a > b else 1))
        transfers = tuple(
            Transfer(p, opposite(p), abs(e.scores[p]), "gouji")
            for p in range(SEATS) if e.scores[p] < 0
        )
        return Outcome(winner, ranking, e.scores, transfers, e.reason, first=state.first,
                       carry=encode_carry(e.shao, e.men))


def _bie_ok(hand: Counts, c: Counts) -> bool:
    """Whether set ``c`` from ``hand`` keeps 憋三."""
    try:
        Gouji._bie_san(hand, c)
    except RuleViolation:
        return False
    return True


def lowest_lead(s: State, seat: int) -> Counts:
    """The lowest legal lead: highest card lowest, then fewest cards; a burner avoids sets that
    would fail his burn when he can."""
    hand = s.hands[seat]
    burner = s.burning[seat] >= 0

    def ok(c: Counts) -> bool:
        if s.options.bie_san and not _bie_ok(hand, c):
            return False
        rest = C.sub(hand, c)
        return not burner or not sum(rest) or ((c[SJ] or c[BJ]) > 0 and C.burn_ok(rest))

    sets = list(C.all_sets(hand))
    good = [c for c in sets if ok(c)] or [
        c for c in sets if not s.options.bie_san or _bie_ok(hand, c)] or sets
    return min(good, key=lambda c: (C.key(c)[0], sum(c), C.key(c)))


GAME = Gouji()
CONTRACT: Game[State, Options, GameCommand, GameEvent] = GAME
"""The game as the contract over its own commands and events: mypy --strict checks ``decide``'s,
``start``'s and ``on_timeout``'s events against what ``evolve`` folds."""
