"""Each store owns its SQL: a statement is written in its store's module, never in a gRPC servicer or a
consumer (which call the store). The ledger's statements are in its two stores, ``chieu.ledger.books``
and ``chieu.ledger.reservations`` (and its schema); the lobby's servicer has none."""

from __future__ import annotations

import ast
import re
from pathlib import Path

SERVICES = Path(__file__).resolve().parents[1] / "services"
SQL = re.compile(r"^\s*(SELECT|INSERT INTO|UPDATE \w+ (AS \w+ )?SET|DELETE FROM|WITH \w+ AS)\b")
NO_SQL = ("service.py", "servicer.py", "consumer.py")
"""Modules of the gRPC edge and of the log's consumers: they call a store."""
HOMES = {"ledger": {"books.py", "holds.py", "reservations.py", "schema.py"}}
"""Services whose every statement is in its store's module (and the schema's migrations): the
ledger's books (postings, the inbox, parked records), its coin hands' reservations and its collusion
screen's flows and holds."""


def statements(path: Path) -> list[int]:
    """The lines of ``path``'s string literals (f-strings too) that start an SQL statement."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: set[int] = set()
    for node in ast.walk(tree):
        text = None
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value
        elif isinstance(node, ast.JoinedStr) and node.values and isinstance(node.values[0], ast.Constant):
            text = str(node.values[0].value)
        if text is not None and SQL.match(text):
            out.add(node.lineno)
    return sorted(out)


def offenders() -> list[str]:
    found = []
    for path in sorted(SERVICES.rglob("*.py")):
        rel = path.relative_to(SERVICES)
        service = rel.parts[0]
        home = HOMES.get(service)
        if path.name in NO_SQL or (home is not None and path.name not in home):
            found += [f"{rel}:{line}" for line in statements(path)]
    return found


def test_the_pattern_sees_statements() -> None:
    assert SQL.match("SELECT seq FROM x") and SQL.match("\n    INSERT INTO t VALUES ($1)")
    assert SQL.match("UPDATE lobby_players SET welcome = $2") and SQL.match("WITH inbox AS (")
    assert not SQL.match("select the row") and not SQL.match("Update the mark")


def test_sql_lives_in_its_store() -> None:
    assert offenders() == []
