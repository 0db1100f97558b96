"""Phỏm scenario hooks: exact deals, plain-text commands, ``describe`` and static queries.

A position::

    position:
      hands: ["3♠ 4♠ 5♠ 9♦ 9♣ 9♥ K♣ Q♦ 2♥ 7♣", "6♥ 7♥ 8♥ ..."]   # seat order P1, P2, ...
      stock: "5♦ 2♣ J♥ 8♠ 10♠ 6♣ 10♦"   # the usable stock (4n−1 cards), top first; default:
                                         # the lowest remaining cards
      dealer: P1          # default P1 (seat 0); the dealer holds 10 cards
      owner: P1           # default the dealer
      pot: 0              # the gà pot carried over from earlier hands
      window: false       # true: the hand opens with the Ù window (uWindowSeconds)
      seed: "00"          # hex seed material for the random auto-discard

Commands: ``draw``, ``eat`` or ``eat 7♣ 7♥``, ``lay 3♠4♠5♠``, ``send A♠ to 2♠`` (to the laid
phỏm holding 2♠), ``discard K♣``, ``u`` (or ``ù``), ``accuse P2``, ``sort``; or a mapping
``{type: Discard, card: K♣}``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from chieu.games.core import InvalidCommand, ScenarioHooks
from chieu.games.phom import cards as C
from chieu.games.phom.deal import deal_events, next_dealer
from chieu.games.phom.model import Accuse, ClaimU, Discard, Draw, Eat, Lay, Send, Sort, State
from chieu.games.phom.options import Options, settings_change
from chieu.games.phom.scoring import balances


def _seat(v: Any, n: int) -> int:
    if isinstance(v, int) and not isinstance(v, bool):
        return v
    t = str(v).strip().upper()
    if t.startswith("P") and t[1:].isdigit() and 1 <= int(t[1:]) <= n:
        return int(t[1:]) - 1
    raise ValueError(f"unknown seat {v!r}; seats are P1..P{n}")


def _seat_name(s: int) -> str | None:
    return None if s < 0 else f"P{s + 1}"


def position(options: Options, players: int, spec: Mapping[str, Any], now_ms: int) -> Sequence[Any]:
    """The ``Dealt`` event (and the dealer's first turn) of an exact deal."""
    raw = spec["hands"]
    if isinstance(raw, Mapping):
        raw = [raw[f"P{i + 1}"] for i in range(players)]
    hands = [C.parse_cards(h) for h in raw]
    if len(hands) != players:
        raise ValueError(f"{len(hands)} hands for {players} players")
    dealer = _seat(spec.get("dealer", 0), players)
    owner = _seat(spec.get("owner", dealer), players)
    for s, h in enumerate(hands):
        want = 10 if s == dealer else 9
        if len(h) != want or len(set(h)) != want:
            raise ValueError(f"P{s + 1} holds {len(h)} cards, not {want}")
    used = C.mask_of(c for h in hands for c in h)
    if used.bit_count() != sum(len(h) for h in hands):
        raise ValueError("a card is dealt twice")
    usable = 4 * players - 1
    if "stock" in spec:
        stock = C.parse_cards(spec["stock"])
    else:
        stock = [c for c in C.DECK if not used >> c & 1][:usable]
    if len(stock) != usable or C.mask_of(stock) & used or len(set(stock)) != usable:
        raise ValueError(f"the usable stock is {usable} cards not in any hand")
    used |= C.mask_of(stock)
    unused = [c for c in C.DECK if not used >> c & 1]
    return deal_events(
        options, players, dealer, owner, hands, stock, unused, int(spec.get("pot", 0)), now_ms,
        bytes.fromhex(str(spec.get("seed", "00"))), window=bool(spec.get("window", False)),
    )


def parse_command(raw: Any) -> Any:
    """A command in scenario notation (see the module docstring)."""
    if isinstance(raw, Mapping):
        if len(raw) != 1:
            raise InvalidCommand("bad_command", f"cannot read {dict(raw)!r}")
        ((k, v),) = raw.items()
        raw = f"{k} {v}" if v not in (None, True) else str(k)
    text = str(raw).strip()
    verb, _, rest = text.partition(" ")
    verb = verb.lower()
    rest = rest.strip()
    try:
        if verb == "draw":
            return Draw()
        if verb == "eat":
            return Eat(tuple(C.split_cards(rest)))
        if verb == "lay":
            return Lay(tuple(C.split_cards(rest)))
        if verb == "send":
            card, _, target = rest.partition(" to ")
            return Send(card.strip(), C.split_cards(target)[0])
        if verb == "discard":
            return Discard(rest)
        if verb in ("u", "ù"):
            return ClaimU()
        if verb == "accuse":
            return Accuse(_seat(rest, 4))
        if verb == "sort":
            return Sort()
    except (ValueError, IndexError) as e:
        raise InvalidCommand("bad_command", f"cannot read {text!r}: {e}") from None
    raise InvalidCommand("bad_command", f"unknown command {text!r}")


def _cards_text(mask_or_cards: int | Sequence[int]) -> str:
    return " ".join(C.names(mask_or_cards))


def describe(state: State) -> Mapping[str, Any]:
    """What scenarios assert: hands (ascending, eaten marked ``*``), rows, d, L, money."""
    s = state
    n = s.players
    if not s.hands:
        return {"phase": s.phase.value}

    def hand(p: int) -> str:
        return " ".join(
            C.NAMES[c] + ("*" if s.eaten[p] >> c & 1 else "") for c in C.cards_of(s.hands[p])
        )

    return {
        "phase": s.phase.value,
        "turn": _seat_name(s.turn),
        "turn_kind": s.turn_kind.value,
        "taken": s.taken,
        "hands": [hand(p) for p in range(n)],
        "hand": {f"P{p + 1}": hand(p) for p in range(n)},
        "rows": [_cards_text(s.rows[p]) for p in range(n)],
        "d": list(s.d),
        "order": [_seat_name(p) for p in s.order],
        "eats": list(s.eats),
        "melds": [f"P{o + 1}: {_cards_text(m)}" for o, m, _ in s.melds],
        "laid_down": list(s.laid_down),
        "stock": _cards_text(s.stock),
        "stock_left": len(s.stock),
        "pot": s.pot,
        "net": list(balances(s)),
        "end": s.end or None,
        "winner": _seat_name(s.winner),
        "points": list(s.points) if s.points else None,
    }


# ---------------------------------------------------------------- static queries


def _mask(text: str | Sequence[str]) -> int:
    return C.mask_of(C.parse_cards(text))


def _eaten(text: str | Sequence[str]) -> int:
    tokens = C.split_cards(text) if isinstance(text, str) else list(text)
    return C.mask_of(C.parse_card(t) for t in tokens if t.endswith("*"))


def q_is_phom(cards: str) -> bool:
    """PH-01: a valid phỏm for laying (at most one eaten card, marked ``*``)."""
    m, e = _mask(cards), _eaten(cards)
    return C.is_phom_mask(m) and (e & (e - 1)) == 0 and len(C.split_cards(cards)) == m.bit_count()


def q_points(cards: str) -> int:
    """PH-02: the point total of some cards."""
    return C.points(_mask(cards))


def q_is_ca(cards: str) -> bool:
    """PH-02: two cards form a cạ."""
    a, b = C.parse_cards(cards)
    return C.is_ca(a, b)


def q_is_u_khan(cards: str) -> bool:
    """PH-02: a dealt hand without any cạ."""
    return C.is_u_khan(_mask(cards))


def q_is_bao(cards: str) -> bool:
    """A hand (eaten cards marked ``*``) is báo: its eaten cards have no cover."""
    return C.is_bao(_mask(cards), _eaten(cards))


def q_u_kind(cards: str) -> str | None:
    """The Ù test of PH-R25 on a hand (eaten cards marked ``*``)."""
    return C.u_kind(_mask(cards), _eaten(cards))


def q_sort(cards: str) -> str:
    """PH-28: the auto-sort order of a hand (eaten cards marked ``*``)."""
    return " ".join(C.names(C.sort_hand(_mask(cards), _eaten(cards))))


def q_auto_lay(cards: str) -> list[str]:
    """PH-29: the phỏm the server lays on a timeout, for a hand with eaten cards marked ``*``."""
    return [_cards_text(p) for p in C.auto_lay(_mask(cards), _eaten(cards))]


def q_next_dealer(previous_winner: str | None, owner: str, players: int, left: Sequence[str] = ()) -> str:
    """PH-30: the next dealer (PH-R5)."""
    pw = None if previous_winner is None else _seat(previous_winner, players)
    d = next_dealer(pw, _seat(owner, players), players, [_seat(x, players) for x in left])
    return f"P{d + 1}"


def q_settings_change(actor: str, owner: str, in_game: bool, pot: int, changes: Sequence[str]) -> str:
    """PH-30: ``ok`` or the refusal code of a settings change (§A4.6)."""
    return settings_change(_seat(actor, 4), _seat(owner, 4), in_game, pot, changes)


QUERIES: dict[str, Callable[..., Any]] = {
    "is_phom": q_is_phom,
    "points": q_points,
    "is_ca": q_is_ca,
    "is_u_khan": q_is_u_khan,
    "is_bao": q_is_bao,
    "u_kind": q_u_kind,
    "sort": q_sort,
    "auto_lay": q_auto_lay,
    "next_dealer": q_next_dealer,
    "settings_change": q_settings_change,
}


HOOKS = ScenarioHooks(position=position, describe=describe, queries=QUERIES, command=parse_command)
