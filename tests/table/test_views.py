"""The encoded views the service sends: one encoding per viewer and version, which every
client reads as exactly the view a fresh encoding would give."""

from __future__ import annotations

import random

import pytest

from chieu.games import registry
from chieu.table import decide
from chieu.table.v1 import log_pb2
from chieu.table.v1 import table_service_pb2 as pb
from chieu.table.views import _TABLE_FIELD, Views, _varint, base_view, viewer
from chieu.tablelog.fold import Table


def _record(t: Table, events: list[log_pb2.TableEvent], actor: str, cid: str) -> log_pb2.Record:
    return log_pb2.Record(table_id=t.table_id, version=t.version + 1, command_id=cid, actor=actor,
                          game=t.game_key, events=events)


def _fold(t: Table, events: list[log_pb2.TableEvent], actor: str, cid: str) -> None:
    t.apply(_record(t, events, actor, cid), t.version + 1)


@pytest.mark.parametrize("n", [1, 127, 128, 300, 16_383, 16_384, 2_097_152])
def test_varint_lengths_match_protobuf(n: int) -> None:
    text = "x" * n
    assert pb.TableView(table_id=text).SerializeToString() == b"\x0a" + _varint(n) + text.encode()


def test_act_and_watch_responses_are_the_same_on_the_wire() -> None:
    for message in (pb.ActResponse, pb.WatchResponse):
        fields = [(f.name, f.number, f.message_type.full_name) for f in message.DESCRIPTOR.fields]
        assert fields == [("table", 1, "chieu.table.v1.TableView")]
    assert _TABLE_FIELD == b"\x0a"


@pytest.mark.parametrize("key", sorted(registry.KEYS))
def test_each_viewer_decodes_its_own_fresh_view(key: str) -> None:
    """Through a hand of random legal moves: the wire bytes of every viewer (each player, a
    spectator) decode to the view built from scratch, and the actor gets the same bytes; after a
    record of game events only, with the shared part kept (``Views.advance``)."""
    game = registry.get(key)
    rng = random.Random(7)
    t = Table("views-1")
    players = [f"p{i}" for i in range(game.min_players)]
    _fold(t, decide.create(t, key, {}, players[0]), players[0], "c")
    for p in players[1:]:
        _fold(t, decide.take_seat(t, p, None), p, f"s-{p}")
    _fold(t, decide.start_hand(t, players[0], 1_000, bytes(range(32))), players[0], "h")
    viewers: list[str | None] = [*players, None, "stranger"]
    served = Views()
    for step in range(25):
        for who in viewers:
            fresh = pb.TableView()
            fresh.CopyFrom(base_view(t))
            fresh.MergeFrom(Views()._personal(t, viewer(t, who)))
            wire = served.wire(t, who)
            assert pb.WatchResponse.FromString(wire).table == fresh == served.view(t, who)
            assert pb.ActResponse.FromString(wire).table == fresh
            # the viewer's own fields written by hand are the bytes protobuf writes for them
            own = Views()._personal(t, viewer(t, who)).SerializeToString()
            assert served._own_bytes(t, viewer(t, who)) == own and wire.endswith(own)
            if who in players and t.hand_players:
                assert fresh.hand_seat == t.hand_players.index(who)
        assert served.wire(t, "stranger") is served.wire(t, None)  # spectators share one encoding
        if not t.playing:
            break
        moves = [(t.hand_players[s], m) for s in range(len(t.hand_players))
                 for m in game.legal(t.game_state, s)]
        if not moves:
            break
        player, move = rng.choice(moves)
        events = decide.act(t, player, move, 2_000 + step)
        _fold(t, events, player, f"m{step}")
        if all(e.WhichOneof("kind") == "game_event" for e in events):
            served.advance(t)  # as the pipeline does: the shared part kept, its version written again
