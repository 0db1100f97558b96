"""够级 table options: §2.7–2.8 of shared/rules/gouji.md, named in camelCase (``turnSeconds``,
``shaoGong``, ...: :data:`ALIASES`), the rules file's names (``TURN_TIMEOUT_S``, ``SHAO_GONG``)
accepted as aliases."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from chieu.games.aliases import Aliases
from chieu.games.common import check_names, choice, flag, whole
from chieu.games.core import BadOptions

_REGIONAL = ("SHAO_GONG", "MEN_GONG", "DIAN_GONG", "MAI_SAN_MAI_SI", "BIE_SAN", "GE_MING")
"""Regional options of §2.7 (烧贡, 闷贡, 点贡/开点/宣点, 买三/买四, 憋三, 革命), all off."""
_UNDEFINED = {
    "DIAN_GONG": "点贡/开点/宣点",
    "MAI_SAN_MAI_SI": "买三/买四",
}
"""Regional options the rules file names but does not define ("definitions vary between
localities", §2.7): refused when ``on``."""
_CHOICES: dict[str, tuple[str, ...]] = {
    "FIRST_LEADER": ("seat-rotation", "shangban"),
    "TRIBUTE": ("luogong", "none"),
}
_KNOWN = (*_CHOICES, "END_EARLY_WHEN_ONE_TEAM_LEFT", "TURN_TIMEOUT_S", "TRIBUTE_RETURN_TIMEOUT_S",
          *_REGIONAL)


@dataclass(frozen=True, slots=True)
class Options:
    """Table options of §2.8 (``option_values`` gives the rules file's names)."""

    first_leader: str = "seat-rotation"
    tribute: str = "luogong"
    end_early: bool = False
    turn_timeout_s: int = 15
    return_timeout_s: int = 15
    bie_san: bool = False
    """憋三: 3s only in a player's last set; all of one's 4s played together."""
    shao_gong: bool = False
    """烧贡: a seat whose 够级 set was burned by a burner who then went out pays one card."""
    men_gong: bool = False
    """闷贡: a seat left holding only 3s at the end pays one card."""
    ge_ming: bool = False
    """革命: a seat without 2s and jokers may declare and sit out; two or more: redeal."""


ALIASES = Aliases({
    "firstLeader": "FIRST_LEADER", "tribute": "TRIBUTE", "endEarlyWhenOneTeamLeft": "END_EARLY_WHEN_ONE_TEAM_LEFT",
    "turnSeconds": "TURN_TIMEOUT_S", "tributeReturnSeconds": "TRIBUTE_RETURN_TIMEOUT_S", "shaoGong": "SHAO_GONG",
    "menGong": "MEN_GONG", "dianGong": "DIAN_GONG", "maiSanMaiSi": "MAI_SAN_MAI_SI", "bieSan": "BIE_SAN",
    "geMing": "GE_MING",
})
"""The options' names (:mod:`chieu.games.aliases`), defaults in :class:`Options`: ``firstLeader``
seat-rotation, ``tribute`` luogong, ``endEarlyWhenOneTeamLeft`` off, ``turnSeconds`` 15,
``tributeReturnSeconds`` 15, the regional switches off; the rules file's names
(``TURN_TIMEOUT_S``, ...) are aliases."""


def parse_options(raw: Mapping[str, Any]) -> Options:
    """Validate §2.8 options; unknown names are refused, missing ones take their defaults.
    Switches take ``"on"`` / ``"off"`` (or booleans); timeouts are seconds in 1..3600."""
    raw = ALIASES.read(raw)
    check_names(raw, _KNOWN)
    d = Options()
    picked = {name: choice(name, raw.get(name, allowed[0]), allowed)
              for name, allowed in _CHOICES.items()}
    flags = {name: flag(name, raw.get(name, "off"), words=True) for name in _REGIONAL}
    for name, native in _UNDEFINED.items():
        if flags[name]:
            raise BadOptions(
                f"{name} ({native}) is not defined by the rules file (shared/rules/gouji.md "
                "§2.7: definitions vary between localities), so it cannot be played; "
                "it must stay 'off'")
    return Options(
        first_leader=picked["FIRST_LEADER"],
        tribute=picked["TRIBUTE"],
        end_early=flag("END_EARLY_WHEN_ONE_TEAM_LEFT",
                       raw.get("END_EARLY_WHEN_ONE_TEAM_LEFT", "off"), words=True),
        turn_timeout_s=whole("TURN_TIMEOUT_S", raw.get("TURN_TIMEOUT_S", d.turn_timeout_s),
                             1, 3600),
        return_timeout_s=whole("TRIBUTE_RETURN_TIMEOUT_S",
                               raw.get("TRIBUTE_RETURN_TIMEOUT_S", d.return_timeout_s), 1, 3600),
        bie_san=flags["BIE_SAN"],
        shao_gong=flags["SHAO_GONG"],
        men_gong=flags["MEN_GONG"],
        ge_ming=flags["GE_MING"],
    )


def option_values(options: Options) -> Mapping[str, Any]:
    """The options under their canonical names (:data:`ALIASES`)."""
    on = {"BIE_SAN": options.bie_san, "SHAO_GONG": options.shao_gong,
          "MEN_GONG": options.men_gong, "GE_MING": options.ge_ming}
    out: dict[str, Any] = {
        "FIRST_LEADER": options.first_leader,
        "TRIBUTE": options.tribute,
        "END_EARLY_WHEN_ONE_TEAM_LEFT": "on" if options.end_early else "off",
        "TURN_TIMEOUT_S": options.turn_timeout_s,
        "TRIBUTE_RETURN_TIMEOUT_S": options.return_timeout_s,
    }
    for name in _REGIONAL:
        out[name] = "on" if on.get(name, False) else "off"
    return ALIASES.write(out)
