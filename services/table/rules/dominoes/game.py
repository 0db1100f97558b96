"""Đô Mi Nô as a decider: rules DM-R1…R12 and §B4–B5 of shared/rules/dominoes.md.

Seats 0..n-1 are P1..Pn in turn order. The leader plays any tile; afterwards a player must
play a matching tile if he holds one, must bốc (draw) from the boneyard one tile at a time
while he holds none, and passes only when the boneyard is empty. The hand ends when a player
goes out (hết bài) or the game is *triệt* (blocked); a blocked game is *triệt buộc* (forced)
or has a *người triệt* (blocker), possibly helped by a *gài triệt* (assistant), which decides
who pays whom (§B4).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from chieu.table.rules import fair
from chieu.table.rules.core import (
    BadOptions,
    Deadline,
    IllegalMove,
    InvalidCommand,
    Outcome,
    ScenarioHooks,
    Seat,
    Setup,
    Transfer,
)
from chieu.table.rules.dominoes.tiles import (
    ALL_TILES,
    End,
    Ends,
    Option,
    Tile,
    Turn,
    dead,
    find_assistant,
    find_blocker,
    format_tiles,
    options,
    parse_tile,
    parse_tiles,
    place,
    playable,
)

HAND_SIZE = 7

# ---------------------------------------------------------------- options

BLOCK_TIES = ("noWinner", "fewerTiles", "afterLastMover")


@dataclass(frozen=True, slots=True)
class Options:
    """Table options of §B5 (rules-file names in ``option_values``)."""

    pip_stake: int = 1
    block_tie: str = "noWinner"
    blocker_tie_counts_as_loss: bool = True
    assistant_same_tile_counts: bool = False
    turn_seconds: int = 20


_OPTION_NAMES = {
    "pipStake": "pip_stake",
    "blockTie": "block_tie",
    "blockerTieCountsAsLoss": "blocker_tie_counts_as_loss",
    "assistantSameTileCounts": "assistant_same_tile_counts",
    "turnSeconds": "turn_seconds",
}
_BOOLS = ("blocker_tie_counts_as_loss", "assistant_same_tile_counts")
_INTS = ("pip_stake", "turn_seconds")


def parse_options(raw: Mapping[str, Any]) -> Options:
    """Validate the options of §B5; unknown names and out-of-range values are refused."""
    unknown = sorted(set(raw) - set(_OPTION_NAMES))
    if unknown:
        known = ", ".join(_OPTION_NAMES)
        raise BadOptions(f"unknown option(s) {', '.join(unknown)}; known: {known}")
    values: dict[str, Any] = {}
    for name, value in raw.items():
        attr = _OPTION_NAMES[name]
        if attr in _BOOLS:
            if not isinstance(value, bool):
                raise BadOptions(f"{name} must be true or false, not {value!r}")
        elif attr in _INTS:
            if isinstance(value, bool) or not isinstance(value, int | float) or int(value) != value:
                raise BadOptions(f"{name} must be a whole number, not {value!r}")
            value = int(value)
        values[attr] = value
    o = replace(Options(), **values)
    if o.pip_stake < 1:
        raise BadOptions(f"pipStake must be at least 1, not {o.pip_stake}")
    if o.block_tie not in BLOCK_TIES:
        raise BadOptions(f"blockTie must be one of {', '.join(BLOCK_TIES)}, not {o.block_tie!r}")
    if not 0 < o.turn_seconds <= 3600:
        raise BadOptions(f"turnSeconds must be in 1..3600, not {o.turn_seconds}")
    return o


def option_values(options: Options) -> Mapping[str, Any]:
    """The options under the rules file's names."""
    return {name: getattr(options, attr) for name, attr in _OPTION_NAMES.items()}


# ---------------------------------------------------------------- commands


@dataclass(frozen=True, slots=True)
class Play:
    """Put ``tile`` against the ``end`` of the line (any end for the lead)."""

    tile: Tile
    end: End


@dataclass(frozen=True, slots=True)
class Draw:
    """Bốc: take the boneyard's next tile (only while holding nothing playable)."""


@dataclass(frozen=True, slots=True)
class Pass:
    """Bỏ lượt: lose the turn (only with nothing playable and an empty boneyard)."""


# ---------------------------------------------------------------- events


@dataclass(frozen=True, slots=True)
class Hand:
    """One seat's tiles."""

    tiles: tuple[Tile, ...]


@dataclass(frozen=True, slots=True)
class Dealt:
    """A hand is dealt: every seat's tiles, the boneyard (top first) and the leader's deadline."""

    leader: int
    hands: tuple[Hand, ...]
    boneyard: tuple[Tile, ...]
    deadline_ms: int


@dataclass(frozen=True, slots=True)
class Drew:
    """``seat`` drew ``tile`` from the boneyard."""

    seat: int
    tile: Tile


@dataclass(frozen=True, slots=True)
class Played:
    """``seat`` put ``tile`` on ``end``; the open ends are now (``left``, ``right``)."""

    seat: int
    tile: Tile
    end: End
    left: int
    right: int


@dataclass(frozen=True, slots=True)
class Passed:
    """``seat`` passed (nothing playable, boneyard empty)."""

    seat: int


@dataclass(frozen=True, slots=True)
class TimedOut:
    """``seat``'s turn timer ran out; the server plays for it (DM-R10)."""

    seat: int


@dataclass(frozen=True, slots=True)
class TurnPassed:
    """It is ``seat``'s turn until ``deadline_ms``."""

    seat: int
    deadline_ms: int


@dataclass(frozen=True, slots=True)
class Ended:
    """The hand is over.

    ``reason``: ``out`` (a player placed his last tile), ``triet_buoc`` (forced block),
    ``triet_win`` / ``triet_loss`` (a blocker who wins / loses). ``pips`` are the pips left per
    seat; ``transfers`` the whole settlement (§B4); ``next_leader`` leads the next hand, or is
    ``None`` for a random leader.
    """

    reason: str
    winner: int | None
    blocker: int | None
    assistant: int | None
    pips: tuple[int, ...]
    transfers: tuple[Transfer, ...]
    next_leader: int | None


# ---------------------------------------------------------------- state and view


@dataclass(frozen=True, slots=True)
class State:
    """The whole hand: hands, boneyard (top first), the line left to right, the turn record."""

    options: Options
    players: int
    hands: tuple[tuple[Tile, ...], ...] = ()
    boneyard: tuple[Tile, ...] = ()
    line: tuple[tuple[int, int], ...] = ()
    ends: Ends | None = None
    leader: int = 0
    to_move: int | None = None
    deadline_ms: int = 0
    turns: tuple[Turn, ...] = ()
    last_mover: int | None = None
    ended: Ended | None = None


@dataclass(frozen=True, slots=True)
class LineTile:
    """A tile as it lies in the line: ``left`` half then ``right`` half."""

    left: int
    right: int


@dataclass(frozen=True, slots=True)
class OpenEnds:
    """The two open ends of the line."""

    left: int
    right: int


@dataclass(frozen=True, slots=True)
class View:
    """What ``seat`` sees: his own tiles, the line, the others' tile counts, the boneyard size.

    ``seat`` is -1 for a spectator (``hand`` empty); ``to_move`` is -1 when nobody is to act.
    ``revealed`` (every hand) and ``pips`` appear only once the hand is over.
    """

    seat: int
    hand: tuple[Tile, ...]
    line: tuple[LineTile, ...]
    ends: OpenEnds | None
    counts: tuple[int, ...]
    boneyard: int
    to_move: int
    deadline_ms: int
    legal: tuple[Play, ...]
    must_draw: bool
    must_pass: bool
    finished: bool
    result: Ended | None
    revealed: tuple[Hand, ...]


def _pips(hand: Sequence[Tile]) -> int:
    return sum(t.pips for t in hand)


def _remove(hand: tuple[Tile, ...], t: Tile) -> tuple[Tile, ...]:
    i = hand.index(t)
    return hand[:i] + hand[i + 1 :]


def _set_hand(hands: tuple[tuple[Tile, ...], ...], seat: int, hand: tuple[Tile, ...]) -> tuple[
    tuple[Tile, ...], ...
]:
    return (*hands[:seat], hand, *hands[seat + 1:])


# ---------------------------------------------------------------- settlement (§B4)


def _unique_min(pips: Sequence[int], among: Sequence[int]) -> int | None:
    low = min(pips[i] for i in among)
    best = [i for i in among if pips[i] == low]
    return best[0] if len(best) == 1 else None


def settle_out(winner: int, pips: Sequence[int], u: int) -> tuple[Transfer, ...]:
    """Out: every other player pays the winner u·p_i."""
    return tuple(
        Transfer(i, winner, u * p, "out") for i, p in enumerate(pips) if i != winner and p
    )


def forced_block_winner(
    pips: Sequence[int], o: Options, last_mover: int, hands: Sequence[int]
) -> int | None:
    """Triệt buộc: the unique lowest-pip player, else the ``blockTie`` option decides."""
    n = len(pips)
    low = min(pips)
    tied = [i for i in range(n) if pips[i] == low]
    if len(tied) == 1:
        return tied[0]
    if o.block_tie == "fewerTiles":
        fewest = min(hands[i] for i in tied)
        best = [i for i in tied if hands[i] == fewest]
        return best[0] if len(best) == 1 else None
    if o.block_tie == "afterLastMover":
        for k in range(1, n + 1):
            s = (last_mover + k) % n
            if s in tied:
                return s
    return None


def settle_blocker(
    blocker: int, assistant: int | None, pips: Sequence[int], o: Options
) -> tuple[bool, tuple[Transfer, ...]]:
    """The four payment formulas of §B4 for a blocker; returns (blocker wins, transfers)."""
    u = o.pip_stake
    others = [i for i in range(len(pips)) if i != blocker]
    low = min(pips[i] for i in others)
    wins = pips[blocker] < low or (pips[blocker] == low and not o.blocker_tie_counts_as_loss)
    total = sum(pips[i] for i in others)
    if wins and assistant is None:
        return True, tuple(
            Transfer(i, blocker, 2 * u * pips[i], "triet") for i in others if pips[i]
        )
    if wins and assistant is not None:
        return True, (Transfer(assistant, blocker, 2 * u * total, "gai_triet"),)
    if assistant is None:
        return False, tuple(
            Transfer(blocker, i, u * pips[i], "triet_loss") for i in others if pips[i]
        )
    return False, (Transfer(blocker, assistant, u * total, "triet_loss_gai"),)


# ---------------------------------------------------------------- the decider


class Dominoes:
    """The Đô Mi Nô game object registered under ``dominoes``."""

    key = "dominoes"
    title = "Đô Mi Nô"
    min_players = 2
    max_players = 4
    commands: tuple[type, ...] = (Play, Draw, Pass)
    events: tuple[type, ...] = (Dealt, Drew, Played, Passed, TimedOut, TurnPassed, Ended)
    option_type = Options
    view_type = View

    def __init__(self) -> None:
        self.scenario = ScenarioHooks(
            position=self._position,
            describe=describe,
            queries={
                "set_pips": lambda: sum(t.pips for t in ALL_TILES),
                "set_size": lambda: len(ALL_TILES),
            },
            command=parse_command,
        )

    parse_options = staticmethod(parse_options)
    option_values = staticmethod(option_values)

    def initial(self, options: Options, players: int) -> State:
        return State(options=options, players=players)

    def start(self, setup: Setup) -> Sequence[Any]:
        """Shuffle, deal 7 each (DM-R2), the rest is the boneyard; pick the leader (DM-R3)."""
        n = setup.players
        if not self.min_players <= n <= self.max_players:
            raise BadOptions(f"Đô Mi Nô is for 2–4 players, not {n}")
        deck = fair.shuffled(setup.seed, ALL_TILES, "deal")
        hands = tuple(Hand(tuple(deck[i * HAND_SIZE : (i + 1) * HAND_SIZE])) for i in range(n))
        boneyard = tuple(deck[n * HAND_SIZE :])
        leader = setup.first if setup.first is not None else self._leader(setup)
        return [Dealt(leader, hands, boneyard, setup.now_ms + setup.options.turn_seconds * 1000)]

    def _leader(self, setup: Setup) -> int:
        prev = setup.previous
        if prev is not None:
            nxt: int | None = prev.winner
            if nxt is None and prev.reason == "triet_loss" and len(prev.scores) == setup.players:
                nxt = _unique_min(prev.scores, range(len(prev.scores)))
            if nxt is not None and 0 <= nxt < setup.players:
                return nxt
        return fair.choice(setup.seed, tuple(range(setup.players)), "leader")

    def _position(
        self, options: Options, players: int, spec: Mapping[str, Any], now_ms: int
    ) -> Sequence[Any]:
        """A scenario deal: ``{hands: ["[5|6] [1|3] ...", ...], boneyard: "...", leader: 0}``."""
        hands = tuple(Hand(parse_tiles(str(h))) for h in spec["hands"])
        boneyard = parse_tiles(str(spec.get("boneyard", "")))
        if len(hands) != players or any(len(h.tiles) != HAND_SIZE for h in hands):
            raise ValueError(f"a deal gives {HAND_SIZE} tiles to each of {players} players")
        every = [t for h in hands for t in h.tiles] + list(boneyard)
        if sorted(every) != sorted(ALL_TILES):
            raise ValueError("hands and boneyard must hold the 28 tiles of the set exactly once")
        leader = int(spec.get("leader", 0))
        return [Dealt(leader, hands, boneyard, now_ms + options.turn_seconds * 1000)]

    # -- decide

    def decide(self, state: State, seat: Seat, command: Any, now_ms: int) -> Sequence[Any]:
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

    def _after(self, state: State, move: Played | Passed, now_ms: int) -> list[Any]:
        """A play or pass, then the end check (DM-R9) or the next turn."""
        s = self.evolve(state, move)
        seat = move.seat
        if isinstance(move, Played) and not s.hands[seat]:
            return [move, self._ended(s, "out", seat)]
        if dead(s.hands, len(s.boneyard), s.ends):
            return [move, self._blocked(s)]
        nxt = (seat + 1) % s.players
        return [move, TurnPassed(nxt, now_ms + s.options.turn_seconds * 1000)]

    def _ended(self, s: State, reason: str, winner: int | None, blocker: int | None = None,
               assistant: int | None = None, transfers: tuple[Transfer, ...] | None = None,
               next_leader: int | None = None) -> Ended:
        pips = tuple(_pips(h) for h in s.hands)
        if transfers is None:
            assert winner is not None
            transfers = settle_out(winner, pips, s.options.pip_stake)
            next_leader = winner
        return Ended(reason, winner, blocker, assistant, pips, transfers, next_leader)

    def _blocked(self, s: State) -> Ended:
        """Triệt (§B3–B4): find the blocker and the assistant, then settle."""
        o = s.options
        pips = tuple(_pips(h) for h in s.hands)
        idx, blocker = find_blocker(s.turns)
        if blocker is None or idx is None:
            last = s.last_mover if s.last_mover is not None else 0
            w = forced_block_winner(pips, o, last, [len(h) for h in s.hands])
            transfers = () if w is None else tuple(
                Transfer(i, w, o.pip_stake * p, "triet_buoc")
                for i, p in enumerate(pips) if i != w and p
            )
            return Ended("triet_buoc", w, None, None, pips, transfers, w)
        assistant = find_assistant(s.turns, idx, blocker, o.assistant_same_tile_counts)
        wins, transfers = settle_blocker(blocker, assistant, pips, o)
        if wins:
            return Ended("triet_win", blocker, blocker, assistant, pips, transfers, blocker)
        nxt = _unique_min(pips, range(len(pips)))
        return Ended("triet_loss", None, blocker, assistant, pips, transfers, nxt)

    # -- evolve

    def evolve(self, state: State, event: Any) -> State:
        s = state
        if isinstance(event, Drew):
            hand = s.hands[event.seat] + (event.tile,)
            return replace(s, hands=_set_hand(s.hands, event.seat, hand), boneyard=s.boneyard[1:])
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
                s, hands=_set_hand(s.hands, event.seat, _remove(s.hands[event.seat], t)),
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
        legal = tuple(m for m in self.legal(state, me) if isinstance(m, Play))
        to_move = state.to_move
        mine = me is not None and to_move == me
        stuck = mine and not playable(hand, state.ends)
        return View(
            seat=-1 if me is None else me,
            hand=hand,
            line=tuple(LineTile(a, b) for a, b in state.line),
            ends=None if state.ends is None else OpenEnds(*state.ends),
            counts=tuple(len(h) for h in state.hands),
            boneyard=len(state.boneyard),
            to_move=-1 if to_move is None else to_move,
            deadline_ms=state.deadline_ms if to_move is not None else 0,
            legal=legal,
            must_draw=stuck and bool(state.boneyard),
            must_pass=stuck and not state.boneyard,
            finished=state.ended is not None,
            result=state.ended,
            revealed=tuple(Hand(h) for h in state.hands) if state.ended is not None else (),
        )

    def legal(self, state: State, seat: Seat | None) -> Sequence[Any]:
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
        if state.to_move is None or state.ended is not None:
            return ()
        return (Deadline(state.to_move, state.deadline_ms),)

    def on_timeout(self, state: State, seat: Seat, now_ms: int) -> Sequence[Any]:
        """DM-R10: draw as required, then the lowest tile (pips, then smaller half), left end
        first; else pass."""
        if state.ended is not None or seat != state.to_move:
            raise IllegalMove("not_your_turn", "no deadline of this seat is running")
        events: list[Any] = [TimedOut(seat)]
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


def _name(seat: int | None) -> str | None:
    return None if seat is None else f"P{seat + 1}"


def describe(state: State) -> Mapping[str, Any]:
    """What scenarios assert; seats are named P1, P2, ... as in the rules file."""
    out: dict[str, Any] = {
        "to_move": _name(state.to_move),
        "ends": None if state.ends is None else list(state.ends),
        "hands": [format_tiles(h) for h in state.hands],
        "hand_sizes": [len(h) for h in state.hands],
        "pips": [_pips(h) for h in state.hands],
        "boneyard": len(state.boneyard),
        "total_pips": sum(_pips(h) for h in state.hands) + _pips(state.boneyard)
        + sum(a + b for a, b in state.line),
        "tiles": sum(len(h) for h in state.hands) + len(state.boneyard) + len(state.line),
        "ended": None if state.ended is None else state.ended.reason,
    }
    if state.ended is not None:
        out["blocker"] = _name(state.ended.blocker)
        out["assistant"] = _name(state.ended.assistant)
        out["next_leader"] = _name(state.ended.next_leader)
    return out


def parse_command(raw: Any) -> Play | Draw | Pass:
    """Scenario notation: ``draw``, ``pass``, ``"[4|5] L"`` / ``"[4|5] R"`` (the lead: ``"[5|6]"``),
    or ``{play: "[4|5]", end: L}``."""
    try:
        if isinstance(raw, Mapping):
            if "play" in raw:
                return Play(parse_tile(str(raw["play"])), End(str(raw.get("end", "L")).upper()))
            if raw.get("draw"):
                return Draw()
            if raw.get("pass"):
                return Pass()
            raise ValueError("expected play, draw or pass")
        text = str(raw).strip()
        if text.lower() == "draw":
            return Draw()
        if text.lower() == "pass":
            return Pass()
        parts = text.replace("on ", "").split()
        end = End(parts[1].upper()) if len(parts) > 1 else End.LEFT
        return Play(parse_tile(parts[0]), end)
    except (KeyError, ValueError, IndexError) as e:
        raise InvalidCommand("bad_command", f"cannot read {raw!r}: {e}") from None


GAME = Dominoes()
