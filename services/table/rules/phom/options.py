"""Table options of §A5 under the rules file's names (``ga``, ``taiGui``, ``amounts``, ...)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields, replace
from typing import Any

from chieu.table.rules.core import BadOptions
from chieu.table.rules.phom.model import Amounts, Options

_FLAGS = {
    "ga": "ga",
    "taiGui": "tai_gui",
    "chuyenBai": "chuyen_bai",
    "allowULao": "allow_u_lao",
    "uDen": "u_den",
    "chotInTai": "chot_in_tai",
}
_INTS = {"stake": "stake", "uWindowSeconds": "u_window_seconds", "turnSeconds": "turn_seconds"}
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


def _bool(name: str, v: Any) -> bool:
    if isinstance(v, bool):
        return v
    raise BadOptions(f"{name} must be true or false, not {v!r}")


def _int(name: str, v: Any) -> int:
    if isinstance(v, bool) or not isinstance(v, int | float) or int(v) != v:
        raise BadOptions(f"{name} must be a whole number, not {v!r}")
    return int(v)


def parse_options(raw: Mapping[str, Any]) -> Options:
    """Validate Phỏm options; missing names take the defaults of §A5.

    ``amounts`` is a mapping of any of ``uThuong uTron uKhan bao uLao mom chot eat1 eat2 rank
    wrongAccusation`` (``rank``: what ranks 2, 3, 4 pay the nhất). ``uTronPays`` (10 or 5) is
    the rules file's switch for the ù tròn amount. ``players`` (2–4) is checked if given.
    """
    unknown = sorted(set(raw) - set(_NAMES))
    if unknown:
        raise BadOptions(f"unknown option(s) {', '.join(unknown)}; known: {', '.join(_NAMES)}")
    values: dict[str, Any] = {}
    for name, attr in _FLAGS.items():
        if name in raw:
            values[attr] = _bool(name, raw[name])
    for name, attr in _INTS.items():
        if name in raw:
            values[attr] = _int(name, raw[name])
    o = replace(Options(), **values)
    if o.stake <= 0:
        raise BadOptions("stake must be positive")
    if o.u_window_seconds < 0 or o.u_window_seconds > 600:
        raise BadOptions("uWindowSeconds must be in 0..600")
    if not 0 < o.turn_seconds <= 3600:
        raise BadOptions("turnSeconds must be in 1..3600")
    if "players" in raw and raw["players"] is not None:
        p = _int("players", raw["players"])
        if not 2 <= p <= 4:
            raise BadOptions("players must be 2 to 4")
    amounts = raw.get("amounts") or {}
    if not isinstance(amounts, Mapping):
        raise BadOptions("amounts must be a mapping")
    bad = sorted(set(amounts) - set(_AMOUNTS))
    if bad:
        raise BadOptions(f"unknown amount(s) {', '.join(bad)}; known: {', '.join(_AMOUNTS)}")
    av: dict[str, Any] = {}
    for name, attr in _AMOUNTS.items():
        if name not in amounts:
            continue
        v = amounts[name]
        if attr == "rank":
            if not isinstance(v, list | tuple) or len(v) != 3:
                raise BadOptions("amounts.rank lists what ranks 2, 3 and 4 pay: three numbers")
            av[attr] = tuple(_int("amounts.rank", x) for x in v)
            if any(x < 0 for x in av[attr]):
                raise BadOptions("amounts.rank must not be negative")
        else:
            av[attr] = _int(f"amounts.{name}", v)
            if av[attr] < 0:
                raise BadOptions(f"amounts.{name} must not be negative")
    if "uTronPays" in raw:
        v = _int("uTronPays", raw["uTronPays"])
        if v not in (10, 5):
            raise BadOptions("uTronPays must be 10 or 5")
        if "u_tron" in av and av["u_tron"] != v:
            raise BadOptions("uTronPays and amounts.uTron disagree")
        av["u_tron"] = v
    return replace(o, amounts=replace(Amounts(), **av))


def option_values(options: Options) -> Mapping[str, Any]:
    """The options under the rules file's names (the inverse of :func:`parse_options`)."""
    out: dict[str, Any] = {name: getattr(options, attr) for name, attr in _FLAGS.items()}
    out.update({name: getattr(options, attr) for name, attr in _INTS.items()})
    a = options.amounts
    amounts = {name: getattr(a, attr) for name, attr in _AMOUNTS.items()}
    amounts["rank"] = list(a.rank)
    out["amounts"] = amounts
    if a.u_tron in (10, 5):
        out["uTronPays"] = a.u_tron
    assert {f.name for f in fields(Amounts)} == set(_AMOUNTS.values())
    return out
