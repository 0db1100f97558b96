"""Names at the table (issue 24): a seat's name and avatar travel in the log (PlayerSeated), so
every view shows them from the log alone — the seats and the hand's players — and so do a
snapshot and a replay; a seat without a name (the lobby did not say) is taken all the same."""

from __future__ import annotations

from chieu.table import decide, snapshot
from chieu.table.v1 import log_pb2
from chieu.table.views import view
from chieu.tablelog.fold import Table


def _fold(t: Table, events: object, actor: str, cid: str) -> None:
    assert isinstance(events, list), events  # a decision, not a refusal
    t.apply(log_pb2.Record(table_id=t.table_id, version=t.version + 1, command_id=cid, actor=actor,
                           game=t.game_key, events=events), t.last_seq + 1)


def _table() -> Table:
    t = Table("names-1")
    _fold(t, decide.create(t, "xiangqi", {}, "p-host", profile=("Cô Ba", "a07")), "p-host", "c")
    _fold(t, decide.take_seat(t, "p-guest", None, b"", ("王五", "a42")), "p-guest", "s")
    return t


def test_the_seats_and_the_hands_players_show_the_names_they_sat_down_with() -> None:
    t = _table()
    seated = [(s.seat, s.player_id, s.name, s.avatar) for s in view(t, None).seats]
    assert seated == [(0, "p-host", "Cô Ba", "a07"), (1, "p-guest", "王五", "a42")]
    _fold(t, decide.start_hand(t, "p-host", 1_000, b"s" * 32), "p-host", "h")
    for who in ("p-host", "p-guest", None):  # every viewer, a spectator too
        v = view(t, who)
        assert [(s.player_id, s.name) for s in v.hand_seats] == [(p, {"p-host": "Cô Ba", "p-guest": "王五"}[p])
                                                                  for p in t.hand_players]
        assert [s.seat for s in v.hand_seats] == list(range(len(t.hand_players)))


def test_a_snapshot_keeps_the_names() -> None:
    t = _table()
    back = snapshot.decode(snapshot.encode(t))
    assert back.profiles == t.profiles == {"p-host": ("Cô Ba", "a07"), "p-guest": ("王五", "a42")}
    assert view(back, None).seats == view(t, None).seats


def test_a_seat_without_a_name_is_taken_all_the_same() -> None:
    t = Table("names-2")
    _fold(t, decide.create(t, "xiangqi", {}, "p-a"), "p-a", "c")
    _fold(t, decide.take_seat(t, "p-b", None), "p-b", "s")
    assert [(s.player_id, s.name, s.avatar) for s in view(t, None).seats] == [("p-a", "", ""), ("p-b", "", "")]


def test_a_new_seat_shows_a_changed_name_and_players_gone_are_forgotten_at_the_next_hand() -> None:
    t = _table()
    _fold(t, decide.stand_up(t, "p-guest"), "p-guest", "u")
    _fold(t, decide.take_seat(t, "p-guest", None, b"", ("Vương Ngũ", "a42")), "p-guest", "s2")
    assert [s.name for s in view(t, None).seats] == ["Cô Ba", "Vương Ngũ"]
    _fold(t, decide.stand_up(t, "p-guest"), "p-guest", "u2")
    _fold(t, decide.take_seat(t, "p-third", None, b"", ("Ba", "a01")), "p-third", "s3")
    _fold(t, decide.start_hand(t, "p-host", 2_000, b"s" * 32), "p-host", "h")
    assert set(t.profiles) == {"p-host", "p-third"}
