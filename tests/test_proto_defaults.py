"""Defaults are written in the protos (issue 24): a client reads what an unset field means from
the contract, not from the server's code — every page size, limit and top says its default, and
every ledger request whose empty player_id means the caller says so (GetBalances did not)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PROTOS = sorted((ROOT / "proto" / "chieu").glob("*/v1/*.proto"))
SIZES = re.compile(r"^\s*(?:u?int32|u?int64)\s+(page_size|limit|top)\s*=")


def _fields(path: Path) -> list[tuple[str, str, str]]:
    """(message, field line, the comment just above it) of every field of ``path``."""
    out, message, comment = [], "", []
    for line in path.read_text(encoding="utf-8").splitlines():
        stripped = line.strip()
        if m := re.match(r"message (\w+) \{", stripped):
            message, comment = m.group(1), []
        elif stripped.startswith("//"):
            comment.append(stripped[2:].strip())
        else:
            if re.match(r"^[\w.]+(?:\s+[\w.]+)*\s+\w+\s*=\s*\d+;", stripped):
                out.append((message, stripped, " ".join(comment)))
            comment = []
    return out


@pytest.mark.parametrize("path", PROTOS, ids=lambda p: p.name)
def test_every_page_size_limit_and_top_says_its_default(path: Path) -> None:
    silent = [(m, f) for m, f, c in _fields(path) if SIZES.match(f) and "default" not in c.lower()]
    assert not silent, f"{path.name}: fields whose default is not written: {silent}"


def test_a_ledger_call_on_the_callers_own_account_says_an_empty_player_means_the_caller() -> None:
    service = (ROOT / "services" / "ledger" / "service.py").read_text(encoding="utf-8")
    mine = set(re.findall(r"async def (\w+)\(self, request: pb\.\w+,[^)]*\)[^:]*:\n(?:\s+\"\"\"[^\"]*\"\"\"\n)?"
                          r"\s+self\._mine\(context, request\)", service))
    assert {"GetBalances", "ConvertHearts"} <= mine
    fields = _fields(ROOT / "proto" / "chieu" / "ledger" / "v1" / "ledger_service.proto")
    for method in sorted(mine):
        (comment,) = [c for m, f, c in fields if m == f"{method}Request" and f.startswith("string player_id")]
        assert "empty" in comment and "caller" in comment, f"{method}Request.player_id: {comment!r}"
