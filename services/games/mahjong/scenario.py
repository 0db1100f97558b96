"""Scenario hooks of 洪洞王牌麻将: positions, commands, ``describe`` and static queries.

A position (``position:`` in a scenario file; seats by index, ``A``–``D`` or ``P1``–``P4``)::

    dealer: 0                  # default 0
    indicator: 4s              # 普通/色牌: the face-up indicator (kept as the wall's last tile)
    hands: {A: "1m 2m ..."}    # concealed tiles; unlisted seats get 13 (14) − 3·melds filler tiles
    melds: {A: ["peng E", "ming_gang 9p from C", "an_gang 5m"]}
    discards: {B: "9p 9p"}
    laizi: {A: 7p}             # 小手王 / 大将王黑风报 / 对王大将报 per-seat laizi
    declared: {A: ting}        # ting | ying_kou (the waits follow from the hand)
    wall: "2p 3s ..."          # the next tiles drawn, in order; the rest follows in kind order
    wall_count: 40             # tiles left in the wall (the surplus becomes discards)
    gangs: 1                   # gangs made so far: default the listed gang melds, never fewer
    draw: A                    # this seat draws next; without it the dealer acts with 14 tiles

Melds (written as in :mod:`~chieu.games.mahjong.notation`: ``peng E``, ``peng E from C``,
``ming_gang``, ``bu_gang``, ``an_gang``, or 碰 明杠 补杠 暗杠) count exactly as if they had been
played: their tiles leave the 136 (3 for a 碰, 4 for a gang) and the concealed hand holds
3 fewer per meld; they lock the suit where the mode locks it (对王大将报, or 色牌/大将王黑风报 with
SUIT_LOCK_ALL_TWO_SUIT_MODES) and count for 缺门 and the score; their gangs raise the reserve
(R = 14 + G), are paid at the end (明杠/补杠 1, 暗杠 2 from each other seat) and make a 荒庄 pass
the deal (荒庄荒杠). Melds that could not have been played are refused: 王 in a meld, a 碰/杠
under 免碰 (an 暗杠 where MIANPENG_ALLOWS_ANGANG), suited melds of two suits under the suit lock.

Commands: ``discard 5s`` · ``ting 5s`` (discard + 报听) · ``yingkou 5s`` (discard + 硬扣) ·
``peng`` · ``gang E`` · ``pass`` · ``win`` · ``pair 3m``, or mappings such as ``{discard: 5s,
declare: ting}``, ``{gang: E}``, ``{win: true}``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from chieu.games.core import InvalidCommand, ScenarioHooks
from chieu.games.mahjong import hand as H
from chieu.games.mahjong import tiles as T
from chieu.games.mahjong.laizi import locks_suit
from chieu.games.mahjong.model import (
    ChoosePair,
    Declare,
    Discard,
    Gang,
    Meld,
    MeldType,
    Pass,
    Peng,
    State,
    Win,
    remaining,
    reserve,
)
from chieu.games.mahjong.notation import by_seat, meld, meld_text, seat
from chieu.games.mahjong.options import Mode, Options, parse_options
from chieu.games.mahjong.scoring import hand_rules


def _take(pool: list[int], kinds: Sequence[int], what: str) -> None:
    for k in kinds:
        if k not in pool:
            raise ValueError(f"no {T.name(k)} left for {what}")
        pool.remove(k)


def _check_melds(options: Options, melds: Sequence[Meld]) -> None:
    """Refuse melds that could not have been played in this room."""
    for m in melds:
        k = T.kind(m.tile)
        if k == T.WANG:
            raise ValueError("王 is never melded")
        if options.mianpeng and not (m.meld_type is MeldType.AN_GANG and options.mianpeng_allows_angang):
            raise ValueError(f"免碰: no {m.meld_type.value} ({m.tile})")
    if locks_suit(options):
        for i in {m.seat for m in melds}:
            suits = {T.suit(T.kind(m.tile)) for m in melds if m.seat == i} - {-1}
            if len(suits) > 1:
                raise ValueError(f"seat {i}'s melds break the suit lock (two suits)")


def position(options: Options, players: int, spec: Mapping[str, Any], now_ms: int) -> list[Any]:
    """The events that set up an exact position (see the module docstring)."""
    n = players
    dealer = seat(spec.get("dealer", 0))
    pool = T.full_set()
    hands_raw = by_seat(spec.get("hands"))
    melds = [meld(i, str(m), n) for i, ms in by_seat(spec.get("melds")).items() for m in ms]
    _check_melds(options, melds)
    hands: list[list[int]] = [[] for _ in range(n)]
    for i, h in hands_raw.items():
        hands[i] = T.parse(str(h))
        _take(pool, [k for k in hands[i] if k != T.WANG], f"seat {i}'s hand")
    for m in melds:
        _take(pool, [T.kind(m.tile)] * (3 if m.meld_type is MeldType.PENG else 4), "a meld")
    discards: list[list[int]] = [[] for _ in range(n)]
    for i, d in by_seat(spec.get("discards")).items():
        discards[i] = T.parse(str(d))
        _take(pool, discards[i], "discards")
    indicator = T.kind(str(spec["indicator"])) if "indicator" in spec else None
    if indicator is not None:
        _take(pool, [indicator], "the indicator")
    head = T.parse(str(spec.get("wall", "")))
    _take(pool, head, "the wall")
    set_aside: list[int] = []
    if options.laizi_mode is Mode.YIZHIWANG:
        set_aside, pool = pool[len(pool) - n :], pool[: len(pool) - n]
    # unlisted seats: spread the rest so that filler hands hold few pairs
    seen: dict[int, int] = {}
    ranked = []
    for k in pool:
        seen[k] = seen.get(k, 0) + 1
        ranked.append((seen[k], k))
    spread = [k for _, k in sorted(ranked)]
    draw = spec.get("draw")
    for i in range(n):
        if i in hands_raw:
            continue
        size = (13 if i != dealer or draw is not None else 14) - 3 * len([m for m in melds if m.seat == i])
        if options.laizi_mode is Mode.YIZHIWANG:
            hands[i] = [T.WANG]
            size -= 1
        hands[i] += spread[:size]
        for k in spread[:size]:
            pool.remove(k)
        spread = spread[size:]
    rest = sorted(pool)
    if "wall_count" in spec:
        keep = int(spec["wall_count"]) - len(head) - (1 if indicator is not None else 0)
        extra, rest = rest[keep:], rest[:keep]
        for j, k in enumerate(extra):
            discards[j % n].append(k)
    wall = head + rest + ([indicator] if indicator is not None else [])
    declared = [Declare.NONE] * n
    for i, d in by_seat(spec.get("declared")).items():
        declared[i] = Declare(str(d))
    laizi_raw = by_seat(spec.get("laizi"))
    laizi = None
    if laizi_raw or (options.laizi_mode is Mode.DUIWANG and "laizi" in spec):
        laizi = [T.kind(str(laizi_raw[i])) if i in laizi_raw else -1 for i in range(n)]
    gang_melds = sum(m.meld_type is not MeldType.PENG for m in melds)
    gangs = int(spec.get("gangs", gang_melds))
    if gangs < gang_melds:
        raise ValueError(f"gangs: {gangs}, but the melds hold {gang_melds}")
    from chieu.games.mahjong.game import GAME, _Flow  # the decider imports these hooks

    events = GAME.deal_events(
        options, n, dealer, hands, wall, set_aside, bytes.fromhex(str(spec.get("seed", "00"))),
        now_ms, melds, declared if any(d is not Declare.NONE for d in declared) else (),
        laizi, gangs, discards if any(discards) else (),
    )
    if draw is not None:
        f = _Flow(GAME, GAME.initial(options, n), now_ms)
        for e in events:
            f.emit(e)
        f.events = []
        GAME._draw(f, seat(draw), bool(spec.get("replacement", False)))
        events += f.events
    return events


_WORDS: dict[str, Callable[[str], Any]] = {
    "discard": lambda t: Discard(t),
    "ting": lambda t: Discard(t, Declare.TING),
    "yingkou": lambda t: Discard(t, Declare.YING_KOU),
    "ying_kou": lambda t: Discard(t, Declare.YING_KOU),
    "gang": lambda t: Gang(t),
    "pair": lambda t: ChoosePair(t),
}


def parse_command(raw: Any) -> Any:
    """A scenario command in the notation of the module docstring."""
    try:
        if isinstance(raw, str):
            parts = raw.split()
            word = parts[0].lower()
            if word in ("peng", "pass", "win"):
                return {"peng": Peng, "pass": Pass, "win": Win}[word]()
            return _WORDS[word](T.name(T.kind(parts[1])))
        m = dict(raw)
        if "discard" in m:
            return Discard(T.name(T.kind(str(m["discard"]))), Declare(str(m.get("declare", "none"))))
        for word in ("peng", "pass", "win"):
            if word in m:
                return parse_command(word)
        for word in ("gang", "pair"):
            if word in m:
                return parse_command(f"{word} {m[word]}")
    except (KeyError, IndexError, ValueError) as e:
        raise InvalidCommand("bad_command", f"cannot read {raw!r}: {e}") from None
    raise InvalidCommand("bad_command", f"cannot read {raw!r}")


def describe(state: State) -> Mapping[str, Any]:
    """What scenarios assert: hands, melds, laizi, declarations, wall counts, the result."""
    s = state
    out: dict[str, Any] = {
        "phase": s.phase.value,
        "dealer": s.dealer,
        "turn": s.turn,
        "drawn": T.name(s.drawn) if s.drawn >= 0 else None,
        "hands": [" ".join(T.names(p.hand)) for p in s.seats],
        "melds": [[meld_text(t, k) for t, k, _ in p.melds] for p in s.seats],
        "discards": [" ".join(T.names(p.discards)) for p in s.seats],
        "laizi": [T.name(p.laizi) if p.laizi >= 0 else None for p in s.seats],
        "declared": [p.declared.value for p in s.seats],
        "waits": [" ".join(T.names(p.waits)) for p in s.seats],
        "locked_suit": [p.locked_suit for p in s.seats],
        "indicator": T.name(s.indicator) if s.indicator >= 0 else None,
        "wall": remaining(s),
        "reserve": reserve(s),
        "live": max(0, remaining(s) - reserve(s)),
        "gangs": s.gangs,
        "claim": {"tile": T.name(s.claim_tile), "from": s.claim_from, "seats": list(s.claim_seats)}
        if s.claim_seats else None,
        "tiles": sum(len(p.hand) + len(p.discards) for p in s.seats)
        + sum(3 if t.value == "peng" else 4 for p in s.seats for t, _, _ in p.melds)
        + remaining(s),
    }
    if s.result is not None:
        out["winner"] = s.result.seat
        out["total"] = s.result.total
        out["items"] = {i.code: i.points for i in s.result.items}
    if s.drawn_hand is not None:
        out["next_dealer"] = s.drawn_hand.next_dealer
    return out


def score(options: Mapping[str, Any], laizi: str, concealed: str, win: str,
          melds: Sequence[str] = (), ying_kou: bool = False) -> Any:
    """The ``score`` query: a hand's best score (melds written ``peng E``), or ``{win: false}``."""
    o = parse_options(options)
    lz = T.kind(laizi) if laizi else -1
    mk = [T.kind(m.split()[-1]) for m in melds]
    sizes = [3 if m.split()[0] == "peng" else 4 for m in melds]
    sc = H.score(T.parse(concealed), mk, lz, T.kind(win), hand_rules(o, ying_kou), ying_kou, sizes)
    if sc is None:
        return {"win": False}
    return {"win": True, "total": sc.total, "items": dict(sc.items), "qidui": sc.qidui}


def _successor(indicator: str) -> str:
    return T.name(T.successor(T.kind(indicator)))


def queries() -> Mapping[str, Callable[..., Any]]:
    """Static checks: ``score(options, laizi, concealed, win, melds, ying_kou)``, ``successor``."""
    return {"score": score, "successor": _successor}


HOOKS = ScenarioHooks(position=position, describe=describe, queries=queries(), command=parse_command)
