"""Words a player can read: every reason code (refusals, hand outcomes, payments) in the
portal's three languages, Vietnamese, Chinese and English. Native game terms stay native (Ù,
phỏm, gà, chốt, 够级, 捎牌, 报听, 杠 ...).

Each package owns its words (its *home*): the service-level ones are ``catalog.toml`` beside this
module; any package of the product may keep its own in a ``words.toml`` beside its code — each
game in ``chieu/games/<key>/words.toml``, the words every game shares in
``chieu/games/words.toml``. The kit imports none of them: it reads every ``words.toml`` under the
product's folder by path (:func:`homes`), so a new game's words come with its package. A reason
code on the wire is one string with one meaning: :func:`catalog` merges the homes into one table
per kind, and two homes giving one code different words is a :class:`Collision` (the same words in
two homes are one entry).

The language of a call is its ``accept-language`` metadata (RFC 9110: tags with optional ``q``
weights, ``vi-VN``, ``zh-Hans-CN``); the first of ``vi``, ``zh``, ``en`` it accepts, else English —
an unknown or malformed header too. :mod:`chieu.kit.errors` puts the words of a refusal in its
status message and its ``ErrorInfo``; the web client reads the same catalog, generated as
``web/gen/chieu/words.ts`` by ``scripts/wordsts``.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Literal

LANGUAGES = ("vi", "zh", "en")
"""The portal's languages: Vietnamese, Chinese (简体), English (the fallback)."""
KINDS = ("refusal", "outcome", "payment", "left", "presence")
"""What a code is: a refusal's reason, a hand's ``Outcome.reason``, a ``Transfer.reason``, why the
table stood a player up (``PlayerLeft.reason``), a seat's presence (``SeatPresence``, lower case,
without its prefix)."""
FALLBACK = "en"
MAX_HEADER = 256
"""The longest ``accept-language`` read (a longer one is cut there: a client's header never costs
more than this to parse)."""
Kind = Literal["refusal", "outcome", "payment", "left", "presence"]
Table = Mapping[str, Mapping[str, Mapping[str, str]]]
"""``{kind: {code: {language: text}}}``."""
ROOT = Path(__file__).resolve().parents[2]
"""The product's folder (the ``chieu`` package): every ``words.toml`` under it is a home."""
HOME_FILE = "words.toml"
CATALOG = Path(__file__).resolve().parent / "catalog.toml"
"""The service-level words: the kit's home."""


class Collision(ValueError):
    """Two homes give one code of one kind different words (a code on the wire means one thing)."""


@dataclass(frozen=True, slots=True)
class Home:
    """One package's words: its dotted name (``chieu.kit.words``, ``chieu.games.phom``), its file
    and what the file says."""

    name: str
    path: Path
    words: Table


def read_home(path: Path, root: Path = ROOT) -> Home:
    """The home in ``path`` (a ``words.toml``, or the kit's ``catalog.toml``); its name is its
    package's. Only the kinds of :data:`KINDS` may be in it."""
    with path.open("rb") as f:
        data = tomllib.load(f)
    unknown = sorted(set(data) - set(KINDS))
    if unknown:
        raise ValueError(f"{path}: {unknown} are not kinds of words (those are {', '.join(KINDS)})")
    folder = path.parent.relative_to(root).as_posix()
    name = "chieu" if folder == "." else "chieu." + folder.replace("/", ".")
    return Home(name, path, {kind: dict(data.get(kind, {})) for kind in KINDS})


def find_homes(root: Path = ROOT) -> tuple[Home, ...]:
    """The kit's catalog, then every ``words.toml`` under ``root`` by path (read by path, never by
    import: the kit depends on no package whose words it reads)."""
    kit = CATALOG if root == ROOT else root / CATALOG.relative_to(ROOT)
    return (read_home(kit, root), *(read_home(p, root) for p in sorted(root.rglob(HOME_FILE))))


def merge(homes: Iterable[Home]) -> Table:
    """One table of every home's words; a :class:`Collision` names the homes of a code whose
    words differ."""
    out: dict[str, dict[str, Mapping[str, str]]] = {kind: {} for kind in KINDS}
    where: dict[tuple[str, str], str] = {}
    for home in homes:
        for kind in KINDS:
            for code, entry in home.words[kind].items():
                if code in out[kind] and out[kind][code] != entry:
                    raise Collision(f"the {kind} code {code!r} has other words in {home.name} ({home.path}) than in "
                                    f"{where[kind, code]}: give the same words, or another code")
                out[kind].setdefault(code, entry)
                where.setdefault((kind, code), f"{home.name} ({home.path})")
    return out


@cache
def homes() -> tuple[Home, ...]:
    """Every home of the product (read once)."""
    return find_homes()


@cache
def catalog() -> Table:
    """``{kind: {code: {language: text}}}`` of every home, merged (read once)."""
    return merge(homes())


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
