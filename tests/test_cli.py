"""The ``chieu`` command line as a person meets it: help with no argument, and ``verify`` with a
clear line and a meaningful exit code for every outcome (never a traceback)."""

from __future__ import annotations

import asyncio
import sys

import pytest

from chieu.kit.settings import Settings
from tests.table.helpers import client, play_to_end


async def _chieu(*args: str) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "chieu.cli", *args,
                                                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode is not None
    assert "Traceback" not in err.decode(), err.decode()
    return proc.returncode, out.decode(), err.decode()


@pytest.mark.parametrize("args", [(), ("help",), ("--help",)])
async def test_help_names_every_command(args: tuple[str, ...]) -> None:
    code, out, _ = await _chieu(*args)
    assert code == 0
    for command in ("up", "test", "bench", "verify", "scenario", "token", "perft"):
        assert f"    {command} " in out


async def test_verify_says_what_it_could_not_do(settings: Settings) -> None:
    assert (await _chieu("verify", "bad id!", "--nats", settings.nats_url))[0] == 2
    code, _, err = await _chieu("verify", "no-such-table-here", "--nats", settings.nats_url)
    assert code == 2 and "no table" in err
    code, _, err = await _chieu("verify", "some-table", "--nats", "nats://127.0.0.1:1")
    assert code == 3 and "cannot reach NATS" in err


@pytest.mark.integration
async def test_verify_a_hand_in_play_and_a_finished_one(settings: Settings, table_server: str) -> None:
    a, b = client(settings, table_server, "vera"), client(settings, table_server, "vic")
    t = await a.create("o_an_quan", {"maxMoves": 40})
    await b.sit(t.table_id)
    await a.start(t.table_id)
    code, out, _ = await _chieu("verify", t.table_id, "--nats", settings.nats_url)
    assert code == 0 and out.startswith("hand 1: IN PLAY") and "BAD" not in out
    await play_to_end(await a.get(t.table_id), {"vera": a, "vic": b})
    code, out, _ = await _chieu("verify", t.table_id, "--nats", settings.nats_url)
    assert code == 0 and out.startswith("hand 1: OK  commitment=ok  deal=ok")
    await a.close()
    await b.close()
