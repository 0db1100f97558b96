"""够级 Gouji as a decider: §2 of shared/rules/gouji.md (six seats, four decks, two teams).

Seats 0–5 play counter-clockwise (seat i → i+1); teams (联邦) A = {0, 2, 4}, B = {1, 3, 5};
对门 (the opposite seat, always an opponent) of i is i+3. A round (一轮) starts with a lead
(发牌); the top set T and its owner O are answered in turn; 够级牌 (high sets) may be answered
only by O's 对门 (a 够级 duel), by 捎牌 (burn) declarers and by the 无头 player; when nobody
else will answer, O's 对门 has the 扣牌 (closing) decision. Places: 头科 (1st) … 大落 (6th).
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
    RuleViolation,
    ScenarioHooks,
    Seat,
    Setup,
    Transfer,
)
from chieu.table.rules.gouji import cards as C
from chieu.table.rules.gouji.cards import BJ, DECK, SJ, Counts

SEATS = 6
PLACE_POINTS = (4, 2, 0, 0, -2, -4)
"""Place points of 头科, 二科, 三科, 四科, 二落, 大落 (§2.6.2)."""
PLACE_NAMES = ("", "头科", "二科", "三科", "四科", "二落", "大落")
REPORT_AT = 10
"""报户: a hand of this many cards or fewer is shown to everyone (§2.4.10)."""


def opposite(seat: int) -> int:
    """对门: the seat across the table."""
    return (seat + 3) % SEATS


def team(seat: int) -> int:
    """0 for team A (seats 0, 2, 4), 1 for team B (seats 1, 3, 5)."""
    return seat % 2


# ---------------------------------------------------------------- options


_REGIONAL = ("SHAO_GONG", "MEN_GONG", "DIAN_GONG", "MAI_SAN_MAI_SI", "BIE_SAN", "GE_MING")
"""Regional options of §2.7 (烧贡, 闷贡, 点贡/开点/宣点, 买三/买四, 憋三, 革命), all off."""
_UNDEFINED = {
    "DIAN_GONG": "点贡/开点/宣点",
    "MAI_SAN_MAI_SI": "买三/买四",
}
"""Regional options the rules file names but does not define ("definitions vary between
localities", §2.7): refused when ``on``."""
SIT_OUT_PLACE = 4
"""革命: the seat that sits out is ranked 四科 (0 place points) and shares its team's total."""
CARRY_VERSION = 1
"""First element of ``Outcome.carry``: ``(1, n, *烧贡 payers, m, *闷贡 payers)``."""


@dataclass(frozen=True, slots=True)
class Options:
    """Table options of §2.8 (``option_values`` gives the rules file's names)."""

    first_leader: str = "seat-rotation"
    tribute: str = "luogong"
    end_early: bool = False
    turn_timeout_s: int = 15
    return_timeout_s: int = 15
    bie_san: bool = False
    """憋三: 3s only in a player's last set; all of one's 4s played together."""
    shao_gong: bool = False
    """烧贡: a seat whose 够级 set was burned by a burner who then went out pays one card."""
    men_gong: bool = False
    """闷贡: a seat left holding only 3s at the end pays one card."""
    ge_ming: bool = False
    """革命: a seat without 2s and jokers may declare and sit out; two or more: redeal."""


_CHOICES: dict[str, tuple[str, ...]] = {
    "FIRST_LEADER": ("seat-rotation", "shangban"),
    "TRIBUTE": ("luogong", "none"),
}


def _on_off(name: str, value: Any) -> bool:
    if value is True or value == "on":
        return True
    if value is False or value == "off":
        return False
    raise BadOptions(f"{name} must be 'off' or 'on', not {value!r}")


def _seconds(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 3600:
        raise BadOptions(f"{name} must be a whole number of seconds in 1..3600, not {value!r}")
    return value


def parse_options(raw: Mapping[str, Any]) -> Options:
    """Validate §2.8 options; unknown names are refused, missing ones take their defaults."""
    known = {*_CHOICES, "END_EARLY_WHEN_ONE_TEAM_LEFT", "TURN_TIMEOUT_S",
             "TRIBUTE_RETURN_TIMEOUT_S", *_REGIONAL}
    unknown = sorted(set(raw) - known)
    if unknown:
        raise BadOptions(
            f"unknown option(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
    for name, allowed in _CHOICES.items():
        if name in raw and raw[name] not in allowed:
            raise BadOptions(f"{name} must be one of {', '.join(allowed)}, not {raw[name]!r}")
    flags = {name: _on_off(name, raw.get(name, "off")) for name in _REGIONAL}
    for name, native in _UNDEFINED.items():
        if flags[name]:
            raise BadOptions(
                f"{name} ({native}) is not defined by the rules file (shared/rules/gouji.md "
                "§2.7: definitions vary between localities), so it cannot be played; "
                "it must stay 'off'")
    d = Options()
    return Options(
        first_leader=str(raw.get("FIRST_LEADER", d.first_leader)),
        tribute=str(raw.get("TRIBUTE", d.tribute)),
        end_early=_on_off("END_EARLY_WHEN_ONE_TEAM_LEFT",
                          raw.get("END_EARLY_WHEN_ONE_TEAM_LEFT", "off")),
        turn_timeout_s=_seconds("TURN_TIMEOUT_S", raw.get("TURN_TIMEOUT_S", d.turn_timeout_s)),
        return_timeout_s=_seconds("TRIBUTE_RETURN_TIMEOUT_S",
                                  raw.get("TRIBUTE_RETURN_TIMEOUT_S", d.return_timeout_s)),
        bie_san=flags["BIE_SAN"],
        shao_gong=flags["SHAO_GONG"],
        men_gong=flags["MEN_GONG"],
        ge_ming=flags["GE_MING"],
    )


def option_values(options: Options) -> Mapping[str, Any]:
    """The options under the rules file's names."""
    on = {"BIE_SAN": options.bie_san, "SHAO_GONG": options.shao_gong,
          "MEN_GONG": options.men_gong, "GE_MING": options.ge_ming}
    out: dict[str, Any] = {
        "FIRST_LEADER": options.first_leader,
        "TRIBUTE": options.tribute,
        "END_EARLY_WHEN_ONE_TEAM_LEFT": "on" if options.end_early else "off",
        "TURN_TIMEOUT_S": options.turn_timeout_s,
        "TRIBUTE_RETURN_TIMEOUT_S": options.return_timeout_s,
    }
    for name in _REGIONAL:
        out[name] = "on" if on.get(name, False) else "off"
    return out


def encode_carry(shao: Sequence[int], men: Sequence[int]) -> tuple[int, ...]:
    """``Outcome.carry`` for the next game: the 烧贡 and 闷贡 payers."""
    return (CARRY_VERSION, len(shao), *shao, len(men), *men)


def decode_carry(carry: Sequence[int]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The (烧贡, 闷贡) payers from ``Outcome.carry``; ``((), ())`` when absent or unreadable
    (the table sends ``()`` when the players or seats changed)."""
    try:
        if not carry or carry[0] != CARRY_VERSION:
            return (), ()
        n = carry[1]
        shao = tuple(carry[2:2 + n])
        m = carry[2 + n]
        men = tuple(carry[3 + n:3 + n + m])
    except (IndexError, TypeError):
        return (), ()
    if len(shao) != n or len(men) != m or len(carry) != 3 + n + m:
        return (), ()
    if not all(isinstance(p, int) and 0 <= p < SEATS for p in (*shao, *men)):
        return (), ()
    return shao, men


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
class TimedOut:
    """``seat``'s clock ran out; the server acts for it."""

    seat: int


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


def _set(t: tuple[Any, ...], i: int, v: Any) -> tuple[Any, ...]:
    return (*t[:i], v, *t[i + 1 :])


def active(s: State, seat: int) -> bool:
    """Still playing: no place yet and cards in hand."""
    return s.places[seat] == 0 and sum(s.hands[seat]) > 0


def four_way(s: State) -> bool:
    """四人乱缠: 头科 and 二科 both exist, no set counts as 够级 any more (§2.4.9)."""
    return 1 in s.places and 2 in s.places


def wutou(s: State, seat: int) -> bool:
    """无头: the seat's 对门 is 头科, or left as a failed burner, or sits out (革命) (§2.5)."""
    o = opposite(seat)
    return s.places[o] == 1 or s.failed[o] or s.sitting == o


def _may_respond(s: State, p: int) -> bool:
    """Whether ``p`` may answer the top set in the normal turn order (not counting 扣牌)."""
    o = s.owner
    if p == o or not active(s, p) or s.passed[p]:
        return False
    if s.sealed:  # the answer to a 够死级: only 捎牌 declarations, offered in turn order
        return p != opposite(o) and s.burning[p] < 0
    if not s.top_gouji:
        return True
    if not active(s, o) and s.places[o] in (1, 2):
        return p == opposite(o)  # 够死级: only the finisher's 对门
    if wutou(s, o):
        return True  # a set of the 无头 player: anyone, in turn order
    return p == opposite(o) or wutou(s, p)


def _next_after(s: State, actor: int) -> tuple[int, bool] | None:
    """Who acts next on the top set after ``actor``: (seat, 扣牌 decision) or ``None``
    when the round is over."""
    o = s.owner
    for i in range(1, SEATS):
        p = (actor + i) % SEATS
        if p == o:
            break
        if _may_respond(s, p):
            return p, False
    k = opposite(o)
    if active(s, k) and not s.sealed and s.last_pass != k:
        return k, True
    return None


def _next_active(s: State, seat: int, include: bool) -> int:
    for i in range(0 if include else 1, SEATS + 1):
        p = (seat + i) % SEATS
        if active(s, p):
            return p
    return seat


def may_burn(s: State, p: int) -> bool:
    """Whether ``p`` may declare 捎牌 on the top set now (before its owner's 对门 acts)."""
    return (
        s.phase == "play" and s.top is not None and (s.top_gouji or s.sealed)
        and not s.duimen_acted and active(s, p) and p != s.owner and p != opposite(s.owner)
        and not s.passed[p] and s.burning[p] < 0
    )


def _free_places(s: State) -> list[int]:
    taken = set(s.places)
    return [p for p in range(1, SEATS + 1) if p not in taken]


def settle(places: Sequence[int]) -> tuple[tuple[int, int], bool]:
    """Team totals (A, B) for places per seat (§2.6), and whether 串三户 doubled them."""
    totals = [0, 0]
    for seat, place in enumerate(places):
        totals[team(seat)] += PLACE_POINTS[place - 1]
    top3 = {team(seat) for seat, place in enumerate(places) if place <= 3}
    doubled = len(top3) == 1
    if doubled:
        totals = [2 * t for t in totals]
    return (totals[0], totals[1]), doubled


def team_scores(order: Sequence[int]) -> Mapping[str, Any]:
    """Scores for a finish order (seats best first), as the scenarios of §2.9 state them."""
    places = [0] * SEATS
    for i, seat in enumerate(order):
        places[seat] = i + 1
    (a, b), doubled = settle(places)
    scores = [a if team(i) == 0 else b for i in range(SEATS)]
    return {"A": a, "B": b, "doubled": doubled, "scores": scores}


# ---------------------------------------------------------------- view


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


# ---------------------------------------------------------------- the decider


def _bad(code: str, msg: str) -> IllegalMove:
    return IllegalMove(code, msg)


class Gouji:
    """The 够级 game object registered under ``gouji``."""

    key = "gouji"
    title = "够级"
    min_players = 6
    max_players = 6
    commands: tuple[type, ...] = (Play, Pass, Burn, ReturnCards, DeclareRevolution,
                                  DeclineRevolution)
    events: tuple[type, ...] = (
        Dealt, TributePaid, TributeReturned, TurnStarted, Played, Burned, Passed, Closed,
        BurnReleased, BurnFailed, Finished, RoundEnded, TimedOut, GameEnded, RevolutionOpened,
        RevolutionDeclared, RevolutionDeclined, DealCancelled, Redealt, SatOut,
    )
    option_type = Options
    view_type = View

    def __init__(self) -> None:
        self.scenario = ScenarioHooks(
            position=self._position, describe=describe,
            queries={"classify": C.classify, "beats": C.can_beat, "team_scores": team_scores},
            command=parse_command,
        )

    parse_options = staticmethod(parse_options)
    option_values = staticmethod(option_values)

    def initial(self, options: Options, players: int) -> State:
        if players != SEATS:
            raise BadOptions("够级 is played by exactly six players")
        return State(options=options)

    # -- start

    def start(self, setup: Setup) -> Sequence[Any]:
        o: Options = setup.options
        hands, shangban = deal(setup.seed, "deal")
        prev = setup.previous
        if setup.first is not None:
            first = setup.first
        elif prev is not None and prev.first is not None:
            first = (prev.first + 1) % SEATS
        elif o.first_leader == "shangban" and shangban is not None:
            first = shangban
        else:
            first = setup.owner
        seed = setup.seed.hex() if o.ge_ming else ""
        return [Dealt(setup.hand_no, _seat_cards(hands), first, seed),
                *self._after_deal(o, hands, first, dues(o, prev), setup.now_ms)]

    def _after_deal(self, o: Options, hands: Sequence[Counts], first: int,
                    due: Sequence[Due], now_ms: int) -> list[Any]:
        """The 革命 window when a seat may declare, else the tribute (or the first lead)."""
        if o.ge_ming:
            eligible = tuple(p for p in range(SEATS) if revolution_ok(hands[p]))
            if eligible:
                return [RevolutionOpened(eligible, now_ms + o.turn_timeout_s * 1000, tuple(due))]
        return self._tribute(o, hands, first, due, -1, now_ms)

    @staticmethod
    def _tribute(o: Options, hands: Sequence[Counts], first: int, due: Sequence[Due],
                 sitting: int, now_ms: int) -> list[Any]:
        """进贡 in order (落贡, 烧贡, 闷贡): each payer gives his best cards, which join the
        receiver's hand; dues touching a seat that sits out are dropped. No dues: first lead."""
        pay = [d for d in due if sitting not in (d.from_seat, d.to_seat)]
        if not pay:
            leader = first if first != sitting else (first + 1) % SEATS
            return [TurnStarted(leader, True, False, now_ms + o.turn_timeout_s * 1000)]
        at = now_ms + o.return_timeout_s * 1000
        held = list(hands)
        events: list[Any] = []
        for d in pay:
            best = C.to_counts(C.from_counts(held[d.from_seat])[: d.count])
            held[d.from_seat] = C.sub(held[d.from_seat], best)
            held[d.to_seat] = C.add(held[d.to_seat], best)
            events.append(TributePaid(d.from_seat, d.to_seat, C.names(C.from_counts(best)), at,
                                      d.kind))
        return events

    def _position(self, options: Options, players: int, spec: Mapping[str, Any],
                  now_ms: int) -> Sequence[Any]:
        """A scenario position: ``hands`` (six card strings), ``leader``, optional
        ``finished`` (seats in finishing order) and ``failed`` (failed burners in order)."""
        raw = spec["hands"]
        hands = [C.parse_cards(str(raw[i] if not isinstance(raw, Mapping) else raw.get(i, "")))
                 for i in range(SEATS)]
        total = C.to_counts(r for h in hands for r in h)
        if not C.contains(DECK, total):
            raise ValueError("the position holds more cards than the four decks")
        leader = int(spec.get("leader", 0))
        events: list[Any] = [
            Dealt(int(spec.get("hand_no", 1)),
                  tuple(SeatCards(i, C.names(h)) for i, h in enumerate(hands)), leader)
        ]
        for i, seat in enumerate(spec.get("finished", [])):
            events.append(Finished(int(seat), i + 1))
        for i, seat in enumerate(spec.get("failed", [])):
            events.append(BurnFailed(int(seat), SEATS - i, "position", C.names(hands[int(seat)])))
        if options.ge_ming and not spec.get("finished") and not spec.get("failed"):
            seed = str(spec.get("seed", "00"))
            events[0] = replace(events[0], seed=seed)
            counts = [C.to_counts(h) for h in hands]
            return [*events, *self._after_deal(options, counts, leader, (), now_ms)]
        events.append(TurnStarted(leader, True, False, now_ms + options.turn_timeout_s * 1000))
        return events

    # -- decide

    def decide(self, state: State, seat: Seat, command: Any, now_ms: int) -> Sequence[Any]:
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

    def _play(self, s: State, seat: int, c: Counts, now_ms: int) -> list[Any]:
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
        events: list[Any] = []
        if not s.leading and s.burning[s.owner] >= 0 and seat == opposite(s.owner):
            events.append(BurnReleased(s.owner))
        events.append(Played(seat, C.names(C.from_counts(c)), s.leading, gouji, sealed))
        return self._after_play(s, seat, events, rest, now_ms)

    def _burn(self, s: State, seat: int, cmd: Burn, now_ms: int) -> list[Any]:
        if not may_burn(s, seat):
            raise _bad("cannot_burn", "捎牌 needs a 够级 set on the table that its owner's 对门 "
                       "has not yet acted on, and an active player other than its owner and 对门")
        c = self._cards(s, seat, cmd.cards)
        self._check_beats(s, c)
        rest = C.sub(s.hands[seat], c)
        if not C.burn_ok(rest):
            raise _bad("burn_precondition",
                       "捎牌 needs jokers ≥ ranks − 1 among the cards left after the burn")
        events: list[Any] = [Burned(seat, s.owner, C.names(C.from_counts(c)))]
        return self._after_play(s, seat, events, rest, now_ms)

    def _after_play(self, s: State, seat: int, events: list[Any], rest: Counts,
                    now_ms: int) -> list[Any]:
        after = s
        for e in events:
            after = self.evolve(after, e)
        if sum(rest) == 0:
            fin = Finished(seat, _free_places(after)[0])
            events.append(fin)
            after = self.evolve(after, fin)
            end = self._end(after)
            if end is not None:
                return [*events, end]
        return events + self._next(after, seat, now_ms)

    def _next(self, s: State, actor: int, now_ms: int) -> list[Any]:
        nxt = _next_after(s, actor)
        if nxt is not None:
            return [TurnStarted(nxt[0], False, nxt[1], now_ms + s.options.turn_timeout_s * 1000)]
        return self._round_over(s, now_ms)

    def _round_over(self, s: State, now_ms: int) -> list[Any]:
        o = s.owner
        leader = o if active(s, o) else _next_active(s, o, include=False)
        return [RoundEnded(o, leader),
                TurnStarted(leader, True, False, now_ms + s.options.turn_timeout_s * 1000)]

    def _pass(self, s: State, seat: int, now_ms: int, auto: bool) -> list[Any]:
        if s.leading:
            raise _bad("must_lead", "the leader must play a set")
        if s.kou:
            return [Closed(seat, auto), *self._round_over(s, now_ms)]
        after = self.evolve(s, Passed(seat, auto))
        nxt = _next_after(after, seat)
        if nxt is None and seat == opposite(s.owner):
            return [Closed(seat, auto), *self._round_over(s, now_ms)]
        return [Passed(seat, auto), *self._next(after, seat, now_ms)]

    def _fail(self, s: State, seat: int, reason: str, now_ms: int) -> list[Any]:
        place = _free_places(s)[-1]
        fail = BurnFailed(seat, place, reason, C.names(C.from_counts(s.hands[seat])))
        after = self.evolve(s, fail)
        end = self._end(after)
        if end is not None:
            return [fail, end]
        burned = s.burning[seat]
        leader = _next_active(after, burned, include=True)
        return [fail, RoundEnded(None, leader),
                TurnStarted(leader, True, False, now_ms + s.options.turn_timeout_s * 1000)]

    def _revolution(self, s: State, seat: int, declare: bool, now_ms: int,
                    auto: bool) -> list[Any]:
        if s.phase != "revolution":
            raise _bad("not_revolution", "革命 is declared only in the window after the deal")
        if seat not in s.eligible:
            raise _bad("not_eligible", "only a seat holding no 2s and no jokers, that has not "
                       "yet decided, may declare 革命")
        ev: Any = RevolutionDeclared(seat) if declare else RevolutionDeclined(seat, auto)
        after = self.evolve(s, ev)
        if after.eligible:
            return [ev]
        return [ev, *self._close_revolution(after, now_ms)]

    def _close_revolution(self, s: State, now_ms: int) -> list[Any]:
        """Two or more declarers: 流局 and a redeal; one: he sits out; none: play on."""
        o = s.options
        if len(s.revolted) >= 2:
            n = s.deal_no + 1
            hands, _ = deal(bytes.fromhex(s.seed), f"redeal:{n}")
            return [DealCancelled(s.revolted), Redealt(n, _seat_cards(hands)),
                    *self._after_deal(o, hands, s.first, s.dues, now_ms)]
        if s.revolted:
            p = s.revolted[0]
            return [SatOut(p, SIT_OUT_PLACE, C.names(C.from_counts(s.hands[p]))),
                    *self._tribute(o, _set(s.hands, p, (0,) * C.NRANKS), s.first, s.dues, p,
                                   now_ms)]
        return self._tribute(o, s.hands, s.first, s.dues, -1, now_ms)

    def _end(self, s: State) -> GameEnded | None:
        left = [p for p in range(SEATS) if active(s, p)]
        reason = "finished"
        if len(left) > 1:
            if not (s.options.end_early and len({team(p) for p in left}) == 1):
                return None
            reason = "one_team_left"
        places = list(s.places)
        left.sort(key=lambda p: (sum(s.hands[p]), p))
        for p, place in zip(left, _free_places(s), strict=False):
            places[p] = place
        (a, b), doubled = settle(places)
        men = tuple(sorted(p for p in left if s.hands[p][0] == sum(s.hands[p])))
        return GameEnded(tuple(places), (a, b), tuple(a if team(i) == 0 else b for i in range(6)),
                         doubled, reason, s.shao, men)

    def _return(self, s: State, seat: int, cmd: ReturnCards, now_ms: int,
                auto: bool) -> list[Any]:
        if s.phase != "tribute":
            raise _bad("not_tribute", "no tribute is being returned")
        due = next((d for d in s.owed if d.seat == seat), None)
        if due is None:
            raise _bad("nothing_owed", "you owe no cards")
        c = self._cards_any(s, seat, cmd.cards)
        if sum(c) != due.count:
            raise _bad("wrong_count", f"return exactly {due.count} card(s)")
        events: list[Any] = [TributeReturned(seat, due.to_seat, C.names(C.from_counts(c)), auto)]
        if len(s.owed) == 1:
            leader = s.first if s.first != s.sitting else (s.first + 1) % SEATS
            events.append(TurnStarted(leader, True, False,
                                      now_ms + s.options.turn_timeout_s * 1000))
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

    def evolve(self, state: State, event: Any) -> State:
        s = state
        if isinstance(event, Played | Burned):
            c = C.to_counts(C.parse_cards(event.cards))
            hands = _set(s.hands, event.seat, C.sub(s.hands[event.seat], c))
            s = replace(
                s, hands=hands, pile=C.add(s.pile, c), top=c, top_key=C.key(c),
                owner=event.seat, duimen_acted=False, last_pass=-1, leading=False, kou=False,
                to_act=None,
            )
            if isinstance(event, Burned):
                return replace(s, top_gouji=True, sealed=False,
                               burning=_set(s.burning, event.seat, event.burned_seat))
            return replace(s, top_gouji=event.gouji, sealed=event.sealed)
        if isinstance(event, TurnStarted):
            if event.lead:
                s = replace(s, top=None, top_key=(), owner=-1, top_gouji=False, sealed=False,
                            passed=(False,) * SEATS, last_pass=-1, duimen_acted=False)
            return replace(s, phase="play", to_act=event.seat, leading=event.lead, kou=event.kou,
                           deadline_ms=event.deadline_ms)
        if isinstance(event, Passed):
            return replace(s, passed=_set(s.passed, event.seat, True), last_pass=event.seat,
                           to_act=None, duimen_acted=s.duimen_acted
                           or event.seat == opposite(s.owner))
        if isinstance(event, Closed | RoundEnded | TimedOut):
            return replace(s, to_act=None) if not isinstance(event, TimedOut) else s
        if isinstance(event, Finished):
            burned = s.burning[event.seat]
            shao = s.shao if burned < 0 or burned in s.shao else (*s.shao, burned)
            return replace(s, places=_set(s.places, event.seat, event.place),
                           burning=_set(s.burning, event.seat, -1), shao=shao)
        if isinstance(event, BurnReleased):
            return replace(s, burning=_set(s.burning, event.seat, -1))
        if isinstance(event, BurnFailed):
            dead = s.hands[event.seat]
            return replace(
                s, places=_set(s.places, event.seat, event.place),
                failed=_set(s.failed, event.seat, True),
                burning=_set(s.burning, event.seat, -1),
                hands=_set(s.hands, event.seat, (0,) * C.NRANKS), pile=C.add(s.pile, dead),
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
            hands = _set(s.hands, event.from_seat, C.sub(s.hands[event.from_seat], c))
            hands = _set(hands, event.to_seat, C.add(hands[event.to_seat], c))
            return replace(s, phase="tribute", hands=hands, deadline_ms=event.deadline_ms,
                           owed=(*s.owed, Owed(event.to_seat, event.from_seat, len(event.cards))))
        if isinstance(event, TributeReturned):
            c = C.to_counts(C.parse_cards(event.cards))
            hands = _set(s.hands, event.from_seat, C.sub(s.hands[event.from_seat], c))
            hands = _set(hands, event.to_seat, C.add(hands[event.to_seat], c))
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
                           places=_set(s.places, event.seat, event.place),
                           hands=_set(s.hands, event.seat, (0,) * C.NRANKS),
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
            answer = [p for p in range(SEATS) if _may_respond(s, p)]
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
        )

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

    def legal(self, state: State, seat: Seat) -> Sequence[Any]:
        s = state
        if s.phase == "revolution":
            return [DeclareRevolution(), DeclineRevolution()] if seat in s.eligible else []
        if s.phase == "tribute":
            due = next((d for d in s.owed if d.seat == seat), None)
            if due is None:
                return []
            return [ReturnCards(C.names(C.from_counts(c)))
                    for c in _choose(s.hands[seat], due.count)]
        out: list[Any] = []
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
            return tuple(Deadline(p, s.deadline_ms) for p in s.eligible)
        if s.phase == "tribute":
            seats = dict.fromkeys(d.seat for d in s.owed)
            return tuple(Deadline(p, s.deadline_ms) for p in seats)
        if s.phase == "play" and s.to_act is not None:
            return (Deadline(s.to_act, s.deadline_ms),)
        return ()

    def on_timeout(self, state: State, seat: Seat, now_ms: int) -> Sequence[Any]:
        """Auto-play: pass (扣 on the 扣牌 decision) when answering, the lowest legal set when
        leading, the lowest cards when returning tribute, no 革命 in its window."""
        s = state
        if s.phase == "revolution":
            if seat not in s.eligible:
                raise _bad("not_your_turn", "no deadline of this seat is running")
            return [TimedOut(seat), *self._revolution(s, seat, False, now_ms, auto=True)]
        if s.phase == "tribute":
            due = next((d for d in s.owed if d.seat == seat), None)
            if due is None:
                raise _bad("not_your_turn", "no deadline of this seat is running")
            low = C.from_counts(s.hands[seat])[::-1][: due.count]
            cmd = ReturnCards(C.names(low))
            return [TimedOut(seat), *self._return(s, seat, cmd, now_ms, auto=True)]
        if s.phase != "play" or s.to_act != seat:
            raise _bad("not_your_turn", "no deadline of this seat is running")
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


def deal(seed: bytes, label: str) -> tuple[list[Counts], int | None]:
    """36 cards each from the seed material under ``label`` (``deal``, ``redeal:<n>``), and the
    上班 seat (first seat dealt a second identical 3, by suit; ``None`` if nobody)."""
    order = fair.shuffled(seed, range(sum(DECK)), label)
    hands: list[list[int]] = [[] for _ in range(SEATS)]
    shangban: int | None = None
    threes: list[set[int]] = [set() for _ in range(SEATS)]
    for i, card in enumerate(order):
        seat = i % SEATS
        k = card % 54
        rank = k // 4 if k < 52 else (SJ if k == 52 else BJ)
        hands[seat].append(rank)
        if k < 4 and shangban is None:
            if k in threes[seat]:
                shangban = seat
            threes[seat].add(k)
    return [C.to_counts(h) for h in hands], shangban


def _seat_cards(hands: Sequence[Counts]) -> tuple[SeatCards, ...]:
    return tuple(SeatCards(i, C.names(C.from_counts(h))) for i, h in enumerate(hands))


def revolution_ok(hand: Counts) -> bool:
    """革命 eligibility: the highest card is below a 2 (no 2s, no jokers)."""
    return sum(hand) > 0 and hand[C.TWO] + hand[SJ] + hand[BJ] == 0


def dues(o: Options, prev: Outcome | None) -> list[Due]:
    """This game's tribute from the previous game: 落贡 (大落 two best to 头科, 二落 one to
    二科), then 烧贡 and 闷贡 (one best card each to the payer's 对门) from ``prev.carry``."""
    if prev is None or len(prev.ranking) != SEATS:
        return []
    r = prev.ranking
    out: list[Due] = []
    if o.tribute == "luogong":
        out += [Due(r[5], r[0], 2, "luogong"), Due(r[4], r[1], 1, "luogong")]
    shao, men = decode_carry(prev.carry)
    if o.shao_gong:
        out += [Due(p, opposite(p), 1, "shaogong") for p in shao]
    if o.men_gong:
        out += [Due(p, opposite(p), 1, "mengong") for p in men]
    return out


def _bie_ok(hand: Counts, c: Counts) -> bool:
    try:
        Gouji._bie_san(hand, c)
    except RuleViolation:
        return False
    return True


def _choose(hand: Counts, n: int, start: int = 0) -> list[Counts]:
    """Every distinct multiset of ``n`` cards from the hand."""
    if n == 0:
        return [(0,) * C.NRANKS]
    out: list[Counts] = []
    for r in range(start, C.NRANKS):
        if hand[r]:
            one = _set(hand, r, hand[r] - 1)
            for rest in _choose(one, n - 1, r):
                out.append(_set(rest, r, rest[r] + 1))
    return out


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


def describe(state: State) -> Mapping[str, Any]:
    """What scenarios assert about."""
    s = state
    return {
        "phase": s.phase,
        "to_act": s.to_act,
        "leading": s.leading,
        "kou": s.kou,
        "top": list(C.names(C.from_counts(s.top))) if s.top is not None else None,
        "top_owner": s.owner if s.top is not None else None,
        "top_gouji": s.top_gouji,
        "passed": [p for p in range(SEATS) if s.passed[p]],
        "places": list(s.places),
        "counts": [sum(h) for h in s.hands],
        "hands": [" ".join(C.names(C.from_counts(h))) for h in s.hands],
        "burning": [p for p in range(SEATS) if s.burning[p] >= 0],
        "failed": [p for p in range(SEATS) if s.failed[p]],
        "four_way": four_way(s),
        "wutou": [p for p in range(SEATS) if active(s, p) and wutou(s, p)],
        "may_burn": [p for p in range(SEATS) if may_burn(s, p)],
        "first": s.first,
        "owed": [{"seat": d.seat, "to": d.to_seat, "count": d.count} for d in s.owed],
        "eligible": list(s.eligible),
        "revolted": list(s.revolted),
        "sitting_out": s.sitting,
        "deal_no": s.deal_no,
        "shao": list(s.shao),
    }


def parse_command(raw: Any) -> Any:
    """Scenario notation: ``{play: "K K"}``, ``{burn: "A A"}``, ``{pass: true}`` (also 扣),
    ``{return: "3 4"}``; or a bare string ``"pass"`` / ``"K K"`` / ``"revolt"`` (革命) /
    ``"decline"``."""
    try:
        if isinstance(raw, str):
            word = raw.strip().lower()
            if word in ("revolt", "geming"):
                return DeclareRevolution()
            if word == "decline":
                return DeclineRevolution()
            return Pass() if word in ("pass", "kou") else Play(C.names(C.parse_cards(raw)))
        if "play" in raw:
            return Play(C.names(C.parse_cards(str(raw["play"]))))
        if "burn" in raw:
            return Burn(C.names(C.parse_cards(str(raw["burn"]))))
        if "return" in raw:
            return ReturnCards(C.names(C.parse_cards(str(raw["return"]))))
        if "pass" in raw or "kou" in raw:
            return Pass()
    except ValueError as e:
        raise InvalidCommand("bad_command", f"cannot read {raw!r}: {e}") from None
    raise InvalidCommand("bad_command", f"cannot read {raw!r}")


GAME = Gouji()
