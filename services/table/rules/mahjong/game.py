"""洪洞王牌麻将 (Hongdong "king-tile" Mahjong) as a decider: §1 of shared/rules/mahjong.md.

Seats 0..n-1 in turn order; the dealer (庄) holds 14 tiles and discards first. Every win is
self-drawn (自摸, or 杠开 on a gang's replacement tile) after a ready declaration: 报听 (bao ting)
or 硬扣 (ying kou, wins only on a dragon that completes 中发白). The laizi (癞子/王, the wild tile)
depends on the room's LAIZI_MODE. Tiles travel in the rules file's notation (``5s``, ``E``, ``中``,
``王``); the state keeps kind numbers (see :mod:`chieu.table.rules.mahjong.tiles`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from enum import Enum
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
from chieu.table.rules.mahjong import hand as H
from chieu.table.rules.mahjong import tiles as T

# ---------------------------------------------------------------- options


class Mode(str, Enum):
    """LAIZI_MODE: how the wild tiles are chosen (§1.3)."""

    PUTONG = "普通"
    SEPAI = "色牌"
    YIZHIWANG = "一支王"
    XIAOSHOUWANG = "小手王"
    DAJIANGWANG = "大将王黑风报"
    DUIWANG = "对王大将报"


@dataclass(frozen=True, slots=True)
class Options:
    """Table options of §1.8 (rules-file names in ``option_values``) plus the three clocks."""

    laizi_mode: Mode = Mode.PUTONG
    yimodaodi: bool = False
    mianpeng: bool = False
    players: int = 4
    pinghu_only_if_no_pattern: bool = False
    flush_exclusive: bool = False
    loushanglou_style: str = "stack"
    dealer_bonus: int = 0
    mianpeng_allows_angang: bool = False
    suit_lock_all_two_suit_modes: bool = False
    qidui_quad_as_two_pairs: bool = True
    turn_seconds: int = 20
    claim_seconds: int = 10
    pair_seconds: int = 15


_NAMES = {
    "LAIZI_MODE": "laizi_mode",
    "YIMODAODI": "yimodaodi",
    "MIANPENG": "mianpeng",
    "PLAYERS": "players",
    "PINGHU_ONLY_IF_NO_PATTERN": "pinghu_only_if_no_pattern",
    "FLUSH_EXCLUSIVE": "flush_exclusive",
    "LOUSHANGLOU_STYLE": "loushanglou_style",
    "DEALER_BONUS": "dealer_bonus",
    "MIANPENG_ALLOWS_ANGANG": "mianpeng_allows_angang",
    "SUIT_LOCK_ALL_TWO_SUIT_MODES": "suit_lock_all_two_suit_modes",
    "QIDUI_QUAD_AS_TWO_PAIRS": "qidui_quad_as_two_pairs",
    "TURN_SECONDS": "turn_seconds",
    "CLAIM_SECONDS": "claim_seconds",
    "PAIR_SECONDS": "pair_seconds",
}
_SWITCHES = {
    "yimodaodi", "mianpeng", "pinghu_only_if_no_pattern", "flush_exclusive",
    "mianpeng_allows_angang", "suit_lock_all_two_suit_modes", "qidui_quad_as_two_pairs",
}


def _switch(name: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if value in ("on", "off"):
        return bool(value == "on")
    raise BadOptions(f"{name} must be on or off, not {value!r}")


def _whole(name: str, value: Any, allowed: range) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value not in allowed:
        raise BadOptions(f"{name} must be a whole number in {allowed.start}..{allowed.stop - 1}")
    return value


def parse_options(raw: Mapping[str, Any]) -> Options:
    """Validate §1.8's options; unknown names and values are refused."""
    unknown = sorted(set(raw) - set(_NAMES))
    if unknown:
        raise BadOptions(f"unknown option(s) {', '.join(unknown)}; known: {', '.join(_NAMES)}")
    values: dict[str, Any] = {}
    for key, value in raw.items():
        attr = _NAMES[key]
        if attr in _SWITCHES:
            values[attr] = _switch(key, value)
        elif attr == "laizi_mode":
            try:
                values[attr] = value if isinstance(value, Mode) else Mode(value)
            except ValueError:
                modes = " | ".join(m.value for m in Mode)
                raise BadOptions(f"LAIZI_MODE must be one of {modes}, not {value!r}") from None
        elif attr == "loushanglou_style":
            if value not in ("stack", "replace"):
                raise BadOptions(f"LOUSHANGLOU_STYLE must be stack or replace, not {value!r}")
            values[attr] = value
        elif attr == "players":
            values[attr] = _whole(key, value, range(2, 5))
        elif attr == "dealer_bonus":
            values[attr] = _whole(key, value, range(0, 2))
        else:
            values[attr] = _whole(key, value, range(1, 3601))
    return replace(Options(), **values)


def option_values(options: Options) -> Mapping[str, Any]:
    """The options under the rules file's names (switches as ``on`` / ``off``)."""
    out: dict[str, Any] = {}
    for key, attr in _NAMES.items():
        v = getattr(options, attr)
        out[key] = v.value if isinstance(v, Mode) else ("on" if v else "off") if isinstance(v, bool) else v
    return out


# ---------------------------------------------------------------- wire types


class Declare(str, Enum):
    """What a discard declares: nothing, 报听 (ready) or 硬扣 (ready on 中发白 only)."""

    NONE = "none"
    TING = "ting"
    YING_KOU = "ying_kou"


class MeldType(str, Enum):
    """碰 (peng), 明杠 (gang on a discard), 补杠 (added to a peng), 暗杠 (concealed gang)."""

    PENG = "peng"
    MING_GANG = "ming_gang"
    BU_GANG = "bu_gang"
    AN_GANG = "an_gang"


class ClaimAction(str, Enum):
    """An answer in the claim window after a discard."""

    PASS = "pass"
    PENG = "peng"
    GANG = "gang"


class Phase(str, Enum):
    """Where the hand is: choosing 对王 pairs, a seat's turn, a claim window, over."""

    DEALING = "dealing"
    CHOOSE_PAIR = "choose_pair"
    TURN = "turn"
    CLAIM = "claim"
    OVER = "over"


@dataclass(frozen=True, slots=True)
class Discard:
    """Discard ``tile``; ``declare`` makes it the 报听 or 硬扣 discard."""

    tile: str
    declare: Declare = Declare.NONE


@dataclass(frozen=True, slots=True)
class Peng:
    """碰 the tile in the claim window."""


@dataclass(frozen=True, slots=True)
class Gang:
    """杠 ``tile``: 明杠 in a claim window, else 暗杠 or 补杠 on one's own turn."""

    tile: str


@dataclass(frozen=True, slots=True)
class Pass:
    """Decline the claim window."""


@dataclass(frozen=True, slots=True)
class Win:
    """自摸 (or 杠开) on the tile just drawn."""


@dataclass(frozen=True, slots=True)
class ChoosePair:
    """对王大将报: make the pair of ``tile`` one's laizi (exposed to the left)."""

    tile: str


@dataclass(frozen=True, slots=True)
class Tiles:
    """A list of tiles (one seat's hand in the deal)."""

    tiles: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Meld:
    """A meld of ``seat``; ``from_seat`` is the discarder for 碰/明杠, else the seat itself."""

    seat: int
    meld_type: MeldType
    tile: str
    from_seat: int


@dataclass(frozen=True, slots=True)
class ScoreItem:
    """One scoring item of the winning arrangement (``pinghu``, ``yitiaolong``, ``wind_runs``…)."""

    code: str
    points: int


@dataclass(frozen=True, slots=True)
class Dealt:
    """The hand is set up: hands in seat order, the wall in draw order (last = the reserve end).

    ``indicator``/``set_aside`` are for 普通/色牌 and 一支王; ``laizi`` per seat ("" = none);
    ``locked`` = exposed laizi copies that may never be discarded. Scenario positions may also
    give melds, declarations and a gang count.
    """

    dealer: int
    hands: tuple[Tiles, ...]
    wall: tuple[str, ...]
    indicator: str
    set_aside: tuple[str, ...]
    laizi: tuple[str, ...]
    locked: tuple[int, ...]
    seed: str
    deadline_ms: int
    choose_pair: bool
    melds: tuple[Meld, ...] = ()
    declared: tuple[Declare, ...] = ()
    gangs: int = 0
    discards: tuple[Tiles, ...] = ()


@dataclass(frozen=True, slots=True)
class PairChosen:
    """对王大将报: ``seat`` made ``tile`` its laizi ("" = no pair, no laizi)."""

    seat: int
    tile: str


@dataclass(frozen=True, slots=True)
class TurnStarted:
    """``seat`` (the dealer, after the pair choice) acts until ``deadline_ms``."""

    seat: int
    deadline_ms: int


@dataclass(frozen=True, slots=True)
class Drew:
    """``seat`` drew ``tile`` (a gang's replacement if ``replacement``); ``laizi`` after the draw."""

    seat: int
    tile: str
    replacement: bool
    laizi: str
    deadline_ms: int


@dataclass(frozen=True, slots=True)
class Discarded:
    """``seat`` discarded ``tile`` (``auto``: by the system after 报听); ``waits`` after 报听/硬扣."""

    seat: int
    tile: str
    declare: Declare
    auto: bool
    waits: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ClaimOpened:
    """``seats`` may 碰/杠 ``tile`` until ``deadline_ms``."""

    seats: tuple[int, ...]
    tile: str
    deadline_ms: int


@dataclass(frozen=True, slots=True)
class ClaimAnswered:
    """``seat``'s answer in the claim window."""

    seat: int
    action: ClaimAction


@dataclass(frozen=True, slots=True)
class Penged:
    """``seat`` took ``from_seat``'s ``tile`` for a 碰 and now discards by ``deadline_ms``."""

    seat: int
    tile: str
    from_seat: int
    deadline_ms: int


@dataclass(frozen=True, slots=True)
class Ganged:
    """``seat`` made a gang; a replacement draw follows. ``waits`` after the gang if ready."""

    seat: int
    meld_type: MeldType
    tile: str
    from_seat: int
    waits: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class TimedOut:
    """``seat``'s clock ran out; the events after it are the auto-play."""

    seat: int


@dataclass(frozen=True, slots=True)
class Won:
    """``seat`` won on ``tile`` for ``total`` (H); ``transfers`` is the whole settlement."""

    seat: int
    tile: str
    concealed: tuple[str, ...]
    laizi: str
    items: tuple[ScoreItem, ...]
    total: int
    qidui: bool
    transfers: tuple[Transfer, ...]


@dataclass(frozen=True, slots=True)
class HandDrawn:
    """荒庄: nobody won; 荒庄荒杠 cancels every gang point. ``gangs``: a gang was made."""

    gangs: bool
    next_dealer: int


# ---------------------------------------------------------------- state


@dataclass(frozen=True, slots=True)
class PlayerState:
    """One seat: concealed kinds (sorted), melds ``(type, kind, from)``, discards, laizi."""

    hand: tuple[int, ...] = ()
    melds: tuple[tuple[MeldType, int, int], ...] = ()
    discards: tuple[int, ...] = ()
    laizi: int = -1
    locked: int = 0
    declared: Declare = Declare.NONE
    locked_suit: int = -1
    waits: tuple[int, ...] = ()
    pair_chosen: bool = True


@dataclass(frozen=True, slots=True)
class State:
    """The whole hand, secrets included (the wall order); views strip them."""

    options: Options
    players: int
    phase: Phase = Phase.DEALING
    dealer: int = 0
    turn: int = -1
    drawn: int = -1
    wall: tuple[int, ...] = ()
    pos: int = 0
    gangs: int = 0
    indicator: int = -1
    set_aside: tuple[int, ...] = ()
    seed: str = ""
    deadline_ms: int = 0
    seats: tuple[PlayerState, ...] = ()
    claim_tile: int = -1
    claim_from: int = -1
    claim_seats: tuple[int, ...] = ()
    answers: tuple[tuple[int, ClaimAction], ...] = ()
    draws: int = 0
    gang_log: tuple[tuple[int, MeldType], ...] = ()
    result: Won | None = None
    drawn_hand: HandDrawn | None = None
    final_discard: bool = False


def _sorted_add(hand: tuple[int, ...], k: int) -> tuple[int, ...]:
    return tuple(sorted((*hand, k)))


def _remove(hand: tuple[int, ...], k: int, n: int = 1) -> tuple[int, ...]:
    out = list(hand)
    for _ in range(n):
        out.remove(k)
    return tuple(out)


def _set(seats: tuple[PlayerState, ...], i: int, p: PlayerState) -> tuple[PlayerState, ...]:
    return seats[:i] + (p,) + seats[i + 1 :]


def _lname(k: int) -> str:
    return "" if k < 0 else T.name(k)


def _lkind(s: str) -> int:
    return -1 if not s else T.kind(s)


# ---------------------------------------------------------------- views


@dataclass(frozen=True, slots=True)
class MeldView:
    """A meld as others see it: an 暗杠's tile is hidden ("") from other seats."""

    meld_type: MeldType
    tile: str
    from_seat: int


@dataclass(frozen=True, slots=True)
class PlayerView:
    """Public facts of one seat (its own laizi only when the mode exposes it, or to itself)."""

    seat: int
    concealed_count: int
    melds: tuple[MeldView, ...]
    discards: tuple[str, ...]
    exposed_laizi: tuple[str, ...]
    laizi: str
    declared: Declare


@dataclass(frozen=True, slots=True)
class View:
    """What one seat (or a spectator, seat -1) sees; never another seat's concealed tiles."""

    seat: int
    phase: Phase
    dealer: int
    turn: int
    deadline_ms: int
    hand: tuple[str, ...]
    drawn: str
    waits: tuple[str, ...]
    indicator: str
    wall_count: int
    live_count: int
    players: tuple[PlayerView, ...]
    claim_tile: str
    claim_from: int
    can: tuple[str, ...]
    winner: int
    win_tile: str
    winning_hand: tuple[str, ...]
    items: tuple[ScoreItem, ...]
    total: int


# ---------------------------------------------------------------- the rules


def hand_rules(o: Options, ying_kou: bool = False) -> H.HandRules:
    """The hand-evaluation rules of the room's mode and options."""
    mode = o.laizi_mode
    return H.HandRules(
        lack_max=2 if mode in (Mode.PUTONG, Mode.YIZHIWANG) else 1,
        qidui=mode is not Mode.YIZHIWANG and not ying_kou,
        quads=o.qidui_quad_as_two_pairs,
        pinghu_only_if_no_pattern=o.pinghu_only_if_no_pattern,
        flush_exclusive=o.flush_exclusive,
        loushanglou_replace=o.loushanglou_style == "replace",
    )


def reserve(s: State) -> int:
    """R (留底码): tiles never drawn by normal draws — 14 + gangs, 0 with 一摸到底."""
    return 0 if s.options.yimodaodi else 14 + s.gangs


def remaining(s: State) -> int:
    """Tiles left in the wall."""
    return len(s.wall) - s.pos


def _meld_suits(p: PlayerState) -> int:
    mask = 0
    for _, k, _ in p.melds:
        if k != p.laizi and T.suit(k) >= 0:
            mask |= 1 << T.suit(k)
    return mask


def _djw_candidates(hand: Sequence[int], previous: int) -> list[int]:
    """大将王黑风报: the dragon kinds held most; the previous laizi alone if it is among them."""
    c = [sum(1 for k in hand if k == d) for d in T.DRAGONS]
    top = max(c)
    tied = [d for d, n in zip(T.DRAGONS, c, strict=True) if n == top]
    return [previous] if previous in tied else tied


def _wins(o: Options, p: PlayerState, hand: Sequence[int], ying_kou: bool, laizis: Sequence[int],
          win_tile: int = -1) -> bool:
    """Whether ``hand`` (concealed, winning tile included) wins for one of ``laizis``."""
    rules = hand_rules(o, ying_kou)
    for lz in laizis:
        if ying_kou:
            kinds = [k for _, k, _ in p.melds]
            if H.score(hand, kinds, lz, win_tile, rules, True, _sizes(p)) is not None:
                return True
        elif H.is_win(T.counts(hand), lz, _meld_suits(replace(p, laizi=lz)), rules, len(p.melds)):
            return True
    return False


def _sizes(p: PlayerState) -> list[int]:
    return [3 if t is MeldType.PENG else 4 for t, _, _ in p.melds]


def waits_of(o: Options, p: PlayerState, hand: Sequence[int], ying_kou: bool) -> tuple[int, ...]:
    """The kinds that would complete ``hand`` (13 − 3·melds tiles) for this seat."""
    out = []
    c = T.counts(hand)
    for k in range(34):
        if c[k] >= 4 or (ying_kou and k not in T.DRAGONS):
            continue
        h = (*hand, k)
        laizis = _djw_candidates(h, p.laizi) if o.laizi_mode is Mode.DAJIANGWANG else [p.laizi]
        if _wins(o, p, h, ying_kou, laizis, k):
            out.append(k)
    return tuple(out)


class _Flow:
    """Collects events while applying them, so later decisions see the updated state."""

    def __init__(self, game: Mahjong, state: State, now_ms: int) -> None:
        self.game = game
        self.s = state
        self.now = now_ms
        self.events: list[Any] = []

    def emit(self, e: Any) -> None:
        self.events.append(e)
        self.s = self.game.evolve(self.s, e)


class Mahjong:
    """The 洪洞王牌麻将 game object registered under ``mahjong``."""

    key = "mahjong"
    title = "洪洞王牌麻将"
    min_players = 2
    max_players = 4
    commands: tuple[type, ...] = (Discard, Peng, Gang, Pass, Win, ChoosePair)
    events: tuple[type, ...] = (
        Dealt, PairChosen, TurnStarted, Drew, Discarded, ClaimOpened, ClaimAnswered, Penged,
        Ganged, TimedOut, Won, HandDrawn,
    )
    option_type = Options
    view_type = View

    def __init__(self) -> None:
        from chieu.table.rules.mahjong.notation import describe, parse_command, position, queries

        self.scenario = ScenarioHooks(
            position=position, describe=describe, queries=queries(), command=parse_command
        )

    parse_options = staticmethod(parse_options)
    option_values = staticmethod(option_values)

    def initial(self, options: Options, players: int) -> State:
        return State(options=options, players=players)

    # -- setup

    def start(self, setup: Setup) -> Sequence[Any]:
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
        if setup.first is not None:
            return setup.first % n
        prev = setup.previous
        if prev is None or prev.first is None:
            return fair.choice(setup.seed, tuple(range(n)), "dealer")
        if prev.winner is not None:
            return prev.winner % n
        if prev.reason == "huangzhuang_gang":
            return (prev.first + 1) % n
        return prev.first % n

    def deal_events(
        self, o: Options, n: int, dealer: int, hands: Sequence[Sequence[int]], wall: Sequence[int],
        set_aside: Sequence[int], seed: bytes, now_ms: int, melds: Sequence[Meld] = (),
        declared: Sequence[Declare] = (), laizi: Sequence[int] | None = None, gangs: int = 0,
        discards: Sequence[Sequence[int]] = (),
    ) -> list[Any]:
        """The ``Dealt`` event (and the dealer's clock) for an exact deal."""
        mode = o.laizi_mode
        indicator = -1
        lz = [-1] * n
        locked = [0] * n
        if mode in (Mode.PUTONG, Mode.SEPAI):
            indicator = wall[-1]
            lz = [T.successor(indicator)] * n
        elif mode is Mode.YIZHIWANG:
            lz = [T.WANG] * n
            locked = [1] * n
        elif mode is Mode.XIAOSHOUWANG:
            for i in range(n):
                lz[i] = fair.choice(seed, tuple(sorted(hands[i])), f"xiaoshouwang:{i}")
                locked[i] = 1
        elif mode is Mode.DAJIANGWANG:
            for i in range(n):
                cand = _djw_candidates(hands[i], -1)
                lz[i] = cand[0] if len(cand) == 1 else fair.choice(seed, tuple(cand), f"djw:{i}:0")
        if laizi is not None:
            lz = [k for k in laizi]
            if mode is Mode.XIAOSHOUWANG:
                locked = [1 if k >= 0 else 0 for k in lz]
            if mode is Mode.DUIWANG:
                locked = [2 if k >= 0 else 0 for k in lz]
        choose = mode is Mode.DUIWANG and laizi is None and any(
            max(T.counts(h)[:34]) >= 2 for h in hands)
        secs = o.pair_seconds if choose else o.turn_seconds
        return [
            Dealt(
                dealer=dealer,
                hands=tuple(Tiles(T.names(sorted(h))) for h in hands),
                wall=T.names(wall),
                indicator=_lname(indicator),
                set_aside=T.names(set_aside),
                laizi=tuple(_lname(k) for k in lz),
                locked=tuple(locked),
                seed=seed.hex(),
                deadline_ms=now_ms + secs * 1000,
                choose_pair=choose,
                melds=tuple(melds),
                declared=tuple(declared),
                gangs=gangs,
                discards=tuple(Tiles(T.names(d)) for d in discards),
            )
        ]

    # -- decide

    def decide(self, state: State, seat: Seat, command: Any, now_ms: int) -> Sequence[Any]:
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

    def _pairs(self, p: PlayerState) -> list[int]:
        c = T.counts(p.hand)
        return [k for k in range(34) if c[k] >= 2]

    def _choose_pair(self, f: _Flow, seat: int, cmd: ChoosePair) -> None:
        s = f.s
        p = s.seats[seat]
        if s.phase is not Phase.CHOOSE_PAIR or p.pair_chosen:
            raise IllegalMove("no_pair_choice", "there is no pair to choose now")
        k = _lkind(cmd.tile)
        if k not in self._pairs(p):
            raise IllegalMove("no_such_pair", f"you hold no pair of {cmd.tile}")
        f.emit(PairChosen(seat, cmd.tile))
        self._after_pair(f)

    def _after_pair(self, f: _Flow) -> None:
        if all(p.pair_chosen for p in f.s.seats):
            f.emit(TurnStarted(f.s.dealer, f.now + f.s.options.turn_seconds * 1000))

    # .. claims

    def claim_options(self, s: State, seat: int) -> tuple[bool, bool]:
        """(may 碰, may 明杠) the discard in the claim window."""
        if seat == s.claim_from or s.claim_tile < 0:
            return False, False
        o = s.options
        p = s.seats[seat]
        k = s.claim_tile
        n = p.hand.count(k)
        if k == T.WANG:
            return False, False
        if p.locked_suit >= 0 and 0 <= T.suit(k) != p.locked_suit:
            return False, False
        ready = p.declared is not Declare.NONE
        peng = (
            n >= 2 and not ready and not o.mianpeng and not s.final_discard
            and self._discardable_after(p, _remove(p.hand, k, 2))
        )
        gang = n >= 3 and not o.mianpeng and remaining(s) > 0
        if gang and ready:
            gang = self._still_ready(s, p, _remove(p.hand, k, 3), MeldType.MING_GANG, k) is not None
        return peng, gang

    def _discardable_after(self, p: PlayerState, hand: tuple[int, ...]) -> bool:
        return any(self._may_discard(p, hand, k) for k in set(hand))

    def _may_discard(self, p: PlayerState, hand: tuple[int, ...], k: int) -> bool:
        if k not in hand or k == T.WANG:
            return False
        return not (k == p.laizi and hand.count(k) <= p.locked)

    def _still_ready(self, s: State, p: PlayerState, hand: tuple[int, ...], t: MeldType,
                     k: int) -> tuple[int, ...] | None:
        """After 报听/硬扣 a gang is allowed only if the hand is still ready (its new waits)."""
        ying = p.declared is Declare.YING_KOU
        if ying and k in T.DRAGONS:
            return None
        after = replace(p, hand=hand, melds=(*p.melds, (t, k, -1)))
        w = waits_of(s.options, after, hand, ying)
        return w or None

    def _answer(self, f: _Flow, seat: int, cmd: Any) -> None:
        s = f.s
        if s.phase is not Phase.CLAIM or seat not in s.claim_seats:
            raise IllegalMove("no_claim", "you have nothing to claim")
        if any(a[0] == seat for a in s.answers):
            raise IllegalMove("already_answered", "you already answered")
        peng, gang = self.claim_options(s, seat)
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
            f.emit(Penged(best[0], T.name(tile), s.claim_from, f.now + s.options.turn_seconds * 1000))
        else:
            p = s.seats[best[0]]
            w = self._waits_after_gang(s, p, _remove(p.hand, tile, 3), MeldType.MING_GANG, tile)
            f.emit(Ganged(best[0], MeldType.MING_GANG, T.name(tile), s.claim_from, w))
            self._replacement(f, best[0])

    def _waits_after_gang(self, s: State, p: PlayerState, hand: tuple[int, ...], t: MeldType,
                          k: int) -> tuple[str, ...]:
        if p.declared is Declare.NONE:
            return ()
        return T.names(self._still_ready(s, p, hand, t, k) or ())

    # .. drawing

    def _laizi_after_draw(self, s: State, seat: int, hand: tuple[int, ...]) -> int:
        p = s.seats[seat]
        if s.options.laizi_mode is not Mode.DAJIANGWANG:
            return p.laizi
        cand = _djw_candidates(hand, p.laizi)
        if len(cand) == 1:
            return cand[0]
        return fair.choice(bytes.fromhex(s.seed), tuple(cand), f"djw:{seat}:{s.draws + 1}")

    def _draw(self, f: _Flow, seat: int, replacement: bool) -> None:
        s = f.s
        k = s.wall[s.pos]
        lz = self._laizi_after_draw(s, seat, _sorted_add(s.seats[seat].hand, k))
        f.emit(Drew(seat, T.name(k), replacement, _lname(lz), f.now + s.options.turn_seconds * 1000))
        self._after_draw(f, seat)

    def _next_draw(self, f: _Flow, seat: int) -> None:
        s = f.s
        if remaining(s) > reserve(s) and not s.final_discard:
            self._draw(f, seat, False)
        else:
            nxt = (s.dealer + 1) % s.players if s.gang_log else s.dealer
            f.emit(HandDrawn(bool(s.gang_log), nxt))

    def _replacement(self, f: _Flow, seat: int) -> None:
        self._draw(f, seat, True)

    def can_win(self, s: State, seat: int) -> bool:
        """Whether ``seat`` may declare 自摸 now (just drew, after 报听/硬扣)."""
        p = s.seats[seat]
        if s.phase is not Phase.TURN or s.turn != seat or s.drawn < 0 or p.declared is Declare.NONE:
            return False
        return self._score(s, seat) is not None

    def _score(self, s: State, seat: int) -> H.Scored | None:
        p = s.seats[seat]
        ying = p.declared is Declare.YING_KOU
        return H.score(
            p.hand, [k for _, k, _ in p.melds], p.laizi, s.drawn, hand_rules(s.options, ying), ying,
            _sizes(p),
        )

    def gang_options(self, s: State, seat: int) -> list[tuple[MeldType, int]]:
        """The 暗杠/补杠 ``seat`` may make now on its own turn."""
        if s.phase is not Phase.TURN or s.turn != seat or remaining(s) <= 0:
            return []
        o = s.options
        if o.mianpeng and not o.mianpeng_allows_angang:
            return []
        p = s.seats[seat]
        c = T.counts(p.hand)
        out: list[tuple[MeldType, int]] = []
        for k in range(34):
            if c[k] == 4:
                out.append((MeldType.AN_GANG, k))
        if not o.mianpeng:
            for t, k, _ in p.melds:
                if t is MeldType.PENG and c[k] >= 1:
                    out.append((MeldType.BU_GANG, k))
        if p.declared is not Declare.NONE:
            ok = []
            for t, k in out:
                if t is MeldType.BU_GANG and k != s.drawn:
                    continue
                n = 4 if t is MeldType.AN_GANG else 1
                if self._still_ready(s, p, _remove(p.hand, k, n), t, k) is not None:
                    ok.append((t, k))
            out = ok
        return out

    def _after_draw(self, f: _Flow, seat: int) -> None:
        s = f.s
        p = s.seats[seat]
        if p.declared is Declare.NONE:
            return
        if self.can_win(s, seat) or self.gang_options(s, seat):
            return
        f.emit(Discarded(seat, T.name(s.drawn), Declare.NONE, True, ()))
        self._after_discard(f)

    # .. discarding

    def _discard(self, f: _Flow, seat: int, cmd: Discard) -> None:
        s = f.s
        o = s.options
        p = s.seats[seat]
        k = T.kind(cmd.tile)
        if not self._may_discard(p, p.hand, k):
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
            rest = _remove(p.hand, k)
            w = waits_of(o, p, rest, cmd.declare is Declare.YING_KOU)
            if not w:
                code = "not_ready" if cmd.declare is Declare.TING else "not_ying_kou"
                raise IllegalMove(code, "the hand would not be ready after this discard")
            waits = T.names(w)
        f.emit(Discarded(seat, T.name(k), cmd.declare, False, waits))
        self._after_discard(f)

    def _after_discard(self, f: _Flow) -> None:
        s = f.s
        seats = tuple(i for i in range(s.players) if i != s.turn and any(self.claim_options(s, i)))
        if seats:
            f.emit(ClaimOpened(seats, T.name(s.claim_tile), f.now + s.options.claim_seconds * 1000))
        else:
            self._next_draw(f, (s.turn + 1) % s.players)

    # .. own gangs and the win

    def _own_gang(self, f: _Flow, seat: int, k: int) -> None:
        s = f.s
        options = self.gang_options(s, seat)
        match = [t for t, kk in options if kk == k]
        if not match:
            raise IllegalMove("cannot_gang", f"you may not 杠 {T.name(k)} now")
        t = match[0]
        p = s.seats[seat]
        hand = _remove(p.hand, k, 4 if t is MeldType.AN_GANG else 1)
        f.emit(Ganged(seat, t, T.name(k), seat, self._waits_after_gang(s, p, hand, t, k)))
        self._replacement(f, seat)

    def _win(self, f: _Flow, seat: int) -> None:
        s = f.s
        p = s.seats[seat]
        if p.declared is Declare.NONE:
            raise IllegalMove("not_ready", "only a seat that declared 报听 or 硬扣 may win")
        if s.drawn < 0:
            raise IllegalMove("not_drawn", "wins are self-drawn only")
        sc = self._score(s, seat)
        if sc is None:
            raise IllegalMove("not_a_win", "the hand does not win")
        f.emit(self._won(s, seat, sc))

    def _won(self, s: State, seat: int, sc: H.Scored) -> Won:
        o = s.options
        n = s.players
        transfers = list(self._gang_transfers(s))
        for i in range(1, n):
            payer = (seat + i) % n
            bonus = o.dealer_bonus if s.dealer in (seat, payer) else 0
            transfers.append(Transfer(payer, seat, sc.total + bonus, "win"))
        p = s.seats[seat]
        return Won(
            seat, T.name(s.drawn), T.names(p.hand), _lname(p.laizi),
            tuple(ScoreItem(c, v) for c, v in sc.items), sc.total, sc.qidui, tuple(transfers),
        )

    def _gang_transfers(self, s: State) -> list[Transfer]:
        out = []
        for ganger, t in s.gang_log:
            amount = 2 if t is MeldType.AN_GANG else 1
            for i in range(1, s.players):
                out.append(Transfer((ganger + i) % s.players, ganger, amount, f"gang_{t.value}"))
        return out

    # -- evolve

    def evolve(self, state: State, event: Any) -> State:
        s = state
        if isinstance(event, Drew):
            k = T.kind(event.tile)
            p = s.seats[event.seat]
            p = replace(p, hand=_sorted_add(p.hand, k), laizi=_lkind(event.laizi))
            return replace(
                s, seats=_set(s.seats, event.seat, p), pos=s.pos + 1, drawn=k, turn=event.seat,
                phase=Phase.TURN, deadline_ms=event.deadline_ms, draws=s.draws + 1,
                claim_tile=-1, claim_from=-1, claim_seats=(), answers=(),
            )
        if isinstance(event, Discarded):
            k = T.kind(event.tile)
            p = s.seats[event.seat]
            p = replace(p, hand=_remove(p.hand, k), discards=(*p.discards, k))
            if event.declare is not Declare.NONE:
                p = replace(p, declared=event.declare, waits=tuple(T.kind(w) for w in event.waits))
            return replace(
                s, seats=_set(s.seats, event.seat, p), drawn=-1, claim_tile=k,
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
            k = _lkind(event.tile)
            p = replace(p, pair_chosen=True, laizi=k, locked=2 if k >= 0 else 0)
            return replace(s, seats=_set(s.seats, event.seat, p))
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
        lock = p.locked_suit
        locking = s.options.laizi_mode is Mode.DUIWANG or (
            s.options.suit_lock_all_two_suit_modes
            and s.options.laizi_mode in (Mode.SEPAI, Mode.DAJIANGWANG)
        )
        if locking and lock < 0 and T.suit(k) >= 0:
            lock = T.suit(k)
        locked = p.locked
        seats = s.seats
        if event.from_seat != event.seat:
            giver = seats[event.from_seat]
            seats = _set(seats, event.from_seat, replace(giver, discards=giver.discards[:-1]))
        if isinstance(event, Penged):
            hand = _remove(p.hand, k, 2)
            melds = (*p.melds, (MeldType.PENG, k, event.from_seat))
            if k == p.laizi:
                locked = min(locked, hand.count(k))
            p = replace(p, hand=hand, melds=melds, locked_suit=lock, locked=locked)
            return replace(
                s, seats=_set(seats, event.seat, p), phase=Phase.TURN, turn=event.seat, drawn=-1,
                deadline_ms=event.deadline_ms, claim_tile=-1, claim_from=-1, claim_seats=(), answers=(),
            )
        t = event.meld_type
        if t is MeldType.BU_GANG:
            hand = _remove(p.hand, k)
            melds = tuple((MeldType.BU_GANG, kk, fr) if tt is MeldType.PENG and kk == k else (tt, kk, fr)
                          for tt, kk, fr in p.melds)
        else:
            hand = _remove(p.hand, k, 3 if t is MeldType.MING_GANG else 4)
            melds = (*p.melds, (t, k, event.from_seat))
        if k == p.laizi:
            locked = min(locked, hand.count(k))
        waits = tuple(T.kind(w) for w in event.waits) if p.declared is not Declare.NONE else p.waits
        p = replace(p, hand=hand, melds=melds, locked_suit=lock, locked=locked, waits=waits)
        return replace(
            s, seats=_set(seats, event.seat, p), gangs=s.gangs + 1,
            gang_log=(*s.gang_log, (event.seat, t)), turn=event.seat, drawn=-1,
            claim_tile=-1, claim_from=-1, claim_seats=(), answers=(), final_discard=False,
        )

    def _evolve_dealt(self, s: State, e: Dealt) -> State:
        n = len(e.hands)
        seats = []
        for i in range(n):
            melds = tuple((m.meld_type, T.kind(m.tile), m.from_seat) for m in e.melds if m.seat == i)
            declared = e.declared[i] if e.declared else Declare.NONE
            seats.append(PlayerState(
                hand=tuple(sorted(T.parse(list(e.hands[i].tiles)))),
                melds=melds, laizi=_lkind(e.laizi[i]), locked=e.locked[i], declared=declared,
                discards=tuple(T.parse(list(e.discards[i].tiles))) if e.discards else (),
                pair_chosen=not e.choose_pair,
            ))
        st = replace(
            s, players=n, dealer=e.dealer, wall=tuple(T.parse(list(e.wall))), pos=0,
            indicator=_lkind(e.indicator), set_aside=tuple(T.parse(list(e.set_aside))),
            seed=e.seed, deadline_ms=e.deadline_ms, gangs=e.gangs,
            phase=Phase.CHOOSE_PAIR if e.choose_pair else Phase.TURN,
            turn=-1 if e.choose_pair else e.dealer,
        )
        if e.choose_pair:
            for i, p in enumerate(seats):
                if not self._pairs(p):
                    seats[i] = replace(p, pair_chosen=True)
        st = replace(st, seats=tuple(seats))
        for i, p in enumerate(st.seats):
            if p.declared is not Declare.NONE and not p.waits:
                ying = p.declared is Declare.YING_KOU
                hand = p.hand if len(p.hand) % 3 == 1 else p.hand[:-1]
                st = replace(st, seats=_set(st.seats, i, replace(p, waits=waits_of(s.options, p, hand, ying))))
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
                _lname(p.laizi) if public_laizi else "", p.declared,
            ))
        mine = s.seats[me] if 0 <= me < len(s.seats) else None
        won = s.result
        return View(
            seat=me, phase=s.phase, dealer=s.dealer, turn=s.turn, deadline_ms=s.deadline_ms,
            hand=T.names(mine.hand) if mine else (),
            drawn=T.name(s.drawn) if mine and s.turn == me and s.drawn >= 0 else "",
            waits=T.names(mine.waits) if mine and mine.declared is not Declare.NONE else (),
            indicator=_lname(s.indicator), wall_count=remaining(s),
            live_count=max(0, remaining(s) - reserve(s)), players=tuple(players),
            claim_tile=_lname(s.claim_tile) if s.phase is Phase.CLAIM else "",
            claim_from=s.claim_from if s.phase is Phase.CLAIM else -1,
            can=tuple(sorted({type(c).__name__ for c in self.legal(s, me)})) if mine else (),
            winner=won.seat if won else -1, win_tile=won.tile if won else "",
            winning_hand=won.concealed if won else (), items=won.items if won else (),
            total=won.total if won else 0,
        )

    def legal(self, state: State, seat: Seat) -> Sequence[Any]:
        s = state
        if s.phase in (Phase.OVER, Phase.DEALING) or not 0 <= seat < s.players:
            return []
        p = s.seats[seat]
        if s.phase is Phase.CHOOSE_PAIR:
            return [] if p.pair_chosen else [ChoosePair(T.name(k)) for k in self._pairs(p)]
        if s.phase is Phase.CLAIM:
            if seat not in s.claim_seats or any(a[0] == seat for a in s.answers):
                return []
            peng, gang = self.claim_options(s, seat)
            out: list[Any] = [Pass()]
            if peng:
                out.append(Peng())
            if gang:
                out.append(Gang(T.name(s.claim_tile)))
            return out
        if seat != s.turn:
            return []
        out = []
        if self.can_win(s, seat):
            out.append(Win())
        out += [Gang(T.name(k)) for _, k in self.gang_options(s, seat)]
        if p.declared is not Declare.NONE:
            if s.drawn >= 0:
                out.append(Discard(T.name(s.drawn)))
            return out
        mode = s.options.laizi_mode
        for k in sorted(set(p.hand)):
            if not self._may_discard(p, p.hand, k):
                continue
            out.append(Discard(T.name(k)))
            if (mode is Mode.DAJIANGWANG and k not in T.WINDS) or (
                mode is Mode.DUIWANG and k not in T.DRAGONS
            ):
                continue
            rest = _remove(p.hand, k)
            w = waits_of(s.options, p, rest, False)
            if w:
                out.append(Discard(T.name(k), Declare.TING))
                if any(d in w for d in T.DRAGONS) and waits_of(s.options, p, rest, True):
                    out.append(Discard(T.name(k), Declare.YING_KOU))
        return out

    def deadlines(self, state: State) -> Sequence[Deadline]:
        s = state
        if s.phase is Phase.TURN:
            return (Deadline(s.turn, s.deadline_ms),)
        if s.phase is Phase.CLAIM:
            done = {a[0] for a in s.answers}
            return tuple(Deadline(i, s.deadline_ms) for i in s.claim_seats if i not in done)
        if s.phase is Phase.CHOOSE_PAIR:
            return tuple(Deadline(i, s.deadline_ms) for i, p in enumerate(s.seats) if not p.pair_chosen)
        return ()

    def on_timeout(self, state: State, seat: Seat, now_ms: int) -> Sequence[Any]:
        """Auto-play: pass a claim; choose the lowest pair; win if possible, else discard the drawn
        tile (or, after a 碰, the highest discardable tile)."""
        s = state
        if seat not in {d.seat for d in self.deadlines(s)}:
            raise IllegalMove("not_on_the_clock", "no deadline of this seat is running")
        f = _Flow(self, s, now_ms)
        f.emit(TimedOut(seat))
        if s.phase is Phase.CHOOSE_PAIR:
            p = s.seats[seat]
            f.emit(PairChosen(seat, T.name(self._pairs(p)[0])))
            self._after_pair(f)
        elif s.phase is Phase.CLAIM:
            f.emit(ClaimAnswered(seat, ClaimAction.PASS))
            self._resolve_claims(f)
        elif self.can_win(s, seat):
            self._win(f, seat)
        else:
            p = s.seats[seat]
            k = s.drawn if s.drawn >= 0 and self._may_discard(p, p.hand, s.drawn) else max(
                k for k in p.hand if self._may_discard(p, p.hand, k))
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

__all__ = ["GAME", "Mahjong"]
