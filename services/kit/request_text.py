"""Text with a NUL character has no place in any request: PostgreSQL cannot store it in ``text``
or ``jsonb``, logs and terminals cut at it, and no id, name, reason or option of this system
needs it. The guard (:mod:`chieu.kit.errors`) refuses such a request at the door, before any
handler reads it: INVALID_ARGUMENT / ``bad_text``."""

from __future__ import annotations

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

NUL = "\x00"


def _strings_nul(f: FieldDescriptor, value: object) -> bool:
    if f.is_repeated:
        return any(NUL in v for v in value)  # type: ignore[attr-defined]
    return NUL in value  # type: ignore[operator]


def nul_field(msg: Message, prefix: str = "") -> str | None:
    """The path of the first string field (at any depth, map keys included) that holds a NUL
    character, or None."""
    for f, value in msg.ListFields():
        path = f"{prefix}{f.name}"
        if f.type == FieldDescriptor.TYPE_STRING:
            if _strings_nul(f, value):
                return path
        elif f.type == FieldDescriptor.TYPE_MESSAGE and f.message_type is not None:
            if f.message_type.GetOptions().map_entry:
                value_f = f.message_type.fields_by_name["value"]
                for k, v in value.items():
                    if isinstance(k, str) and NUL in k:
                        return path
                    if value_f.type == FieldDescriptor.TYPE_STRING and NUL in v:
                        return f"{path}.value"
                    if value_f.type == FieldDescriptor.TYPE_MESSAGE and (found := nul_field(v, f"{path}.value.")):
                        return found
            else:
                for item in value if f.is_repeated else (value,):
                    if found := nul_field(item, f"{path}."):
                        return found
    return None
