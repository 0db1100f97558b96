"""够级 scenario hooks: a position that states every hand, what a scenario asserts
(``describe``), the queries and the command reader.

A position (every key but ``hands`` may be left out)::

    position:
      hands: ["J J J J 5 5", "Q Q Q Q 6 6", "7 7 8", "K K K K 9 9", "3 3 4", "4 4 6"]
      leader: 0            # the first leader (default: the seat after previous.first, else 0)
      finished: [0]        # seats already out, in finishing order (头科 first)
      failed: [1]          # failed burners, in order (大落, then 二落); their hands are dead
      hand_no: 1           # default 1, or 2 with previous
      seed: "00"           # GE_MING: the seed material (hex) a redeal is drawn from
      previous:            # the previous game, for this game's 进贡 (before the first lead)
        ranking: [0, 3, 2, 5, 4, 1]   # seats 头科 first (here 二落 4, 大落 1); or
        places: [1, 6, 3, 2, 5, 4]    # each seat's place (1 头科 … 6 大落)
        first: 2           # its first leader (this game's leader is the next seat)
        shao: [2]          # 烧贡 payers (SHAO_GONG), men: [5] 闷贡 payers (MEN_GONG);
        carry: [1, 1, 2, 1, 5]        # or the raw Outcome.carry instead of shao / men

* ``hands`` — six card strings (or a mapping seat → cards; missing seats hold nothing), the
  hands as dealt, before any tribute. The four decks' other cards count as played.
* Without ``finished`` / ``failed`` the hand starts as ``start()`` would after dealing these
  hands: with ``GE_MING`` on the 革命 window opens when a hand qualifies, then the tribute
  that ``previous`` owes is paid (each payer's best cards, in the order 落贡, 烧贡, 闷贡; the
  receivers then return cards, 还贡), else the leader leads at once.
* ``finished`` / ``failed`` set up a later moment of play (then ``previous`` is refused):
  the leader leads at once, and no 革命 window opens.

Commands: ``{play: "K K"}``, ``{burn: "A A"}``, ``{pass: true}`` (also 扣 ``kou``),
``{return: "3 4"}``, or the bare strings ``pass`` / ``"K K"`` / ``revolt`` / ``decline``.
Queries: ``classify(cards)``, ``beats(top, answer)``, ``team_scores(order)``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from chieu.games.core import InvalidCommand, ScenarioHooks
from chieu.games.gouji import cards as C
from chieu.games.gouji.cards import DECK
from chieu.games.gouji.model import (
    SEATS,
    Burn,
    BurnFailed,
    Dealt,
    DeclareRevolution,
    DeclineRevolution,
    Finished,
    Pass,
    Play,
    ReturnCards,
    State,
    TurnStarted,
    seat_cards,
    team,
)
from chieu.games.gouji.options import Options
from chieu.games.gouji.scoring import settle
from chieu.games.gouji.tribute import after_deal, dues, encode_carry
from chieu.games.gouji.turns import active, four_way, may_burn, wutou


def position(options: Options, players: int, spec: Mapping[str, Any], now_ms: int) -> Sequence[Any]:
    """The events that deal ``spec``'s hands and bring the game to the moment it states (see
    the module docstring); raises ``ValueError`` for a position that cannot be."""
    raw = spec["hands"]
    hands = [C.to_counts(C.parse_cards(str(raw[i] if not isinstance(raw, Mapping) else raw.get(i, ""))))
             for i in range(SEATS)]
    if not C.contains(DECK, C.to_counts(r for h in hands for r in C.from_counts(h))):
        raise ValueError("the position holds more cards than the four decks")
    prev = spec.get("previous")
    later = bool(spec.get("finished") or spec.get("failed"))
    if prev is not None and later:
        raise ValueError("a position with previous: starts before the first lead (no finished/failed)")
    leader = int(spec.get("leader", 0))
    if "leader" not in spec and prev is not None and prev.get("first") is not None:
        leader = (int(prev["first"]) + 1) % SEATS
    hand_no = int(spec.get("hand_no", 1 if prev is None else 2))
    seed = str(spec.get("seed", "00")) if options.ge_ming and not later else ""
    events: list[Any] = [Dealt(hand_no, seat_cards(hands), leader, seed)]
    if not later:
        owed = dues(options, *_previous(prev)) if prev is not None else []
        return [*events, *after_deal(options, hands, leader, owed, now_ms)]
    for i, seat in enumerate(spec.get("finished", [])):
        events.append(Finished(int(seat), i + 1))
    for i, seat in enumerate(spec.get("failed", [])):
        events.append(BurnFailed(int(seat), SEATS - i, "position", C.names(C.from_counts(hands[int(seat)]))))
    events.append(TurnStarted(leader, True, False, now_ms + options.turn_timeout_s * 1000))
    return events


def _previous(spec: Mapping[str, Any]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The previous game's ranking (seats, 头科 first) and carry from a position's
    ``previous:``."""
    if "ranking" in spec:
        ranking = tuple(int(p) for p in spec["ranking"])
    elif "places" in spec:
        places = [int(p) for p in spec["places"]]
        ranking = tuple(sorted(range(len(places)), key=lambda p: places[p]))
        if sorted(places) != list(range(1, SEATS + 1)):
            raise ValueError(f"previous places must be 1..{SEATS} once each, not {places}")
    else:
        raise ValueError("previous: needs ranking (seats, 头科 first) or places (per seat)")
    if sorted(ranking) != list(range(SEATS)):
        raise ValueError(f"previous ranking must name seats 0..{SEATS - 1} once each, not {list(ranking)}")
    if "carry" in spec:
        carry = tuple(int(x) for x in spec["carry"])
    else:
        carry = encode_carry([int(p) for p in spec.get("shao", [])], [int(p) for p in spec.get("men", [])])
    return ranking, carry


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


def team_scores(order: Sequence[int]) -> Mapping[str, Any]:
    """Scores for a finish order (seats best first), as the scenarios of §2.9 state them."""
    places = [0] * SEATS
    for i, seat in enumerate(order):
        places[seat] = i + 1
    (a, b), doubled = settle(places)
    scores = [a if team(i) == 0 else b for i in range(SEATS)]
    return {"A": a, "B": b, "doubled": doubled, "scores": scores}


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


HOOKS = ScenarioHooks(
    position=position, describe=describe,
    queries={"classify": C.classify, "beats": C.can_beat, "team_scores": team_scores},
    command=parse_command,
)
