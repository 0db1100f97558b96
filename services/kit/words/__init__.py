"""Words a player can read: every reason code (refusals, hand outcomes, payments) in the
portal's three languages, Vietnamese, Chinese and English, read from ``catalog.toml`` beside this
module. Native game terms stay native (Ù, phỏm, gà, chốt, 够级, 捎牌, 报听, 杠 ...).

The language of a call is its ``accept-language`` metadata (RFC 9110: tags with optional ``q``
weights, ``vi-VN``, ``zh-Hans-CN``); the first of ``vi``, ``zh``, ``en`` it accepts, else English —
an unknown or malformed header too. :mod:`chieu.kit.errors` puts the words of a refusal in its
status message and its ``ErrorInfo``; the web client reads the same catalog, generated as
``web/gen/chieu/words.ts`` by ``scripts/wordsts``.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable, Mapping
from functools import cache
from pathlib import Path
from typing import Literal

LANGUAGES = ("vi", "zh", "en")
"""The portal's languages: Vietnamese, Chinese (简体), English (the fallback)."""
KINDS = ("refusal", "outcome", "payment")
"""What a code is: a refusal's reason, a hand's ``Outcome.reason``, a ``Transfer.reason``."""
FALLBACK = "en"
MAX_HEADER = 256
"""The longest ``accept-language`` read (a longer one is cut there: a client's header never costs
more than this to parse)."""
Kind = Literal["refusal", "outcome", "payment"]


@cache
def catalog() -> Mapping[str, Mapping[str, Mapping[str, str]]]:
    """``{kind: {code: {language: text}}}`` as the catalog file has it (read once)."""
    with (Path(__file__).parent / "catalog.toml").open("rb") as f:
        data = tomllib.load(f)
    return {kind: dict(data.get(kind, {})) for kind in KINDS}


def language(header: str | Iterable[str] | None) -> str:
    """The portal language an ``accept-language`` header asks for (``en`` when it names none of
    ours). ``q=0`` refuses a language; equal weights keep the header's order."""
    if header is None:
        return FALLBACK
    text = header if isinstance(header, str) else ",".join(header)
    best, best_q = FALLBACK, -1.0
    for part in text[:MAX_HEADER].split(","):
        tag, _, params = part.strip().partition(";")
        primary = tag.strip().lower().split("-")[0]
        q = 1.0
        params = params.strip().lower()
        if params.startswith("q="):
            try:
                q = float(params[2:])
            except ValueError:
                q = 0.0
        if primary == "*":
            primary = FALLBACK
        if primary in LANGUAGES and 0 < q <= 1 and q > best_q:
            best, best_q = primary, q
    return best


def of_metadata(metadata: Iterable[tuple[str, str | bytes]] | None) -> str:
    """The language of a call from its invocation metadata."""
    for key, value in metadata or ():
        if key.lower() == "accept-language":
            return language(value.decode("latin-1") if isinstance(value, bytes) else value)
    return FALLBACK


def text(code: str, lang: str = FALLBACK, kind: Kind = "refusal") -> str | None:
    """What ``code`` says in ``lang`` (English for a language not ours); ``None`` if the catalog
    has no such code."""
    entry = catalog()[kind].get(code)
    if entry is None:
        return None
    return entry.get(lang if lang in LANGUAGES else FALLBACK) or entry.get(FALLBACK)
