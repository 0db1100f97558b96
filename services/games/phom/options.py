"""Phỏm table options of §A5 under the rules file's names (``ga``, ``taiGui``, ``amounts``, ...),
the amounts of §A4 and who may change them when (§A4.6)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from chieu.games.common import check_names, choice, flag, whole
from chieu.games.core import BadOptions


@dataclass(frozen=True, slots=True)
class Amounts:
    """Every amount of §A4, in stake units (cược)."""

    u_thuong: int = 5
    u_tron: int = 10
    u_khan: int = 5
    bao: int = 5
    u_lao: int = 5
    mom: int = 4
    chot: int = 4
    eat1: int = 1
    eat2: int = 2
    rank: tuple[int, ...] = (1, 2, 3)
    """What the nhì, ba and bét (ranks 2, 3, 4) pay the nhất."""
    wrong_accusation: int = 1


@dataclass(frozen=True, slots=True)
class Options:
    """Table options of §A5 (the rules file's names are in :func:`option_values`)."""

    stake: int = 1
    ga: bool = False
    """Nuôi gà: the gà pot is fed by the deal and the eats, and the Ù takes it."""
    tai_gui: bool = True
    """Tái gửi: sending (gửi) and tái turns until the stock is used up."""
    chuyen_bai: bool = True
    """Chuyển bài: an eat visibly moves a discard to the victim's row (PH-R16)."""
    allow_u_lao: bool = False
    u_den: bool = True
    u_window_seconds: int = 5
    turn_seconds: int = 20
    chot_in_tai: bool = True
    amounts: Amounts = field(default_factory=Amounts)


_FLAGS = {
    "ga": "ga",
    "taiGui": "tai_gui",
    "chuyenBai": "chuyen_bai",
    "allowULao": "allow_u_lao",
    "uDen": "u_den",
    "chotInTai": "chot_in_tai",
}
MAX_AMOUNT = 100
"""The most stake units any one amount of §A4 may be (each is 1–10 by default): one move then
moves at most :data:`MAX_MOVE_UNITS` (docs/ledger.md, "Bounded amounts")."""
MAX_MOVE_UNITS = 4 * MAX_AMOUNT
"""The most stake units one Phỏm move settles in all, the gà pot aside: four amounts (a chốt
eaten as the third eat, then the Ù it makes, paid by three players or by the victim alone for
all three; any other move pays less): 400 at the bounds. An Ù with gà on also takes the pot,
which holds only what earlier payments of the table put there."""
MAX_STAKE_OPTION = 1_000_000_000
"""The ``stake`` option's bound (the table's stake, not this option, is what the ledger
multiplies; kept within the same bound as the table's)."""
_INTS = {"stake": ("stake", 1, MAX_STAKE_OPTION), "uWindowSeconds": ("u_window_seconds", 0, 600),
         "turnSeconds": ("turn_seconds", 1, 3600)}
"""Whole-number options: name → (field, lowest, highest)."""
_AMOUNTS = {
    "uThuong": "u_thuong",
    "uTron": "u_tron",
    "uKhan": "u_khan",
    "bao": "bao",
    "uLao": "u_lao",
    "mom": "mom",
    "chot": "chot",
    "eat1": "eat1",
    "eat2": "eat2",
    "rank": "rank",
    "wrongAccusation": "wrong_accusation",
}
_NAMES = (*_FLAGS, *_INTS, "players", "uTronPays", "amounts")


def parse_options(raw: Mapping[str, Any]) -> Options:
    """Validate Phỏm options; missing names take the defaults of §A5.

    Switches are ``true`` / ``false``. ``amounts`` is a mapping of any of ``uThuong uTron uKhan
    bao uLao mom chot eat1 eat2 rank wrongAccusation`` (``rank``: what ranks 2, 3, 4 pay the
    nhất), each 0..:data:`MAX_AMOUNT` stake units. ``uTronPays`` (10 or 5) is the rules file's
    switch for the ù tròn amount. ``players`` (2–4) is checked if given.
    """
    check_names(raw, _NAMES)
    values: dict[str, Any] = {attr: flag(name, raw[name]) for name, attr in _FLAGS.items() if name in raw}
    for name, (attr, lo, hi) in _INTS.items():
        if name in raw:
            values[attr] = whole(name, raw[name], lo, hi)
    if raw.get("players") is not None:
        whole("players", raw["players"], 2, 4)
    return Options(**values, amounts=_amounts(raw))


def _amounts(raw: Mapping[str, Any]) -> Amounts:
    amounts = raw.get("amounts") or {}
    if not isinstance(amounts, Mapping):
        raise BadOptions("amounts must be a mapping")
    bad = sorted(set(amounts) - set(_AMOUNTS))
    if bad:
        raise BadOptions(f"unknown amount(s) {', '.join(bad)}; known: {', '.join(_AMOUNTS)}")
    values: dict[str, Any] = {}
    for name, attr in _AMOUNTS.items():
        if name not in amounts:
            continue
        v = amounts[name]
        if attr == "rank":
            if not isinstance(v, list | tuple) or len(v) != 3:
                raise BadOptions("amounts.rank lists what ranks 2, 3 and 4 pay: three numbers")
            values[attr] = tuple(whole("amounts.rank", x, 0, MAX_AMOUNT) for x in v)
        else:
            values[attr] = whole(f"amounts.{name}", v, 0, MAX_AMOUNT)
    if "uTronPays" in raw:
        v = choice("uTronPays", whole("uTronPays", raw["uTronPays"]), (10, 5))
        if "u_tron" in values and values["u_tron"] != v:
            raise BadOptions("uTronPays and amounts.uTron disagree")
        values["u_tron"] = v
    return Amounts(**values)


def option_values(options: Options) -> Mapping[str, Any]:
    """The options under the rules file's names (the inverse of :func:`parse_options`)."""
    out: dict[str, Any] = {name: getattr(options, attr) for name, attr in _FLAGS.items()}
    out.update({name: getattr(options, attr) for name, (attr, _, _) in _INTS.items()})
    a = options.amounts
    amounts = {name: getattr(a, attr) for name, attr in _AMOUNTS.items()}
    amounts["rank"] = list(a.rank)
    out["amounts"] = amounts
    if a.u_tron in (10, 5):
        out["uTronPays"] = a.u_tron
    assert {f.name for f in fields(Amounts)} == set(_AMOUNTS.values())
    return out


POT_OPTIONS = ("ga",)
"""The options that change the gà pot's rules (nuôi gà on or off): changeable only while the pot
is 0 (§A4.6), like the stake."""


def settings_change(actor: int, owner: int, in_game: bool, pot: int, changes: Sequence[str]) -> str:
    """§A4.6: ``"ok"`` or the refusal code for a settings change by ``actor``: only the owner
    (chủ bàn), only between games, and gà or the stake only while the gà pot is 0."""
    if actor != owner:
        return "not_owner"
    if in_game:
        return "game_running"
    if pot != 0 and any(c in ("stake", *POT_OPTIONS) for c in changes):
        return "pot_not_empty"
    return "ok"
