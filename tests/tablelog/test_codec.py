"""Every registered game's dataclasses map onto its protobuf messages, and round-trip."""

from __future__ import annotations

import dataclasses
import typing
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chieu.games import registry
from chieu.tablelog import codec


def _types(key: str) -> list[type]:
    game = registry.get(key)
    seen: list[type] = []

    def walk(cls: type) -> None:
        if cls in seen:
            return
        seen.append(cls)
        import typing

        for tp in typing.get_type_hints(cls).values():
            for arg in (tp, *typing.get_args(tp), *(a for t in typing.get_args(tp) for a in typing.get_args(t))):
                if isinstance(arg, type) and dataclasses.is_dataclass(arg):
                    walk(arg)

    for cls in (*game.commands, *game.events, game.view_type):
        walk(cls)
    return seen


CASES = [(key, cls) for key in registry.KEYS for cls in _types(key)]


@pytest.mark.parametrize(("key", "cls"), CASES, ids=[f"{k}.{c.__name__}" for k, c in CASES])
def test_every_dataclass_has_its_message(key: str, cls: type) -> None:
    module = codec.game_module(key)
    shared = codec._SHARED.get(cls)
    message = shared or getattr(module, cls.__name__, None)
    assert message is not None, f"chieu.games.{key}.v1 has no message {cls.__name__}"
    fields = {codec.proto_name(f.name) for f in dataclasses.fields(cls)}
    assert fields == set(message.DESCRIPTOR.fields_by_name), (
        f"{cls.__name__}: dataclass fields {sorted(fields)} != message fields "
        f"{sorted(message.DESCRIPTOR.fields_by_name)}"
    )


def _strategy(cls: type) -> st.SearchStrategy[Any]:
    """Instances of ``cls`` with non-negative ints and valid UTF-8 text (what the wire carries)."""
    import typing

    def of(tp: Any) -> st.SearchStrategy[Any]:
        origin = typing.get_origin(tp)
        args = typing.get_args(tp)
        if origin is tuple:
            return st.lists(of(args[0]), max_size=4).map(tuple)
        if args and type(None) in args:
            return st.none() | of(next(a for a in args if a is not type(None)))
        if tp is bool:
            return st.booleans()
        if tp is int:
            return st.integers(0, 2**31)
        if tp is str:
            return st.text(st.characters(blacklist_categories=("Cs",)), max_size=8)
        if isinstance(tp, type) and dataclasses.is_dataclass(tp):
            return _strategy(tp)
        return st.from_type(tp)

    hints = typing.get_type_hints(cls)
    if cls.__name__ == "Command":  # a oneof: exactly one command set
        return st.one_of([
            of(typing.get_args(hints[f.name])[0]).map(lambda v, name=f.name: cls(**{name: v}))
            for f in dataclasses.fields(cls)
        ])
    return st.builds(cls, **{f.name: of(hints[f.name]) for f in dataclasses.fields(cls)})


@pytest.mark.parametrize(("key", "cls"), CASES, ids=[f"{k}.{c.__name__}" for k, c in CASES])
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_round_trip(key: str, cls: type, data: Any) -> None:
    value = data.draw(_strategy(cls))
    message = codec.to_message(value, key)
    assert codec.read(type(message).FromString(message.SerializeToString()), cls) == value


def _plain(cls: Any) -> Any:
    """An instance of ``cls`` with the plainest values (0, "", (), an enum's first member)."""
    import enum

    hints = typing.get_type_hints(cls)
    values: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        tp = hints[f.name]
        if typing.get_origin(tp) is tuple:
            values[f.name] = ()
        elif isinstance(tp, type) and issubclass(tp, enum.Enum):
            values[f.name] = next(iter(tp))
        elif isinstance(tp, type) and dataclasses.is_dataclass(tp):
            values[f.name] = _plain(tp)
        else:
            values[f.name] = tp()
    return cls(**values)


@pytest.mark.parametrize("key", sorted(registry.KEYS))
def test_a_command_wrapper_is_taken_for_its_command_and_an_empty_one_is_refused(key: str) -> None:
    """A view's ``legal`` entry, sent in Act as it is, is the command it holds; a ``Command``
    holding nothing is refused as malformed (INVALID_ARGUMENT, ``malformed_command``)."""
    from google.protobuf import any_pb2

    wrapper = codec.command_wrapper(key)
    assert wrapper is not None and wrapper.__name__ == "Command"
    game = registry.get(key)
    names = {codec.proto_name(f.name) for f in dataclasses.fields(wrapper)}
    message = codec.game_module(key).Command
    assert [o.name for o in message.DESCRIPTOR.oneofs] == ["command"]
    assert names == {f.name for f in message.DESCRIPTOR.oneofs[0].fields}, "every field in the oneof"
    assert len(names) == len(game.commands), "one field per command of the game"
    for field in dataclasses.fields(wrapper):
        command_type = typing.get_args(typing.get_type_hints(wrapper)[field.name])[0]
        command = _plain(command_type)
        packed = any_pb2.Any()
        packed.Pack(codec.to_message(wrapper(**{field.name: command}), key))
        assert codec.unpack(packed, key, commands_only=True) == command
    nothing = any_pb2.Any()
    nothing.Pack(message())
    with pytest.raises(codec.CodecError) as err:
        codec.unpack(nothing, key, commands_only=True)
    assert err.value.code == "malformed_command" and err.value.status == "INVALID_ARGUMENT"
