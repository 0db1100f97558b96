"""The codec between rules-core dataclasses and the games' protobuf messages.

Convention (checked for every registered game by ``tests/table/test_codec.py``): a game's
commands, events and view are messages of ``chieu.games.<key>.v1`` named as their
dataclasses, with the same field names; tuples are repeated fields, ``X | None`` are proto3
``optional`` fields, nested dataclasses are messages, and a str ``Enum`` class ``Foo`` is a
proto enum ``Foo`` whose values are ``FOO_<MEMBER>`` (``FOO_UNSPECIFIED = 0`` is refused).
The core's ``Transfer`` and ``Outcome`` are ``chieu.games.v1``'s.
"""

from __future__ import annotations

import dataclasses
import importlib
import re
import types
import typing
from enum import Enum
from functools import cache
from typing import Any

from google.protobuf import any_pb2
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import DecodeError, Message

from chieu.games.v1 import games_pb2
from chieu.table.rules import registry
from chieu.table.rules.core import Game, InvalidCommand, Outcome, Transfer

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


def _is_repeated(fd: FieldDescriptor) -> bool:
    return bool(fd.is_repeated)


def _unwrap_optional(tp: Any) -> tuple[Any, bool]:
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        return args[0], True
    return tp, False


def _enum_number(fd: FieldDescriptor, member: Enum) -> int:
    assert fd.enum_type is not None
    name = f"{_upper_snake(fd.enum_type.name)}_{member.name.upper()}"
    value = fd.enum_type.values_by_name.get(name)
    if value is None:
        raise TypeError(f"enum {fd.enum_type.full_name} has no value {name}")
    return int(value.number)


def _enum_member(fd: FieldDescriptor, number: int, cls: type[Enum]) -> Enum:
    assert fd.enum_type is not None
    value = fd.enum_type.values_by_number.get(number)
    prefix = _upper_snake(fd.enum_type.name) + "_"
    if value is None or value.name == prefix + "UNSPECIFIED":
        raise CodecError("bad_enum", f"{fd.full_name} needs a value other than {number}")
    member = value.name[len(prefix):]
    for m in cls:
        if m.name.upper() == member:
            return m
    raise CodecError("bad_enum", f"{fd.full_name}: {value.name} is not known here")


def fill(msg: Message, obj: Any) -> Message:
    """Copy the dataclass ``obj`` into ``msg`` field by field; returns ``msg``."""
    desc: Any = msg.DESCRIPTOR
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        fd = desc.fields_by_name.get(f.name)
        if fd is None:
            raise TypeError(f"{desc.full_name} has no field {f.name}")
        if value is None:
            continue
        if _is_repeated(fd):
            target = getattr(msg, f.name)
            for v in value:
                if fd.type == fd.TYPE_MESSAGE:
                    fill(target.add(), v)
                elif fd.type == fd.TYPE_ENUM:
                    target.append(_enum_number(fd, v))
                else:
                    target.append(v)
        elif fd.type == fd.TYPE_MESSAGE:
            fill(getattr(msg, f.name), value)
        elif fd.type == fd.TYPE_ENUM:
            setattr(msg, f.name, _enum_number(fd, value))
        else:
            setattr(msg, f.name, value)
    return msg


def _read(fd: FieldDescriptor, tp: Any, raw: Any) -> Any:
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return read(raw, tp)
    if isinstance(tp, type) and issubclass(tp, Enum):
        return _enum_member(fd, raw, tp)
    return raw


def read(msg: Message, cls: type) -> Any:
    """Build the dataclass ``cls`` from ``msg`` (the inverse of :func:`fill`)."""
    desc: Any = msg.DESCRIPTOR
    hints = _hints(cls)
    kwargs: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        fd = desc.fields_by_name[f.name]
        tp, optional = _unwrap_optional(hints[f.name])
        if _is_repeated(fd):
            (item,) = typing.get_args(tp)[:1]
            kwargs[f.name] = tuple(_read(fd, item, v) for v in getattr(msg, f.name))
        elif optional and fd.has_presence and not msg.HasField(f.name):
            kwargs[f.name] = None
        else:
            kwargs[f.name] = _read(fd, tp, getattr(msg, f.name))
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
def _types_by_full_name(game_key: str) -> dict[str, type]:
    game: Game[Any, Any] = registry.get(game_key)
    package = f"chieu.games.{game_key}.v1."
    return {package + cls.__name__: cls for cls in (*game.commands, *game.events, game.view_type)}


def unpack(msg: any_pb2.Any, game_key: str, *, commands_only: bool = False) -> Any:
    """A game dataclass from ``Any``; a type the game does not have is a :class:`CodecError`."""
    full_name = msg.TypeName()
    cls = _types_by_full_name(game_key).get(full_name)
    game: Game[Any, Any] = registry.get(game_key)
    if cls is None or (commands_only and cls not in game.commands):
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
    return read(message, cls)


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
