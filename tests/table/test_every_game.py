"""Every game of the registry over gRPC, through the one generic table service: created with its
default options and with every option spelled out (JSON numbers travel as doubles), changed
between hands, and played with random legal commands, the log folding to what the players see."""

from __future__ import annotations

import random
from typing import Any

import pytest
from google.protobuf import struct_pb2

from chieu.games import registry
from chieu.kit.settings import Settings
from chieu.table.client import TableClient
from chieu.table.v1 import table_service_pb2 as pb
from chieu.tablelog.fold import Table
from tests.table.helpers import client, mirror

pytestmark = pytest.mark.integration


def _struct(values: dict[str, Any]) -> struct_pb2.Struct:
    s = struct_pb2.Struct()
    s.update(values)
    return s


async def _mirror(auditor: TableClient, table_id: str) -> Table:
    """The table folded from its log, the hand in play opened (:func:`tests.table.helpers.mirror`)."""
    return await mirror(auditor, table_id)


@pytest.mark.parametrize("key", sorted(registry.KEYS))
async def test_each_game_is_created_changed_and_played(settings: Settings, table_server: str, key: str) -> None:
    game = registry.get(key)
    defaults = dict(game.option_values(game.parse_options({})))
    players = [client(settings, table_server, f"{key}-p{i}") for i in range(game.min_players)]
    names = {f"{key}-p{i}": c for i, c in enumerate(players)}
    auditor = client(settings, table_server, f"{key}-audit", "auditor")
    host = players[0]
    try:
        plain = await host.create(key, {})
        spelled = await host.create(key, defaults)
        assert plain.options == spelled.options == _struct(defaults)
        changed = await host.stub.ChangeSettings(
            pb.ChangeSettingsRequest(table_id=spelled.table_id, options=_struct(defaults), command_id="same"),
            metadata=host.metadata)
        assert changed.table.options == _struct(defaults)

        table_id = plain.table_id
        for c in players[1:]:
            await c.sit(table_id)
        view = await host.start(table_id)
        assert view.status == pb.TABLE_STATUS_PLAYING
        rng = random.Random(key)
        for _ in range(30):
            mirror = await _mirror(auditor, table_id)
            # once the hand is over, the idle stand of these players (they hold no stream) may follow
            assert mirror.version == view.version or (not mirror.playing and mirror.version > view.version)
            if not mirror.playing:
                break
            moves = [(s, m) for s in range(len(mirror.hand_players)) for m in game.legal(mirror.game_state, s)]
            if not moves:
                break  # everyone waits on a clock
            seat, move = rng.choice(moves)
            player = mirror.hand_players[seat]
            view = await names[player].act(table_id, key, move)
            assert view.version > mirror.version and view.hand_seat == seat
            for name, c in names.items():  # every player's view decodes, with their own seat
                theirs = await c.get(table_id)
                over = view.status != pb.TABLE_STATUS_PLAYING  # then an idle stand's record may follow
                assert theirs.version == view.version or (over and theirs.version > view.version)
                assert theirs.hand_seat == mirror.hand_players.index(name)
    finally:
        for c in (*players, auditor):
            await c.close()
