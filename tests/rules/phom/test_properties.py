"""Hypothesis properties of Phỏm: cards and money are conserved, random legal play ends,
every legal command is accepted, replay equals live, and no view leaks a hidden card."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from chieu.games.core import RuleViolation, replay
from chieu.games.phom import cards as C
from chieu.games.phom.game import GAME
from chieu.games.phom.model import Phase, State
from chieu.games.phom.scoring import balances
from chieu.games.plain import to_plain
from tests.rules.phom.randgame import random_game

ALL = (1 << 52) - 1

options = st.fixed_dictionaries(
    {
        "ga": st.booleans(),
        "taiGui": st.booleans(),
        "chuyenBai": st.booleans(),
        "allowULao": st.booleans(),
        "uDen": st.booleans(),
        "chotInTai": st.booleans(),
        "uWindowSeconds": st.sampled_from([0, 5]),
    }
)
seeds = st.binary(min_size=4, max_size=8)
players = st.integers(2, 4)


def conserved(s: State, log: list[Any]) -> None:
    """The 52 cards are in exactly one place; money plus the pot's change sums to zero."""
    if s.phase is Phase.NEW:
        return
    places = [*s.hands, C.mask_of(s.stock), C.mask_of(s.unused)]
    places += [C.mask_of(r) for r in s.rows]
    places += [m for _, m, _ in s.melds]
    total = 0
    for m in places:
        assert total & m == 0, "a card is in two places"
        total |= m
    assert total == ALL, "a card went missing"
    assert sum(len(r) for r in s.rows) + sum(m.bit_count() for m in places[: s.players]) + len(
        s.stock) + len(s.unused) + sum(m.bit_count() for _, m, _ in s.melds) == 52
    assert sum(balances(s)) + (s.pot - s.pot_start) == 0
    assert s.pot >= 0
    for p in range(s.players):
        assert s.d[p] >= 0
        if s.options.chuyen_bai:
            assert len(s.rows[p]) == s.d[p], "with chuyển bài the rows show the logical counts"
        assert s.eaten[p] & ~s.hands[p] == 0, "an eaten card outside its eater's hand"
        assert 0 <= s.eats[p] <= 3


def _strings(x: Any) -> set[str]:
    if isinstance(x, str):
        return {x}
    if isinstance(x, dict):
        x = list(x.values())
    if isinstance(x, list):
        return set().union(*(_strings(v) for v in x)) if x else set()
    return set()


def no_leak(s: State, log: list[Any]) -> None:
    """No view holds another seat's hidden card (until the end lays the hands open), the stock or
    the unused cards."""
    if s.phase is Phase.NEW:
        return
    secret_all = C.mask_of(s.stock) | C.mask_of(s.unused)
    for viewer in [None, *range(s.players)]:
        secret = secret_all
        for p in range(s.players):
            if p != viewer and s.phase is not Phase.OVER:  # at the end the hands are laid open
                secret |= s.hands[p] & ~s.eaten[p]
        view = GAME.view(s, viewer)
        shown = _strings(to_plain(view))
        leaked = shown & set(C.names(secret))
        assert not leaked, f"view of {viewer} leaks {leaked}"
        if viewer is not None:
            assert set(view.hand) == set(C.names(s.hands[viewer]))
        assert s.seed.hex() not in shown


def every_legal_is_accepted(s: State, log: list[Any]) -> None:
    if s.phase is Phase.OVER or s.phase is Phase.NEW:
        return
    for seat in range(s.players):
        for cmd in GAME.legal(s, seat):
            try:
                GAME.decide(s, seat, cmd, 0)
            except RuleViolation as e:  # pragma: no cover - the assertion reports it
                raise AssertionError(f"legal {cmd} refused: {e}") from e


@settings(max_examples=60, deadline=None)
@given(seed=seeds, n=players, raw=options)
def test_cards_and_money_are_conserved_and_play_ends(seed: bytes, n: int, raw: dict[str, Any]) -> None:
    opts = GAME.parse_options(raw)
    state, _log, _ = random_game(seed, n, opts, check=conserved, accuse_rate=20, timeout_rate=50)
    out = GAME.outcome(state)
    assert out is not None
    assert sum(out.net(n)) + out.pot_balance - state.pot_start == 0
    assert out.transfers == state.transfers
    assert all(t.amount > 0 for t in out.transfers)


@settings(max_examples=30, deadline=None)
@given(seed=seeds, n=players, raw=options)
def test_replay_equals_live(seed: bytes, n: int, raw: dict[str, Any]) -> None:
    opts = GAME.parse_options(raw)
    state, log, played = random_game(seed, n, opts, timeout_rate=100)
    assert replay(GAME, GAME.initial(opts, n), log) == state
    # and deciding the same commands again gives the same events
    again, _, played2 = random_game(seed, n, opts, timeout_rate=100)
    assert again == state and played2 == played


@settings(max_examples=25, deadline=None)
@given(seed=seeds, n=players, raw=options)
def test_views_never_leak(seed: bytes, n: int, raw: dict[str, Any]) -> None:
    random_game(seed, n, GAME.parse_options(raw), check=no_leak, timeout_rate=30)


@settings(max_examples=25, deadline=None)
@given(seed=seeds, n=players, raw=options)
def test_every_legal_command_is_accepted(seed: bytes, n: int, raw: dict[str, Any]) -> None:
    random_game(seed, n, GAME.parse_options(raw), check=every_legal_is_accepted)


@settings(max_examples=200, deadline=None)
@given(hand=st.sets(st.integers(0, 51), min_size=3, max_size=10), data=st.data())
def test_cover_and_u_tests_agree_with_brute_force(hand: set[int], data: st.DataObject) -> None:
    cards = sorted(hand)
    eaten_list = data.draw(st.lists(st.sampled_from(cards), max_size=3, unique=True))
    m, e = C.mask_of(cards), C.mask_of(eaten_list)

    def phoms(mask: int) -> list[int]:
        out = []
        cs = C.cards_of(mask)
        for bits in range(1, 1 << len(cs)):
            sub = C.mask_of(c for i, c in enumerate(cs) if bits >> i & 1)
            if C.is_phom_mask(sub) and (sub & e).bit_count() <= 1:
                out.append(sub)
        return out

    cands = phoms(m)

    def packs(avail: int, need: int) -> bool:
        """Disjoint phỏm from ``avail`` covering ``need`` (brute force)."""
        if not need:
            return True
        low = need & -need
        return any(p & low and p & avail == p and packs(avail & ~p, need & ~p) for p in cands)

    assert C.has_cover(m, e) == packs(m, e)
    tron = packs(m, m)
    thuong = any(packs(m & ~(1 << c), m & ~(1 << c)) for c in cards if not e >> c & 1)
    assert C.u_kind(m, e) == ("tron" if tron else "thuong" if thuong else None)


def _state_after_start(seed: bytes, n: int) -> State:
    from chieu.games.core import Setup

    opts = GAME.parse_options({"uWindowSeconds": 0})
    return replay(GAME, GAME.initial(opts, n), GAME.start(Setup(opts, n, seed, 0)))


@settings(max_examples=30, deadline=None)
@given(seed=seeds, n=players)
def test_deal_sizes_and_usable_stock(seed: bytes, n: int) -> None:
    s = _state_after_start(seed, n)
    sizes = [h.bit_count() for h in s.hands]
    assert sizes[s.dealer] == 10 and sorted(sizes) == [9] * (n - 1) + [10]
    assert len(s.stock) == 4 * n - 1
    assert len(s.unused) == 52 - 9 * n - 1 - (4 * n - 1)
