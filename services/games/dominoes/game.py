"""Đô Mi Nô as a decider: rules DM-R1…R12 and §B4–B5 of shared/rules/dominoes.md.

Seats 0..n-1 are P1..Pn in turn order. The leader plays any tile; afterwards a player must
play a matching tile if he holds one, must bốc (draw) from the boneyard one tile at a time
while he holds none, and passes only when the boneyard is empty. The hand ends when a player
goes out (hết bài) or the game is *triệt* (blocked); a blocked game is *triệt buộc* (forced)
or has a *người triệt* (blocker), possibly helped by a *gài triệt* (assistant), which decides
who pays whom (§B4, :mod:`scoring`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from chieu.games import clock, fair
from chieu.games.common import TimedOut, TurnPassed, members, put, wrapper
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
from chieu.games.dominoes.model import (
    Command,
    Dealt,
    Draw,
    Drew,
    Ended,
    GameCommand,
    GameEvent,
    Hand,
    LineTile,
    OpenEnds,
    Pass,
    Passed,
    Play,
    Played,
    State,
    View,
)
from chieu.games.dominoes.options import Options, option_values, parse_options
from chieu.games.dominoes.scoring import (
    forced_block_winner,
    settle_blocker,
    settle_forced_block,
    settle_out,
    unique_min,
)
from chieu.games.dominoes.tiles import (
    ALL_TILES,
    HAND_SIZE,
    End,
    Option,
    Tile,
    Turn,
    dead,
    find_assistant,
    find_blocker,
    options,
    pip_count,
    place,
    playable,
)

_wrap = wrapper(Command)


def _remove(hand: tuple[Tile, ...], t: Tile) -> tuple[Tile, ...]:
    i = hand.index(t)
    return hand[:i] + hand[i + 1 :]


class Dominoes:
    """The Đô Mi Nô game object registered under ``dominoes``."""

    key = "dominoes"
    title = "Đô Mi Nô"
    min_players = 2
    max_players = 4
    commands = members(GameCommand)
    events = members(GameEvent)
    option_type = Options
    view_type = View
    pot_options: tuple[str, ...] = ()
    """The options that change the gà pot's rules: Đô Mi Nô has no pot."""

    parse_options = staticmethod(parse_options)
    option_values = staticmethod(option_values)

    def initial(self, options: Options, players: int) -> State:
        return State(options=options, players=players)

    def start(self, setup: Setup) -> Sequence[GameEvent]:
        """Shuffle, deal 7 each (DM-R2), the rest is the boneyard; pick the leader (DM-R3)."""
        n = setup.players
        if not self.min_players <= n <= self.max_players:
            raise BadOptions(f"Đô Mi Nô is for 2–4 players, not {n}")
        deck = fair.shuffled(setup.seed, ALL_TILES, "deal")
        hands = tuple(Hand(tuple(deck[i * HAND_SIZE : (i + 1) * HAND_SIZE])) for i in range(n))
        boneyard = tuple(deck[n * HAND_SIZE :])
        leader = clock.first_seat(setup, lambda prev: _leader(prev, n), draw="leader")
        return [Dealt(leader, hands, boneyard, clock.due(setup.now_ms, setup.options.turn_seconds))]

    # -- decide

    def decide(self, state: State, seat: Seat, command: GameCommand, now_ms: int) -> Sequence[GameEvent]:
        if not isinstance(command, Play | Draw | Pass):
            name = type(command).__name__
            raise InvalidCommand("unknown_command", f"Đô Mi Nô has no command {name}")
        if isinstance(command, Play):
            t = command.tile
            if not (isinstance(t, Tile) and isinstance(t.a, int) and isinstance(t.b, int)
                    and 0 <= t.a <= t.b <= 6):
                raise InvalidCommand("bad_tile", f"a tile is [a|b], 0 <= a <= b <= 6, not {t!r}")
            if not isinstance(command.end, End):
                raise InvalidCommand("bad_end", "end must be L or R")
        if state.ended is not None:
            raise IllegalMove("game_over", "the hand is over")
        if state.to_move is None:
            raise IllegalMove("not_started", "the hand has not started")
        if not isinstance(seat, int) or not 0 <= seat < state.players:
            raise InvalidCommand("bad_seat", f"no seat {seat!r}")
        if seat != state.to_move:
            raise IllegalMove("not_your_turn", "it is not your turn")
        hand = state.hands[seat]
        can = playable(hand, state.ends)
        if isinstance(command, Draw):
            if can:
                raise IllegalMove("must_play", "you hold a playable tile: play it")
            if not state.boneyard:
                raise IllegalMove("boneyard_empty", "the boneyard is empty: pass")
            return [Drew(seat, state.boneyard[0])]
        if isinstance(command, Pass):
            if can:
                raise IllegalMove("must_play", "you hold a playable tile: play it")
            if state.boneyard:
                raise IllegalMove("must_draw", "the boneyard is not empty: draw")
            return self._after(state, Passed(seat), now_ms)
        t = command.tile
        if t not in hand:
            raise IllegalMove("not_your_tile", f"you do not hold {t}")
        after = place(state.ends, t, command.end)
        if after is None:
            raise IllegalMove("no_match", f"{t} does not match the {command.end.name.lower()} end")
        return self._after(state, Played(seat, t, command.end, after[0], after[1]), now_ms)

    def _after(self, state: State, move: Played | Passed, now_ms: int) -> list[GameEvent]:
        """A play or pass, then the end check (DM-R9) or the next turn."""
        s = self.evolve(state, move)
        seat = move.seat
        if isinstance(move, Played) and not s.hands[seat]:
            return [move, self._out(s, seat)]
        if dead(s.hands, len(s.boneyard), s.ends):
            return [move, self._blocked(s)]
        nxt = (seat + 1) % s.players
        return [move, TurnPassed(nxt, clock.due(now_ms, s.options.turn_seconds))]

    def _out(self, s: State, winner: int) -> Ended:
        """Hết bài: ``winner`` placed his last tile; everyone pays him his pips, he leads next."""
        pips = tuple(pip_count(h) for h in s.hands)
        transfers = settle_out(winner, pips, s.options.pip_stake)
        return Ended("out", winner, None, None, pips, transfers, winner)

    def _blocked(self, s: State) -> Ended:
        """Triệt (§B3–B4): find the blocker and the assistant, then settle."""
        o = s.options
        pips = tuple(pip_count(h) for h in s.hands)
        idx, blocker = find_blocker(s.turns)
        if blocker is None or idx is None:
            last = s.last_mover if s.last_mover is not None else 0
            w = forced_block_winner(pips, o, last, [len(h) for h in s.hands])
            return Ended("triet_buoc", w, None, None, pips, settle_forced_block(w, pips, o.pip_stake), w)
        assistant = find_assistant(s.turns, idx, blocker, o.assistant_same_tile_counts)
        wins, transfers = settle_blocker(blocker, assistant, pips, o)
        if wins:
            return Ended("triet_win", blocker, blocker, assistant, pips, transfers, blocker)
        nxt = unique_min(pips, range(len(pips)))
        return Ended("triet_loss", None, blocker, assistant, pips, transfers, nxt)

    # -- evolve

    def evolve(self, state: State, event: GameEvent) -> State:
        s = state
        if isinstance(event, Drew):
            hand = s.hands[event.seat] + (event.tile,)
            return replace(s, hands=put(s.hands, event.seat, hand), boneyard=s.boneyard[1:])
        if isinstance(event, Played):
            t = event.tile
            ends = (event.left, event.right)
            opt = Option(t, event.end, ends)
            turn = Turn(event.seat, s.hands, s.boneyard, s.ends, opt)
            if s.ends is None:
                line: tuple[tuple[int, int], ...] = ((t.a, t.b),)
            elif event.end is End.LEFT:
                line = ((event.left, s.ends[0]), *s.line)
            else:
                line = (*s.line, (s.ends[1], event.right))
            return replace(
                s, hands=put(s.hands, event.seat, _remove(s.hands[event.seat], t)),
                ends=ends, line=line, turns=(*s.turns, turn), last_mover=event.seat,
            )
        if isinstance(event, Passed):
            turn = Turn(event.seat, s.hands, s.boneyard, s.ends, None)
            return replace(s, turns=(*s.turns, turn), last_mover=event.seat)
        if isinstance(event, TurnPassed):
            return replace(s, to_move=event.seat, deadline_ms=event.deadline_ms)
        if isinstance(event, Ended):
            return replace(s, ended=event, to_move=None)
        if isinstance(event, Dealt):
            return replace(
                s, players=len(event.hands), hands=tuple(h.tiles for h in event.hands),
                boneyard=event.boneyard, line=(), ends=None, leader=event.leader,
                to_move=event.leader, deadline_ms=event.deadline_ms, turns=(), last_mover=None,
                ended=None,
            )
        if isinstance(event, TimedOut):
            return s
        raise TypeError(f"not a Đô Mi Nô event: {event!r}")

    # -- views, hints, time, result

    def view(self, state: State, seat: Seat | None) -> View:
        me = seat if seat is not None and 0 <= seat < state.players else None
        hand = state.hands[me] if me is not None and state.hands else ()
        to_move = state.to_move
        return View(
            seat=-1 if me is None else me,
            hand=hand,
            line=tuple(LineTile(a, b) for a, b in state.line),
            ends=None if state.ends is None else OpenEnds(*state.ends),
            counts=tuple(len(h) for h in state.hands),
            boneyard=len(state.boneyard),
            to_move=-1 if to_move is None else to_move,
            deadline_ms=state.deadline_ms if to_move is not None else 0,
            legal=_wrap(self.legal(state, me)),
            finished=state.ended is not None,
            result=state.ended,
            revealed=tuple(Hand(h) for h in state.hands) if state.ended is not None else (),
        )

    def legal(self, state: State, seat: Seat | None) -> Sequence[GameCommand]:
        if state.ended is not None or seat is None or seat != state.to_move:
            return []
        hand = state.hands[seat]
        plays = [
            Play(t, end) for t in sorted(set(hand)) for end in (End.LEFT, End.RIGHT)
            if place(state.ends, t, end) is not None and (state.ends is not None or end is End.LEFT)
        ]
        if plays:
            return plays
        return [Draw()] if state.boneyard else [Pass()]

    def deadlines(self, state: State) -> Sequence[Deadline]:
        return clock.to_act(None if state.ended is not None else state.to_move, state.deadline_ms)

    def on_timeout(self, state: State, seat: Seat, now_ms: int) -> Sequence[GameEvent]:
        """DM-R10: draw as required, then the lowest tile (pips, then smaller half), left end
        first; else pass."""
        clock.running(self.deadlines(state), seat)
        events: list[GameEvent] = [TimedOut(seat)]
        s = state
        while not playable(s.hands[seat], s.ends) and s.boneyard:
            e = Drew(seat, s.boneyard[0])
            events.append(e)
            s = self.evolve(s, e)
        opts = options(s.hands[seat], s.ends)
        if not opts:
            return events + list(self.decide(s, seat, Pass(), now_ms))
        best = min((o.tile for o in opts), key=lambda t: (t.pips, t.a))
        end = End.LEFT if place(s.ends, best, End.LEFT) is not None else End.RIGHT
        return events + list(self.decide(s, seat, Play(best, end), now_ms))

    def outcome(self, state: State) -> Outcome | None:
        e = state.ended
        if e is None:
            return None
        n = state.players
        order = sorted(range(n), key=lambda i: (e.pips[i], (i - state.leader) % n))
        if e.winner is not None:
            order = [e.winner] + [i for i in order if i != e.winner]
        return Outcome(
            winner=e.winner, ranking=tuple(order), scores=e.pips, transfers=e.transfers,
            reason=e.reason, first=state.leader,
        )


def _leader(prev: Outcome, players: int) -> Seat | None:
    """DM-R3: the previous hand's winner leads (after a blocked hand lost by triết, the lowest
    count); ``None``: drawn."""
    nxt: int | None = prev.winner
    if nxt is None and prev.reason == "triet_loss" and len(prev.scores) == players:
        nxt = unique_min(prev.scores, range(len(prev.scores)))
    return nxt if nxt is not None and 0 <= nxt < players else None


GAME = Dominoes()
CONTRACT: Game[State, Options, GameCommand, GameEvent] = GAME
"""The game as the contract over its own commands and events: mypy --strict checks ``decide``'s,
``start``'s and ``on_timeout``'s events against what ``evolve`` folds."""
