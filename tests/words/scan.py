"""Every code a player can be shown, found by reading the source: the reason codes of refusals
(every call that builds one: ``invalid(``, ``precondition(``, ``not_found(``, ``ServiceError(``,
``IllegalMove(``, ``InvalidCommand(``, ``RuleViolation(``, the table's ``Refused(`` ...), and the
rules cores' outcome reasons and payment (``Transfer``) reasons.

A code given as a variable is followed to the string constants assigned to it in the same function
or module; an f-string code is a *template* (``bad_{what}``) whose values the test knows. What
cannot be followed is reported, so a new kind of call site fails the test until it is read.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2] / "services"
REFUSALS = {
    "invalid", "precondition", "not_found", "denied", "_denied", "unauthenticated", "_unauthenticated",
    "ServiceError", "IllegalMove", "InvalidCommand", "RuleViolation", "CodecError", "Refused", "_bad",
}
"""The names of the callables that build a refusal from a reason code."""
STATUS_PREFIXES = ("grpc.StatusCode.", "Kind.")
"""A first argument of these is the status, the code comes next."""


@dataclass
class Found:
    codes: set[str] = field(default_factory=set)
    templates: set[str] = field(default_factory=set)
    unresolved: set[str] = field(default_factory=set)
    """``path:function: expression`` of codes that could not be followed to a constant."""
    places: dict[str, set[str]] = field(default_factory=dict)
    """Each code's files, relative to the scanned folder (``games/phom/game.py``)."""

    def add(self, codes: set[str], place: str) -> None:
        self.codes |= codes
        for code in codes:
            self.places.setdefault(code, set()).add(place)


def _files(under: Path) -> Iterator[Path]:
    for p in sorted(under.rglob("*.py")):
        if "_pb2" not in p.name and "/v1/" not in p.as_posix():
            yield p


def _callee(node: ast.Call) -> str:
    f = node.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""


class _Module:
    """One file's module-level string constants and each function's local ones."""

    def __init__(self, tree: ast.Module) -> None:
        self.consts: dict[str, set[str]] = {}
        for node in tree.body:
            if isinstance(node, ast.Assign | ast.AnnAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for t in targets:
                    if isinstance(t, ast.Name) and node.value is not None:
                        self.consts.setdefault(t.id, set()).update(_strings(node.value))


def _strings(node: ast.AST) -> set[str]:
    """The string constants an expression can evaluate to (both arms of a conditional, a dict's
    values, a subscript's mapping)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value}
    if isinstance(node, ast.IfExp):
        return _strings(node.body) | _strings(node.orelse)
    if isinstance(node, ast.Dict):
        return set().union(*(_strings(v) for v in node.values if v is not None)) if node.values else set()
    if isinstance(node, ast.BoolOp):
        return set().union(*(_strings(v) for v in node.values))
    return set()


def _template(node: ast.JoinedStr) -> str:
    out = []
    for part in node.values:
        if isinstance(part, ast.Constant):
            out.append(str(part.value))
        elif isinstance(part, ast.FormattedValue):
            out.append("{" + ast.unparse(part.value) + "}")
    return "".join(out)


def _local_strings(func: ast.AST, name: str) -> set[str] | None:
    found: set[str] | None = None
    for node in ast.walk(func):
        if isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Name) and t.id == name:
                    found = (found or set()) | _strings(node.value)
    return found


def refusal_codes(under: Path = ROOT) -> Found:
    """Every reason code a refusal is built with under ``under``."""
    found = Found()
    modules: dict[Path, tuple[ast.Module, _Module]] = {}
    for p in _files(under):
        tree = ast.parse(p.read_text(), str(p))
        modules[p] = (tree, _Module(tree))
    every_const: dict[str, set[str]] = {}
    for _, m in modules.values():
        for k, v in m.consts.items():
            every_const.setdefault(k, set()).update(v)
    for p, (tree, _) in modules.items():
        funcs: list[ast.AST] = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
        for func in [tree, *funcs]:
            body = func.body if isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef) else tree.body
            for node in (n for stmt in body for n in ast.walk(stmt)):
                if not isinstance(node, ast.Call) or _callee(node) not in REFUSALS or not node.args:
                    continue
                args = list(node.args)
                if ast.unparse(args[0]).startswith(STATUS_PREFIXES) or (
                        _callee(node) == "ServiceError" and len(args) == 3):
                    args = args[1:]
                if not args:
                    continue
                code = args[0]
                where = f"{p.relative_to(under.parent)}:{getattr(func, 'name', '<module>')}: {ast.unparse(code)}"
                place = p.relative_to(under).as_posix()
                if isinstance(code, ast.JoinedStr):
                    found.templates.add(_template(code))
                elif strings := _strings(code):
                    found.add(strings, place)
                elif isinstance(code, ast.Name) and (local := _local_strings(func, code.id)):
                    found.add(local, place)
                elif isinstance(code, ast.Name | ast.Attribute):
                    name = code.id if isinstance(code, ast.Name) else code.attr
                    if name in every_const and every_const[name] and name.isupper():
                        found.add(every_const[name], place)
                    else:
                        found.unresolved.add(where)
                else:
                    found.unresolved.add(where)
    return found


def _dataclass_reason_index(tree: ast.Module) -> dict[str, int]:
    """Classes of a module with a ``reason`` field: the field's position."""
    out: dict[str, int] = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            names = [s.target.id for s in node.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)]
            if "reason" in names:
                out[node.name] = names.index("reason")
    return out


def game_reasons(under: Path = ROOT / "games") -> tuple[set[str], set[str], set[str]]:
    """The rules cores' outcome reasons, payment reasons and payment reason templates.

    Outcome reasons, per game package: constants given as the ``reason`` of one of its classes
    with a ``reason`` field (positionally or by keyword; ``Transfer`` aside), as ``end=`` /
    ``ended=`` of a state, as ``Outcome``'s fifth argument or ``reason=``, assigned to ``reason``,
    returned by a function whose name says ``reason``, or given to ``settle``. Payment reasons:
    the fourth argument of every ``Transfer`` (constants, f-string templates, and the values of a
    mapping it subscripts)."""
    outcomes: set[str] = set()
    transfers: set[str] = set()
    templates: set[str] = set()
    for o, t, tt in reasons_by_game(under).values():
        outcomes |= o
        transfers |= t
        templates |= tt
    return outcomes, transfers, templates


def reasons_by_game(under: Path = ROOT / "games") -> dict[str, tuple[set[str], set[str], set[str]]]:
    """:func:`game_reasons` of each game package, by its folder's name."""
    out: dict[str, tuple[set[str], set[str], set[str]]] = {}
    for package in sorted(d for d in under.iterdir() if d.is_dir() and (d / "__init__.py").exists()):
        trees = [ast.parse(p.read_text(), str(p)) for p in _files(package) if p.name != "scenario.py"]
        classes: dict[str, int] = {}
        consts: dict[str, set[str]] = {}
        for tree in trees:
            classes.update(_dataclass_reason_index(tree))
            consts.update(_Module(tree).consts)
        classes.pop("Transfer", None)
        outcomes: set[str] = set()
        transfers: set[str] = set()
        templates: set[str] = set()
        for tree in trees:
            o, t, tt = _game_reasons(tree, classes, consts)
            outcomes |= o
            transfers |= t
            templates |= tt
        out[package.name] = (outcomes, transfers, templates)
    return out


def _game_reasons(tree: ast.Module, classes: dict[str, int],
                  consts: dict[str, set[str]]) -> tuple[set[str], set[str], set[str]]:
    outcomes: set[str] = set()
    transfers: set[str] = set()
    templates: set[str] = set()

    def mapped(node: ast.AST) -> set[str]:
        out = set()
        for sub in ast.walk(node):
            if isinstance(sub, ast.Attribute | ast.Name):
                key = sub.attr if isinstance(sub, ast.Attribute) else sub.id
                if key.isupper():
                    out |= consts.get(key, set())
        return out

    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and "reason" in node.name:
            for ret in ast.walk(node):
                if isinstance(ret, ast.Return) and ret.value is not None:
                    outcomes |= {v for v in _strings(ret.value) if v}
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "reason" for t in node.targets):
            outcomes |= _strings(node.value)
        if not isinstance(node, ast.Call):
            continue
        name = _callee(node)
        for kw in node.keywords:
            if kw.arg in ("end", "ended") or (kw.arg == "reason" and name in (*classes, "Outcome")):
                outcomes |= _strings(kw.value) | mapped(kw.value)
        if name == "Outcome" and len(node.args) >= 5:
            outcomes |= _strings(node.args[4])
        elif name == "settle" and len(node.args) >= 2:
            outcomes |= _strings(node.args[1])
        elif name in classes and len(node.args) > classes[name]:
            outcomes |= _strings(node.args[classes[name]])
        if name == "Transfer" and len(node.args) >= 4:
            arg = node.args[3]
            if isinstance(arg, ast.JoinedStr):
                templates.add(_template(arg))
            elif isinstance(arg, ast.Subscript):
                transfers |= mapped(arg.value)
            else:
                transfers |= _strings(arg)
    return outcomes, transfers, templates


def ledger_reasons(under: Path = ROOT / "ledger") -> set[str]:
    """The reasons of the ledger's own legs (what a player's money history shows besides the
    games' payments): constant reasons of ``Leg(...)``, and the kinds of the paid services
    (``_pay_service(kind=...)``), whose legs carry their kind as reason. A reason given as a
    variable is a game's (a settlement) or an operator's free text (a reward), not a code."""
    out: set[str] = set()
    for p in _files(under):
        for node in ast.walk(ast.parse(p.read_text(), str(p))):
            if not isinstance(node, ast.Call):
                continue
            name = _callee(node)
            if name == "Leg" and len(node.args) >= 5:
                out |= _strings(node.args[4])
            if name == "_pay_service":
                out |= {s for kw in node.keywords if kw.arg == "kind" for s in _strings(kw.value)}
    return out
