"""够级 Gouji's data: commands, events, the game state and a seat's view (frozen dataclasses).

Seats 0–5 play counter-clockwise (seat i → i+1); teams (联邦) A = {0, 2, 4}, B = {1, 3, 5};
对门 (the opposite seat, always an opponent) of i is i+3. Hands are count vectors
(:mod:`~chieu.games.gouji.cards`); events carry card names, highest first.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from chieu.games.common import TimedOut
from chieu.games.gouji import cards as C
from chieu.games.gouji.cards import DECK, Counts
from chieu.games.gouji.options import Options

SEATS = 6
REPORT_AT = 10
"""报户: a hand of this many cards or fewer is shown to everyone (§2.4.10)."""


def opposite(seat: int) -> int:
    """对门: the seat across the table."""
    return (seat + 3) % SEATS


def team(seat: int) -> int:
    """0 for team A (seats 0, 2, 4), 1 for team B (seats 1, 3, 5)."""
    return seat % 2


# ---------------------------------------------------------------- commands


@dataclass(frozen=True, slots=True)
class Play:
    """Lead or answer with a set (一套牌), cards by name (``"10"``, ``"2"``, ``"SJ"``)."""

    cards: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Pass:
    """Pass (不要); on the 扣牌 decision it is 扣 (closing the round)."""


@dataclass(frozen=True, slots=True)
class Burn:
    """Declare 捎牌/烧牌 on the current 够级 set and beat it with ``cards`` (any time before
    the set owner's 对门 acts on it)."""

    cards: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ReturnCards:
    """还贡: 头科 / 二科 hand back cards of their choice to 大落 / 二落 (§2.7)."""

    cards: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class DeclareRevolution:
    """革命: declare revolution and sit out (a seat without 2s and jokers, in the window after
    the deal)."""


@dataclass(frozen=True, slots=True)
class DeclineRevolution:
    """Keep playing: decline 革命 (the same as letting the window's clock run out)."""


# ---------------------------------------------------------------- events


@dataclass(frozen=True, slots=True)
class SeatCards:
    """One seat's cards (highest first)."""

    seat: int
    cards: tuple[str, ...]


def seat_cards(hands: Sequence[Counts]) -> tuple[SeatCards, ...]:
    """Every seat's cards, for a deal event."""
    return tuple(SeatCards(i, C.names(C.from_counts(h))) for i, h in enumerate(hands))


@dataclass(frozen=True, slots=True)
class Dealt:
    """The deal (36 cards each, or a scenario position) and the first leader of the game.

    ``seed`` (hex seed material) is kept only with 革命 on, for a redeal; the log is
    server-side and no view shows it."""

    hand_no: int
    hands: tuple[SeatCards, ...]
    first: int
    seed: str = ""


@dataclass(frozen=True, slots=True)
class Due:
    """A tribute to pay once the 革命 window closes: ``count`` best cards from ``from_seat``
    to ``to_seat``; ``kind`` ``luogong`` (落贡), ``shaogong`` (烧贡) or ``mengong`` (闷贡)."""

    from_seat: int
    to_seat: int
    count: int
    kind: str


@dataclass(frozen=True, slots=True)
class RevolutionOpened:
    """革命 window: the ``eligible`` seats (no 2s, no jokers) may declare by ``deadline_ms``
    (the clock running out = no declaration); ``dues`` is the tribute that follows."""

    eligible: tuple[int, ...]
    deadline_ms: int
    dues: tuple[Due, ...]


@dataclass(frozen=True, slots=True)
class RevolutionDeclared:
    """``seat`` declared 革命."""

    seat: int


@dataclass(frozen=True, slots=True)
class RevolutionDeclined:
    """``seat`` declined 革命; ``auto`` when its clock ran out."""

    seat: int
    auto: bool


@dataclass(frozen=True, slots=True)
class DealCancelled:
    """流局: two or more ``seats`` declared 革命; the deal is void and redealt."""

    seats: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Redealt:
    """The ``deal_no``-th redeal (36 cards each) from the hand's seed material under the label
    ``redeal:<deal_no>``; the first leader stays."""

    deal_no: int
    hands: tuple[SeatCards, ...]


@dataclass(frozen=True, slots=True)
class SatOut:
    """革命: ``seat`` (the only declarer) sits this game out, ranked 四科 (4th, 0 points);
    ``dead`` are his cards, out of play."""

    seat: int
    place: int
    dead: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class TributePaid:
    """进贡: ``from_seat`` gave his best cards to ``to_seat``. ``kind``: ``luogong`` (落贡,
    大落 → 头科 / 二落 → 二科), ``shaogong`` (烧贡) or ``mengong`` (闷贡), both to the payer's 对门."""

    from_seat: int
    to_seat: int
    cards: tuple[str, ...]
    deadline_ms: int
    """When the return is due (then the lowest cards go back automatically)."""
    kind: str = "luogong"


@dataclass(frozen=True, slots=True)
class TributeReturned:
    """还贡: ``from_seat`` returned ``cards`` to ``to_seat``; ``auto`` on timeout."""

    from_seat: int
    to_seat: int
    cards: tuple[str, ...]
    auto: bool


@dataclass(frozen=True, slots=True)
class TurnStarted:
    """``seat`` must act by ``deadline_ms``: ``lead`` a new round, or answer (``kou``: the
    扣牌 decision of the top set owner's 对门)."""

    seat: int
    lead: bool
    kou: bool
    deadline_ms: int


@dataclass(frozen=True, slots=True)
class Played:
    """``seat`` played a set; ``gouji`` whether it counts as 够级 now; ``sealed`` when it
    answers a 够死级 底牌 (no living 对门: only 捎牌 can take it)."""

    seat: int
    cards: tuple[str, ...]
    lead: bool
    gouji: bool
    sealed: bool


@dataclass(frozen=True, slots=True)
class Burned:
    """捎牌: ``seat`` declared and beat ``burned_seat``'s 够级 set with ``cards``."""

    seat: int
    burned_seat: int
    cards: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Passed:
    """``seat`` passed this round; ``auto`` on timeout."""

    seat: int
    auto: bool


@dataclass(frozen=True, slots=True)
class Closed:
    """扣: the 扣牌人 ``seat`` closed the round; ``auto`` on timeout."""

    seat: int
    auto: bool


@dataclass(frozen=True, slots=True)
class BurnReleased:
    """解烧: the 对门 beat the burner ``seat``'s set; he plays on without restrictions."""

    seat: int


@dataclass(frozen=True, slots=True)
class BurnFailed:
    """The burn of ``seat`` failed (``reason``: ``jokerless_lead``, ``precondition``): ranked
    ``place`` (大落, then 二落) at once; ``dead`` are his remaining cards."""

    seat: int
    place: int
    reason: str
    dead: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Finished:
    """``seat`` played his last card and takes ``place`` (1 头科, 2 二科, ...)."""

    seat: int
    place: int


@dataclass(frozen=True, slots=True)
class RoundEnded:
    """The round is over; ``winner`` owned the last standing set (``None`` after a failed
    burn); ``leader`` leads next (接风 when the winner has finished)."""

    winner: int | None
    leader: int


@dataclass(frozen=True, slots=True)
class GameEnded:
    """The game is over: ``places`` per seat, team ``totals`` (A, B) and each seat's score
    (its team's total); ``doubled`` for 串三户; ``reason``: ``finished`` or ``one_team_left``.
    ``shao``: seats whose 够级 set was burned by a burner who went out (next game's 烧贡);
    ``men``: seats left holding only 3s (闷, next game's 闷贡)."""

    places: tuple[int, ...]
    totals: tuple[int, ...]
    scores: tuple[int, ...]
    doubled: bool
    reason: str
    shao: tuple[int, ...] = ()
    men: tuple[int, ...] = ()


# ---------------------------------------------------------------- state


@dataclass(frozen=True, slots=True)
class Owed:
    """A tribute return still due: ``seat`` gives ``count`` cards back to ``to_seat``."""

    seat: int
    to_seat: int
    count: int


@dataclass(frozen=True, slots=True)
class State:
    """The whole game. ``phase``: ``deal``, ``revolution`` (革命 window), ``tribute``, ``play``,
    ``over``."""

    options: Options
    phase: str = "deal"
    hand_no: int = 1
    first: int = 0
    hands: tuple[Counts, ...] = ((0,) * C.NRANKS,) * SEATS
    pile: Counts = DECK
    """Every card not in a hand: played, dead (failed burners) or not yet dealt."""
    to_act: int | None = None
    leading: bool = False
    kou: bool = False
    deadline_ms: int = 0
    top: Counts | None = None
    top_key: tuple[int, ...] = ()
    owner: int = -1
    top_gouji: bool = False
    sealed: bool = False
    duimen_acted: bool = False
    """The top set owner's 对门 has acted on it: no more 捎牌 declarations."""
    last_pass: int = -1
    """The seat whose pass was the last action on the top set (-1 otherwise)."""
    passed: tuple[bool, ...] = (False,) * SEATS
    places: tuple[int, ...] = (0,) * SEATS
    failed: tuple[bool, ...] = (False,) * SEATS
    burning: tuple[int, ...] = (-1,) * SEATS
    """For a burner (捎牌 declarer), the seat whose set he burned; else -1."""
    owed: tuple[Owed, ...] = ()
    end: GameEnded | None = None
    seed: str = ""
    """The hand's seed material (hex), with 革命 on: the source of a redeal."""
    deal_no: int = 0
    dues: tuple[Due, ...] = ()
    """Tribute waiting for the 革命 window to close."""
    eligible: tuple[int, ...] = ()
    """革命 window: the seats that have not yet decided."""
    revolted: tuple[int, ...] = ()
    sitting: int = -1
    """The seat sitting this game out after 革命 (-1: none)."""
    shao: tuple[int, ...] = ()
    """Seats whose 够级 set a burner burned and then went out with (烧贡 payers)."""


# ---------------------------------------------------------------- view


@dataclass(frozen=True, slots=True)
class Command:
    """One entry of a view's ``legal`` list: exactly one command is set; send it (or this
    wrapper) in ``Act`` unchanged."""

    play: Play | None = None
    pass_: Pass | None = None
    burn: Burn | None = None
    return_cards: ReturnCards | None = None
    declare_revolution: DeclareRevolution | None = None
    decline_revolution: DeclineRevolution | None = None


@dataclass(frozen=True, slots=True)
class Cards:
    """Some cards by name, highest first."""

    cards: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Leads:
    """Every set a leading seat may play, compactly: ``Play(w.cards + b.cards)`` for each ``w``
    in ``wilds`` (its 2s and jokers: none, some, all) and, within it, each ``b`` in ``bases``
    (none, or 1… of one rank 3…A), both empty excepted. In that order it is the rules' list."""

    wilds: tuple[Cards, ...]
    bases: tuple[Cards, ...]


@dataclass(frozen=True, slots=True)
class View:
    """What ``seat`` sees: his own hand, the top set and who may answer it, card counts only
    under 报户 (-1 = hidden), places so far (0 = still playing)."""

    seat: int
    phase: str
    hand: tuple[str, ...]
    counts: tuple[int, ...]
    top: tuple[str, ...]
    top_owner: int
    top_gouji: bool
    may_answer: tuple[int, ...]
    may_burn: tuple[int, ...]
    to_act: int
    leading: bool
    kou: bool
    deadline_ms: int
    passed: tuple[int, ...]
    places: tuple[int, ...]
    burning: tuple[int, ...]
    four_way: bool
    wutou: tuple[int, ...]
    owe_return: int
    scores: tuple[int, ...]
    revolution: tuple[int, ...] = ()
    """革命 window: the seats still deciding (they hold no 2s and no jokers)."""
    revolted: tuple[int, ...] = ()
    sitting_out: int = -1
    legal: tuple[Command, ...] = ()
    """What the seat may send now (none for a spectator), with ``legal_leads``."""
    legal_leads: Leads | None = None
    revealed: tuple[SeatCards, ...] = ()
    """Every seat's cards left, laid open once the game is over (empty before)."""
    """A leading seat's sets, compactly (``None`` when not leading, and with 憋三 on, whose
    leads are listed one by one in ``legal``)."""


GameCommand = Play | Pass | Burn | ReturnCards | DeclareRevolution | DeclineRevolution
"""Every command of 够级 (what its ``decide`` takes and ``legal`` lists; ``GAME.commands``)."""
GameEvent = (
    Dealt | TributePaid | TributeReturned | TurnStarted | Played | Burned | Passed | Closed
    | BurnReleased | BurnFailed | Finished | RoundEnded | TimedOut | GameEnded | RevolutionOpened
    | RevolutionDeclared | RevolutionDeclined | DealCancelled | Redealt | SatOut
)
"""Every event of 够级 (what its decider makes and its ``evolve`` folds; ``GAME.events``). ``TimedOut`` is
the shared one (``chieu.games.common``), packed as 够级's own."""
