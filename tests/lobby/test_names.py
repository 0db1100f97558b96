"""Players have names (issue 24): the rules of a display name and a refusal that says which one a
name breaks; the avatar key; GetProfiles (many players in one call); every seat of the lobby's
table lists (ListTables, WatchRoom, the home screen) and of a table's view with its player's name
and avatar."""

from __future__ import annotations

import asyncio
from typing import Any

import grpc
import pytest

from chieu.kit.errors import ServiceError
from chieu.kit.settings import Settings
from chieu.lobby import names
from chieu.lobby.v1 import lobby_service_pb2 as pb
from chieu.table.client import TableClient
from tests.lobby.conftest import bearer, guest, refused, uid
from tests.lobby.test_tables import new_room

IA = grpc.StatusCode.INVALID_ARGUMENT


@pytest.mark.parametrize(("name", "reason", "says"), [
    ("\u200b\u200b\u200b", "name_unprintable", "U+200B ZERO WIDTH SPACE (an invisible formatting character)"),
    ("Bob\u202e", "name_unprintable", "U+202E RIGHT-TO-LEFT OVERRIDE"),
    ("a\x1b[31mred", "name_unprintable", "U+001B (a control character)"),
    ("Na\u00a0Na", "name_unprintable", "a space or line break other than ' '"),
    ("n" * 41, "name_too_long", "at most 40 characters, not 41"),
])
def test_a_refused_name_says_what_is_wrong(name: str, reason: str, says: str) -> None:
    """An invisible name was refused as "at most 40 printable characters", which misstated it."""
    with pytest.raises(ServiceError) as e:
        names.check_name(name, "-")
    assert e.value.reason == reason and says in e.value.message


def test_a_name_is_trimmed_and_may_be_any_language() -> None:
    assert names.check_name("  Bé Na 🌸  ", "-") == "Bé Na 🌸"
    assert names.check_name("小明 (Tèo)", "-") == "小明 (Tèo)"
    assert names.check_name("   ", "Khách 3f981") == "Khách 3f981"
    assert names.check_name("n" * 40, "-") == "n" * 40


def test_the_avatar_key_is_the_same_everywhere_and_one_of_the_pictures() -> None:
    keys = {names.avatar_of(f"g-{i}") for i in range(2000)}
    assert keys == {f"a{i:02d}" for i in range(names.AVATARS)}
    assert names.avatar_of("g-3f981e14cb5b0a99") == names.avatar_of("g-3f981e14cb5b0a99")


async def test_sign_in_refuses_a_bad_name_with_its_reason_and_words(stub: Any) -> None:
    e = await refused(stub.SignInGuest(pb.SignInGuestRequest(device_id=uid("device-"), name="\u200b\u200b")),
                      IA, "name_unprintable")
    assert "U+200B" in (e.details() or "")
    e = await refused(stub.SignInGuest(pb.SignInGuestRequest(device_id=uid("device-"), name="x" * 41),
                                       metadata=(("accept-language", "vi-VN"),)), IA, "name_too_long")
    assert e.details() == "name_too_long: Tên có tối đa 40 ký tự."
    await refused(stub.Register(pb.RegisterRequest(username=uid("u")[:20], password="p" * 12, device_id=uid("d-"),
                                                   name="ok\u2066")), IA, "name_unprintable")


async def test_get_profiles_answers_many_players_in_one_call(stub: Any) -> None:
    a, b = await guest(stub, name="Bé Na"), await guest(stub, name="小明")
    me = bearer(a.access_token)
    assert a.player.avatar == names.avatar_of(a.player.player_id)
    ghost = uid("g-ghost-")
    ids = [b.player.player_id, ghost, a.player.player_id, b.player.player_id]
    r = await stub.GetProfiles(pb.GetProfilesRequest(player_ids=ids), metadata=me)
    assert [(p.player_id, p.name, p.avatar) for p in r.profiles] == [
        (b.player.player_id, "小明", names.avatar_of(b.player.player_id)),
        (a.player.player_id, "Bé Na", names.avatar_of(a.player.player_id))]
    assert list(r.unknown) == [ghost]


async def test_get_profiles_bad_input(stub: Any) -> None:
    me = bearer((await guest(stub)).access_token)
    await refused(stub.GetProfiles(pb.GetProfilesRequest(player_ids=["x"])), grpc.StatusCode.UNAUTHENTICATED,
                  "no_token")
    await refused(stub.GetProfiles(pb.GetProfilesRequest(), metadata=me), IA, "bad_profile_ids")
    await refused(stub.GetProfiles(pb.GetProfilesRequest(player_ids=[f"p{i}" for i in range(201)]), metadata=me),
                  IA, "bad_profile_ids")
    for bad in ("", "x" * 201, "bell\x07", "line\nbreak"):
        e = await refused(stub.GetProfiles(pb.GetProfilesRequest(player_ids=["ok", bad]), metadata=me),
                          IA, "bad_profile_ids")
        assert "player_ids[1]" in (e.details() or "") and len(e.details() or "") < 200
    await refused(stub.GetProfiles(pb.GetProfilesRequest(player_ids=["nul\x00"]), metadata=me), IA, "bad_text")
    e = await refused(stub.GetProfiles(pb.GetProfilesRequest(), metadata=(*me, ("accept-language", "zh-CN"))),
                      IA, "bad_profile_ids")
    assert e.details() == "bad_profile_ids: 一次查询 1 到 200 名玩家。"


async def test_table_lists_show_each_seats_name_and_avatar(stub: Any, operator: Any) -> None:
    host, other = await guest(stub, name="Chủ bàn"), await guest(stub, name="Khách quen")
    room = (await new_room(stub, operator, "xiangqi")).room_id
    first = await stub.QuickSeat(pb.QuickSeatRequest(room_id=room), metadata=bearer(host.access_token))
    second = await stub.QuickSeat(pb.QuickSeatRequest(room_id=room), metadata=bearer(other.access_token))
    assert second.table_id == first.table_id
    want = [(host.player.player_id, "Chủ bàn", names.avatar_of(host.player.player_id)),
            (other.player.player_id, "Khách quen", names.avatar_of(other.player.player_id))]

    def cards(t: pb.TableSummary) -> list[tuple[str, str, str]]:
        assert len(t.seat_profiles) == len(t.seats)
        return [(p.player_id, p.name, p.avatar) for p in t.seat_profiles]

    listed = (await stub.ListTables(pb.ListTablesRequest(room_id=room, page_size=500),
                                    metadata=bearer(host.access_token))).tables
    mine = next(t for t in listed if t.table_id == first.table_id)
    assert cards(mine) == want
    home = await stub.GetHome(pb.GetHomeRequest(), metadata=bearer(other.access_token))
    assert home.player.avatar == names.avatar_of(other.player.player_id)
    assert [cards(t) for t in home.seated if t.table_id == first.table_id] == [want]

    watch = stub.WatchRoom(pb.WatchRoomRequest(room_id=room), metadata=bearer(host.access_token))
    try:
        async def snapshot() -> list[pb.TableSummary]:
            out: list[pb.TableSummary] = []
            async for m in watch:
                out += m.snapshot.tables
                if m.snapshot.complete:
                    return out
            return out

        shown = await asyncio.wait_for(snapshot(), 10)
        assert [cards(t) for t in shown if t.table_id == first.table_id] == [want]
    finally:
        watch.cancel()


async def test_a_free_seat_has_an_empty_profile(stub: Any, operator: Any) -> None:
    host = await guest(stub, name="Một mình")
    room = (await new_room(stub, operator, "phom")).room_id
    r = await stub.QuickSeat(pb.QuickSeatRequest(room_id=room), metadata=bearer(host.access_token))
    listed = (await stub.ListTables(pb.ListTablesRequest(room_id=room, page_size=500),
                                    metadata=bearer(host.access_token))).tables
    t = next(t for t in listed if t.table_id == r.table_id)
    assert [p.name if s else "" for p, s in zip(t.seat_profiles, t.seats, strict=True)] == [
        "Một mình" if s else "" for s in t.seats]
    assert "" in list(t.seats)
    assert all(p == pb.Profile() for p, s in zip(t.seat_profiles, t.seats, strict=True) if not s)


async def test_a_table_view_shows_each_seat_and_hand_player_with_its_name(stub: Any, operator: Any,
                                                                          settings: Settings) -> None:
    """The table asks the lobby for a player's name when they sit and logs it with the seat, so
    every view (and every replay of the log) shows it."""
    host, other = await guest(stub, name="Cô Ba"), await guest(stub, name="王五")
    room = (await new_room(stub, operator, "xiangqi")).room_id
    first = await stub.QuickSeat(pb.QuickSeatRequest(room_id=room), metadata=bearer(host.access_token))
    second = await stub.QuickSeat(pb.QuickSeatRequest(room_id=room), metadata=bearer(other.access_token))
    assert second.table_id == first.table_id
    want = [(host.player.player_id, "Cô Ba", names.avatar_of(host.player.player_id)),
            (other.player.player_id, "王五", names.avatar_of(other.player.player_id))]
    assert [(s.player_id, s.name, s.avatar) for s in second.table.seats] == want
    ta = TableClient(settings.table_addr, host.access_token)
    try:
        view = await ta.start(first.table_id)
        assert [(s.seat, s.player_id, s.name) for s in view.hand_seats] == [
            (i, p, n) for i, (p, n, _) in enumerate(want)]
        seen = await ta.get(first.table_id)
        assert [(s.player_id, s.name, s.avatar) for s in seen.seats] == want
    finally:
        await ta.close()


class _Rows:
    """A stand-in for the pool's ``fetch``: the lobby's players, and every id list asked."""

    def __init__(self, players: dict[str, str]) -> None:
        self.players = players
        self.asked: list[list[str]] = []

    async def fetch(self, query: str, ids: list[str]) -> list[dict[str, str]]:
        self.asked.append(list(ids))
        return [{"player_id": p, "name": self.players[p]} for p in ids if p in self.players]


async def test_the_lists_names_are_looked_up_once_known_or_unknown() -> None:
    rows = _Rows({"g-1": "Một", "g-2": "Hai"})
    profiles = names.Profiles(rows)  # type: ignore[arg-type]
    assert await profiles.names(["g-1", "", "x-unknown", "g-2", "g-1"]) == {"g-1": "Một", "g-2": "Hai"}
    assert await profiles.names(["g-2", "x-unknown"]) == {"g-2": "Hai"}
    assert rows.asked == [["g-1", "g-2", "x-unknown"]]  # the second list needed no query
    rows.players["g-2"] = "Hai Lúa"
    assert await profiles.names(["g-2"], fresh=True) == {"g-2": "Hai Lúa"}  # GetProfiles reads afresh


async def test_a_closed_gate_is_worded_in_the_callers_language(stub: Any) -> None:
    me = bearer((await guest(stub)).access_token)
    for lang, said in (("vi-VN", "Cấp của bạn thấp hơn cấp của bàn này."), ("zh", "你的关数低于本桌。")):
        room = (await stub.GetRoom(pb.GetRoomRequest(room_id="phom.ladder.6-10"),
                                   metadata=(*me, ("accept-language", lang)))).room
        assert (room.gate.allowed, room.gate.reason, room.gate.message) == (False, "ladder_level_too_low", said)
        listed = (await stub.ListRooms(pb.ListRoomsRequest(game="phom"), metadata=(*me, ("accept-language", lang))))
        assert {e.room.room_id: e.gate.message for e in listed.rooms}["phom.ladder.6-10"] == said
    english = (await stub.GetRoom(pb.GetRoomRequest(room_id="phom.ladder.6-10"), metadata=me)).room.gate
    assert "level 6 and up; you are level 1" in english.message  # the lobby's own, with its numbers


def test_the_lobby_lists_some_spectators_by_id_from_every_live_process() -> None:
    from chieu.lobby.presence import Spectators
    from chieu.table.v1 import presence_pb2

    def p(instance: str, counts: dict[str, int], who: dict[str, list[str]], *, full: bool = False,
          ttl_ms: int = 15_000) -> presence_pb2.Presence:
        msg = presence_pb2.Presence(instance=instance, full=full, spectators=counts, ttl_ms=ttl_ms)
        for t, ids in who.items():
            msg.watchers[t].player_ids.extend(ids)
        return msg

    now = [0.0]
    s = Spectators(clock=lambda: now[0])
    s.heard(p("t1", {"A": 3}, {"A": ["g-b", "g-a"]}, full=True))  # one viewer without a session: counted only
    s.heard(p("t2", {"A": 1, "B": 1}, {"A": ["g-c"], "B": ["g-d"]}, full=True, ttl_ms=30_000))
    assert (s.ids("A"), s.ids("B"), s.ids("C")) == (["g-a", "g-b", "g-c"], ["g-d"], [])
    assert s.ids("A", most=2) == ["g-a", "g-b"]
    s.heard(p("t1", {"A": 0}, {}))  # nobody at A through t1 any more
    assert s.ids("A") == ["g-c"]
    now[0] += 16  # t1 past its ttl, t2 within
    s.sweep()
    s.heard(p("t2", {}, {}, full=True, ttl_ms=0))
    assert s.ids("A") == s.ids("B") == []


async def test_a_tables_spectators_are_listed_with_their_names(stub: Any, operator: Any, settings: Settings) -> None:
    host, fan = await guest(stub, name="Chủ"), await guest(stub, name="Người xem")
    room = (await new_room(stub, operator, "o_an_quan")).room_id
    first = await stub.QuickSeat(pb.QuickSeatRequest(room_id=room), metadata=bearer(host.access_token))
    watcher = TableClient(settings.table_addr, fan.access_token)

    async def drain() -> None:
        async for _ in watcher.watch(first.table_id):
            pass

    watching = asyncio.create_task(drain())
    try:
        async def shown() -> list[tuple[str, str]]:
            r = await stub.ListTables(pb.ListTablesRequest(room_id=room, page_size=500),
                                      metadata=bearer(host.access_token))
            t = next((t for t in r.tables if t.table_id == first.table_id), pb.TableSummary())
            return [(p.player_id, p.name) for p in t.spectator_profiles]

        deadline = asyncio.get_running_loop().time() + 10
        while (got := await shown()) != [(fan.player.player_id, "Người xem")]:
            assert asyncio.get_running_loop().time() < deadline, got
            await asyncio.sleep(0.1)
    finally:
        watching.cancel()
        await watcher.close()
