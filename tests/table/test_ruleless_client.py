"""A client that knows no rule (issue 24): for every game it plays a hand to its end over gRPC,
each step choosing at random among the commands its players' views offer, and sending them as
the views give them — an entry of ``legal`` as it is (the game's ``Command`` wrapper), an entry
of a compact form (象棋's ``legal_moves``, 连连看's ``legal_pairs``, 够级's ``legal_leads``) as
the command it stands for. No command is refused (a refusal fails the act), and while the hand runs some view always
offers something: no hand waits for a clock because nothing was offered."""

from __future__ import annotations

import random
from typing import Any

import grpc
import pytest

from chieu.games import registry
from chieu.kit.settings import Settings
from chieu.table.client import TableClient, game_view
from chieu.table.v1 import table_service_pb2 as pb
from tests.table.helpers import client, refused

pytestmark = pytest.mark.integration

SHORT = {
    "o_an_quan": {"maxMoves": 120},
    "phom": {"uWindowSeconds": 0},
    "xiangqi": {"MOVE_LIMIT": "120-plies"},
    "lianliankan": {"BOARD": "14x6"},
}
"""Options that keep a hand short (a move limit, a smaller board) or skip a wait the rules
themselves put in (Phỏm's Ù window, thời gian ù, is a clock by rule: 0 seconds is a table option)."""

PLAYERS = {"gouji": 6, "mahjong": 4}


def entries(key: str, view: Any) -> list[Any]:
    """What a view offers, ready to send: the compact forms expanded by their documented rule,
    and the ``legal`` entries unchanged."""
    game = registry.get(key)
    by_name = {t.__name__: t for t in game.commands}
    out: list[Any] = []
    for pm in getattr(view, "legal_moves", ()):
        out += [by_name["Move"](pm.square + to) for to in pm.to]
    for pair in getattr(view, "legal_pairs", ()):
        out.append(by_name["Remove"](pair.first, pair.second))
    leads = getattr(view, "legal_leads", None)
    if leads is not None:
        out += [by_name["Play"](w.cards + b.cards) for w in leads.wilds for b in leads.bases if w.cards or b.cards]
    return out + list(view.legal)


@pytest.mark.parametrize("key", sorted(registry.KEYS))
async def test_a_client_that_knows_no_rule_plays_each_game_to_its_end(
        settings: Settings, table_server: str, key: str) -> None:
    game = registry.get(key)
    n = PLAYERS.get(key, game.min_players)
    names = [f"{key}-r{i}" for i in range(n)]
    players: dict[str, TableClient] = {p: client(settings, table_server, p) for p in names}
    host = players[names[0]]
    rng = random.Random(f"ruleless-{key}")
    try:
        table_id = (await host.create(key, SHORT.get(key, {}))).table_id
        for p in names[1:]:
            await players[p].sit(table_id)
        view = await host.start(table_id)
        hand = view.hand_no
        sent = 0
        for _ in range(3000):
            views = {p: await c.get(table_id) for p, c in players.items()}
            if any(v.status != pb.TABLE_STATUS_PLAYING or v.hand_no != hand for v in views.values()):
                break
            offers = [(p, e) for p, v in views.items() for e in entries(key, game_view(v))]
            assert offers, f"{key}: the hand runs but no view offers anything (it would wait for a clock)"
            player, entry = rng.choice(offers)
            await players[player].act(table_id, key, entry)  # a refusal raises here
            sent += 1
        else:
            raise AssertionError(f"{key}: no end after {sent} commands")
        final = await host.get(table_id)
        assert final.status != pb.TABLE_STATUS_PLAYING and final.HasField("last_outcome"), key
        assert sent > 0
        print(f"{key}: {sent} commands, {final.last_outcome.reason}")
    finally:
        for c in players.values():
            await c.close()


async def test_a_wrapper_is_judged_as_the_command_it_holds(settings: Settings, table_server: str) -> None:
    """Sent in Act, a ``Command`` is the command it holds: the mover's entry is played, the same
    entry from the other seat is refused by the rules (``not_your_turn``), and a ``Command``
    holding nothing is refused as malformed — each a clear status with its stable reason."""
    from chieu.games.o_an_quan.model import Command

    a, b = client(settings, table_server, "wrap-a"), client(settings, table_server, "wrap-b")
    try:
        t = await a.create("o_an_quan", {})
        await b.sit(t.table_id)
        started = await a.start(t.table_id)
        by_seat = {list(started.hand_players).index(p): c for p, c in (("wrap-a", a), ("wrap-b", b))}
        mover_seat = game_view(started).to_move
        mover, other = by_seat[mover_seat], by_seat[1 - mover_seat]
        entry = game_view(await mover.get(t.table_id)).legal[0]
        assert game_view(await other.get(t.table_id)).legal == ()
        assert await refused(other.act(t.table_id, "o_an_quan", entry)) == (
            grpc.StatusCode.FAILED_PRECONDITION, "not_your_turn")
        assert await refused(mover.act(t.table_id, "o_an_quan", Command())) == (
            grpc.StatusCode.INVALID_ARGUMENT, "malformed_command")
        played = await mover.act(t.table_id, "o_an_quan", entry)
        assert played.version == started.version + 1
    finally:
        await a.close()
        await b.close()
