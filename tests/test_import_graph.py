"""No import cycle anywhere in the product (``services/`` as ``chieu``) or the tools (``tools/`` as
``chieu_tools``), counting every import the source writes: at the top, inside a function, under
``if TYPE_CHECKING``. An import inside a function hides a loop from import-linter and from Python
alike (it runs later); here it counts the same as any other."""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TREES = {"chieu": ROOT / "services", "chieu_tools": ROOT / "tools" / "chieu_tools"}


def modules() -> dict[str, Path]:
    """Every module of the trees by its dotted name (a package by its ``__init__``)."""
    out = {}
    for root, tree in TREES.items():
        for path in sorted(tree.rglob("*.py")):
            parts = list(path.relative_to(tree).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join([root, *parts])] = path
    return out


def _targets(node: ast.Import | ast.ImportFrom, name: str, is_package: bool,
             known: Mapping[str, Path]) -> Iterator[str]:
    if isinstance(node, ast.Import):
        for alias in node.names:
            yield alias.name
        return
    base = node.module or ""
    if node.level:
        here = name.split(".") if is_package else name.split(".")[:-1]
        here = here[:len(here) - (node.level - 1)]
        base = ".".join([*here, *([base] if base else [])])
    for alias in node.names:
        sub = f"{base}.{alias.name}"
        yield sub if sub in known else base


def graph(known: Mapping[str, Path] | None = None) -> dict[str, set[str]]:
    """Each module's imports of the trees' modules (to the deepest module each import names)."""
    known = modules() if known is None else known
    edges: dict[str, set[str]] = {name: set() for name in known}
    for name, path in known.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                for target in _targets(node, name, path.name == "__init__.py", known):
                    while target and target not in known and "." in target:
                        target = target.rsplit(".", 1)[0]  # ``import a.b.c`` where c is a name
                    if target in known and target != name:
                        edges[name].add(target)
    return edges


def cycles(edges: Mapping[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []
    counter = 0

    def visit(v: str) -> None:  # recursive: the graph is a few hundred modules deep at most
        nonlocal counter
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = []
            while True:
                w = stack.pop()
                on.discard(w)
                part.append(w)
                if w == v:
                    break
            if len(part) > 1:
                found.append(sorted(part))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return sorted(found)


def test_the_graph_sees_imports_inside_functions(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("def f():\n    from x import b\n    return b\n")
    (tmp_path / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import x.a\n")
    (tmp_path / "c.py").write_text("from . import a\n")
    known = {"x.a": tmp_path / "a.py", "x.b": tmp_path / "b.py", "x.c": tmp_path / "c.py"}
    edges = graph(known)
    assert edges == {"x.a": {"x.b"}, "x.b": {"x.a"}, "x.c": {"x.a"}}
    assert cycles(edges) == [["x.a", "x.b"]]


def test_no_import_cycle() -> None:
    edges = graph()
    assert sum(len(e) for e in edges.values()) > 500  # the graph was read
    assert cycles(edges) == []
