"""Phỏm (Tá lả), Net Việt rules PH-R1…PH-R29 of shared/rules/phom.md, as a decider.

Seats are in turn order (P1 = seat 0); the dealer (người cầm cái) may be any seat. Money is
settlement data: every payment of §A4.5 is a :class:`Transfer` emitted in the event where it
happens (the gà deal in ``Dealt``, eats in ``Ate``, the end in ``WonU`` / ``BaoCaught`` /
``ULao`` / ``Scored``), the gà pot being the party ``None``; the amounts are :mod:`scoring`'s,
the deal :mod:`deal`'s, the card tests (phỏm, cạ, cover, Ù) :mod:`cards`'.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from chieu.games import clock, fair
from chieu.games.common import TimedOut, TurnPassed, members, put, wrapper
from chieu.games.core import (
    Deadline,
    Game,
    IllegalMove,
    InvalidCommand,
    Outcome,
    RuleViolation,
    Seat,
    Setup,
)
from chieu.games.phom import cards as C
from chieu.games.phom import scoring
from chieu.games.phom.deal import deal, deal_events, next_dealer
from chieu.games.phom.model import (
    Accuse,
    AccusedWrongly,
    Ate,
    BaoCaught,
    ClaimU,
    Command,
    Dealt,
    Discard,
    Discarded,
    Draw,
    Drew,
    Eat,
    GameCommand,
    GameEvent,
    HandSorted,
    Laid,
    Lay,
    Meld,
    Phase,
    Scored,
    SeatInfo,
    Send,
    Sent,
    Sort,
    State,
    TurnKind,
    UClaimed,
    ULao,
    View,
    WindowClosed,
    WinKind,
    WonU,
    replace,
)
from chieu.games.phom.options import POT_OPTIONS, Options, option_values, parse_options

_wrap = wrapper(Command)

_ACTING = (TurnKind.LAYDOWN, TurnKind.TAI)
"""The turns in which a player lays and sends: his lay-down turn (vòng hạ) and a tái."""


def _card(text: object) -> int:
    if not isinstance(text, str):
        raise InvalidCommand("bad_card", f"a card is written like 7♠, not {text!r}")
    try:
        return C.parse_card(text)
    except ValueError:
        raise InvalidCommand("bad_card", f"not a card: {text!r}") from None


def _drop_last(row: tuple[int, ...], card: int) -> tuple[int, ...]:
    for i in range(len(row) - 1, -1, -1):
        if row[i] == card:
            return row[:i] + row[i + 1 :]
    return row


class Phom:
    """The Phỏm game object registered under ``phom``."""

    key = "phom"
    title = "Phỏm"
    min_players = 2
    max_players = 4
    commands = members(GameCommand)
    events = members(GameEvent)
    option_type = Options
    view_type = View
    pot_options: tuple[str, ...] = POT_OPTIONS
    """The options that change the gà pot's rules (nuôi gà on or off): changeable only while the
    pot is 0 (§A4.6)."""

    def __init__(self) -> None:
        self._last: tuple[State, object, State] | None = None
        """The last evolve: (state, event, next state), for the fold of a decider's look-ahead."""

    parse_options = staticmethod(parse_options)
    option_values = staticmethod(option_values)

    def initial(self, options: Options, players: int) -> State:
        return State(options=options, players=players)

    # ------------------------------------------------------------ start

    def start(self, setup: Setup) -> Sequence[GameEvent]:
        """Deal (PH-R5…R8): the deck order from the seed; one card at a time from the owner."""
        n = setup.players
        if not 2 <= n <= 4:
            raise IllegalMove("bad_players", "Phỏm is played by 2 to 4 players")
        prev = setup.previous
        dealer = clock.first_seat(setup, lambda p: next_dealer(p.winner, setup.owner, n),
                                  otherwise=next_dealer(None, setup.owner, n))
        hands, stock, unused = deal(setup.seed, n, setup.owner, dealer)
        return deal_events(
            setup.options, n, dealer, setup.owner, hands, stock, unused,
            prev.pot_balance if prev else 0, setup.now_ms, setup.seed, window=True,
        )

    # ------------------------------------------------------------ decide

    def decide(self, state: State, seat: Seat, command: GameCommand, now_ms: int) -> Sequence[GameEvent]:
        s = state
        if not isinstance(command, self.commands):
            raise InvalidCommand("unknown_command", f"Phỏm has no command {type(command).__name__}")
        if not (isinstance(seat, int) and 0 <= seat < s.players):
            raise InvalidCommand("bad_seat", f"no seat {seat!r}")
        if s.phase is Phase.OVER:
            raise IllegalMove("game_over", "the game is over")
        if s.phase is Phase.NEW:
            raise IllegalMove("not_started", "the cards are not dealt yet")
        if isinstance(command, Sort):
            return [HandSorted(seat)]
        if isinstance(command, Accuse):
            return self._accuse(s, seat, command)
        if s.phase is Phase.WINDOW:
            if isinstance(command, ClaimU):
                return self._window_claim(s, seat)
            raise IllegalMove("u_window", "the Ù window is open; the dealer plays when it closes")
        if seat != s.turn:
            raise IllegalMove("not_your_turn", "it is not your turn")
        if isinstance(command, Draw):
            return self._take(s, seat, now_ms, None)
        if isinstance(command, Eat):
            return self._take(s, seat, now_ms, command)
        if isinstance(command, ClaimU):
            return self._claim_u(s, seat)
        if isinstance(command, Discard):
            return self._discard(s, seat, command, now_ms)
        if isinstance(command, Lay):
            return self._lay(s, seat, command)
        assert isinstance(command, Send)
        return self._send(s, seat, command)

    # -- the Ù window and Ù

    def _window_claim(self, s: State, seat: int) -> list[GameEvent]:
        if any(c[0] == seat for c in s.claims):
            raise IllegalMove("already_claimed", "you have already claimed Ù")
        hand = s.hands[seat]
        kind: WinKind | None = None
        if C.is_u_khan(hand):
            kind = WinKind.KHAN
        elif seat == s.dealer:
            k = C.u_kind(hand, 0)
            kind = WinKind(k) if k else None
        if kind is None:
            raise IllegalMove("not_u", "Bạn chưa ù được (no ù khan, no natural Ù)")
        if seat == s.dealer:
            return [scoring.won(s, seat, kind, -1)]
        return [UClaimed(seat, kind)]

    def close_window(self, s: State, now_ms: int) -> list[GameEvent]:
        """The window ends: the earliest valid claim from the dealer wins, else the dealer plays."""
        events: list[GameEvent] = [WindowClosed()]
        if s.claims:
            n = s.players
            seat, kind = min(s.claims, key=lambda c: (c[0] - s.dealer) % n)
            events.append(scoring.won(s, seat, kind, -1))
        else:
            events.append(TurnPassed(s.dealer, clock.due(now_ms, s.options.turn_seconds)))
        return events

    def _claim_u(self, s: State, seat: int) -> list[GameEvent]:
        if not s.taken and s.turn_kind is not TurnKind.FIRST:
            raise IllegalMove("must_take_first", "Ù is pressed after eating or drawing")
        k = C.u_kind(s.hands[seat], s.eaten[seat])
        if k is not None:
            return [scoring.won(s, seat, WinKind(k), -1)]
        if s.options.allow_u_lao:
            return [scoring.u_lao(s, seat)]
        raise IllegalMove("not_u", "Bạn chưa ù được (your hand is not Ù)")

    # -- bắt báo

    def _accuse(self, s: State, seat: int, cmd: Accuse) -> list[GameEvent]:
        t = cmd.target
        if not (isinstance(t, int) and 0 <= t < s.players):
            raise InvalidCommand("bad_seat", f"no seat {t!r} to accuse")
        if t == seat:
            raise IllegalMove("self_accusation", "you cannot accuse yourself")
        if C.is_bao(s.hands[t], s.eaten[t]):
            return [scoring.caught(s, t, seat)]
        return [AccusedWrongly(seat, t, scoring.wrong_accusation(s.options, seat, t))]

    # -- take: eat or draw

    def _take(self, s: State, seat: int, now_ms: int, eat: Eat | None) -> list[GameEvent]:
        if s.turn_kind is TurnKind.FIRST:
            raise IllegalMove("dealer_first_turn", "the dealer's first turn is a discard only")
        if s.taken:
            raise IllegalMove("already_taken", "you have already eaten or drawn this turn")
        if eat is None:
            if not s.stock:
                raise IllegalMove("stock_empty", "the usable stock is empty")
            ev: GameEvent = Drew(seat, C.NAMES[s.stock[0]])
            after = self.evolve(s, ev)
            if s.turn_kind is TurnKind.LAYDOWN and C.is_bao(after.hands[seat], after.eaten[seat]):
                return [ev, scoring.caught(after, seat, -1)]
            return [ev]
        ate = self._ate(s, seat, eat)
        after = self.evolve(s, ate)
        hand, eaten = after.hands[seat], after.eaten[seat]
        if ate.eats >= 3:
            if C.is_bao(hand, eaten):
                return [ate, scoring.caught(after, seat, -1)]
            kind = WinKind.TRON if C.is_tron(hand, eaten) else WinKind.THUONG
            victim = ate.victim if s.options.u_den else -1
            return [ate, scoring.won(after, seat, kind, victim)]
        if s.turn_kind is TurnKind.TAI and C.is_tron(hand, eaten):
            return [ate, scoring.won(after, seat, WinKind.TRON, -1)]
        if s.turn_kind is TurnKind.LAYDOWN and C.is_bao(hand, eaten):
            return [ate, scoring.caught(after, seat, -1)]
        return [ate]

    def _ate(self, s: State, seat: int, eat: Eat) -> Ate:
        n, o = s.players, s.options
        card = s.eatable
        victim = (seat - 1) % n
        if card < 0:
            raise IllegalMove("nothing_to_eat", "there is no discard to eat")
        free = s.hands[seat] & ~s.eaten[seat]
        if eat.partners:
            if len(eat.partners) != 2:
                raise InvalidCommand("bad_partners", "name two partner cards, or none")
            pm = C.mask_of(_card(p) for p in eat.partners)
            if pm & free != pm or pm.bit_count() != 2 or not C.is_phom_mask(pm | 1 << card):
                raise IllegalMove("illegal_eat", "those cards do not make a phỏm with the discard")
        elif not C.can_eat(card, free):
            raise IllegalMove("illegal_eat", f"{C.NAMES[card]} makes no phỏm with two of your cards")
        k = s.eats[seat] + 1
        chot = s.d[seat] >= 3 and (o.chot_in_tai or s.laid_down[seat] < 0)
        pay = scoring.eat_payment(o, victim, seat, k, chot)
        f = s.order[0]
        mover, moved = -1, ""
        if f != victim:
            mover = f
            if o.chuyen_bai and s.rows[f]:
                moved = C.NAMES[s.rows[f][-1]]
        return Ate(seat, C.NAMES[card], victim, k, chot, mover, moved, pay)

    # -- lay and send

    def _acting(self, s: State, what: str) -> None:
        if s.turn_kind not in _ACTING:
            raise IllegalMove("not_laydown_turn", f"you can {what} only in your lay-down or tái turn")
        if not s.taken:
            raise IllegalMove("must_take_first", f"eat or draw before you {what}")

    def _lay(self, s: State, seat: int, cmd: Lay) -> list[GameEvent]:
        self._acting(s, "lay")
        cs = [_card(c) for c in cmd.cards]
        m = C.mask_of(cs)
        if len(cs) != m.bit_count():
            raise InvalidCommand("bad_cards", "a card is named twice")
        if m & s.hands[seat] != m:
            raise IllegalMove("not_in_hand", "you do not hold those cards")
        if not C.is_phom_mask(m):
            raise IllegalMove("illegal_meld", f"{' '.join(C.names(m))} is not a phỏm")
        e = m & s.eaten[seat]
        if e & (e - 1):
            raise IllegalMove("two_eaten", "a phỏm may hold only one eaten card")
        ev = Laid(seat, C.names(m), C.NAMES[e.bit_length() - 1] if e else "")
        if not s.hands[seat] & ~m:
            return [ev, scoring.won(self.evolve(s, ev), seat, WinKind.TRON, -1)]
        return [ev]

    def _send(self, s: State, seat: int, cmd: Send) -> list[GameEvent]:
        if not s.options.tai_gui:
            raise IllegalMove("sending_disabled", "sending (gửi) is off at this table")
        self._acting(s, "send")
        card, target = _card(cmd.card), _card(cmd.target)
        if not s.own_melds[seat]:
            raise IllegalMove("nothing_laid", "lay a phỏm of your own before sending")
        bit = 1 << card
        if not s.hands[seat] & bit:
            raise IllegalMove("not_in_hand", f"you do not hold {cmd.card}")
        if s.eaten[seat] & bit:
            raise IllegalMove("eaten_card", "an eaten card cannot be sent")
        idx = next((i for i, m in enumerate(s.melds) if m[1] >> target & 1), -1)
        if idx < 0:
            raise IllegalMove("no_such_meld", f"no laid phỏm holds {cmd.target}")
        if not C.extensions(s.melds[idx][1]) & bit:
            raise IllegalMove("illegal_send", f"{cmd.card} does not extend that phỏm")
        ev = Sent(seat, C.NAMES[card], idx, s.melds[idx][0])
        if not s.hands[seat] & ~bit:
            return [ev, scoring.won(self.evolve(s, ev), seat, WinKind.TRON, -1)]
        return [ev]

    # -- discard and the end checks

    def _discard(self, s: State, seat: int, cmd: Discard, now_ms: int) -> list[GameEvent]:
        if not s.taken and s.turn_kind is not TurnKind.FIRST:
            raise IllegalMove("must_take_first", "eat or draw before you discard")
        card = _card(cmd.card)
        bit = 1 << card
        if not s.hands[seat] & bit:
            raise IllegalMove("not_in_hand", f"you do not hold {cmd.card}")
        if s.eaten[seat] & bit:
            raise IllegalMove("eaten_card", "an eaten card cannot be discarded")
        ev = Discarded(seat, C.NAMES[card])
        after = self.evolve(s, ev)
        if s.turn_kind in _ACTING and after.eaten[seat]:
            return [ev, scoring.caught(after, seat, -1)]
        if not after.hands[seat]:
            return [ev, scoring.won(after, seat, WinKind.THUONG, -1)]
        o = s.options
        if (o.tai_gui and not after.stock) or (
            not o.tai_gui and all(x >= 0 for x in after.laid_down)
        ):
            return [ev, scoring.scored(after)]
        nxt = (seat + 1) % s.players
        return [ev, TurnPassed(nxt, clock.due(now_ms, o.turn_seconds))]

    # ------------------------------------------------------------ evolve

    def evolve(self, state: State, event: GameEvent) -> State:
        """The state after ``event``. Pure; the last result is remembered by identity, so when the
        fold applies the very event object a decider has just looked ahead with (its ``after``), on
        the very same state, the next state is not computed twice (the auditor folds what it
        derives). A decoded event is another object: computed as always."""
        last = self._last
        if last is not None and last[0] is state and last[1] is event:
            return last[2]
        after = self._evolve(state, event)
        self._last = (state, event, after)
        return after

    def _evolve(self, state: State, event: GameEvent) -> State:
        s = state
        t = type(event)  # one lookup, then identity tests (docs/games.md); mypy narrows under TYPE_CHECKING
        if t is TurnPassed:
            if TYPE_CHECKING:
                assert isinstance(event, TurnPassed)
            seat = event.seat
            if s.discards_made == 0:
                kind = TurnKind.FIRST
            elif s.laid_down[seat] >= 0:
                kind = TurnKind.TAI if s.options.tai_gui else TurnKind.NORMAL
            elif s.d[seat] >= 3:
                kind = TurnKind.LAYDOWN
            else:
                kind = TurnKind.NORMAL
            return replace(
                s, phase=Phase.PLAY, turn=seat, turn_kind=kind, taken=False,
                deadline_ms=event.deadline_ms,
            )
        if t is Drew:
            if TYPE_CHECKING:
                assert isinstance(event, Drew)
            c = C.INDEX[event.card]
            return replace(
                s, hands=put(s.hands, event.seat, s.hands[event.seat] | 1 << c),
                stock=s.stock[1:], taken=True, eatable=-1,
            )
        if t is Discarded:
            if TYPE_CHECKING:
                assert isinstance(event, Discarded)
            seat, c = event.seat, C.INDEX[event.card]
            laid = s.laid_down
            if s.turn_kind is TurnKind.LAYDOWN:
                laid = put(laid, seat, sum(1 for x in laid if x >= 0))
            return replace(
                s, hands=put(s.hands, seat, s.hands[seat] & ~(1 << c)),
                rows=put(s.rows, seat, (*s.rows[seat], c)), d=put(s.d, seat, s.d[seat] + 1),
                eatable=c, laid_down=laid, discards_made=s.discards_made + 1,
            )
        if t is Ate:
            if TYPE_CHECKING:
                assert isinstance(event, Ate)
            return self._evolve_ate(s, event)
        if t is Laid:
            if TYPE_CHECKING:
                assert isinstance(event, Laid)
            m = C.mask_of(C.INDEX[c] for c in event.cards)
            seat = event.seat
            e = C.INDEX[event.eaten] if event.eaten else -1
            return replace(
                s, hands=put(s.hands, seat, s.hands[seat] & ~m),
                eaten=put(s.eaten, seat, s.eaten[seat] & ~m),
                melds=(*s.melds, (seat, m, e)),
                own_melds=put(s.own_melds, seat, s.own_melds[seat] + 1),
            )
        if t is Sent:
            if TYPE_CHECKING:
                assert isinstance(event, Sent)
            c = C.INDEX[event.card]
            owner, m, e = s.melds[event.meld]
            return replace(
                s, hands=put(s.hands, event.seat, s.hands[event.seat] & ~(1 << c)),
                melds=put(s.melds, event.meld, (owner, m | 1 << c, e)),
            )
        if t is Dealt:
            if TYPE_CHECKING:
                assert isinstance(event, Dealt)
            return self._evolve_dealt(s, event)
        if t is UClaimed:
            if TYPE_CHECKING:
                assert isinstance(event, UClaimed)
            return replace(s, claims=(*s.claims, (event.seat, event.kind)))
        if t is WindowClosed:
            if TYPE_CHECKING:
                assert isinstance(event, WindowClosed)
            return replace(s, phase=Phase.PLAY, deadline_ms=0)
        if t is HandSorted:
            if TYPE_CHECKING:
                assert isinstance(event, HandSorted)
            return replace(s, sorted_view=put(s.sorted_view, event.seat, True))
        if t is TimedOut:
            if TYPE_CHECKING:
                assert isinstance(event, TimedOut)
            return replace(s, timeouts=s.timeouts + 1)
        if t is AccusedWrongly:
            if TYPE_CHECKING:
                assert isinstance(event, AccusedWrongly)
            return scoring.settle(s, event.transfers)
        if t is WonU:
            if TYPE_CHECKING:
                assert isinstance(event, WonU)
            s = scoring.settle(s, event.transfers)
            return replace(
                s, phase=Phase.OVER, end="u_den" if event.victim >= 0 else scoring.U_REASON[event.kind],
                winner=event.seat, turn=-1, deadline_ms=0,
            )
        if t is BaoCaught:
            if TYPE_CHECKING:
                assert isinstance(event, BaoCaught)
            s = scoring.settle(s, event.transfers)
            return replace(s, phase=Phase.OVER, end="bao", winner=-1, turn=-1, deadline_ms=0)
        if t is ULao:
            if TYPE_CHECKING:
                assert isinstance(event, ULao)
            s = scoring.settle(s, event.transfers)
            return replace(s, phase=Phase.OVER, end="u_lao", winner=-1, turn=-1, deadline_ms=0)
        if t is Scored:
            if TYPE_CHECKING:
                assert isinstance(event, Scored)
            s = scoring.settle(s, event.transfers)
            return replace(
                s, phase=Phase.OVER, end="scored", winner=event.ranking[0], turn=-1,
                deadline_ms=0, ranking=event.ranking, points=event.points,
            )
        raise TypeError(f"not a Phỏm event: {event!r}")

    def _evolve_dealt(self, s: State, e: Dealt) -> State:
        n = len(e.hands)
        hands = [0] * n
        for h in e.hands:
            hands[h.seat] = C.mask_of(C.INDEX[c] for c in h.cards)
        s = replace(
            s, phase=Phase.WINDOW if e.window_ms else Phase.PLAY, players=n,
            seed=bytes.fromhex(e.seed), dealer=e.dealer, owner=e.owner, hands=tuple(hands),
            eaten=(0,) * n, eats=(0,) * n, rows=((),) * n, d=(0,) * n,
            order=tuple((e.dealer + i) % n for i in range(n)), melds=(), own_melds=(0,) * n,
            laid_down=(-1,) * n, stock=tuple(C.INDEX[c] for c in e.stock),
            unused=tuple(C.INDEX[c] for c in e.unused), deadline_ms=e.window_ms,
            pot_start=e.pot, pot=e.pot, sorted_view=(False,) * n, transfers=(),
        )
        return scoring.settle(s, e.transfers)

    def _evolve_ate(self, s: State, e: Ate) -> State:
        seat, v, c = e.seat, e.victim, C.INDEX[e.card]
        rows = list(s.rows)
        d = list(s.d)
        rows[v] = _drop_last(rows[v], c)
        d[v] -= 1
        if e.mover >= 0:
            f = e.mover
            d[f] -= 1
            d[v] += 1
            if e.moved:
                mc = C.INDEX[e.moved]
                rows[f] = _drop_last(rows[f], mc)
                rows[v] = (*rows[v], mc)
        s = replace(
            s, hands=put(s.hands, seat, s.hands[seat] | 1 << c),
            eaten=put(s.eaten, seat, s.eaten[seat] | 1 << c),
            eats=put(s.eats, seat, e.eats), rows=tuple(rows), d=tuple(d),
            order=(*s.order[1:], s.order[0]), taken=True, eatable=-1,
        )
        return scoring.settle(s, e.transfers) if e.transfers else s

    # ------------------------------------------------------------ view, legal, time, outcome

    def view(self, state: State, seat: Seat | None) -> View:
        s = state
        n = s.players
        me = -1 if seat is None else seat
        hand: tuple[str, ...] = ()
        is_sorted = False
        if s.phase is not Phase.NEW and 0 <= me < n:
            if s.sorted_view[me]:
                hand = C.names(C.sort_hand(s.hands[me], s.eaten[me]))
                is_sorted = True
            else:
                hand = C.names(s.hands[me])
        bal = scoring.balances(s) if s.phase is not Phase.NEW else (0,) * n
        seats = tuple(
            SeatInfo(
                p, s.hands[p].bit_count(), C.names(s.rows[p]), C.names(s.eaten[p]),
                s.eats[p], s.d[p], s.laid_down[p], bal[p],
                C.names(C.sort_hand(s.hands[p], s.eaten[p])) if s.phase is Phase.OVER else (),
            )
            for p in range(n)
        ) if s.phase is not Phase.NEW else ()
        melds = tuple(
            Meld(i, o, C.names(m), C.NAMES[e] if e >= 0 else "") for i, (o, m, e) in enumerate(s.melds)
        )
        return View(
            seat=me, phase=s.phase, hand=hand, sorted=is_sorted, seats=seats, melds=melds,
            dealer=s.dealer, to_move=s.turn, turn_kind=s.turn_kind, taken=s.taken,
            deadline_ms=s.deadline_ms, eatable=C.NAMES[s.eatable] if s.eatable >= 0 else "",
            stock_left=len(s.stock), lay_order=s.order, pot=s.pot, end=s.end, winner=s.winner,
            legal=_wrap(self.legal(s, me)) if 0 <= me < n else (),
        )

    def legal(self, state: State, seat: Seat) -> Sequence[GameCommand]:
        """Every game-advancing command of ``seat`` now. Bắt báo (always accepted, but a bet on
        hidden cards) and Sort (a view preference) are not listed."""
        s = state
        if s.phase is Phase.WINDOW:
            if any(c[0] == seat for c in s.claims):
                return []
            hand = s.hands[seat]
            ok = C.is_u_khan(hand) or (seat == s.dealer and C.u_kind(hand, 0) is not None)
            return [ClaimU()] if ok else []
        if s.phase is not Phase.PLAY or seat != s.turn:
            return []
        hand, eaten = s.hands[seat], s.eaten[seat]
        free = hand & ~eaten
        out: list[GameCommand] = []
        if not s.taken and s.turn_kind is not TurnKind.FIRST:
            if s.stock:
                out.append(Draw())
            if s.eatable >= 0:
                for pm in C.eat_partners(s.eatable, free):
                    out.append(Eat(C.names(pm)))
            return out
        if C.u_kind(hand, eaten) is not None:
            out.append(ClaimU())
        if s.turn_kind in _ACTING:
            for p in C.phom_in(hand, eaten):
                out.append(Lay(C.names(p)))
            if s.options.tai_gui and s.own_melds[seat]:
                for _, m, _e in s.melds:
                    ext = C.extensions(m) & free
                    if ext:
                        target = C.NAMES[(m & -m).bit_length() - 1]
                        out.extend(Send(C.NAMES[c], target) for c in C.cards_of(ext))
        out.extend(Discard(C.NAMES[c]) for c in C.cards_of(free))
        return out

    def deadlines(self, state: State) -> Sequence[Deadline]:
        if state.phase is Phase.WINDOW:
            return clock.to_act(state.dealer, state.deadline_ms)
        return clock.to_act(state.turn if state.phase is Phase.PLAY and state.turn >= 0 else None, state.deadline_ms)

    def on_timeout(self, state: State, seat: Seat, now_ms: int) -> Sequence[GameEvent]:
        """PH-R28: draw if not taken; in a lay-down (or tái) turn lay only the eaten phỏm
        (highest points, a run on equal points); send nothing; discard a random non-eaten card
        chosen by the hand's seed material under the label ``timeout:<k>``."""
        s = state
        if s.phase is Phase.WINDOW:
            if seat != s.dealer:
                raise IllegalMove("not_on_clock", "the Ù window's clock is the dealer's")
            return self.close_window(s, now_ms)
        if s.phase is not Phase.PLAY or seat != s.turn:
            raise IllegalMove("not_your_turn", "no deadline of this seat is running")
        events: list[GameEvent] = [TimedOut(seat)]
        label = f"timeout:{s.timeouts}"
        s = self.evolve(s, events[0])

        def run(cmd: GameCommand) -> bool:
            nonlocal s
            for e in self.decide(s, seat, cmd, now_ms):
                events.append(e)
                s = self.evolve(s, e)
            return s.phase is Phase.OVER

        if not s.taken and s.turn_kind is not TurnKind.FIRST and run(Draw()):
            return events
        if s.turn_kind in _ACTING:
            for p in C.auto_lay(s.hands[seat], s.eaten[seat]):
                if run(Lay(C.names(p))):
                    return events
        choices = C.cards_of(s.hands[seat] & ~s.eaten[seat])
        if not choices:
            raise RuleViolation("no_legal_move", "only eaten cards are left to discard")
        run(Discard(C.NAMES[fair.choice(s.seed, choices, label)]))
        return events

    def outcome(self, state: State) -> Outcome | None:
        s = state
        if s.phase is not Phase.OVER:
            return None
        n = s.players
        pts = s.points or tuple(C.points(h) for h in s.hands)
        if s.ranking:
            ranking = s.ranking
        elif s.winner >= 0:
            ranking = tuple((s.winner + i) % n for i in range(n))
        else:
            loser = next(
                (t.from_seat for t in reversed(s.transfers) if t.reason in ("bao", "u_lao")), None
            )
            ranking = tuple(p for p in range(n) if p != loser) + ((loser,) if loser is not None else ())
        return Outcome(
            winner=s.winner if s.winner >= 0 else None, ranking=ranking, scores=pts,
            transfers=s.transfers, reason=s.end, pot_balance=s.pot, first=s.dealer,
        )


GAME = Phom()
CONTRACT: Game[State, Options, GameCommand, GameEvent] = GAME
"""The game as the contract over its own commands and events: mypy --strict checks ``decide``'s,
``start``'s and ``on_timeout``'s events against what ``evolve`` folds."""
