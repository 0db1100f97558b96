"""Players' public profiles: the display name and the avatar key, their rules, and the lookup of
many at once (``GetProfiles``, the table lists' seats).

A name is what a player chose (or ``Khách <id>`` for a guest): trimmed of spaces, 1..40
characters, none of them a control character or an invisible formatting character (zero-width
spaces, direction overrides): a refusal says which rule the name breaks (``name_too_long``,
``name_unprintable`` naming the character, ``name_empty``). The avatar key is the player's
picture among the portal's ``AVATARS``, chosen from the player id, so it is the same everywhere
and needs no storage.
"""

from __future__ import annotations

import hashlib
import time
import unicodedata
from collections.abc import Iterable, Sequence

import asyncpg

from chieu.kit.errors import invalid

MAX_NAME = 40
AVATARS = 64
"""How many pictures the portal has: keys ``a00`` .. ``a63``."""
MAX_PROFILES = 200
"""The most ids one ``GetProfiles`` call may ask for."""
CACHE_S = 30.0
"""How long a looked-up name is reused by the table lists (a name changes rarely)."""
CACHE_SIZE = 50_000


def _describe(ch: str) -> str:
    name = unicodedata.name(ch, "")
    category = unicodedata.category(ch)
    kind = ("a control character" if category == "Cc" else "a space or line break other than ' '"
            if category[0] == "Z" else "an invisible formatting character")
    return f"U+{ord(ch):04X}" + (f" {name}" if name else "") + f" ({kind})"


def check_name(name: str, default: str) -> str:
    """``name`` trimmed (``default`` when empty), or INVALID_ARGUMENT saying what is wrong with it."""
    name = name.strip() or default
    bad = next((ch for ch in name if not ch.isprintable() and ch != " "), None)
    if bad is not None:
        raise invalid("name_unprintable", f"a name cannot hold {_describe(bad)}")
    if len(name) > MAX_NAME:
        raise invalid("name_too_long", f"a name has at most {MAX_NAME} characters, not {len(name)}")
    if not name.strip():
        raise invalid("name_empty", "a name needs at least one visible character")
    return name


def avatar_of(player_id: str) -> str:
    """The player's avatar key (``a00``..``a63``), the same for a player id everywhere."""
    n = int.from_bytes(hashlib.sha256(player_id.encode()).digest()[:4], "big") % AVATARS
    return f"a{n:02d}"


def check_ids(ids: Sequence[str]) -> list[str]:
    """The distinct ids of a ``GetProfiles`` request in their order; 1..``MAX_PROFILES``, each
    1..200 printable characters (INVALID_ARGUMENT ``bad_profile_ids`` otherwise)."""
    if not 1 <= len(ids) <= MAX_PROFILES:
        raise invalid("bad_profile_ids", f"ask for 1..{MAX_PROFILES} player ids, not {len(ids)}")
    out: dict[str, None] = {}
    for i, p in enumerate(ids):
        if not p or len(p) > 200 or not p.isprintable():
            raise invalid("bad_profile_ids", f"player_ids[{i}] is not a player id (1..200 printable characters)")
        out[p] = None
    return list(out)


class Profiles:
    """Names by player id from the lobby's players, each kept ``CACHE_S`` seconds (an id the lobby
    does not know too: a list of tables seated by unknown ids asks the database once, not each time)."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool
        self._cache: dict[str, tuple[float, str | None]] = {}

    async def names(self, ids: Iterable[str], *, fresh: bool = False) -> dict[str, str]:
        """The name of each id the lobby knows (unknown ids are left out); ``fresh`` skips the cache."""
        now = time.monotonic()
        wanted = {p for p in ids if p}
        out: dict[str, str] = {}
        known: set[str] = set()
        if not fresh:
            for p in wanted:
                hit = self._cache.get(p)
                if hit is not None and hit[0] > now:
                    known.add(p)
                    if hit[1] is not None:
                        out[p] = hit[1]
        missing = sorted(wanted - known)
        if missing:
            rows = await self.pool.fetch("SELECT player_id, name FROM lobby_players WHERE player_id = ANY($1)",
                                         missing)
            if len(self._cache) + len(missing) > CACHE_SIZE:
                self._cache.clear()
            found = {r["player_id"]: r["name"] for r in rows}
            out.update(found)
            for p in missing:
                self._cache[p] = (now + CACHE_S, found.get(p))
        return out
