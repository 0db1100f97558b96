"""Where each code's words live (issue 31): a code's home is the narrowest package holding every
place that uses it — one game's own ``words.toml`` for a code only that game raises or ends a
hand with, ``chieu/games/words.toml`` for one several games share, the kit's ``catalog.toml``
for one a service uses. A code several games share may instead be in each of those games' own
homes (with the same words: the loader refuses different ones), so a new game that reuses
another's code keeps its words in its own package.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Iterable, Mapping
from functools import cache
from pathlib import Path

from chieu.kit import words
from tests.words.scan import ROOT, ledger_reasons, reasons_by_game, refusal_codes

SERVICE = "(service)"
"""The place of a code a service builds from a template, relays or assigns (outages, gates): only
the kit's catalog holds it."""
TEMPLATES = {
    "bad_{what}": {f"bad_{w}" for w in (
        "adjustment_id", "correction_id", "game", "payment_id", "player_id", "request_id", "reward_id", "song",
        "table_id", "target")},
    "{service}_unavailable": {f"{s}_unavailable" for s in ("ledger", "ladder", "table", "lobby")},
    "{service}_refused": {f"{s}_refused" for s in ("ledger", "ladder", "table", "lobby")},
    "insufficient_{currency}": {"insufficient_coins", "insufficient_hearts"},
}
"""The codes an f-string code can be: ``fields.ident``/``fields.text``'s field names, the peers a
service relays, the wallets that can never go below 0."""
PAYMENT_TEMPLATES = {
    "eat_{eats}": {"eat_1", "eat_2"},
    "gang_{t.value}": {"gang_ming_gang", "gang_bu_gang", "gang_an_gang", "gang_peng"},
}
OUTAGES = set(getattr(importlib.import_module("chieu.kit.outages"), "MESSAGES", {})
              if importlib.util.find_spec("chieu.kit.outages") else ())
"""The codes of a dependency's outage (:mod:`chieu.kit.outages`, where it exists)."""
GATES = {"not_enough_coins", "ladder_level_too_low", "reputation_too_low"}
"""The gates' codes (the lobby's Gate.reason, the table's admission): assigned, not raised."""


def expand(templates: Iterable[str], known: Mapping[str, set[str]]) -> set[str]:
    """The codes of f-string codes; a template the test does not know fails."""
    unknown = sorted(set(templates) - set(known))
    assert not unknown, f"a code built from an f-string the test does not know: {unknown}"
    return set().union(*(known[t] for t in templates))


@cache
def places(root: Path = ROOT) -> dict[str, dict[str, set[str]]]:
    """``{kind: {code: places}}``: where the product uses each code — a file relative to
    ``root`` (``games/phom/game.py``) for a refusal, ``games/<key>/`` for a game's outcome or
    payment, ``ledger/`` for the ledger's own payments, :data:`SERVICE` for a service's built,
    relayed or assigned codes. Read once per folder (a test changes no source it has read)."""
    found = refusal_codes(root)
    refusal = {code: set(where) for code, where in found.places.items()}
    for code in expand(found.templates, TEMPLATES) | OUTAGES | GATES:
        refusal.setdefault(code, set()).add(SERVICE)
    outcome: dict[str, set[str]] = {}
    payment: dict[str, set[str]] = {}
    for key, (o, t, tt) in reasons_by_game(root / "games").items():
        for code in o:
            outcome.setdefault(code, set()).add(f"games/{key}/")
        for code in t | expand(tt, PAYMENT_TEMPLATES):
            payment.setdefault(code, set()).add(f"games/{key}/")
    for code in ledger_reasons(root / "ledger") - {"x"}:  # "x": a negative reset's probe leg, never posted
        payment.setdefault(code, set()).add("ledger/")
    return {"refusal": refusal, "outcome": outcome, "payment": payment}


def folder(home: words.Home, root: Path = ROOT) -> str:
    """The folder a home speaks for, relative to ``root``: ``""`` (everything) for the kit's
    catalog, else its package's (``games/phom``)."""
    return "" if home.path.name != words.HOME_FILE else home.path.parent.relative_to(root).as_posix()


def encloses(home: str, place: str) -> bool:
    return home == "" or place.startswith(home + "/")


def allowed(where: set[str], homes: Iterable[str]) -> set[str]:
    """The homes a code used at ``where`` may have its words in: the narrowest of ``homes``
    holding every place, and, for a code only games use, each of those games' own."""
    holding = [h for h in homes if all(encloses(h, p) for p in where)]
    out = {max(holding, key=len)}
    games = {"/".join(p.split("/")[:2]) for p in where}
    if len(games) > 1 and all(p.startswith("games/") and p.count("/") >= 2 for p in where):
        out |= games
    return out


def misplaced(homes: Iterable[words.Home], root: Path = ROOT) -> list[str]:
    """Every code whose words are not where :func:`allowed` puts them, is missing at a place that
    uses it, or is in a package's home though nothing there uses it."""
    homes = tuple(homes)
    folders = {folder(h, root) for h in homes} | {
        f"games/{d.name}" for d in (root / "games").iterdir() if (d / "__init__.py").is_file() and d.name != "v1"}
    out = []
    for kind, used in places(root).items():
        held: dict[str, set[str]] = {}
        for home in homes:
            for code in home.words[kind]:
                held.setdefault(code, set()).add(folder(home, root))
        for code, where in sorted(used.items()):
            ok = allowed(where, folders)
            for at in sorted(held.get(code, set()) - ok):
                out.append(f"{kind} {code}: in {at or 'the kit'}'s words, but its home is {' or '.join(sorted(ok))}")
            for place in sorted(where):
                if not any(encloses(h, place) for h in held.get(code, set()) & ok):
                    out.append(f"{kind} {code}: no words for {place} (its home: {' or '.join(sorted(ok))})")
        for code, homes_of_code in sorted(held.items()):
            out += [f"{kind} {code}: in {h}'s words, but nothing there uses it" for h in sorted(homes_of_code)
                    if h and code not in used]
    return out
