"""Words a player can read (issue 24): every code the source can refuse with, every hand outcome
and every payment reason has a sentence in Vietnamese, Chinese and English; the caller's
``accept-language`` picks the one in the status and its ``ErrorInfo``; the web client's catalog
is generated from the same file."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import AsyncIterator
from functools import cache
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.rpc import error_details_pb2, status_pb2

from chieu.games.core import IllegalMove
from chieu.kit import words
from chieu.kit.errors import MAX_MESSAGE, GuardedServer, invalid
from chieu_tools.localnats import free_port
from tests.words.homes import GATES, OUTAGES, PAYMENT_TEMPLATES, TEMPLATES, expand, misplaced
from tests.words.scan import ROOT, game_reasons, ledger_reasons, refusal_codes

REPO = Path(__file__).resolve().parents[2]

PASSED_ON = {
    # a wrapper of the builder: the code is its own parameter, checked at its callers
    "services/kit/errors.py:invalid: reason", "services/kit/errors.py:not_found: reason",
    "services/kit/errors.py:precondition: reason", "services/kit/errors.py:<module>: reason",
    "services/kit/auth.py:_unauthenticated: reason", "services/kit/auth.py:<module>: reason",
    "services/lobby/sessions.py:unauthenticated: reason", "services/lobby/sessions.py:<module>: reason",
    "services/games/gouji/game.py:_bad: code", "services/games/gouji/game.py:<module>: code",
    "services/table/refusals.py:invalid: reason", "services/table/refusals.py:precondition: reason",
    "services/table/refusals.py:denied: reason", "services/table/refusals.py:<module>: reason",
    # a rules core's RuleViolation (its codes are the games' own) or an outage (outages.MESSAGES)
    "services/kit/errors.py:from_exception: exc.code", "services/kit/errors.py:<module>: exc.code",
    "services/kit/errors.py:from_exception: outage", "services/kit/errors.py:<module>: outage",
    "services/table/refusals.py:of: _KINDS.get(violation.status, Kind.PRECONDITION)",
    "services/table/refusals.py:<module>: _KINDS.get(violation.status, Kind.PRECONDITION)",
    # a peer's code relayed as it came (each peer's codes are scanned in its own source)
    "services/lobby/peers.py:unavailable: str(reason) or f'{service}_refused'",
    "services/lobby/peers.py:<module>: str(reason) or f'{service}_refused'",
    "services/lobby/service.py:_relay: reason or f'{service}_refused'",
    "services/lobby/service.py:<module>: reason or f'{service}_refused'",
    # a refusal decided earlier and raised at the edge (decide's Refused values; the gates' codes)
    "services/table/statuses.py:error: refused.reason", "services/table/statuses.py:<module>: refused.reason",
    "services/table/servicer.py:_admit: reason", "services/table/servicer.py:<module>: reason",
    "services/lobby/service.py:QuickSeat: gate.reason", "services/lobby/service.py:<module>: gate.reason",
}


@cache
def every_refusal_code() -> set[str]:
    found = refusal_codes(ROOT)
    unread = sorted(found.unresolved - PASSED_ON)
    assert not unread, f"refusal codes the scan cannot follow to a constant (read them, then list them): {unread}"
    return found.codes | expand(found.templates, TEMPLATES) | OUTAGES | GATES


def test_the_scan_finds_codes_of_every_service_and_game() -> None:
    """The scan itself works: codes of each service and each rules core are among what it finds."""
    codes = every_refusal_code()
    for code in ("bad_text", "unknown_account", "bad_month", "username_taken", "table_full", "sealed",
                 "dealer_first_turn", "no_path", "ting_needs_wind", "must_draw", "quan_square", "illegal_move",
                 "bad_player_id", "insufficient_hearts", "log_unavailable"):
        assert code in codes, code
    outcomes, payments, _ = game_reasons()
    assert {"quans_gone", "checkmate", "triet_win", "u_den", "one_team_left", "huangzhuang", "time_up"} <= outcomes
    assert {"cuoc", "mom", "chot", "ga_win", "gai_triet", "gouji", "win"} <= payments


def gaps(catalog: Any) -> list[str]:
    """``kind.code.lang`` of every sentence missing, empty, unprintable or too long."""
    out = []
    for kind in words.KINDS:
        for code, entry in catalog[kind].items():
            for lang in words.LANGUAGES:
                said = entry.get(lang, "")
                if not (said.strip() and said.isprintable() and len(said.encode()) <= MAX_MESSAGE):
                    out.append(f"{kind}.{code}.{lang}")
            out += [f"{kind}.{code}.{lang}?" for lang in set(entry) - set(words.LANGUAGES)]
    return out


def test_every_entry_has_three_bounded_printable_languages() -> None:
    assert gaps(words.catalog()) == []
    for home in words.homes():
        assert gaps(home.words) == [], home.path


def test_a_code_missing_a_language_fails_the_check() -> None:
    """The check can fail: an entry without its Chinese, or with an empty or a fourth one."""
    doctored = {kind: dict(words.catalog()[kind]) for kind in words.KINDS}
    doctored["refusal"]["not_your_turn"] = {"en": "It is not your turn.", "vi": "Chưa đến lượt bạn."}
    doctored["payment"]["mom"] = {"en": "Móm.", "vi": " ", "zh": "Móm。", "fr": "Móm."}
    assert gaps(doctored) == ["refusal.not_your_turn.zh", "payment.mom.vi", "payment.mom.fr?"]


def test_every_refusal_code_anywhere_has_words() -> None:
    missing = sorted(every_refusal_code() - set(words.catalog()["refusal"]))
    assert not missing, f"refusal codes without words in any home: {missing}"


def test_every_outcome_and_payment_reason_has_words() -> None:
    outcomes, payments, templates = game_reasons()
    payments |= expand(templates, PAYMENT_TEMPLATES)
    assert not sorted(outcomes - set(words.catalog()["outcome"])), "outcome reasons without words"
    assert not sorted(payments - set(words.catalog()["payment"])), "payment reasons without words"


def test_every_reason_of_the_ledgers_own_entries_has_words() -> None:
    """A player's money history shows the ledger's own postings too (welcome, purchase, convert, ...)."""
    own = ledger_reasons() - {"x"}  # "x": the probe leg of a negative-score reset, never posted
    assert {"welcome", "convert", "song", "membership"} <= own
    assert not sorted(own - set(words.catalog()["payment"])), "ledger reasons without words"


# -- homes: each package owns its words (issue 31) ----------------------------------------------

def test_every_code_has_its_words_in_its_home() -> None:
    """A game's own codes are in its package's words.toml, the ones several games share in
    games/words.toml, the services' in the kit's catalog — and nowhere else."""
    names = {h.name for h in words.homes()}
    assert {"chieu.kit.words", "chieu.games", "chieu.games.phom", "chieu.games.mahjong"} <= names
    assert misplaced(words.homes()) == []


def _moved(code: str, kind: str, to: str) -> tuple[words.Home, ...]:
    """Every home, with ``code``'s words moved to the home named ``to``."""
    homes = [words.Home(h.name, h.path, {k: dict(v) for k, v in h.words.items()}) for h in words.homes()]
    entry = next(h.words[kind].pop(code) for h in homes if code in h.words[kind])  # type: ignore[attr-defined]
    next(h for h in homes if h.name == to).words[kind][code] = entry  # type: ignore[index]
    return tuple(homes)


def test_a_code_out_of_its_home_fails_the_check() -> None:
    """The check can fail: a game's code back in the kit's catalog, a code of one game in the
    shared games' home, a service's code in a game's, a game's outcome in another game's."""
    assert misplaced(_moved("dealer_first_turn", "refusal", "chieu.kit.words")) == [
        "refusal dealer_first_turn: in the kit's words, but its home is games/phom",
        "refusal dealer_first_turn: no words for games/phom/game.py (its home: games/phom)"]
    assert "refusal quan_square: in games's words, but its home is games/o_an_quan" in misplaced(
        _moved("quan_square", "refusal", "chieu.games"))
    assert "refusal table_full: in games/gouji's words, but its home is " in misplaced(
        _moved("table_full", "refusal", "chieu.games.gouji"))
    assert "outcome checkmate: in games/phom's words, but its home is games/xiangqi" in misplaced(
        _moved("checkmate", "outcome", "chieu.games.phom"))


def _product_copy(tmp: Path) -> Path:
    """A copy of the product's source and words (no generated code), to plant a game in."""
    root = tmp / "chieu"
    shutil.copytree(ROOT, root, ignore=shutil.ignore_patterns("__pycache__", "v1", "*.pyi"))
    return root


PLANTED = '''"""Cờ gánh: a planted game, its rules reduced to what refuses."""
from chieu.games.core import IllegalMove


def decide(state, command):
    if command is None:
        raise IllegalMove("not_your_turn", "shared by every game: games/words.toml")
    if command == "x":
        raise IllegalMove("bad_card", "Phỏm's own code, reused: the same words in this home too")
    raise IllegalMove("no_own_stone", "this game's own")
'''
PLANTED_WORDS = '''[refusal]
no_own_stone = { en = "You have no stone there.", vi = "Bạn không có quân ở đó.", zh = "那里没有你的棋子。" }
bad_card = { en = "There is no such card.", vi = "Không có lá bài này.", zh = "没有这张牌。" }
'''


def test_a_new_games_words_live_in_its_own_package(tmp_path: Path) -> None:
    """An eighth game brings its words in its own words.toml: the kit reads it by path, its codes
    are in its home (a code another game owns repeated there with the same words, one the games
    share left in theirs), and no other file changes."""
    root = _product_copy(tmp_path)
    before = {p: p.read_bytes() for p in root.rglob("*.toml")}
    game = root / "games" / "co_ganh"
    game.mkdir()
    (game / "__init__.py").write_text('"""Cờ gánh."""\n')
    (game / "game.py").write_text(PLANTED)
    assert "refusal no_own_stone: no words for games/co_ganh/game.py (its home: games/co_ganh)" in misplaced(
        words.find_homes(root), root)
    (game / "words.toml").write_text(PLANTED_WORDS)
    homes = words.find_homes(root)
    assert "chieu.games.co_ganh" in {h.name for h in homes}
    assert misplaced(homes, root) == []
    merged = words.merge(homes)
    assert merged["refusal"]["no_own_stone"]["vi"] == "Bạn không có quân ở đó."
    assert merged["refusal"]["bad_card"] == words.catalog()["refusal"]["bad_card"]
    assert {p: p.read_bytes() for p in before} == before  # nothing outside its home changed


def test_two_homes_giving_one_code_different_words_collide(tmp_path: Path) -> None:
    """A code on the wire means one thing: a game giving another game's code other words is
    refused when the words are read, naming both homes."""
    root = _product_copy(tmp_path)
    (root / "games" / "co_ganh").mkdir()
    (root / "games" / "co_ganh" / "words.toml").write_text(
        PLANTED_WORDS.replace("There is no such card.", "No such card here."))
    with pytest.raises(words.Collision, match=r"'bad_card' has other words in chieu.games.phom .* than in "
                                              r"chieu.games.co_ganh|'bad_card' has other words in "
                                              r"chieu.games.co_ganh .* than in chieu.games.phom"):
        words.merge(words.find_homes(root))
    (root / "games" / "co_ganh" / "words.toml").write_text("[refusals]\n")
    with pytest.raises(ValueError, match="not kinds of words"):
        words.find_homes(root)


def test_the_kit_reads_the_homes_by_path_and_imports_no_game() -> None:
    """The kit depends on no package whose words it reads (its import contract): a process that
    words a game's refusal has imported no game for it."""
    probe = ("import sys; from chieu.kit import words, errors; "
             "assert words.text('dealer_first_turn', 'vi') == 'Lượt đầu của nhà cái chỉ được đánh bài.'; "
             "assert words.text('quans_gone', 'zh', 'outcome') and words.text('win', 'en', 'payment'); "
             "print(sorted(m for m in sys.modules if m.startswith('chieu.games')))")
    out = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True).stdout
    assert out.strip() == "[]"


def test_native_terms_stay_native() -> None:
    r = words.catalog()["refusal"]
    assert "Ù" in r["not_u"]["en"] and "Ù" in r["not_u"]["vi"] and "Ù" in r["not_u"]["zh"]
    assert "捎牌" in r["sealed"]["vi"] and "phỏm" in r["illegal_meld"]["zh"]
    assert "gà" in words.catalog()["payment"]["ga_deal"]["zh"]


@pytest.mark.parametrize(("header", "lang"), [
    (None, "en"), ("", "en"), ("vi", "vi"), ("vi-VN,vi;q=0.9,en;q=0.8", "vi"), ("zh-Hans-CN", "zh"),
    ("zh-TW;q=0.5, en;q=0.9", "en"), ("fr-FR, de", "en"), ("fr, zh;q=0.3", "zh"), ("*", "en"),
    ("vi;q=0, zh", "zh"), ("vi;q=abc", "en"), ("en;q=2, vi", "vi"), (";;;,,,=", "en"),
    ("x" * 10_000 + ",vi", "en"),  # past MAX_HEADER: not read
    (["fr", "zh"], "zh"),
])
def test_accept_language_picks_one_of_ours_or_english(header: Any, lang: str) -> None:
    assert words.language(header) == lang


def test_unknown_codes_and_languages_fall_back() -> None:
    assert words.text("no_such_code_at_all", "vi") is None
    assert words.text("not_your_turn", "fr") == words.text("not_your_turn", "en")
    assert words.text("cuoc", "vi", "payment") == "Tiền cược."


# -- over a real gRPC server: the guard speaks the caller's language ---------------------------

async def _refuse(request: bytes, context: Any) -> bytes:
    raise invalid("bad_seat", "seats are 0..3, not 7")


async def _illegal(request: bytes, context: Any) -> bytes:
    raise IllegalMove("dealer_first_turn", "the dealer's first turn is a discard only")


async def _unknown(request: bytes, context: Any) -> bytes:
    raise invalid("brand_new_code", "a code the catalog does not have yet")


@pytest.fixture
async def channel() -> AsyncIterator[grpc.aio.Channel]:
    server = grpc.aio.server()
    GuardedServer(server).add_registered_method_handlers("test.Words", {
        "Refuse": grpc.unary_unary_rpc_method_handler(_refuse),
        "Illegal": grpc.unary_unary_rpc_method_handler(_illegal),
        "Unknown": grpc.unary_unary_rpc_method_handler(_unknown),
    })
    port = server.add_insecure_port(f"127.0.0.1:{free_port()}")
    await server.start()
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
        yield ch
    await server.stop(None)


async def _call(channel: grpc.aio.Channel, method: str, lang: str | None) -> tuple[str, dict[str, str], str]:
    md = (("accept-language", lang),) if lang is not None else None
    with pytest.raises(grpc.aio.AioRpcError) as e:
        await channel.unary_unary(f"/test.Words/{method}")(b"", metadata=md)
    trailing = dict(e.value.trailing_metadata() or ())
    status = status_pb2.Status.FromString(trailing["grpc-status-details-bin"])
    info = error_details_pb2.ErrorInfo()
    assert status.details[0].Unpack(info)
    assert status.message == e.value.details()
    return e.value.details() or "", dict(info.metadata), trailing["chieu-reason"]


@pytest.mark.parametrize("lang", ["vi", "zh"])
async def test_a_refusal_is_worded_in_the_callers_language(channel: grpc.aio.Channel, lang: str) -> None:
    details, info, reason = await _call(channel, "Illegal", f"{lang}-XX;q=0.9, en;q=0.1")
    said = words.text("dealer_first_turn", lang)
    assert reason == "dealer_first_turn" and details == f"dealer_first_turn: {said}"
    assert info == {"lang": lang, "message": said, "detail": "the dealer's first turn is a discard only"}


@pytest.mark.parametrize("lang", [None, "en-GB", "fr", "ja;q=1, de", "vi;q=0"])
async def test_english_or_an_unknown_language_gets_the_services_own_message(
        channel: grpc.aio.Channel, lang: str | None) -> None:
    details, info, _ = await _call(channel, "Refuse", lang)
    assert details == "bad_seat: seats are 0..3, not 7"
    assert info == {"lang": "en", "message": words.text("bad_seat", "en"), "detail": "seats are 0..3, not 7"}


async def test_a_code_the_catalog_lacks_keeps_its_message(channel: grpc.aio.Channel) -> None:
    details, info, _ = await _call(channel, "Unknown", "vi")
    assert details == "brand_new_code: a code the catalog does not have yet"
    assert info["message"] == info["detail"] == "a code the catalog does not have yet"


# -- the TypeScript catalog ----------------------------------------------------------------------

def test_the_web_clients_catalog_is_generated_from_this_one(tmp_path: Path) -> None:
    out = tmp_path / "words.ts"
    subprocess.run([sys.executable, str(REPO / "scripts" / "wordsts"), str(out)], check=True)
    committed = REPO / "web" / "gen" / "chieu" / "words.ts"
    assert out.read_text(encoding="utf-8") == committed.read_text(encoding="utf-8"), \
        "web/gen/chieu/words.ts is stale: run web/scripts/gen"
    line = '"dealer_first_turn": { vi: "Lượt đầu của nhà cái chỉ được đánh bài."'
    assert line in committed.read_text(encoding="utf-8")


def test_every_stand_down_reason_and_presence_has_words() -> None:
    """Why the table stands a player up (``PlayerLeft.reason``: the idle stand and the gates) and
    every seat presence a view carries are said in vi, zh and en."""
    from chieu.table import decide
    from chieu.table.v1 import table_service_pb2

    cat = words.catalog()
    left = {decide.IDLE, decide.LADDER_TOO_LOW, decide.NOT_ENOUGH_COINS, decide.REPUTATION_TOO_LOW}
    assert not sorted(left - set(cat["left"])), "stand-down reasons without words"
    names = (v.name for v in table_service_pb2.SeatPresence.DESCRIPTOR.values)
    states = {n.removeprefix("SEAT_PRESENCE_").lower() for n in names} - {"unspecified"}
    assert states == set(cat["presence"]), "seat presences without words (or words for none)"
    for kind in ("left", "presence"):
        for entry in cat[kind].values():
            assert set(entry) == set(words.LANGUAGES) and all(entry.values())
