"""The codec between rules-core dataclasses and the games' protobuf messages.

Convention (checked for every registered game by ``tests/tablelog/test_codec.py``): a game's
commands, events and view are messages of ``chieu.games.<key>.v1`` named as their
dataclasses, with the same field names; tuples are repeated fields, ``X | None`` are proto3
``optional`` fields, nested dataclasses are messages, and a str ``Enum`` class ``Foo`` is a
proto enum ``Foo`` whose values are ``FOO_<MEMBER>`` (``FOO_UNSPECIFIED = 0`` is refused).
The core's ``Transfer`` and ``Outcome`` are ``chieu.games.v1``'s. A game's ``Command`` (the
entries of its view's ``legal`` list) is a ``oneof``: its fields are set even when the command
is empty, and ``unpack`` takes it as a command for the one it holds. A dataclass field named
for a Python keyword with the customary underscore (``pass_``) is the proto field ``pass``.
"""

from __future__ import annotations

import dataclasses
import importlib
import keyword
import re
import types
import typing
from enum import Enum
from functools import cache
from typing import Any

from google.protobuf import any_pb2
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import DecodeError, Message

from chieu.games import registry
from chieu.games.core import Game, InvalidCommand, Outcome, Transfer
from chieu.games.v1 import games_pb2

_SHARED: dict[type, type[Message]] = {Transfer: games_pb2.Transfer, Outcome: games_pb2.Outcome}


class CodecError(InvalidCommand):
    """A message that does not decode into the game's types."""


def _upper_snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).upper()


@cache
def game_module(key: str) -> Any:
    """The generated module ``chieu.games.<key>.v1.<key>_pb2``."""
    return importlib.import_module(f"chieu.games.{key}.v1.{key}_pb2")


@cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _unwrap_optional(tp: Any) -> tuple[Any, bool]:
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        return args[0], True
    return tp, False


_SCALAR, _MESSAGE, _ENUM = 0, 1, 2


@dataclasses.dataclass(frozen=True, slots=True)
class _Field:
    """How one dataclass field maps onto its protobuf field (computed once per type pair)."""

    name: str
    """The proto field's name: the dataclass field's, but a Python keyword's ``pass_`` is ``pass``."""
    attr: str
    """The dataclass field's name."""
    kind: int
    repeated: bool
    optional: bool
    item: Any
    """The dataclass or enum type of the field's items (for messages and enums)."""
    to_number: dict[str, int]
    """Enum member name → proto enum number."""
    to_member: dict[int, Any]
    """Proto enum number → enum member (UNSPECIFIED is absent: refused on read)."""
    full_name: str
    oneof: bool
    """A member of a ``oneof``: set even when empty (``Draw()``), so its presence survives."""


def _enum_maps(fd: FieldDescriptor, cls: type[Enum]) -> tuple[dict[str, int], dict[int, Any]]:
    assert fd.enum_type is not None
    prefix = _upper_snake(fd.enum_type.name) + "_"
    to_number: dict[str, int] = {}
    to_member: dict[int, Any] = {}
    for member in cls:
        value = fd.enum_type.values_by_name.get(prefix + member.name.upper())
        if value is None:
            raise TypeError(f"enum {fd.enum_type.full_name} has no value {prefix + member.name.upper()}")
        to_number[member.name] = int(value.number)
        to_member[int(value.number)] = member
    return to_number, to_member


def proto_name(attr: str) -> str:
    """The proto field of the dataclass field ``attr``: ``pass_`` (a Python keyword with the
    customary underscore) is ``pass``; every other name is the same."""
    bare = attr[:-1] if attr.endswith("_") else attr
    return bare if keyword.iskeyword(bare) else attr


@cache
def _plan(cls: Any, desc: Any) -> tuple[_Field, ...]:
    hints = _hints(cls)
    plan: list[_Field] = []
    for f in dataclasses.fields(cls):
        name = proto_name(f.name)
        fd = desc.fields_by_name.get(name)
        if fd is None:
            raise TypeError(f"{desc.full_name} has no field {name}")
        tp, optional = _unwrap_optional(hints[f.name])
        repeated = bool(fd.is_repeated)
        item = typing.get_args(tp)[0] if repeated else tp
        kind = _SCALAR
        to_number: dict[str, int] = {}
        to_member: dict[int, Any] = {}
        if fd.type == fd.TYPE_MESSAGE:
            kind = _MESSAGE
        elif fd.type == fd.TYPE_ENUM:
            kind = _ENUM
            to_number, to_member = _enum_maps(fd, item)
        plan.append(_Field(name, f.name, kind, repeated, optional and bool(fd.has_presence), item, to_number,
                           to_member, fd.full_name, fd.containing_oneof is not None))
    return tuple(plan)


def fill(msg: Message, obj: Any) -> Message:
    """Copy the dataclass ``obj`` into ``msg`` field by field; returns ``msg``."""
    cls: Any = type(obj)
    for f in _plan(cls, msg.DESCRIPTOR):
        value = getattr(obj, f.attr)
        if value is None:
            continue
        if f.repeated:
            target = getattr(msg, f.name)
            if f.kind == _SCALAR:
                target.extend(value)
            elif f.kind == _MESSAGE:
                for v in value:
                    fill(target.add(), v)
            else:
                target.extend(f.to_number[v.name] for v in value)
        elif f.kind == _SCALAR:
            setattr(msg, f.name, value)
        elif f.kind == _MESSAGE:
            sub = getattr(msg, f.name)
            if f.oneof:
                sub.SetInParent()
            fill(sub, value)
        else:
            setattr(msg, f.name, f.to_number[value.name])
    return msg


def _member(f: _Field, number: int) -> Any:
    member = f.to_member.get(number)
    if member is None:
        raise CodecError("bad_enum", f"{f.full_name} needs a known value other than UNSPECIFIED, not {number}")
    return member


def read(msg: Message, cls: type) -> Any:
    """Build the dataclass ``cls`` from ``msg`` (the inverse of :func:`fill`)."""
    kwargs: dict[str, Any] = {}
    for f in _plan(cls, msg.DESCRIPTOR):
        raw = getattr(msg, f.name)
        if f.repeated:
            if f.kind == _SCALAR:
                kwargs[f.attr] = tuple(raw)
            elif f.kind == _MESSAGE:
                kwargs[f.attr] = tuple(read(v, f.item) for v in raw)
            else:
                kwargs[f.attr] = tuple(_member(f, v) for v in raw)
        elif f.optional and not msg.HasField(f.name):
            kwargs[f.attr] = None
        elif f.kind == _SCALAR:
            kwargs[f.attr] = raw
        elif f.kind == _MESSAGE:
            kwargs[f.attr] = read(raw, f.item)
        else:
            kwargs[f.attr] = _member(f, raw)
    return cls(**kwargs)


def to_message(obj: Any, game_key: str) -> Message:
    """A game dataclass (or a core ``Transfer``/``Outcome``) as its protobuf message."""
    cls = _SHARED.get(type(obj)) or getattr(game_module(game_key), type(obj).__name__)
    return fill(cls(), obj)


def pack(obj: Any, game_key: str) -> any_pb2.Any:
    """A game dataclass packed into ``google.protobuf.Any``."""
    out = any_pb2.Any()
    out.Pack(to_message(obj, game_key))
    return out


@cache
def command_wrapper(game_key: str) -> type | None:
    """The game's ``Command`` wrapper: the item type of its view's ``legal`` field, a message
    with one ``oneof`` over every command (``None`` for a game without one)."""
    game: Game[Any, Any, Any, Any] = registry.get(game_key)
    hint = typing.get_type_hints(game.view_type).get("legal")
    args = typing.get_args(hint)
    item = args[0] if args else None
    return item if isinstance(item, type) and dataclasses.is_dataclass(item) else None


def unwrap(wrapper: Any) -> Any:
    """The one command a ``Command`` wrapper holds; a wrapper holding none is a :class:`CodecError`."""
    held = [v for v in (getattr(wrapper, f.name) for f in dataclasses.fields(wrapper)) if v is not None]
    if len(held) != 1:
        raise CodecError("malformed_command", f"a {type(wrapper).__name__} holds exactly one command")
    return held[0]


@cache
def _types_by_full_name(game_key: str) -> dict[str, type]:
    game: Game[Any, Any, Any, Any] = registry.get(game_key)
    package = f"chieu.games.{game_key}.v1."
    wrapper = command_wrapper(game_key)
    extra = () if wrapper is None else (wrapper,)
    return {package + cls.__name__: cls for cls in (*game.commands, *game.events, game.view_type, *extra)}


def unpack(msg: any_pb2.Any, game_key: str, *, commands_only: bool = False) -> Any:
    """A game dataclass from ``Any``; a type the game does not have is a :class:`CodecError`.

    As a command, the game's ``Command`` wrapper (an entry of a view's ``legal`` list, sent
    unchanged) stands for the command it holds."""
    full_name = msg.TypeName()
    cls = _types_by_full_name(game_key).get(full_name)
    game: Game[Any, Any, Any, Any] = registry.get(game_key)
    wrapper = command_wrapper(game_key)
    if cls is None or (commands_only and cls not in game.commands and cls is not wrapper):
        raise CodecError(
            "unknown_command" if commands_only else "unknown_type",
            f"{full_name or 'an empty message'} is not a command of {game_key}",
        )
    message = getattr(game_module(game_key), cls.__name__)()
    try:
        if not msg.Unpack(message):
            raise CodecError("malformed_command", f"cannot decode {full_name}")
    except DecodeError:
        raise CodecError("malformed_command", f"{full_name} is not valid protobuf") from None
    value = read(message, cls)
    return unwrap(value) if commands_only and cls is wrapper else value


def transfer_message(transfer: Transfer) -> games_pb2.Transfer:
    """The core ``Transfer`` as ``chieu.games.v1.Transfer``."""
    msg = games_pb2.Transfer()
    fill(msg, transfer)
    return msg


def outcome_message(outcome: Outcome) -> games_pb2.Outcome:
    """The core ``Outcome`` as ``chieu.games.v1.Outcome``."""
    msg = games_pb2.Outcome()
    fill(msg, outcome)
    return msg


def outcome_from_message(msg: games_pb2.Outcome) -> Outcome:
    """The inverse of :func:`outcome_message`."""
    out: Outcome = read(msg, Outcome)
    return out
