"""Plain-data conversion of rules-core values (dataclasses, enums, tuples) for scenarios and JSON,
and the plain encoding of a game's state that table snapshots carry (:func:`encode_state`)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import types
import typing
from enum import Enum
from typing import Any


def to_plain(value: Any) -> Any:
    """Dataclasses become dicts (with ``type``), enums their values, tuples lists."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out: dict[str, Any] = {"type": type(value).__name__}
        for f in dataclasses.fields(value):
            out[f.name] = to_plain(getattr(value, f.name))
        return out
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, tuple | list):
        return [to_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): to_plain(v) for k, v in value.items()}
    if isinstance(value, bytes):
        return value.hex()
    return value


def mismatches(expected: Any, actual: Any, path: str = "") -> list[str]:
    """Where ``actual`` differs from ``expected``; a dict in ``expected`` checks only its keys."""
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return [f"{path or '.'}: expected a mapping, got {actual!r}"]
        out: list[str] = []
        for k, v in expected.items():
            if k not in actual:
                out.append(f"{path}.{k}: missing (expected {v!r})")
            else:
                out.extend(mismatches(v, actual[k], f"{path}.{k}"))
        return out
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            return [f"{path or '.'}: expected {expected!r}, got {actual!r}"]
        found: list[str] = []
        for i, (e, a) in enumerate(zip(expected, actual, strict=True)):
            found.extend(mismatches(e, a, f"{path}[{i}]"))
        return found
    if expected != actual:
        return [f"{path or '.'}: expected {expected!r}, got {actual!r}"]
    return []


def from_plain(cls: type[Any], data: Any) -> Any:
    """Build a value of type ``cls`` from plain data (the inverse of :func:`to_plain`).

    Raises ``ValueError`` (or ``TypeError``) on data that does not fit the type.
    """
    return _build(cls, data)


def _build(tp: Any, data: Any) -> Any:

    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        present = [a for a in typing.get_args(tp) if a is not type(None)]
        if data is None:
            return None
        if len(present) > 1 and isinstance(data, dict) and "type" in data:
            named = [a for a in present if getattr(a, "__name__", None) == data["type"]]
            present = named or present
        for alternative in present[:-1]:
            try:
                return _build(alternative, data)
            except (ValueError, TypeError):
                continue
        return _build(present[-1], data)
    if origin is tuple:
        args = typing.get_args(tp)
        if not isinstance(data, list | tuple):
            raise ValueError(f"expected a list, got {data!r}")
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_build(args[0], d) for d in data)
        return tuple(_build(a, d) for a, d in zip(args, data, strict=True))
    if tp is Any:
        return data
    if isinstance(tp, type) and issubclass(tp, Enum):
        return data if isinstance(data, tp) else tp(data)
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        if isinstance(data, tp):
            return data
        if not isinstance(data, dict):
            raise ValueError(f"expected a mapping for {tp.__name__}, got {data!r}")
        hints = typing.get_type_hints(tp)
        names = {f.name for f in dataclasses.fields(tp)}
        extra = set(data) - names - {"type"}
        if extra:
            raise ValueError(f"{tp.__name__} has no field(s) {', '.join(sorted(extra))}")
        kwargs = {k: _build(hints[k], v) for k, v in data.items() if k != "type"}
        return tp(**kwargs)
    if tp is bool:
        if not isinstance(data, bool):
            raise ValueError(f"expected true/false, got {data!r}")
        return data
    if tp is int:
        if isinstance(data, bool) or not isinstance(data, int):
            raise ValueError(f"expected a whole number, got {data!r}")
        return data
    if tp is str:
        if not isinstance(data, str):
            raise ValueError(f"expected a string, got {data!r}")
        return data
    if tp is bytes:
        return bytes.fromhex(data) if isinstance(data, str) else bytes(data)
    if tp is float and isinstance(data, int | float) and not isinstance(data, bool):
        return float(data)
    return data


def shape(tp: Any) -> str:
    """A digest of a type's shape: dataclass and field names, field types, enum members,
    recursively. Two types of the same shape encode alike (:func:`encode_state`)."""
    return hashlib.sha256(_describe(tp, set()).encode()).hexdigest()[:16]


def _describe(tp: Any, seen: set[Any]) -> str:
    origin = typing.get_origin(tp)
    if origin is not None:
        args = ",".join(_describe(a, seen) if a is not Ellipsis else "..." for a in typing.get_args(tp))
        return f"{getattr(origin, '__name__', str(origin))}[{args}]"
    if isinstance(tp, types.UnionType):
        return "|".join(_describe(a, seen) for a in typing.get_args(tp))
    if isinstance(tp, type) and issubclass(tp, Enum):
        return f"{tp.__name__}{{{','.join(f'{m.name}={m.value}' for m in tp)}}}"
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        if tp in seen:
            return tp.__name__
        seen.add(tp)
        hints = typing.get_type_hints(tp)
        inner = ",".join(f"{f.name}:{_describe(hints[f.name], seen)}" for f in dataclasses.fields(tp))
        return f"{tp.__name__}({inner})"
    return getattr(tp, "__name__", str(tp))


def encode_state(state: Any) -> bytes:
    """A game state as UTF-8 JSON of its plain form (read back by :func:`decode_state`)."""
    return json.dumps(to_plain(state), ensure_ascii=False, separators=(",", ":")).encode()


def decode_state(cls: type[Any], data: bytes) -> Any:
    """The state of type ``cls`` that :func:`encode_state` wrote (``ValueError`` if it does not fit)."""
    return from_plain(cls, json.loads(data))
