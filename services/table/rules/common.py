"""What every game's rules repeat, written once: table options read with one error shape,
tuple updates of frozen states, and the turn events that are the same in every turn game.

Options are refused with :class:`~chieu.table.rules.core.BadOptions` (reason ``bad_options``)
and a message that names the option, what it takes and what it got.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from chieu.table.rules.core import BadOptions

T = TypeVar("T")


# ---------------------------------------------------------------- options


def check_names(raw: Mapping[str, Any], known: Iterable[str]) -> None:
    """Refuse option names the game does not know."""
    names = tuple(known)
    unknown = sorted(set(raw) - set(names))
    if unknown:
        raise BadOptions(f"unknown option(s) {', '.join(unknown)}; known: {', '.join(names)}")


def flag(name: str, value: Any, *, words: bool = False) -> bool:
    """A switch: ``true`` / ``false`` (and ``"on"`` / ``"off"`` where the rules file says so)."""
    if isinstance(value, bool):
        return value
    if words and value in ("on", "off"):
        return bool(value == "on")
    allowed = "on or off" if words else "true or false"
    raise BadOptions(f"{name} must be {allowed}, not {value!r}")


def whole(name: str, value: Any, lo: int | None = None, hi: int | None = None) -> int:
    """A whole number, within ``lo..hi`` where given (a JSON ``15.0`` reads as ``15``)."""
    ok = not isinstance(value, bool) and isinstance(value, int | float) and int(value) == value
    n = int(value) if ok else 0
    if ok and (lo is None or n >= lo) and (hi is None or n <= hi):
        return n
    if lo is not None and hi is not None:
        wanted = f"a whole number in {lo}..{hi}"
    elif lo is not None:
        wanted = f"a whole number of at least {lo}"
    else:
        wanted = "a whole number"
    raise BadOptions(f"{name} must be {wanted}, not {value!r}")


def choice(name: str, value: Any, allowed: Collection[T]) -> T:
    """One of ``allowed``."""
    if value in allowed:
        found: T = value
        return found
    raise BadOptions(f"{name} must be one of {', '.join(map(str, allowed))}, not {value!r}")


# ---------------------------------------------------------------- frozen states


def put(t: tuple[T, ...], i: int, v: T) -> tuple[T, ...]:
    """``t`` with item ``i`` replaced by ``v`` (states are frozen: a new tuple)."""
    return (*t[:i], v, *t[i + 1:])


# ---------------------------------------------------------------- turn events


@dataclass(frozen=True, slots=True)
class TimedOut:
    """``seat``'s clock ran out; the events after it are the server's auto-play for it (each
    game's timeout rule says what that plays)."""

    seat: int


@dataclass(frozen=True, slots=True)
class TurnPassed:
    """It is ``seat``'s turn until ``deadline_ms``."""

    seat: int
    deadline_ms: int
