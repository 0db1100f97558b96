"""What every game's rules repeat, written once: table options read with one error shape,
tuple updates of frozen states, and the turn events that are the same in every turn game.

Options are refused with :class:`~chieu.games.core.BadOptions` (reason ``bad_options``)
and a message that names the option, what it takes and what it got.
"""

from __future__ import annotations

import keyword
import re
import types
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, fields, is_dataclass
from typing import Any, TypeVar, Union, get_args, get_origin

from chieu.games.core import BadOptions

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


_LOGGED: ContextVar[bool] = ContextVar("logged_options", default=False)


@contextmanager
def logged_options() -> Iterator[None]:
    """Read options as a log holds them: upper bounds are not applied (:func:`whole`), so a table
    created before a bound existed still folds and replays as it was played. Only a reader of
    the log uses this; a table refuses to start a hand at options its game's schema refuses."""
    token = _LOGGED.set(True)
    try:
        yield
    finally:
        _LOGGED.reset(token)


def whole(name: str, value: Any, lo: int | None = None, hi: int | None = None) -> int:
    """A whole number, within ``lo..hi`` where given (a JSON ``15.0`` reads as ``15``; ``hi``
    is not applied inside :func:`logged_options`)."""
    ok = not isinstance(value, bool) and isinstance(value, int | float) and int(value) == value
    n = int(value) if ok else 0
    if _LOGGED.get():
        hi = None
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


def replacer(cls: type[T]) -> Callable[..., T]:
    """``dataclasses.replace`` for the frozen, slotted state class ``cls``, made for the hot path
    (every logged event folds one state into the next): ``replacer(State)(s, turn=1)`` is
    ``replace(s, turn=1)`` — a new object, every other field the same — several times faster, as it
    copies the fields in straight-line code instead of walking them and calling ``__init__`` with
    keywords. A name that is not a field raises ``TypeError``; ``cls`` may have no
    ``__post_init__`` and no field outside ``__init__`` (checked here)."""
    if not (is_dataclass(cls) and "__slots__" in cls.__dict__):
        raise TypeError(f"{cls.__name__} is not a slotted dataclass")
    names = [f.name for f in fields(cls)]
    if hasattr(cls, "__post_init__") or not all(f.init for f in fields(cls)):
        raise TypeError(f"{cls.__name__} has a __post_init__ or a field outside __init__")
    body = "".join(f"    _set(n, {name!r}, s.{name})\n" for name in names)
    source = (f"def replace(s, /, **changes):\n    n = _new(cls)\n{body}"
              "    for k, v in changes.items():\n"
              "        if k not in _names:\n"
              "            raise TypeError(f'{cls.__name__} has no field {k!r}')\n"
              "        _set(n, k, v)\n"
              "    return n\n")
    scope: dict[str, Any] = {"cls": cls, "_new": object.__new__, "_set": object.__setattr__,
                             "_names": frozenset(names)}
    exec(source, scope)
    made: Callable[..., T] = scope["replace"]
    made.__qualname__ = f"replacer({cls.__name__})"
    return made


def put(t: tuple[T, ...], i: int, v: T) -> tuple[T, ...]:
    """``t`` with item ``i`` replaced by ``v`` (states are frozen: a new tuple)."""
    return (*t[:i], v, *t[i + 1:])


def members(union: object) -> tuple[type, ...]:
    """The types of a game's command or event union (``GameEvent``), in the order it writes them:
    the game's ``commands`` and ``events``, declared once."""
    if get_origin(union) in (Union, types.UnionType):
        return tuple(get_args(union))
    if not isinstance(union, type):
        raise TypeError(f"not a type or a union of types: {union!r}")
    return (union,)


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


# ---------------------------------------------------------------- legal commands in views


def command_field(command_type: type) -> str:
    """The field of a ``Command`` wrapper that holds ``command_type``: its name in snake_case
    (``ClaimU`` → ``claim_u``, ``ReturnCards`` → ``return_cards``), ``Pass`` as ``pass_``."""
    name = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", command_type.__name__).lower()
    return name + "_" if keyword.iskeyword(name) else name


W = TypeVar("W")


def wrapper(cls: type[W]) -> Callable[[Iterable[Any]], tuple[W, ...]]:
    """For a game's ``Command`` dataclass (one optional field per command, named by
    :func:`command_field`): a function that wraps each of a list of commands, in order.

    A view's ``legal`` list is ``wrap(game.legal(state, seat))``: each entry holds exactly one
    command, which a client sends unchanged."""
    names = {f.name for f in fields(cls)}  # type: ignore[arg-type]
    cache: dict[type, str] = {}

    def field_of(t: type) -> str:
        name = cache.get(t)
        if name is None:
            name = command_field(t)
            if name not in names:
                raise TypeError(f"{cls.__name__} has no field {name} for {t.__name__}")
            cache[t] = name
        return name

    def wrap(commands: Iterable[Any]) -> tuple[W, ...]:
        return tuple(cls(**{field_of(type(c)): c}) for c in commands)

    return wrap
