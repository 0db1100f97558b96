"""The data of 洪洞王牌麻将: commands, events, the state and the views (no decisions here).

Tiles travel in the rules file's notation (``5s``, ``E``, ``中``, ``王``); the state keeps kind
numbers (see :mod:`chieu.games.mahjong.tiles`). The turn event ``TimedOut`` is the shared
one of :mod:`chieu.games.common`.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from chieu.games.common import TimedOut
from chieu.games.core import Transfer
from chieu.games.mahjong.options import Options

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
    """A meld of ``seat``; ``from_seat`` is the discarder for 碰/明杠 (and a 补杠's 碰), else the
    seat itself."""

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
    give melds (they count as if played: they set the suit lock, and their gangs count for the
    gang payments and 荒庄荒杠), declarations, discards and ``gangs``, the gangs made so far
    (the listed gang melds included; more only raise the reserve).
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
    concealed: tuple[str, ...] = ()
    """The seat's concealed tiles, laid open once the hand is over (empty before)."""


@dataclass(frozen=True, slots=True)
class Command:
    """One entry of a view's ``legal`` list: exactly one command is set; send it (or this
    wrapper) in ``Act`` unchanged."""

    discard: Discard | None = None
    peng: Peng | None = None
    gang: Gang | None = None
    pass_: Pass | None = None
    win: Win | None = None
    choose_pair: ChoosePair | None = None


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
    winner: int
    win_tile: str
    winning_hand: tuple[str, ...]
    items: tuple[ScoreItem, ...]
    total: int
    legal: tuple[Command, ...]
    """What the seat may send now (none for a spectator)."""
    wall_left: tuple[str, ...] = ()
    """The tiles left in the wall, laid open once the hand is over (empty before)."""


# ---------------------------------------------------------------- accessors


def reserve(s: State) -> int:
    """R (留底码): tiles never drawn by normal draws — 14 + gangs, 0 with 一摸到底."""
    return 0 if s.options.yimodaodi else 14 + s.gangs


def remaining(s: State) -> int:
    """Tiles left in the wall."""
    return len(s.wall) - s.pos


def meld_sizes(p: PlayerState) -> list[int]:
    """Tiles in each of the seat's melds: 3 for a 碰, 4 for a gang."""
    return [3 if t is MeldType.PENG else 4 for t, _, _ in p.melds]


GameCommand = Discard | Peng | Gang | Pass | Win | ChoosePair
"""Every command of 洪洞王牌麻将 (what its ``decide`` takes and ``legal`` lists; ``GAME.commands``)."""
GameEvent = (
    Dealt | PairChosen | TurnStarted | Drew | Discarded | ClaimOpened | ClaimAnswered | Penged | Ganged
    | TimedOut | Won | HandDrawn
)
"""Every event of 洪洞王牌麻将 (what its decider makes and its ``evolve`` folds; ``GAME.events``)."""
