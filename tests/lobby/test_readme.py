"""The lobby page's Python client (docs/lobby.md) runs as written (against the in-process services)."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest

PAGE = Path(__file__).resolve().parents[2] / "docs" / "lobby.md"


async def test_the_lobby_pages_client_runs(system: str, capsys: pytest.CaptureFixture[str]) -> None:
    text = PAGE.read_text(encoding="utf-8")
    section = text[text.index("## The portal flow for a front-end"):]
    code = re.search(r"```python\n(.*?)```", section, re.S)
    assert code is not None
    source = code.group(1).replace("127.0.0.1:50054", system).replace("asyncio.run(main())", "")
    scope: dict[str, Any] = {}
    exec(compile(source, "docs/lobby.md", "exec"), scope)
    await asyncio.wait_for(scope["main"](), 20)
    out = capsys.readouterr().out
    assert "welcome coins: 200" in out and "phom.coins.1" in out and "seated at" in out
