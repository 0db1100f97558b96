"""The request fields every service reads the same way: ids a client chooses, the reasons an
operator gives, page sizes. Each refusal is INVALID_ARGUMENT with the field in its reason code."""

from __future__ import annotations

from chieu.kit.errors import invalid

MAX_ID = 200
"""The longest id a client may choose (a request, posting, correction or player id)."""
MAX_REASON = 500
"""The longest reason an operator may give for a change (it is kept in the books for ever)."""
MAX_TEXT = 200
"""The longest free text a player sends with a paid service (a song's dedication)."""


def ident(value: str, what: str) -> str:
    """``value`` as an id: 1..``MAX_ID`` printable characters (no control character, no line break)."""
    if not value or len(value) > MAX_ID or not value.isprintable():
        raise invalid(f"bad_{what}", f"{what} must be 1..{MAX_ID} printable characters")
    return value


def reason(text: str, what: str = "this change") -> str:
    """An operator's reason, trimmed: required, at most ``MAX_REASON`` printable characters."""
    trimmed = text.strip()
    if not trimmed:
        raise invalid("reason_required", f"{what} needs a reason")
    if len(trimmed) > MAX_REASON or not trimmed.isprintable():
        raise invalid("bad_reason", f"a reason is at most {MAX_REASON} printable characters")
    return trimmed


def text(value: str, what: str) -> str:
    """Optional free text: at most ``MAX_TEXT`` printable characters (empty is fine)."""
    if len(value) > MAX_TEXT or not value.isprintable():
        raise invalid(f"bad_{what}", f"{what} is at most {MAX_TEXT} printable characters")
    return value


def page_size(size: int, default: int = 50, most: int = 500) -> int:
    """A page size: 0 means ``default``; else 1..``most``."""
    size = size or default
    if not 1 <= size <= most:
        raise invalid("bad_page_size", f"page_size must be 1..{most}")
    return size
