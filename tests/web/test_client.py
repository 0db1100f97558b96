"""The TypeScript client's own tests (web/test, node's test runner) against the stack through
Envoy: sign-in, rooms and gates, WatchRoom, quick seat, act with command ids, Watch resumed
after a dropped connection."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import ARTIFACTS, run_node

pytestmark = [pytest.mark.integration, pytest.mark.e2e]


async def test_the_typescript_client_against_the_stack(web_url: str, web_built: Path) -> None:
    # the client's own tests only (build/test/ also holds the browser harness and scenes)
    code, out = await run_node(web_built, ["--test", "--test-reporter=spec", "build/test/client.test.mjs"],
                               {"CHIEU_WEB_URL": web_url}, limit_s=120)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / "node-test.log").write_text(out)
    assert code == 0, out[-6000:]
