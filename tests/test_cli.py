"""The ``chieu`` command line as a person meets it: help with no argument, and ``verify`` with a
clear line and a meaningful exit code for every outcome (never a traceback)."""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest
from nats.js.errors import NotFoundError

from chieu import cli
from chieu.kit import auth, names, natsauth
from chieu.kit.settings import Settings
from chieu_tools import cli as tools_cli
from chieu_tools import localnats
from tests.conftest import NATS_AUTH, NATS_CREDS, nats_connect, nats_env
from tests.table.helpers import client, play_to_end

ROOT = Path(__file__).resolve().parents[1]


async def _chieu(*args: str) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "chieu.cli", *args,
                                                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
                                                env={**os.environ, **nats_env("audit")})  # verify reads as audit
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


def _commands(parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every command of a parser, nested ones (``scenario run``) after their parent."""
    out: list[tuple[str, ...]] = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                out += [(*prefix, name), *_commands(sub, (*prefix, name))]
    return out


EVERY_COMMAND = sorted({*_commands(cli.build_parser()), *_commands(tools_cli.build_parser())})
"""Every ``./chieu`` subcommand: the CLI's (which names ``test`` and ``bench`` too, run by the
script itself) and the developer tools' (``up``, ``chaos``, ``soak``)."""


async def test_every_command_answers_help_with_its_usage_and_runs_nothing() -> None:
    """``./chieu COMMAND --help`` prints the command's usage, quickly, and does nothing else:
    ``./chieu test --help`` ran the whole suite, ``./chieu bench --help`` printed nothing."""
    assert {("test",), ("bench",), ("up",), ("chaos",), ("soak",), ("scenario", "run"), ("verify",)} <= set(
        EVERY_COMMAND)
    gate = asyncio.Semaphore(4)

    async def ask(command: tuple[str, ...], flag: str) -> tuple[tuple[str, ...], int, str, float]:
        async with gate:
            began = time.monotonic()
            proc = await asyncio.create_subprocess_exec(
                str(ROOT / "chieu"), *command, flag, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE, start_new_session=True)
            try:
                out, _ = await asyncio.wait_for(proc.communicate(), 60)
            except TimeoutError:
                os.killpg(proc.pid, signal.SIGKILL)  # it ran something: stop all of it
                await proc.wait()
                return command, -1, "", time.monotonic() - began
            return command, proc.returncode or 0, out.decode(), time.monotonic() - began

    asked = [(c, f) for c in EVERY_COMMAND for f in ("--help", "-h")]
    first = await ask(*asked[0])  # alone: a first use of ./chieu installs (once, not four times at once)
    answers = [first, *await asyncio.gather(*(ask(c, f) for c, f in asked[1:]))]
    for command, code, out, took in answers:
        said = " ".join(command)
        assert code == 0, f"./chieu {said} --help: exit {code} after {took:.1f} s"
        assert out.startswith(f"usage: chieu {said} "), f"./chieu {said} --help printed {out[:200]!r}"
        assert took < 30, f"./chieu {said} --help took {took:.1f} s"


def test_a_games_tools_are_found_through_its_descriptor(monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """``chieu perft`` is 中国象棋's descriptor's tool, not a command the CLI knows: a planted
    game's tool becomes a command with its arguments, and one named like a command is refused."""
    from chieu.games import registry
    from chieu.games.descriptor import Tool

    assert "perft" in {t.name for d in registry.descriptors() for t in d.tools}
    ran: list[argparse.Namespace] = []

    def arguments(p: argparse.ArgumentParser) -> None:
        p.add_argument("stones", type=int)

    def run(args: argparse.Namespace) -> int:
        ran.append(args)
        return 7

    games = registry.descriptors()
    planted = replace(games[0], tools=(Tool("ganh", "Cờ gánh: count the stones", arguments, run),))
    monkeypatch.setattr(registry, "descriptors", lambda: (*games, planted))
    assert cli.main(["ganh", "5"]) == 7 and ran[0].stones == 5
    with pytest.raises(SystemExit):
        cli.main(["ganh", "--help"])
    assert capsys.readouterr().out.startswith("usage: chieu ganh [-h] stones")
    clash = replace(planted, tools=(Tool("verify", "", arguments, run),))
    monkeypatch.setattr(registry, "descriptors", lambda: (*games, clash))
    with pytest.raises(ValueError, match="'verify' is already a command of chieu"):
        cli.build_parser()


async def test_verify_on_a_server_no_table_service_has_used_says_no_table(tmp_path: Path) -> None:
    """The audit user may create nothing: ``verify`` asks whether the table log exists rather than
    creating it (which timed out after seconds and said "cannot reach NATS")."""
    if not NATS_AUTH:
        pytest.skip("an external NATS may hold the table stream already")
    proc, url = localnats.start(tmp_path / "nats", quiet=True, extra=natsauth.server_block(NATS_CREDS.folder))
    try:
        began = time.monotonic()
        code, _, err = await _chieu("verify", "no-such-table-here", "--nats", url)
        assert code == 2 and "no table 'no-such-table-here'" in err, err
        assert time.monotonic() - began < 15  # (the interpreter's start included; a timeout took longer)
        nc = await nats_connect(url)
        try:
            with pytest.raises(NotFoundError):
                await nc.jetstream().stream_info(names.TABLES.name)  # it created nothing
        finally:
            await nc.close()
    finally:
        localnats.stop(proc)


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
    assert code == 0 and out.startswith("hand 1: OK  commitment=ok  committed-first=ok  deal=ok")
    await a.close()
    await b.close()


async def test_token_signs_a_player_token_and_a_service_credential(tmp_path: Path) -> None:
    from tests.conftest import PRIVATE_KEY, SIGNER

    keys = SIGNER.keyset()
    code, out, _ = await _chieu("token", "alice", "--role", "operator", "--ttl", "60", "--key", str(PRIVATE_KEY))
    assert code == 0
    who = auth.verify(keys, out.strip())
    assert (who.player_id, who.roles, who.service) == ("alice", frozenset({"operator"}), "")
    assert who.exp - time.time() <= 60
    code, out, _ = await _chieu("token", "--service", "ladder", "--key", str(PRIVATE_KEY))
    assert code == 0 and auth.verify(keys, out.strip()).service == "ladder"
    for args in (("alice", "--service", "ladder"), (), ("--service", "ladder", "--role", "operator")):
        code, _, err = await _chieu("token", *args, "--key", str(PRIVATE_KEY))
        assert code == 2 and err.startswith("chieu token: ")
    code, _, err = await _chieu("token", "alice", "--key", str(tmp_path / "none.pem"))
    assert code == 2 and "chieu token:" in err


async def test_token_without_a_private_key_says_so(tmp_path: Path) -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "chieu.cli", "token", "alice", cwd=tmp_path,
        env={k: v for k, v in os.environ.items() if k != "CHIEU_TOKEN_PRIVATE_KEY"},
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 2 and not out and b"no private key" in err and b"Traceback" not in err


def test_up_makes_a_key_once_and_gives_the_private_key_to_the_lobby_only(tmp_path: Path) -> None:
    from chieu_tools import up

    signer, private, public = up.ensure_keys(tmp_path)
    assert private.stat().st_mode & 0o777 == 0o600
    keys = auth.KeySet.load(public)
    assert signer.kid in keys.kids and keys.bound_to(signer.kid) is None
    again, _, _ = up.ensure_keys(tmp_path)  # a second run reuses the keys
    assert again.kid == signer.kid and auth.KeySet.load(public) == keys
    envs = up.service_envs({"CHIEU_TOKEN_PRIVATE_KEY": "/leaked", "CHIEU_SERVICE_TOKEN": "/leaked", "PATH": "/bin"},
                           signer, private, public)
    assert set(envs) == set(up.SERVICES)
    for name, env in envs.items():
        assert env["CHIEU_TOKEN_PUBLIC_KEYS"] == str(public) and env["PATH"] == "/bin"
        assert "CHIEU_SERVICE_TOKEN" not in env  # no long-lived credential: the service signs its own
        own = Path(env["CHIEU_SERVICE_KEY"])
        assert own.stat().st_mode & 0o777 == 0o600
        settings = replace(Settings(), token_public_keys=str(public), service_key=str(own))
        credential = auth.service_token(settings)
        principal = auth.verify(keys, credential)
        assert principal.service == name and principal.exp - time.time() <= auth.SERVICE_TTL_S
        assert env.get("CHIEU_TOKEN_PRIVATE_KEY") == (str(private) if name == "lobby" else None)
    assert not any("TOKEN_SECRET" in k for env in envs.values() for k in env)


async def test_rewind_refuses_while_the_service_runs(settings: Settings, table_server: str, ledger_server: str,
                                                     database_url: str) -> None:
    """``chieu rewind`` as the ledger's own NATS user: it may look at its durable, and refuses to move
    it while the ledger still fetches (exit 1); without a database it says so (exit 2)."""
    nc = await nats_connect(settings.nats_url)
    try:
        deadline = time.monotonic() + 20
        while True:  # the ledger binds its durable once the table service made the stream
            try:
                await nc.jetstream().consumer_info(names.TABLES.name, names.LEDGER_DURABLE)
                break
            except NotFoundError:
                assert time.monotonic() < deadline
                await asyncio.sleep(0.2)
    finally:
        await nc.close()

    async def rewind(*args: str, user: str = "ledger") -> tuple[int, str]:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "chieu.cli", "rewind", *args, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, env={**os.environ, **nats_env(user), "DATABASE_URL": ""})
        _, err = await asyncio.wait_for(proc.communicate(), 60)
        assert "Traceback" not in err.decode(), err.decode()
        assert proc.returncode is not None
        return proc.returncode, err.decode()

    code, err = await rewind("ledger", "--nats", settings.nats_url, "--database-url", database_url)
    assert code == 1 and "stop the service first" in err
    code, err = await rewind("ledger", "--nats", settings.nats_url)
    assert code == 2 and "--database-url" in err
