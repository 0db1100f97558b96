"""Phỏm's data: commands, events, the state and the views, as frozen, slotted dataclasses.

The turn events are :mod:`chieu.games.common`'s: ``TurnPassed(seat, deadline_ms)`` (it
is ``seat``'s turn) and ``TimedOut(seat)`` (its turn timer ran out, or it left; the server
plays for it, PH-R28).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from chieu.games.common import TimedOut, TurnPassed, replacer
from chieu.games.core import Transfer
from chieu.games.phom.options import Options

# ---------------------------------------------------------------- enums


class WinKind(str, Enum):
    """The kinds of Ù: ``thuong`` (one card left over), ``tron`` (none), ``khan`` (no cạ dealt)."""

    THUONG = "thuong"
    TRON = "tron"
    KHAN = "khan"


class Phase(str, Enum):
    """Where the hand is: not dealt, the Ù window, play, over."""

    NEW = "new"
    WINDOW = "window"
    PLAY = "play"
    OVER = "over"


class TurnKind(str, Enum):
    """The current turn: the dealer's first, a normal one, the lay-down turn (vòng hạ), a tái."""

    NONE = "none"
    FIRST = "first"
    NORMAL = "normal"
    LAYDOWN = "laydown"
    TAI = "tai"


# ---------------------------------------------------------------- commands


@dataclass(frozen=True, slots=True)
class ClaimU:
    """Press Ù (PH-R10, PH-R25)."""


@dataclass(frozen=True, slots=True)
class Eat:
    """Ăn: take the upstream neighbour's last discard (PH-R14); ``partners`` optional."""

    partners: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Draw:
    """Bốc: take the top stock card (PH-R19)."""


@dataclass(frozen=True, slots=True)
class Lay:
    """Hạ phỏm: lay one phỏm from the hand (PH-R21)."""

    cards: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Send:
    """Gửi bài: add ``card`` to the laid phỏm that holds ``target`` (PH-R22)."""

    card: str
    target: str


@dataclass(frozen=True, slots=True)
class Discard:
    """Đánh: discard one card, ending the turn (PH-R24)."""

    card: str


@dataclass(frozen=True, slots=True)
class Accuse:
    """Bắt báo: accuse ``target`` of a fouled hand (PH-R26)."""

    target: int


@dataclass(frozen=True, slots=True)
class Sort:
    """Xếp bài: show my hand in auto-sort order from now on (PH-R27)."""


# ---------------------------------------------------------------- events


@dataclass(frozen=True, slots=True)
class Hand:
    """One seat's cards (in an event or a position)."""

    seat: int
    cards: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Dealt:
    """A hand is dealt (PH-R6…R8): hands, usable stock top first, the unused rest, the gà.

    ``window_ms`` is the end of the Ù window (0: no window). ``seed`` is the hand's seed material
    in hex, kept for the random auto-discard of PH-R28; it never appears in a view.
    """

    dealer: int
    owner: int
    hands: tuple[Hand, ...]
    stock: tuple[str, ...]
    unused: tuple[str, ...]
    pot: int
    transfers: tuple[Transfer, ...]
    window_ms: int
    seed: str


@dataclass(frozen=True, slots=True)
class UClaimed:
    """A valid Ù claim in the window, decided when the window closes (PH-R10)."""

    seat: int
    kind: WinKind


@dataclass(frozen=True, slots=True)
class WindowClosed:
    """The Ù window (thời gian ù) is over."""


@dataclass(frozen=True, slots=True)
class Drew:
    """``seat`` drew (bốc) ``card`` from the stock."""

    seat: int
    card: str


@dataclass(frozen=True, slots=True)
class Ate:
    """``seat`` ate (ăn) ``card`` from ``victim``'s row, its ``eats``-th eaten card.

    ``chot``: a chốt. ``mover`` is the player F whose last discard moved to the victim's row
    (chuyển bài, PH-R16; -1 when F is the victim); ``moved`` that card, "" when not moved.
    ``transfers``: the eat payment, made at once (PH-R15).
    """

    seat: int
    card: str
    victim: int
    eats: int
    chot: bool
    mover: int
    moved: str
    transfers: tuple[Transfer, ...]


@dataclass(frozen=True, slots=True)
class Laid:
    """``seat`` laid (hạ) the phỏm ``cards``; ``eaten`` is its eaten card or ""."""

    seat: int
    cards: tuple[str, ...]
    eaten: str


@dataclass(frozen=True, slots=True)
class Sent:
    """``seat`` sent (gửi) ``card`` to laid phỏm number ``meld`` (owned by ``owner``)."""

    seat: int
    card: str
    meld: int
    owner: int


@dataclass(frozen=True, slots=True)
class Discarded:
    """``seat`` discarded (đánh) ``card``."""

    seat: int
    card: str


@dataclass(frozen=True, slots=True)
class HandSorted:
    """``seat`` asked for its hand in auto-sort order (PH-R27)."""

    seat: int


@dataclass(frozen=True, slots=True)
class AccusedWrongly:
    """A wrong bắt báo: ``accuser`` pays (PH-R26); the game continues."""

    accuser: int
    target: int
    transfers: tuple[Transfer, ...]


@dataclass(frozen=True, slots=True)
class WonU:
    """``seat`` won by Ù of ``kind``; ``victim`` pays for all in an ù đền (-1 otherwise)."""

    seat: int
    kind: WinKind
    victim: int
    hand: tuple[str, ...]
    transfers: tuple[Transfer, ...]


@dataclass(frozen=True, slots=True)
class BaoCaught:
    """``seat`` is báo and caught, by ``accuser`` or automatically (-1); it pays everybody."""

    seat: int
    accuser: int
    hand: tuple[str, ...]
    transfers: tuple[Transfer, ...]


@dataclass(frozen=True, slots=True)
class ULao:
    """Ù láo: ``seat`` claimed a false Ù in a zone that punishes it (§A4.3)."""

    seat: int
    hand: tuple[str, ...]
    transfers: tuple[Transfer, ...]


@dataclass(frozen=True, slots=True)
class Scored:
    """The scored end (§A4.4): points per seat, ranking best first, who was móm."""

    points: tuple[int, ...]
    ranking: tuple[int, ...]
    mom: tuple[bool, ...]
    transfers: tuple[Transfer, ...]


# ---------------------------------------------------------------- state


@dataclass(frozen=True, slots=True)
class State:
    """The whole hand. Hands and eaten cards are 52-bit masks (see ``cards``); a laid phỏm is
    ``(owner, mask, eaten card or -1)``; ``d`` the logical discard counts and ``order`` the
    lay-down order L of PH-R16; ``laid_down`` each seat's lay-down index or -1."""

    options: Options
    players: int
    phase: Phase = Phase.NEW
    seed: bytes = b""
    dealer: int = 0
    owner: int = 0
    hands: tuple[int, ...] = ()
    eaten: tuple[int, ...] = ()
    eats: tuple[int, ...] = ()
    rows: tuple[tuple[int, ...], ...] = ()
    d: tuple[int, ...] = ()
    order: tuple[int, ...] = ()
    melds: tuple[tuple[int, int, int], ...] = ()
    own_melds: tuple[int, ...] = ()
    laid_down: tuple[int, ...] = ()
    stock: tuple[int, ...] = ()
    unused: tuple[int, ...] = ()
    turn: int = -1
    turn_kind: TurnKind = TurnKind.NONE
    taken: bool = False
    discards_made: int = 0
    eatable: int = -1
    deadline_ms: int = 0
    claims: tuple[tuple[int, WinKind], ...] = ()
    pot_start: int = 0
    pot: int = 0
    transfers: tuple[Transfer, ...] = ()
    sorted_view: tuple[bool, ...] = ()
    timeouts: int = 0
    end: str = ""
    winner: int = -1
    ranking: tuple[int, ...] = ()
    points: tuple[int, ...] = ()


replace = replacer(State)
"""``dataclasses.replace`` for :class:`State`, fast (the fold's hot path)."""


# ---------------------------------------------------------------- view


@dataclass(frozen=True, slots=True)
class Meld:
    """A laid phỏm on the table, as everyone sees it."""

    id: int
    owner: int
    cards: tuple[str, ...]
    eaten: str


@dataclass(frozen=True, slots=True)
class SeatInfo:
    """What everyone sees of a seat: card count, discard row, eaten cards, lay-down, money."""

    seat: int
    cards: int
    row: tuple[str, ...]
    eaten: tuple[str, ...]
    eats: int
    discards: int
    laid_down: int
    balance: int
    shown: tuple[str, ...] = ()
    """The cards left in the hand, laid open once the hand is over (empty before)."""


@dataclass(frozen=True, slots=True)
class Command:
    """One entry of a view's ``legal`` list: exactly one command is set; send it (or this
    wrapper) in ``Act`` unchanged."""

    claim_u: ClaimU | None = None
    eat: Eat | None = None
    draw: Draw | None = None
    lay: Lay | None = None
    send: Send | None = None
    discard: Discard | None = None
    accuse: Accuse | None = None
    sort: Sort | None = None


@dataclass(frozen=True, slots=True)
class View:
    """One seat's view (``seat`` -1: a spectator): its own hand only, never the stock order.

    ``legal`` is what the seat may send now to move the hand on (the rules' ``legal``): Ù,
    draw, each eat with its partners, each phỏm it may lay, each card it may send, each card
    it may discard. Bắt báo (``Accuse``) and ``Sort`` are always open and not listed."""

    seat: int
    phase: Phase
    hand: tuple[str, ...]
    sorted: bool
    seats: tuple[SeatInfo, ...]
    melds: tuple[Meld, ...]
    dealer: int
    to_move: int
    turn_kind: TurnKind
    taken: bool
    deadline_ms: int
    eatable: str
    stock_left: int
    lay_order: tuple[int, ...]
    pot: int
    end: str
    winner: int
    legal: tuple[Command, ...]


GameCommand = ClaimU | Eat | Draw | Lay | Send | Discard | Accuse | Sort
"""Every command of Phỏm (what its ``decide`` takes and ``legal`` lists; ``GAME.commands``)."""
GameEvent = (
    Dealt | UClaimed | WindowClosed | TurnPassed | Drew | Ate | Laid | Sent | Discarded | HandSorted
    | AccusedWrongly | TimedOut | WonU | BaoCaught | ULao | Scored
)
"""Every event of Phỏm (what its decider makes and its ``evolve`` folds; ``GAME.events``)."""
